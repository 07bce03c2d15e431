// The server's own request metrics: one series per (group, resource, code),
// however many requests, with the latency histogram beside it.
#include <catch2/catch.hpp>

#include <string>

#include "fedmetrics/telemetry/prometheus_server_metrics.hpp"

using fedmetrics::telemetry::PrometheusServerMetrics;

TEST_CASE("PrometheusServerMetrics: requests counted per group, resource and code", "[server][metrics]") {
  PrometheusServerMetrics metrics;
  for (int i = 0; i < 3; ++i) metrics.observe_request("metrics.k8s.io", "pods", 200, 0.004);
  metrics.observe_request("metrics.k8s.io", "pods", 503, 3.2);
  metrics.observe_request("metrics.k8s.io", "nodes", 200, 0.002);
  const std::string text = metrics.serialize();
  INFO(text);
  CHECK(text.find(R"(fedmetrics_apiserver_requests_total{code="200",group="metrics.k8s.io",resource="pods"} 3)") !=
        std::string::npos);
  CHECK(text.find(R"(fedmetrics_apiserver_requests_total{code="503",group="metrics.k8s.io",resource="pods"} 1)") !=
        std::string::npos);
  CHECK(text.find(R"(fedmetrics_apiserver_requests_total{code="200",group="metrics.k8s.io",resource="nodes"} 1)") !=
        std::string::npos);
  // One latency series per group and resource, whatever the code.
  CHECK(text.find(R"(fedmetrics_apiserver_request_duration_seconds_count{group="metrics.k8s.io",resource="pods"} 4)") !=
        std::string::npos);
  CHECK(
      text.find(
          R"(fedmetrics_apiserver_request_duration_seconds_bucket{group="metrics.k8s.io",resource="pods",le="0.005"} 3)") !=
      std::string::npos);
  CHECK(
      text.find(R"(fedmetrics_apiserver_request_duration_seconds_count{group="metrics.k8s.io",resource="nodes"} 1)") !=
      std::string::npos);
}
