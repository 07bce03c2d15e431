// Requests allowed without a SubjectAccessReview, and the 403 after a denial
// (apiserver responsewriters.ForbiddenStatusError).
#include <string>

#include <catch2/catch.hpp>

#include "fedmetrics/auth/authorization.hpp"

using namespace fedmetrics::auth;

namespace {

RequestAttributes path(const char* verb, const char* p) { return {false, verb, p, "", "", "", "", "", ""}; }

const UserInfo kAggregator{"system:kube-aggregator", "", {"system:authenticated"}, {}};
const UserInfo kAdmin{"kubernetes-admin", "", {"system:masters", "system:authenticated"}, {}};

}  // namespace

TEST_CASE("Auth: requests that need no SubjectAccessReview", "[auth][authz]") {
  const RequestAttributes pods{
      true, "list", "/apis/metrics.k8s.io/v1beta1/pods", "metrics.k8s.io", "v1beta1", "", "pods", "", ""};
  const UserInfo anonymous = anonymous_user();
  struct Row {
    const UserInfo& user;
    RequestAttributes attributes;
    bool allowed;
  };
  const Row rows[] = {
      {anonymous, path("get", "/healthz"), true},
      {anonymous, path("get", "/readyz"), true},
      {anonymous, path("head", "/livez"), true},
      {anonymous, path("get", "/healthz/ping"), false},  // exact paths only
      {anonymous, path("get", "/apis"), false},          // discovery needs an authenticated user
      {kAggregator, path("get", "/apis"), true},
      {kAggregator, path("get", "/apis/metrics.k8s.io"), true},
      {kAggregator, path("get", "/apis/metrics.k8s.io/v1beta1"), true},
      {kAggregator, path("get", "/api"), true},
      {kAggregator, path("get", "/api/v1"), true},
      {kAggregator, path("get", "/openapi/v2"), true},
      {kAggregator, path("get", "/openapi/v3/apis/metrics.k8s.io/v1beta1"), true},
      {kAggregator, path("get", "/version"), true},
      {kAggregator, path("post", "/apis"), false},  // system:discovery grants get only
      {kAggregator, path("get", "/apiserver"), false},
      {kAggregator, path("get", "/metrics"), false},
      {kAggregator, pods, false},
      {kAdmin, pods, true},  // system:masters may do anything
      {kAdmin, path("delete", "/metrics"), true},
  };
  for (const auto& row : rows) {
    INFO(row.user.name << " " << row.attributes.verb << " " << row.attributes.path);
    CHECK(always_allowed(row.user, row.attributes) == row.allowed);
  }
}

TEST_CASE("Auth: the 403 names the user, the verb and the resource, then the reason", "[auth][authz]") {
  const UserInfo jane{"jane", "", {"system:authenticated"}, {}};
  const RequestAttributes pod{true, "get", "", "custom.metrics.k8s.io", "v1beta2", "d", "pods", "rps", "*"};
  auto status = forbidden_status(jane, pod, "RBAC: no rule");
  CHECK(status.code == 403);
  CHECK(status.reason == "Forbidden");
  CHECK(status.message ==
        "pods.custom.metrics.k8s.io \"*\" is forbidden: User \"jane\" cannot get resource \"pods/rps\" in API group "
        "\"custom.metrics.k8s.io\" in the namespace \"d\": RBAC: no rule");

  const RequestAttributes nodes{true, "list", "", "metrics.k8s.io", "v1beta1", "", "nodes", "", ""};
  CHECK(forbidden_status(jane, nodes, "").message ==
        "nodes.metrics.k8s.io is forbidden: User \"jane\" cannot list resource \"nodes\" in API group "
        "\"metrics.k8s.io\" at the cluster scope");

  CHECK(forbidden_status(jane, path("get", "/metrics"), "").message ==
        "forbidden: User \"jane\" cannot get path \"/metrics\"");
  CHECK(forbidden_status(jane, path("get", "/metrics"), "no rule").message ==
        "forbidden: User \"jane\" cannot get path \"/metrics\": no rule");
}
