// The autoscaler's metrics on prometheus-cpp (src/telemetry/autoscaler_metrics.cpp):
// what a scrape collects after the loop's observations, and that a forgotten
// FederatedHPA leaves no series behind (the label-cardinality guard).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <prometheus/registry.h>

#include "fedmetrics/telemetry/autoscaler_metrics.hpp"

namespace fedmetrics::telemetry {
namespace {

const prometheus::MetricFamily* family(const std::vector<prometheus::MetricFamily>& all, const std::string& name) {
  for (const auto& f : all)
    if (f.name == name) return &f;
  return nullptr;
}

std::string label(const prometheus::ClientMetric& m, const std::string& name) {
  for (const auto& l : m.label)
    if (l.name == name) return l.value;
  return {};
}

constexpr const char* kPrefix = "fedmetrics_horizontal_pod_autoscaler_controller_";

}  // namespace

TEST_CASE("PrometheusAutoscalerMetrics: replicas per FederatedHPA, gone once forgotten") {
  prometheus::Registry registry;
  PrometheusAutoscalerMetrics metrics(registry);
  metrics.set_replicas("shop", "web", 2, 4);
  metrics.set_replicas("shop", "api", 1, 1);
  metrics.set_replicas("shop", "web", 4, 4);  // the same series, updated

  auto scraped = registry.Collect();
  const auto* desired = family(scraped, std::string(kPrefix) + "desired_replicas");
  const auto* current = family(scraped, std::string(kPrefix) + "current_replicas");
  const auto* count = family(scraped, std::string(kPrefix) + "num_horizontal_pod_autoscalers");
  REQUIRE(desired);
  REQUIRE(current);
  REQUIRE(count);
  CHECK(desired->metric.size() == 2);
  CHECK(current->metric.size() == 2);
  CHECK(count->metric.at(0).gauge.value == 2);
  for (const auto& m : current->metric)
    if (label(m, "hpa_name") == "web") CHECK(m.gauge.value == 4);

  metrics.forget("shop", "web");
  metrics.forget("shop", "never-seen");  // nothing to forget: no change
  scraped = registry.Collect();
  desired = family(scraped, std::string(kPrefix) + "desired_replicas");
  current = family(scraped, std::string(kPrefix) + "current_replicas");
  count = family(scraped, std::string(kPrefix) + "num_horizontal_pod_autoscalers");
  REQUIRE(desired->metric.size() == 1);
  REQUIRE(current->metric.size() == 1);
  CHECK(label(desired->metric.at(0), "namespace") == "shop");
  CHECK(label(desired->metric.at(0), "hpa_name") == "api");
  CHECK(count->metric.at(0).gauge.value == 1);
}

TEST_CASE("PrometheusAutoscalerMetrics: reconciliations and computations under kube-controller-manager's labels") {
  prometheus::Registry registry;
  PrometheusAutoscalerMetrics metrics(registry);
  using controller::ScaleAction;
  using controller::SyncError;
  metrics.observe_reconciliation(ScaleAction::ScaleUp, SyncError::None, std::chrono::milliseconds(3));
  metrics.observe_reconciliation(ScaleAction::ScaleUp, SyncError::None, std::chrono::milliseconds(5));
  metrics.observe_reconciliation(ScaleAction::None, SyncError::Spec, std::chrono::milliseconds(1));
  metrics.observe_metric_computation(ScaleAction::ScaleDown, SyncError::Internal,
                                     autoscaler::MetricSourceType::External, std::chrono::milliseconds(2));

  auto scraped = registry.Collect();
  const auto* total = family(scraped, std::string(kPrefix) + "reconciliations_total");
  REQUIRE(total);
  REQUIRE(total->metric.size() == 2);
  for (const auto& m : total->metric) {
    if (label(m, "action") == "scale_up") {
      CHECK(label(m, "error") == "none");
      CHECK(m.counter.value == 2);
    } else {
      CHECK(label(m, "action") == "none");
      CHECK(label(m, "error") == "spec");
      CHECK(m.counter.value == 1);
    }
  }
  const auto* seconds = family(scraped, std::string(kPrefix) + "reconciliation_duration_seconds");
  REQUIRE(seconds);
  CHECK(seconds->metric.size() == 2);
  const auto* computations = family(scraped, std::string(kPrefix) + "metric_computation_total");
  REQUIRE(computations);
  REQUIRE(computations->metric.size() == 1);
  CHECK(label(computations->metric.at(0), "action") == "scale_down");
  CHECK(label(computations->metric.at(0), "error") == "internal");
  CHECK(label(computations->metric.at(0), "metric_type") == "External");
}

}  // namespace fedmetrics::telemetry
