// The server's handler as serve runs it: the gate's refusals answered and
// counted, what it lets through answered by the ApiHandler, and a request
// cancelled while its review is with the control plane.
#include <catch2/catch.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "server/gated_handler.hpp"
#include "fedmetrics/telemetry/prometheus_server_metrics.hpp"
#include "server/run_task.hpp"
#include "support/fake_reviews.hpp"

namespace fedmetrics::server {
namespace {

HttpRequest get(std::string target, std::string token = "") {
  HttpRequest r{"GET", std::move(target), {}, {}, {}};
  if (!token.empty()) r.headers.emplace_back("Authorization", "Bearer " + token);
  return r;
}

bool counted(telemetry::PrometheusServerMetrics& metrics, const std::string& code) {
  return metrics.serialize().find("code=\"" + code + "\"") != std::string::npos;
}

}  // namespace

TEST_CASE("handle_gated: the gate's refusals are answered and counted, what it lets through reaches the ApiHandler",
          "[server][gate]") {
  auto metrics = std::make_shared<telemetry::PrometheusServerMetrics>();
  auto handler = std::make_shared<const ApiHandler>(nullptr, metrics, BuildInfo{});
  auto gate = std::make_shared<RequestGate>(GateOptions{});  // no token review: credentials-less requests are 401
  CHECK_FALSE(counted(*metrics, "401"));
  auto refused = testing::run(handle_gated(handler, gate, get("/apis/metrics.k8s.io/v1beta1/pods")));
  CHECK(refused.status == 401);
  CHECK(counted(*metrics, "401"));
  auto health = testing::run(handle_gated(handler, gate, get("/healthz")));  // always allowed
  CHECK(health.status == 200);
  CHECK(health.body == "ok");
  SECTION("without a gate, the ApiHandler answers everything") {
    auto open = testing::run(handle_gated(handler, nullptr, get("/apis/metrics.k8s.io/v1beta1/pods")));
    CHECK(open.status == 503);  // no member cluster configured
  }
}

TEST_CASE("handle_gated: cancelled while its review is with the control plane, a request ends at once",
          "[server][gate]") {
  auto reviews = std::make_shared<fedmetrics::testing::FakeReviews>();
  reviews->held.on = true;
  GateOptions options;
  options.authentication = reviews;
  auto gate = std::make_shared<RequestGate>(options);
  auto handler =
      std::make_shared<const ApiHandler>(nullptr, std::make_shared<telemetry::PrometheusServerMetrics>(), BuildInfo{});
  testing::Stepped<HttpResponse> request(
      handle_gated(handler, gate, get("/apis/metrics.k8s.io/v1beta1/pods", "token")));
  request.step();  // until the gate waits for its TokenReview
  REQUIRE(reviews->held.count() == 1);
  CHECK_FALSE(request.ended());
  request.cancel();
  request.step();
  CHECK(request.ended_by_cancellation());
  // The review's late answer resumes nothing.
  reviews->held.release();
  CHECK(request.step() == 0);
}

}  // namespace fedmetrics::server
