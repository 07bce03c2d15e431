// The gate in front of the handler: every request is counted once in the
// request metrics, whether the gate refused it or the handler answered it.
#include <catch2/catch.hpp>

#include <string>

#include <nlohmann/json.hpp>

#include "fedmetrics/telemetry/prometheus_server_metrics.hpp"
#include "server/gated_handler.hpp"

namespace fedmetrics::server {
namespace {

using nlohmann::json;

// Every token is alice's, and alice may do everything.
struct AllowingReviews : ReviewClient {
  void post(std::string path, std::string, std::function<void(k8s::Expected<std::string>)> done) override {
    if (path.find("tokenreviews") != std::string::npos)
      return done(json{{"apiVersion", "authentication.k8s.io/v1"}, {"kind", "TokenReview"},
                       {"status", {{"authenticated", true}, {"user", {{"username", "alice"}}}}}}
                      .dump());
    done(json{{"apiVersion", "authorization.k8s.io/v1"}, {"kind", "SubjectAccessReview"}, {"status", {{"allowed", true}}}}
             .dump());
  }
};

int call(const std::function<void(HttpRequest, Respond)>& handle, std::string target, std::string token) {
  HttpRequest request{"GET", std::move(target), {}, {}, {}};
  if (!token.empty()) request.headers.emplace_back("Authorization", "Bearer " + token);
  int status = 0;
  handle(std::move(request), [&](HttpResponse r) { status = r.status; });
  return status;
}

std::size_t count(const std::string& text, const std::string& series) {
  const auto at = text.find(series + " ");
  return at == std::string::npos ? 0 : std::stoul(text.substr(at + series.size() + 1));
}

TEST_CASE("gated_handler: refusals and answers are each counted once") {
  auto metrics = std::make_shared<telemetry::PrometheusServerMetrics>();
  auto handler = std::make_shared<ApiHandler>(nullptr, metrics, BuildInfo{});
  GateOptions options;
  auto reviews = std::make_shared<AllowingReviews>();
  options.authentication = reviews;
  options.authorization = reviews;
  auto gate = std::make_shared<RequestGate>(options);
  gate->set_trust({});
  const auto handle = gated_handler(handler, gate);

  CHECK(call(handle, "/version", "") == 401);  // no credentials: the gate answers
  CHECK(call(handle, "/version", "") == 401);
  CHECK(call(handle, "/version", "alice-token") == 200);  // passed on: the handler answers

  const std::string text = metrics->serialize();
  INFO(text);
  CHECK(count(text, R"(fedmetrics_apiserver_requests_total{code="401",group="",resource=""})") == 2);
  CHECK(count(text, R"(fedmetrics_apiserver_requests_total{code="200",group="",resource=""})") == 1);
}

TEST_CASE("gated_handler: without a gate the handler answers and counts every request") {
  auto metrics = std::make_shared<telemetry::PrometheusServerMetrics>();
  const auto handle = gated_handler(std::make_shared<ApiHandler>(nullptr, metrics, BuildInfo{}), nullptr);
  CHECK(call(handle, "/version", "") == 200);
  CHECK(count(metrics->serialize(), R"(fedmetrics_apiserver_requests_total{code="200",group="",resource=""})") == 1);
}

}  // namespace
}  // namespace fedmetrics::server
