// The request gate with its reviews answered in memory: what reaches the
// handler, and that hostile input (non-UTF-8 tokens and paths, empty path
// segments) gets an answer, never an exception.
#include <catch2/catch.hpp>

#include <optional>

#include <nlohmann/json.hpp>

#include "server/request_gate.hpp"
#include "server/run_task.hpp"
#include "support/fake_reviews.hpp"

namespace fedmetrics::server {
namespace {

using nlohmann::json;

using CannedReviews = fedmetrics::testing::FakeReviews;

struct Outcome {
  int status = 0;
  bool reached_handler = false;
};

// The gate's verdict, with what the handler would answer when it lets the request through.
Outcome run(RequestGate& gate, HttpRequest request) {
  auto verdict = testing::run(gate.admit(std::move(request)));
  if (auto* refusal = std::get_if<HttpResponse>(&verdict)) return Outcome{refusal->status, false};
  return Outcome{200, true};
}

HttpRequest get(std::string target, std::string token = "") {
  HttpRequest r{"GET", std::move(target), {}, {}, {}};
  if (!token.empty()) r.headers.emplace_back("Authorization", "Bearer " + token);
  return r;
}

TEST_CASE("RequestGate: tokens are reviewed, then the request is authorized") {
  auto reviews = std::make_shared<CannedReviews>();
  GateOptions options;
  options.authentication = reviews;
  options.authorization = reviews;
  RequestGate gate(options);
  auto ok = run(gate, get("/apis/metrics.k8s.io/v1beta1/namespaces/a/pods", "t"));
  CHECK(ok.status == 200);
  CHECK(ok.reached_handler);
  REQUIRE(reviews->bodies().size() == 2);
  auto sar = json::parse(reviews->bodies()[1]);
  CHECK(sar["spec"]["user"] == "alice");
  CHECK(sar["spec"]["resourceAttributes"]["verb"] == "list");
  reviews->allowed = false;
  auto denied = run(gate, get("/apis/metrics.k8s.io/v1beta1/namespaces/b/pods", "t"));
  CHECK(denied.status == 403);
  CHECK_FALSE(denied.reached_handler);
  CHECK(run(gate, get("/apis/metrics.k8s.io/v1beta1/pods")).status == 401);  // no credentials
  CHECK(run(gate, get("/healthz")).status == 200);                           // always allowed
}

TEST_CASE("RequestGate: a review that cannot be made refuses the request and is reported") {
  auto reviews = std::make_shared<CannedReviews>();
  std::vector<std::pair<std::string, std::string>> failures;
  GateOptions options;
  options.authentication = reviews;
  options.authorization = reviews;
  options.on_review_failure = [&](std::string_view review, const std::string& error) {
    failures.emplace_back(std::string(review), error);
  };
  RequestGate gate(options);
  reviews->unreachable = "POST /apis/authentication.k8s.io/v1/tokenreviews: connection closed by the control plane";
  auto refused = run(gate, get("/apis/metrics.k8s.io/v1beta1/namespaces/a/pods", "t"));
  CHECK(refused.status == 401);
  CHECK_FALSE(refused.reached_handler);
  REQUIRE(failures.size() == 1);
  CHECK(failures[0].first == "TokenReview");
  CHECK(failures[0].second.find("connection closed by the control plane") != std::string::npos);

  // Authenticated by a certificate-less path: the token review succeeds, the access review fails.
  reviews->unreachable.reset();
  failures.clear();
  RequestGate authorizing(options);
  auto first = run(authorizing, get("/apis/metrics.k8s.io/v1beta1/namespaces/a/pods", "t"));  // caches the token
  REQUIRE(first.status == 200);
  reviews->unreachable = "connection refused";
  auto failed = run(authorizing, get("/apis/metrics.k8s.io/v1beta1/namespaces/b/pods", "t"));
  CHECK(failed.status == 500);
  REQUIRE(failures.size() == 1);
  CHECK(failures[0].first == "SubjectAccessReview");
  // A review that answered "no" is a decision, not a failure.
  reviews->unreachable.reset();
  reviews->allowed = false;
  failures.clear();
  CHECK(run(authorizing, get("/apis/metrics.k8s.io/v1beta1/namespaces/c/pods", "t")).status == 403);
  CHECK(failures.empty());
}

TEST_CASE("RequestGate: a token's review and an access decision are asked once, then served from the caches") {
  auto reviews = std::make_shared<CannedReviews>();
  std::vector<std::string> failures;
  GateOptions options;
  options.authentication = reviews;
  options.authorization = reviews;
  options.on_review_failure = [&](std::string_view, const std::string& error) { failures.push_back(error); };
  RequestGate gate(options);
  const auto pods_of_a = "/apis/metrics.k8s.io/v1beta1/namespaces/a/pods";
  REQUIRE(run(gate, get(pods_of_a, "t")).reached_handler);
  REQUIRE(reviews->bodies().size() == 2);  // a TokenReview, then a SubjectAccessReview
  // The control plane is gone: the cached answers still let the same question through.
  reviews->unreachable = "connection refused";
  CHECK(run(gate, get(pods_of_a, "t")).reached_handler);
  CHECK(reviews->bodies().size() == 2);
  CHECK(failures.empty());
  // Another question of the same user: the token is known, the access is asked (and fails).
  CHECK(run(gate, get("/apis/metrics.k8s.io/v1beta1/namespaces/b/pods", "t")).status == 500);
  CHECK(reviews->bodies().size() == 3);
  // A denial is cached too, under its own TTL.
  reviews->unreachable.reset();
  reviews->allowed = false;
  CHECK(run(gate, get("/apis/metrics.k8s.io/v1beta1/namespaces/c/pods", "t")).status == 403);
  reviews->allowed = true;
  CHECK(run(gate, get("/apis/metrics.k8s.io/v1beta1/namespaces/c/pods", "t")).status == 403);
  CHECK(reviews->bodies().size() == 4);
}

TEST_CASE("RequestGate: hostile input gets an answer, never an exception") {
  auto reviews = std::make_shared<CannedReviews>();
  GateOptions options;
  options.authentication = reviews;
  options.authorization = reviews;
  RequestGate gate(options);
  Outcome bad_token;
  REQUIRE_NOTHROW(bad_token = run(gate, get("/apis/metrics.k8s.io/v1beta1/pods", "\xff\xfe")));
  CHECK(bad_token.status == 200);  // reviewed (the control plane decides), with a well-formed body
  CHECK_NOTHROW(json::parse(reviews->bodies().at(0)));
  reviews->allowed = false;
  Outcome bad_path;
  REQUIRE_NOTHROW(bad_path = run(gate, get("/apis/metrics.k8s.io/v1beta1/namespaces/%FF/pods", "t")));
  CHECK(bad_path.status == 403);
  // Empty segments would be authorized as one resource and served as another.
  auto empty = run(gate, get("/apis/metrics.k8s.io/v1beta1//pods", "t"));
  CHECK(empty.status == 400);
  CHECK_FALSE(empty.reached_handler);
}

}  // namespace
}  // namespace fedmetrics::server
