// TokenReview and SubjectAccessReview documents:
// the request bodies exactly as Go's webhook clients send them, and the answers as
// Go's webhook authenticator and authorizer read them.
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "fedmetrics/auth/reviews.hpp"

using namespace fedmetrics::auth;
using nlohmann::json;
using Kind = AuthenticationResult::Kind;

TEST_CASE("Auth: the TokenReview request", "[auth][review]") {
  CHECK(
      json::parse(token_review_body("abc.def\"ghi")) ==
      json::parse(R"({"apiVersion":"authentication.k8s.io/v1","kind":"TokenReview","spec":{"token":"abc.def\"ghi"}})"));
}

TEST_CASE("Auth: TokenReview answers", "[auth][review]") {
  auto result = parse_token_review(R"({"apiVersion":"authentication.k8s.io/v1","kind":"TokenReview",
    "status":{"authenticated":true,"audiences":["https://kubernetes.default.svc"],
      "user":{"username":"system:serviceaccount:kube-system:hpa","uid":"u-1",
              "groups":["system:serviceaccounts","system:authenticated"],
              "extra":{"authentication.kubernetes.io/pod-name":["hpa-0"],"empty":null}}}})");
  REQUIRE(result);
  REQUIRE(result->kind == Kind::Authenticated);
  CHECK(result->user == UserInfo{"system:serviceaccount:kube-system:hpa",
                                 "u-1",
                                 {"system:serviceaccounts", "system:authenticated"},
                                 {{"authentication.kubernetes.io/pod-name", {"hpa-0"}}}});

  result = parse_token_review(R"({"kind":"TokenReview","status":{"authenticated":false,"error":"token expired"}})");
  REQUIRE(result);
  CHECK(result->kind == Kind::Rejected);
  CHECK(result->error == "token expired");

  // Not authenticated and no error: Go's (nil, false, nil).
  result = parse_token_review(R"({"kind":"TokenReview","status":{}})");
  REQUIRE(result);
  CHECK(result->kind == Kind::NotApplicable);
  result = parse_token_review(R"({"kind":"TokenReview"})");
  REQUIRE(result);
  CHECK(result->kind == Kind::NotApplicable);
}

TEST_CASE("Auth: malformed TokenReview answers are errors", "[auth][review]") {
  const std::pair<const char*, const char*> cases[] = {
      {"", "malformed JSON"},
      {"{\"kind\":", "malformed JSON"},
      {"[]", "expected a TokenReview object, got array"},
      {R"({"kind":"Status","status":"Failure"})", "expected kind TokenReview, got Status"},
      {R"({"status":"yes"})", "status: expected an object, got string"},
      {R"({"status":{"authenticated":"true"}})", "status.authenticated: expected a boolean, got string"},
      {R"({"status":{"authenticated":true,"user":{"username":7}}})",
       "status.user.username: expected a string, got number"},
      {R"({"status":{"authenticated":true,"user":{"groups":"a"}}})",
       "status.user.groups: expected an array of strings, got string"},
      {R"({"status":{"authenticated":true,"user":{"groups":["a",1]}}})",
       "status.user.groups: expected an array of strings, got a number"},
      {R"({"status":{"authenticated":true,"user":{"extra":{"k":"v"}}}})",
       "status.user.extra.k: expected an array of strings, got string"},
      {R"({"status":{"authenticated":true,"user":{"extra":[]}}})", "status.user.extra: expected an object, got array"},
  };
  for (const auto& [body, message] : cases) {
    INFO(body);
    auto result = parse_token_review(body);
    REQUIRE_FALSE(result);
    CHECK(result.error().message == message);
  }
}

TEST_CASE("Auth: the SubjectAccessReview request for a resource", "[auth][review]") {
  const UserInfo user{"system:serviceaccount:kube-system:horizontal-pod-autoscaler",
                      "…",
                      {"system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated"},
                      {{"authentication.kubernetes.io/pod-name", {"…"}}}};
  const RequestAttributes attributes{true,
                                     "get",
                                     "/apis/custom.metrics.k8s.io/v1beta2/namespaces/default/pods/*/http_requests",
                                     "custom.metrics.k8s.io",
                                     "v1beta2",
                                     "default",
                                     "pods",
                                     "http_requests",
                                     "*"};
  // Exactly the body Go's webhook authorizer sends.
  CHECK(json::parse(subject_access_review_body(user, attributes)) == json::parse(R"(
    {"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","spec":{
      "user":"system:serviceaccount:kube-system:horizontal-pod-autoscaler",
      "uid":"…","groups":["system:serviceaccounts","system:serviceaccounts:kube-system","system:authenticated"],
      "extra":{"authentication.kubernetes.io/pod-name":["…"]},
      "resourceAttributes":{"namespace":"default","verb":"get","group":"custom.metrics.k8s.io",
         "version":"v1beta2","resource":"pods","subresource":"http_requests","name":"*"}}})"));

  // Empty fields are left out (omitempty): core group, cluster scope, no name.
  const RequestAttributes nodes{true, "list", "/api/v1/nodes", "", "v1", "", "nodes", "", ""};
  CHECK(json::parse(subject_access_review_body(UserInfo{"jane", "", {}, {}}, nodes)) == json::parse(R"(
    {"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","spec":{"user":"jane",
      "resourceAttributes":{"verb":"list","version":"v1","resource":"nodes"}}})"));
}

TEST_CASE("Auth: the SubjectAccessReview request for a path, and its use as a cache key", "[auth][review]") {
  const UserInfo user{"system:kube-aggregator", "", {"system:authenticated"}, {}};
  const RequestAttributes discovery{false, "get", "/apis/metrics.k8s.io/v1beta1", "", "", "", "", "", ""};
  const std::string body = subject_access_review_body(user, discovery);
  CHECK(json::parse(body) == json::parse(R"(
    {"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","spec":{
      "user":"system:kube-aggregator","groups":["system:authenticated"],
      "nonResourceAttributes":{"path":"/apis/metrics.k8s.io/v1beta1","verb":"get"}}})"));
  // Same question, same bytes; any difference, other bytes.
  CHECK(subject_access_review_body(user, discovery) == body);
  RequestAttributes other = discovery;
  other.verb = "head";
  CHECK(subject_access_review_body(user, other) != body);
}

TEST_CASE("Auth: SubjectAccessReview answers", "[auth][review]") {
  auto d = parse_subject_access_review(R"({"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview",
    "status":{"allowed":true,"reason":"RBAC: allowed by ClusterRoleBinding \"hpa\""}})");
  REQUIRE(d);
  CHECK(*d == Decision{true, false, "RBAC: allowed by ClusterRoleBinding \"hpa\"", ""});

  d = parse_subject_access_review(R"({"kind":"SubjectAccessReview","status":{"allowed":false,"denied":true,
    "reason":"no","evaluationError":"webhook down"}})");
  REQUIRE(d);
  CHECK(*d == Decision{false, true, "no", "webhook down"});

  d = parse_subject_access_review(R"({"kind":"SubjectAccessReview","status":{"allowed":false}})");
  REQUIRE(d);
  CHECK(*d == Decision{});  // no opinion: forbidden without a reason

  const std::pair<const char*, const char*> malformed[] = {
      {"<html>", "malformed JSON"},
      {R"("allowed")", "expected a SubjectAccessReview object, got string"},
      {R"({"kind":"TokenReview","status":{"allowed":true}})", "expected kind SubjectAccessReview, got TokenReview"},
      {R"({"status":{"allowed":"true"}})", "status.allowed: expected a boolean, got string"},
      {R"({"status":{"denied":1}})", "status.denied: expected a boolean, got number"},
      {R"({"status":{"reason":["x"]}})", "status.reason: expected a string, got array"},
      {R"({"status":{"evaluationError":{}}})", "status.evaluationError: expected a string, got object"},
  };
  for (const auto& [body, message] : malformed) {
    INFO(body);
    auto result = parse_subject_access_review(body);
    REQUIRE_FALSE(result);
    CHECK(result.error().message == message);
  }
}
