// One sync: proposals from several metrics, the invalid-metric rule, the
// min/max branches, conditions with the upstream reasons and messages, the
// status, per-HPA tolerances, scale to zero, and pods identified by cluster.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "fedmetrics/autoscaler/autoscaler.hpp"
#include "test_support.hpp"

namespace fedmetrics::autoscaler {
namespace {

using namespace testing;
using namespace std::chrono_literals;

MetricSpec cpu_utilization(std::int32_t percent) {
  MetricSpec m;
  m.type = MetricSourceType::Resource;
  m.resource_name = "cpu";
  m.target.type = MetricTargetType::Utilization;
  m.target.average_utilization = percent;
  return m;
}

MetricSpec pods_metric(const std::string& name, const std::string& average) {
  MetricSpec m;
  m.type = MetricSourceType::Pods;
  m.metric.name = name;
  m.target.type = MetricTargetType::AverageValue;
  m.target.average_value = q(average);
  return m;
}

MetricSpec external_metric(const std::string& name, MetricTargetType type, const std::string& target) {
  MetricSpec m;
  m.type = MetricSourceType::External;
  m.metric.name = name;
  m.target.type = type;
  (type == MetricTargetType::Value ? m.target.value : m.target.average_value) = q(target);
  return m;
}

MetricSpec object_metric(const std::string& kind, const std::string& name, const std::string& metric,
                         const std::string& target) {
  MetricSpec m;
  m.type = MetricSourceType::Object;
  m.described_object = {kind, name, "v1"};
  m.metric.name = metric;
  m.target.type = MetricTargetType::Value;
  m.target.value = q(target);
  return m;
}

FederatedHPA make_hpa(std::vector<MetricSpec> metrics, std::int32_t min, std::int32_t max) {
  FederatedHPA hpa = hpa_of(std::move(metrics), min, max);
  hpa.generation = 7;
  return hpa;
}

// n ready pods in member1 using `cpu` each (request 100m).
SyncInput cpu_input(std::int32_t replicas, const std::string& cpu) {
  SyncInput in;
  in.scale = {replicas, replicas};
  in.now = t0();
  std::vector<PodResourceSample> samples;
  for (std::int32_t i = 0; i < replicas; ++i) {
    in.pods.push_back(ready_pod("web-" + std::to_string(i)));
    samples.push_back(cpu_sample(in.pods.back().key, cpu));
  }
  in.metrics.resource = samples;
  return in;
}

const HorizontalPodAutoscalerCondition& condition(const SyncResult& r, std::string_view type) {
  const auto* c = find_condition(r.status.conditions, type);
  REQUIRE(c != nullptr);
  return *c;
}

TEST_CASE("sync: a scale-up sets the status and the upstream conditions", "[autoscaler][sync]") {
  // 4 pods at 80m of 100m = 80 % against 50 %: ceil(1.6 * 4) = 7 (within 2 x 4)
  FederatedHPA hpa = make_hpa({cpu_utilization(50)}, 1, 10);
  SyncResult r = sync(hpa, {}, {}, cpu_input(4, "80m"), ControllerConfig{});
  CHECK(r.current_replicas == 4);
  CHECK(r.desired_replicas == 7);
  CHECK(r.rescale);
  CHECK(r.rescale_reason == "cpu resource utilization (percentage of request) above target");
  CHECK_FALSE(r.error);
  CHECK(r.status.current_replicas == 4);
  CHECK(r.status.desired_replicas == 7);
  CHECK(r.status.observed_generation == 7);
  CHECK(r.status.last_scale_time == t0());
  REQUIRE(r.status.current_metrics.size() == 1);
  CHECK(r.status.current_metrics[0].current.average_utilization == 80);
  CHECK(r.status.current_metrics[0].current.average_value == 80);
  CHECK(to_json(r.status.current_metrics[0]).dump() ==
        nlohmann::ordered_json::parse(
            R"({"type":"Resource","resource":{"name":"cpu","current":{"averageUtilization":80,"averageValue":"80m"}}})")
            .dump());

  const auto& able = condition(r, "AbleToScale");
  CHECK(able.status == ConditionStatus::True);
  CHECK(able.reason == "SucceededRescale");
  CHECK(able.message == "the HPA controller was able to update the target scale to 7");
  const auto& active = condition(r, "ScalingActive");
  CHECK(active.status == ConditionStatus::True);
  CHECK(active.reason == "ValidMetricFound");
  CHECK(active.message ==
        "the HPA was able to successfully calculate a replica count from cpu resource utilization (percentage of "
        "request)");
  const auto& limited = condition(r, "ScalingLimited");
  CHECK(limited.status == ConditionStatus::False);
  CHECK(limited.reason == "DesiredWithinRange");
  CHECK(limited.message == "the desired count is within the acceptable range");
  const nlohmann::ordered_json status = to_json(r.status);
  CHECK(status.at("observedGeneration") == 7);
  CHECK(status.at("lastScaleTime") == "2024-01-01T00:10:00Z");
  CHECK(status.at("currentReplicas") == 4);
  CHECK(status.at("desiredReplicas") == 7);
  CHECK(status.at("currentMetrics").size() == 1);
  CHECK(status.at("conditions")[0].at("lastTransitionTime") == "2024-01-01T00:10:00Z");
  // Upstream order: AbleToScale is set first, then ScalingActive, then
  // ScalingLimited; a scale (here not to zero) then sets ScaledToZero False.
  REQUIRE(r.status.conditions.size() == 4);
  CHECK(r.status.conditions[0].type == "AbleToScale");
  CHECK(r.status.conditions[1].type == "ScalingActive");
  CHECK(r.status.conditions[2].type == "ScalingLimited");
  CHECK(r.status.conditions[3].type == "ScaledToZero");
  CHECK(r.status.conditions[3].status == ConditionStatus::False);
  CHECK(r.status.conditions[3].reason == "NotScaledToZero");
}

TEST_CASE("sync: no change keeps the replicas and reports ReadyForNewScale", "[autoscaler][sync]") {
  FederatedHPA hpa = make_hpa({cpu_utilization(50)}, 1, 10);
  FederatedHPAStatus previous;
  previous.last_scale_time = t0() - 1h;
  SyncResult r = sync(hpa, previous, {}, cpu_input(4, "52m"), ControllerConfig{});  // 52 %: within 10 %
  CHECK(r.desired_replicas == 4);
  CHECK_FALSE(r.rescale);
  CHECK(r.status.last_scale_time == t0() - 1h);
  CHECK(condition(r, "AbleToScale").reason == "ReadyForNewScale");
  CHECK(condition(r, "AbleToScale").message == "recommended size matches current size");
}

TEST_CASE("sync: the branches before the metrics", "[autoscaler][sync]") {
  FederatedHPA hpa = make_hpa({cpu_utilization(50)}, 2, 5);
  SECTION("a target at zero with minReplicas above zero is not scaled") {
    SyncResult r = sync(hpa, {}, {}, cpu_input(0, "0"), ControllerConfig{});
    CHECK(r.desired_replicas == 0);
    CHECK_FALSE(r.rescale);
    const auto& active = condition(r, "ScalingActive");
    CHECK(active.status == ConditionStatus::False);
    CHECK(active.reason == "ScalingDisabled");
    CHECK(active.message == "scaling is disabled since the replica count of the target is zero");
  }
  SECTION("above maxReplicas goes to maxReplicas whatever the metrics say") {
    SyncResult r = sync(hpa, {}, {}, cpu_input(8, "100m"), ControllerConfig{});
    CHECK(r.desired_replicas == 5);
    CHECK(r.rescale_reason == "Current number of replicas above Spec.MaxReplicas");
    CHECK(condition(r, "AbleToScale").reason == "SucceededRescale");
  }
  SECTION("below minReplicas goes to minReplicas") {
    SyncResult r = sync(hpa, {}, {}, cpu_input(1, "0"), ControllerConfig{});
    CHECK(r.desired_replicas == 2);
    CHECK(r.rescale_reason == "Current number of replicas below Spec.MinReplicas");
  }
}

TEST_CASE("sync: failed metrics keep the current count and say why", "[autoscaler][sync]") {
  struct Case {
    std::string name;
    MetricSpec metric;
    std::string reason;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"resource metrics API empty", cpu_utilization(50), "FailedGetResourceMetric",
       "the HPA was unable to compute the replica count: failed to get cpu utilization: unable to get metrics for "
       "resource cpu: no metrics returned from resource metrics API"},
      {"no value for the Pods metric", pods_metric("qps", "10"), "FailedGetPodsMetric",
       "the HPA was unable to compute the replica count: unable to get metric qps: no metrics returned from custom "
       "metrics API"},
      {"no value for the Object metric", object_metric("Service", "web", "rps", "10"), "FailedGetObjectMetric",
       "the HPA was unable to compute the replica count: unable to get metric rps on Service default/web: no metric "
       "value returned from custom metrics API"},
      {"no value for the External metric", external_metric("queue", MetricTargetType::Value, "10"),
       "FailedGetExternalMetric",
       "the HPA was unable to compute the replica count: unable to get external metric default/queue/: no metric "
       "values returned from external metrics API"},
  };
  for (const auto& c : cases) {
    SECTION(c.name) {
      FederatedHPA hpa = make_hpa({c.metric}, 1, 10);
      SyncInput in = cpu_input(3, "50m");
      in.metrics.resource = std::vector<PodResourceSample>{};
      SyncResult r = sync(hpa, {}, {}, in, ControllerConfig{});
      CHECK(r.desired_replicas == 3);
      CHECK_FALSE(r.rescale);
      CHECK(r.status.current_metrics.empty());
      const auto& active = condition(r, "ScalingActive");
      CHECK(active.status == ConditionStatus::False);
      CHECK(active.reason == c.reason);
      CHECK(active.message == c.message);
      REQUIRE(r.error);
      CHECK_THAT(*r.error, Catch::StartsWith("invalid metrics (1 invalid out of 1), first error is: "));
      CHECK(find_condition(r.status.conditions, "ScalingLimited") == nullptr);
    }
  }
  SECTION("a missing request is an error") {
    FederatedHPA hpa = make_hpa({cpu_utilization(50)}, 1, 10);
    SyncInput in = cpu_input(2, "50m");
    in.pods[1].containers[0].requests.clear();
    SyncResult r = sync(hpa, {}, {}, in, ControllerConfig{});
    CHECK(r.desired_replicas == 2);
    CHECK(condition(r, "ScalingActive").reason == "FailedGetResourceMetric");
    CHECK_THAT(condition(r, "ScalingActive").message,
               Catch::EndsWith("missing request for cpu in container app of Pod member1/default/web-1"));
  }
  SECTION("a fetch error is reported with the metric") {
    FederatedHPA hpa = make_hpa({pods_metric("qps", "10")}, 1, 10);
    SyncInput in = cpu_input(2, "50m");
    in.metrics.pods.emplace("qps", k8s::Error{"member2: timeout"});
    SyncResult r = sync(hpa, {}, {}, in, ControllerConfig{});
    CHECK(condition(r, "ScalingActive").message ==
          "the HPA was unable to compute the replica count: unable to get metric qps: member2: timeout");
  }
}

TEST_CASE("sync: with several metrics the largest proposal wins", "[autoscaler][sync]") {
  // cpu: 4 pods at 60 % vs 50 % -> ceil(1.2 * 4) = 5; qps: average 3 vs 2 -> 6
  FederatedHPA hpa = make_hpa({cpu_utilization(50), pods_metric("qps", "2")}, 1, 10);
  SyncInput in = cpu_input(4, "60m");
  std::vector<PodMetricSample> qps;
  for (const auto& pod : in.pods) qps.push_back(pod_value(pod.key, "3"));
  in.metrics.pods.emplace("qps", qps);
  SyncResult r = sync(hpa, {}, {}, in, ControllerConfig{});
  CHECK(r.desired_replicas == 6);
  CHECK(r.status.current_metrics.size() == 2);
  CHECK(condition(r, "ScalingActive").message ==
        "the HPA was able to successfully calculate a replica count from pods metric qps");
  CHECK(r.rescale_reason == "pods metric qps above target");
}

TEST_CASE("sync: when a metric fails, scaling up on the others is allowed and scaling down is not",
          "[autoscaler][sync]") {
  FederatedHPA hpa = make_hpa({pods_metric("broken", "1"), cpu_utilization(50)}, 1, 10);
  SECTION("scale up on the valid metric") {
    // cpu 100 % vs 50 % -> 8
    SyncResult r = sync(hpa, {}, {}, cpu_input(4, "100m"), ControllerConfig{});
    CHECK(r.desired_replicas == 8);
    CHECK(r.rescale);
    CHECK(condition(r, "ScalingActive").reason == "ValidMetricFound");
    REQUIRE(r.error);
    CHECK_THAT(*r.error, Catch::StartsWith("invalid metrics (1 invalid out of 2), first error is: failed to get pods "
                                           "metric value: unable to get metric broken"));
    CHECK(r.status.current_metrics.size() == 1);
  }
  SECTION("no scale down on the valid metric") {
    // cpu 10 % vs 50 % would give 1; the failing metric might need more
    SyncResult r = sync(hpa, {}, {}, cpu_input(4, "10m"), ControllerConfig{});
    CHECK(r.desired_replicas == 4);
    CHECK_FALSE(r.rescale);
    CHECK(condition(r, "ScalingActive").status == ConditionStatus::False);
    CHECK(condition(r, "ScalingActive").reason == "FailedGetPodsMetric");
  }
  SECTION("an unchanged count on the valid metric is allowed") {
    SyncResult r = sync(hpa, {}, {}, cpu_input(4, "50m"), ControllerConfig{});
    CHECK(r.desired_replicas == 4);
    CHECK(condition(r, "ScalingActive").reason == "ValidMetricFound");
  }
}

TEST_CASE("sync: same-name pods in two clusters are two pods", "[autoscaler][sync]") {
  // StatefulSet web-0/web-1 in member1 (90m each) and member2 (10m each):
  // (90 + 90 + 10 + 10) / 400 = 50 % against 50 %: no change. Keyed by name
  // only, member2 would overwrite member1 (10 % -> scale down) or the reverse.
  FederatedHPA hpa = make_hpa({cpu_utilization(50)}, 1, 10);
  SyncInput in;
  in.scale = {4, 4};
  in.now = t0();
  std::vector<PodResourceSample> samples;
  for (const auto* cluster : {"member1", "member2"}) {
    for (const auto* name : {"web-0", "web-1"}) {
      in.pods.push_back(ready_pod(name, cluster));
      samples.push_back(cpu_sample(in.pods.back().key, std::string(cluster) == "member1" ? "90m" : "10m"));
    }
  }
  in.metrics.resource = samples;
  SyncResult r = sync(hpa, {}, {}, in, ControllerConfig{});
  CHECK(r.status.current_metrics.at(0).current.average_utilization == 50);
  CHECK(r.desired_replicas == 4);
}

// Scale to zero as upstream 1.37 (HPAScaleToZero beta, condition-based,
// kubernetes/kubernetes#135118 and #139648): the cases of upstream's
// TestHPAScaleToZero phases (up, to 0 and back on an External metric) and of
// reconcileAutoscaler's branches at zero (pkg/controller/podautoscaler/horizontal.go).
TEST_CASE("sync: ScaledToZero marks the autoscaler's own zero, other zeros are left alone", "[autoscaler][sync]") {
  ControllerConfig config;
  config.downscale_stabilization = 0s;
  enum class Metric { External, Object, Cpu };
  struct Case {
    std::string name;
    Metric metric;
    std::int32_t min;
    std::int32_t current;
    std::string value;                      // the metric's value (cpu: per-pod usage)
    std::optional<ConditionStatus> before;  // ScaledToZero on the previous status
    std::int32_t desired;
    std::optional<std::pair<ConditionStatus, std::string>> after;  // ScaledToZero status and reason
    std::string active;                                            // ScalingActive reason
  };
  using CS = ConditionStatus;
  const std::pair<CS, std::string> to_zero{CS::True, "ScaledToZero"};
  const std::pair<CS, std::string> not_zero{CS::False, "NotScaledToZero"};
  const std::vector<Case> cases = {
      // upstream phase 1: a scale that is not to zero sets the condition False
      {"External 1 -> 4: False", Metric::External, 0, 1, "40", std::nullopt, 4, not_zero, "ValidMetricFound"},
      // phase 2: to zero with minReplicas 0 and an External metric
      {"External 2 -> 0: True", Metric::External, 0, 2, "0", std::nullopt, 0, to_zero, "ValidMetricFound"},
      {"Object 3 -> 0: True", Metric::Object, 0, 3, "0", CS::False, 0, to_zero, "ValidMetricFound"},
      // phase 3: its own zero is woken by the metric, and the condition turns False
      {"External 0 -> 3 from its own zero", Metric::External, 0, 0, "25", CS::True, 3, not_zero, "ValidMetricFound"},
      {"Object 0 -> 4 from its own zero, limited", Metric::Object, 0, 0, "950", CS::True, 4, not_zero,
       "ValidMetricFound"},
      {"its own zero stays at zero while the metric is idle", Metric::External, 0, 0, "0", CS::True, 0, to_zero,
       "ValidMetricFound"},
      // a zero without the condition is an operator's: left alone
      {"manual zero without the condition", Metric::External, 0, 0, "25", std::nullopt, 0, std::nullopt,
       "ScalingDisabled"},
      {"manual zero after a wake-up (condition False)", Metric::External, 0, 0, "25", CS::False, 0,
       std::pair{CS::False, std::string("NotScaledToZero")}, "ScalingDisabled"},
      {"manual zero with minReplicas 1", Metric::Object, 1, 0, "950", std::nullopt, 0, std::nullopt, "ScalingDisabled"},
      // minReplicas raised above 0 after the autoscaler's zero: back to minReplicas
      {"minReplicas raised: its own zero comes back to min", Metric::External, 2, 0, "0", CS::True, 2, not_zero,
       "ValidMetricFound"},
      // a Resource metric alone can reach 0 with minReplicas 0, but that zero is not its own
      {"cpu alone to zero: False", Metric::Cpu, 0, 2, "0", std::nullopt, 0, not_zero, "ValidMetricFound"},
      {"cpu alone at zero with the condition: left alone", Metric::Cpu, 0, 0, "0", CS::True, 0, to_zero,
       "ScalingDisabled"},
  };
  for (const auto& c : cases) {
    SECTION(c.name) {
      MetricSpec spec = c.metric == Metric::External ? external_metric("queue", MetricTargetType::AverageValue, "10")
                        : c.metric == Metric::Object ? object_metric("Service", "web", "rps", "100")
                                                     : cpu_utilization(50);
      if (c.metric == Metric::External) spec.metric.selector = k8s::LabelSelector{};
      FederatedHPA hpa = make_hpa({spec}, c.min, 10);
      SyncInput in = c.metric == Metric::Cpu ? cpu_input(c.current, c.value + "m") : SyncInput{};
      in.now = t0();
      in.scale = {c.current, c.current};
      for (std::int32_t i = 0; i < c.current && c.metric != Metric::Cpu; ++i)
        in.pods.push_back(ready_pod("w-" + std::to_string(i)));
      if (c.metric == Metric::External)
        in.metrics.externals = {ExternalMetricValues{"queue", "", std::vector{q(c.value)}}};
      if (c.metric == Metric::Object) in.metrics.objects = {ObjectMetricValue{"Service", "web", "rps", q(c.value)}};
      FederatedHPAStatus previous;
      if (c.before) {
        previous.conditions.push_back(
            {"ScaledToZero", *c.before, *c.before == CS::True ? "ScaledToZero" : "NotScaledToZero", "", t0() - 1h});
      }
      SyncResult r = sync(hpa, previous, {}, in, config);
      CHECK(r.desired_replicas == c.desired);
      CHECK(r.rescale == (c.desired != c.current));
      CHECK(condition(r, "ScalingActive").reason == c.active);
      const auto* zero = find_condition(r.status.conditions, "ScaledToZero");
      if (!c.after) {
        CHECK(zero == nullptr);
      } else {
        REQUIRE(zero != nullptr);
        CHECK(zero->status == c.after->first);
        CHECK(zero->reason == c.after->second);
        if (r.rescale) {
          CHECK(zero->message == (c.after->first == CS::True
                                      ? "the HPA controller scaled the workload to zero"
                                      : "the HPA controller did not scale the workload to zero"));
        }
      }
    }
  }
}

TEST_CASE("sync: a failed scale to zero keeps the previous ScaledToZero condition", "[autoscaler][sync]") {
  ControllerConfig config;
  config.downscale_stabilization = 0s;
  MetricSpec spec = external_metric("queue", MetricTargetType::AverageValue, "10");
  spec.metric.selector = k8s::LabelSelector{};
  FederatedHPA hpa = make_hpa({spec}, 0, 5);
  SyncInput in;
  in.now = t0();
  in.scale = {2, 2};
  in.pods = {ready_pod("w-0"), ready_pod("w-1")};
  in.metrics.externals = {ExternalMetricValues{"queue", "", std::vector{q("0")}}};
  SyncResult down = sync(hpa, {}, {}, in, config);
  REQUIRE(down.desired_replicas == 0);
  REQUIRE(find_condition(down.status.conditions, "ScaledToZero") != nullptr);
  // Never scaled to zero: the condition is not written.
  CHECK(find_condition(rescale_failed(down, {}, "conflict", t0()).status.conditions, "ScaledToZero") == nullptr);
  // It was False (a wake-up before): it stays False.
  FederatedHPAStatus woke;
  woke.conditions.push_back({"ScaledToZero", ConditionStatus::False, "NotScaledToZero", "m", t0() - 1h});
  SyncResult again = sync(hpa, woke, {}, in, config);
  const auto failed = rescale_failed(again, woke, "conflict", t0());  // kept alive: `kept` points into it
  const auto* kept = find_condition(failed.status.conditions, "ScaledToZero");
  REQUIRE(kept != nullptr);
  CHECK(kept->status == ConditionStatus::False);
  CHECK(kept->last_transition_time == t0() - 1h);
}

TEST_CASE("sync: per-HPA tolerances override the controller's per direction", "[autoscaler][sync]") {
  // 4 pods at 54 % vs 50 %: ratio 1.08 is within the default 10 %
  FederatedHPA hpa = make_hpa({cpu_utilization(50)}, 1, 10);
  CHECK(sync(hpa, {}, {}, cpu_input(4, "54m"), ControllerConfig{}).desired_replicas == 4);
  hpa.spec.behavior = HorizontalPodAutoscalerBehavior{};
  hpa.spec.behavior->scale_up = HPAScalingRules{};
  hpa.spec.behavior->scale_up->tolerance = q("0.05");
  // 1.08 is outside 5 %: ceil(1.08 * 4) = 5
  CHECK(sync(hpa, {}, {}, cpu_input(4, "54m"), ControllerConfig{}).desired_replicas == 5);
  // the scale-down side keeps the controller's 10 %: 46 % -> 0.92 stays
  CHECK(sync(hpa, {}, {}, cpu_input(4, "46m"), ControllerConfig{}).desired_replicas == 4);
  const Tolerances t = tolerances_for(with_defaults(hpa.spec), ControllerConfig{});
  CHECK(t.scale_up == Approx(0.05));
  CHECK(t.scale_down == Approx(0.1));
  // and the controller's tolerance is a setting
  ControllerConfig loose;
  loose.tolerance = 0.5;
  CHECK(sync(make_hpa({cpu_utilization(50)}, 1, 10), {}, {}, cpu_input(4, "70m"), loose).desired_replicas == 4);
}

TEST_CASE("sync: the recommendation history carries the stabilization window between syncs", "[autoscaler][sync]") {
  FederatedHPA hpa = make_hpa({cpu_utilization(50)}, 1, 10);
  // 6 pods at 75 % -> ceil(1.5 * 6) = 9
  SyncResult first = sync(hpa, {}, {}, cpu_input(6, "75m"), ControllerConfig{});
  CHECK(first.desired_replicas == 9);
  // 60 s later the target was set back to 5 by hand and the load is low
  // (ceil(0.2 * 5) = 1): the 9 recommended 60 s ago is still in the 300 s
  // window and wins.
  SyncInput low = cpu_input(5, "10m");
  low.now = t0() + 60s;
  SyncResult held = sync(hpa, first.status, first.history, low, ControllerConfig{});
  CHECK(held.desired_replicas == 9);
  // Without the history only this sync's starting count (5) is remembered.
  CHECK(sync(hpa, {}, {}, low, ControllerConfig{}).desired_replicas == 5);
  CHECK(condition(sync(hpa, {}, {}, low, ControllerConfig{}), "AbleToScale").reason == "ScaleDownStabilized");
  // After the window only the recent low recommendations remain.
  low.now = t0() + 361s;
  SyncResult released = sync(hpa, held.status, held.history, low, ControllerConfig{});
  CHECK(released.desired_replicas == 1);
}

TEST_CASE("sync: with behavior, rate policies use the scale events of earlier syncs", "[autoscaler][sync]") {
  FederatedHPA hpa = make_hpa({cpu_utilization(50)}, 1, 100);
  hpa.spec.behavior = HorizontalPodAutoscalerBehavior{};
  HPAScalingRules up;
  up.policies = std::vector<HPAScalingPolicy>{{ScalingPolicyType::Pods, 2, 60}};
  hpa.spec.behavior->scale_up = up;
  SyncResult a = sync(hpa, {}, {}, cpu_input(2, "200m"), ControllerConfig{});
  CHECK(a.desired_replicas == 4);  // +2 per 60 s
  CHECK(condition(a, "ScalingLimited").reason == "ScaleUpLimit");
  SyncInput later = cpu_input(4, "200m");
  later.now = t0() + 30s;
  SyncResult b = sync(hpa, a.status, a.history, later, ControllerConfig{});
  CHECK(b.desired_replicas == 4);  // the period's +2 is used up
  later.now = t0() + 61s;
  SyncResult c = sync(hpa, a.status, a.history, later, ControllerConfig{});
  CHECK(c.desired_replicas == 6);
}

TEST_CASE("sync: a failed scale update keeps the old desired count and drops the scale event", "[autoscaler][sync]") {
  FederatedHPA hpa = make_hpa({cpu_utilization(50)}, 1, 10);
  hpa.spec.behavior = HorizontalPodAutoscalerBehavior{};
  FederatedHPAStatus previous;
  previous.desired_replicas = 4;
  SyncResult r = sync(hpa, previous, {}, cpu_input(4, "80m"), ControllerConfig{});
  REQUIRE(r.rescale);
  CHECK(r.history.scale_up_events.size() == 1);
  RescaleFailure f = rescale_failed(r, previous, "conflict", t0());
  CHECK(f.status.desired_replicas == 4);
  CHECK(f.history.scale_up_events.empty());
  const auto* able = find_condition(f.status.conditions, "AbleToScale");
  REQUIRE(able != nullptr);
  CHECK(able->status == ConditionStatus::False);
  CHECK(able->reason == "FailedUpdateScale");
  CHECK(able->message == "the HPA controller was unable to update the target scale: conflict");
}

TEST_CASE("sync: a condition's transition time moves only when its status changes", "[autoscaler][sync]") {
  std::vector<HorizontalPodAutoscalerCondition> conditions;
  set_condition(conditions, "ScalingActive", ConditionStatus::True, "ValidMetricFound", "a", t0());
  set_condition(conditions, "ScalingActive", ConditionStatus::True, "ValidMetricFound", "b", t0() + 10s);
  CHECK(conditions.at(0).last_transition_time == t0());
  CHECK(conditions.at(0).message == "b");
  set_condition(conditions, "ScalingActive", ConditionStatus::False, "FailedGetResourceMetric", "c", t0() + 20s);
  CHECK(conditions.at(0).last_transition_time == t0() + 20s);
  CHECK(conditions.size() == 1);
}

}  // namespace
}  // namespace fedmetrics::autoscaler
