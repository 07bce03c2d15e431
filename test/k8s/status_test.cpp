#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "fedmetrics/k8s/status.hpp"

using namespace fedmetrics::k8s;
using nlohmann::json;

TEST_CASE("Status: named constructors carry upstream codes, reasons and texts", "[k8s][status]") {
  struct Row {
    Status status;
    int code;
    const char* reason;
    const char* message;
  };
  const GroupResource pods{"metrics.k8s.io", "pods"};
  const Row rows[] = {
      {Status::not_found({"", "pods"}, "web"), 404, "NotFound", "pods \"web\" not found"},
      {Status::not_found(GroupResource{"metrics.k8s.io", "podmetrics"}, "default/web"), 404, "NotFound",
       "podmetrics.metrics.k8s.io \"default/web\" not found"},
      {Status::not_found_resource(), 404, "NotFound", "the server could not find the requested resource"},
      {Status::metric_not_found("http_requests", {"", "pods"}), 404, "NotFound",
       "the server could not find the metric http_requests for pods"},
      {Status::metric_not_found("rps", {"apps", "deployments"}, "web"), 404, "NotFound",
       "the server could not find the metric rps for deployments.apps web"},
      {Status::metric_not_found("rps", {"", "services"}, "web", "verb=GET"), 404, "NotFound",
       "the server could not find the metric rps for services web with selector verb=GET"},
      {Status::bad_request("invalid request path"), 400, "BadRequest", "invalid request path"},
      {Status::not_acceptable("application/json"), 406, "NotAcceptable",
       "only the following media types are accepted: application/json"},
      {Status::unauthorized(), 401, "Unauthorized", "Unauthorized"},
      {Status::forbidden("jane", "list", pods, "", "default", "", ""), 403, "Forbidden",
       "pods.metrics.k8s.io is forbidden: User \"jane\" cannot list resource \"pods\" in API group \"metrics.k8s.io\" "
       "in "
       "the namespace \"default\""},
      {Status::forbidden("jane", "get", {"metrics.k8s.io", "nodes"}, "", "", "node-1", "no RBAC policy matched"), 403,
       "Forbidden",
       "nodes.metrics.k8s.io \"node-1\" is forbidden: User \"jane\" cannot get resource \"nodes\" in API group "
       "\"metrics.k8s.io\" at the cluster scope: no RBAC policy matched"},
      {Status::forbidden_path("jane", "get", "/metrics"), 403, "Forbidden",
       "forbidden: User \"jane\" cannot get path \"/metrics\""},
      {Status::conflict(pods, "web", "found in member clusters member1, member2"), 409, "Conflict",
       "Operation cannot be fulfilled on pods.metrics.k8s.io \"web\": found in member clusters member1, member2"},
      {Status::method_not_allowed("watch", pods), 405, "MethodNotAllowed",
       "watch is not supported on resources of kind \"pods.metrics.k8s.io\""},
      {Status::service_unavailable("no member cluster could serve metrics.k8s.io"), 503, "ServiceUnavailable",
       "no member cluster could serve metrics.k8s.io"},
      {Status::timeout("member1 did not answer in 3s", 1), 504, "Timeout", "Timeout: member1 did not answer in 3s"},
      {Status::internal_error("boom"), 500, "InternalError", "Internal error occurred: boom"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.message);
    CHECK(row.status.code == row.code);
    CHECK(row.status.reason == row.reason);
    CHECK(row.status.message == row.message);
  }
}

TEST_CASE("Status: JSON shape as the apiserver writes it", "[k8s][status]") {
  json not_found = Status::not_found({"", "pods"}, "web").to_json();
  CHECK(not_found == json::parse(R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
      "message":"pods \"web\" not found","reason":"NotFound","details":{"name":"web","kind":"pods"},"code":404})"));

  // No details key when there are none.
  json bad = Status::bad_request("x").to_json();
  CHECK_FALSE(bad.contains("details"));
  CHECK(bad["code"] == 400);

  json internal = Status::internal_error("boom").to_json();
  CHECK(internal["details"] == json::parse(R"({"causes":[{"message":"boom"}]})"));
  json unavailable = Status::service_unavailable("down", 5).to_json();
  CHECK(unavailable["details"]["retryAfterSeconds"] == 5);
}

TEST_CASE("Status: decoding a member's Status, and rejecting what is not one", "[k8s][status]") {
  auto decoded = Status::from_json(Status::not_found({"", "pods"}, "web").to_json());
  REQUIRE(decoded.ok());
  CHECK(*decoded == Status::not_found({"", "pods"}, "web"));

  auto not_status = Status::from_json(json::parse(R"({"kind":"PodMetricsList"})"));
  REQUIRE_FALSE(not_status.ok());
  CHECK(not_status.error().message == "kind: expected \"Status\", got \"PodMetricsList\"");
  CHECK_FALSE(Status::from_json(json::parse(R"({"kind":"Status","code":"404"})")).ok());
  CHECK_FALSE(Status::from_json(json::parse("[1,2]")).ok());
  CHECK_FALSE(Status::from_json(json::parse(R"({"kind":"Status","details":[]})")).ok());
}
