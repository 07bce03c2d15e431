// Cases ported from kubernetes/kubernetes
// pkg/controller/podautoscaler/replica_calculator_test.go (the tables, not the
// code): every pod has two containers, container1 and container2, each with
// the pod's cpu request; a level is a container's usage in millicores. The
// upstream test settings apply: cpu initialization period 2 min, initial
// readiness delay 10 s, tolerance 0.1. Expectations were re-derived by hand;
// the arithmetic is in the comments.
#include <catch2/catch.hpp>

#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "fedmetrics/autoscaler/replica_calculator.hpp"
#include "test_support.hpp"

namespace fedmetrics::autoscaler {
namespace {

using namespace testing;
using namespace std::chrono_literals;

const CalculatorConfig kUpstreamTestConfig{2min, 10s};
const Tolerances kDefault{0.1, 0.1};

// Upstream's hot pod started within the cpu initialization period, a cool one before it.
Timestamp hot() { return t0() - 1min; }
Timestamp cool() { return t0() - 3min; }

struct Fixture {
  std::int32_t current_replicas = 0;
  std::vector<std::string> requests{};              // per pod, per container
  std::vector<std::vector<std::int64_t>> levels{};  // per pod, per container
  std::vector<std::string> metric_pod_names{};      // overrides the sample's pod name
  std::vector<ConditionStatus> readiness{};         // default True
  std::vector<PodPhase> phases{};                   // default Running; may list more pods
  std::vector<bool> deleting{};
  std::vector<Timestamp> start_times{};  // default: long ago (the zero time upstream)

  [[nodiscard]] std::size_t pod_count() const {
    return std::max<std::size_t>(static_cast<std::size_t>(current_replicas), phases.size());
  }

  [[nodiscard]] std::vector<Pod> pods() const {
    std::vector<Pod> out{};
    for (std::size_t i = 0; i < pod_count(); ++i) {
      Pod pod{};
      pod.key = key("test-pod-" + std::to_string(i), "c1", "test-namespace");
      pod.phase = i < phases.size() ? phases[i] : PodPhase::Running;
      pod.ready = PodReadyCondition{i < readiness.size() ? readiness[i] : ConditionStatus::True, Timestamp{}};
      pod.start_time = i < start_times.size() ? start_times[i] : Timestamp{};
      pod.deleting = i < deleting.size() && deleting[i];
      for (const char* name : {"container1", "container2"}) {
        Container c;
        c.name = name;
        if (i < requests.size()) c.requests["cpu"] = q(requests[i]);
        pod.containers.push_back(c);
      }
      out.push_back(pod);
    }
    return out;
  }

  // Samples stamped at the zero time with a one-minute window, as upstream.
  [[nodiscard]] std::vector<PodResourceSample> samples() const {
    std::vector<PodResourceSample> out{};
    for (std::size_t i = 0; i < levels.size(); ++i) {
      PodResourceSample s{};
      const std::string name = i < metric_pod_names.size() ? metric_pod_names[i] : "test-pod-" + std::to_string(i);
      s.key = key(name, "c1", "test-namespace");
      s.timestamp = Timestamp{};
      s.window = 1min;
      for (std::size_t j = 0; j < levels[i].size(); ++j) {
        s.containers.push_back(ContainerUsage{"container" + std::to_string(j + 1), {{"cpu", milli(levels[i][j])}}});
      }
      out.push_back(s);
    }
    return out;
  }
};

// Both containers of each pod at the same level (upstream makePodMetricLevels).
std::vector<std::vector<std::int64_t>> levels(std::initializer_list<std::int64_t> per_container) {
  std::vector<std::vector<std::int64_t>> out{};
  for (auto v : per_container) out.push_back({v, v});
  return out;
}

std::vector<std::string> requests(std::size_t n, const std::string& value) {
  return std::vector<std::string>(n, value);
}

using CS = ConditionStatus;
using PP = PodPhase;

struct ResourceCase {
  std::string name{};
  Fixture fixture{};
  std::string container{};
  std::int32_t target_utilization = 0;
  std::int32_t expected_replicas = 0;
  std::int32_t expected_utilization = 0;
  std::int64_t expected_raw = 0;
  std::string expected_error{};  // substring, when an error is expected
  Tolerances tolerances = kDefault;
};

TEST_CASE("replica calculator: cpu utilization (ported upstream table)", "[autoscaler][replica_calculator]") {
  const std::vector<ResourceCase> cases = {
      // 4.5 / 3 = 1.5 = 50 % of request; 50 / 30 -> ceil(1.667 * 3) = 5
      {"scale up", {3, requests(3, "1.0"), levels({300, 500, 700})}, "", 30, 5, 50, 2 * 500},
      {"scale up: container metric",
       {3, requests(3, "1.0"), {{1000, 300}, {1000, 500}, {1000, 700}}},
       "container2",
       30,
       5,
       50,
       500},
      // pod 0 not Ready: 1.2 / 2 = 60 %, ratio 2 > 1 so it counts as 0: 1.2 / 3 = 40 % -> ceil(1.333 * 3) = 4
      {"scale up: unready pod scales less",
       {3, requests(3, "1.0"), levels({300, 500, 700}), {}, {CS::False, CS::True, CS::True}},
       "",
       30,
       4,
       60,
       1200},
      {"scale up: hot-CPU container scales less",
       {3, requests(3, "1.0"), {{0, 300}, {0, 500}, {0, 700}}, {}, {}, {}, {}, {hot(), cool(), cool()}},
       "container2",
       30,
       4,
       60,
       600},
      {"scale up: hot-CPU pod scales less",
       {3, requests(3, "1.0"), levels({300, 500, 700}), {}, {}, {}, {}, {hot(), cool(), cool()}},
       "",
       30,
       4,
       60,
       1200},
      // 40 % on the Ready pod, ratio 1.33; unready pods at 0: 13 % -> ratio 0.44 flips direction -> keep 3
      {"no scale: unready pods ignored",
       {3, requests(3, "1.0"), levels({400, 500, 700}), {}, {CS::True, CS::False, CS::False}},
       "",
       30,
       3,
       40,
       800},
      {"no scale: hot-CPU pods ignored",
       {3,
        requests(3, "1.0"),
        levels({400, 500, 700}),
        {},
        {CS::True, CS::False, CS::False},
        {},
        {},
        {cool(), hot(), hot()}},
       "",
       30,
       3,
       40,
       800},
      {"scale up: failed pods ignored",
       {2,
        requests(4, "1.0"),
        levels({500, 700}),
        {},
        {CS::True, CS::True, CS::False, CS::False},
        {PP::Running, PP::Running, PP::Failed, PP::Failed}},
       "",
       30,
       4,
       60,
       1200},
      {"scale up: failed pods ignored with missing container metric",
       {2,
        requests(4, "1.0"),
        {{1000, 500}, {9000, 700}, {1000}, {9000}},
        {},
        {CS::True, CS::True, CS::False, CS::False},
        {PP::Running, PP::Running, PP::Failed, PP::Failed}},
       "container2",
       30,
       4,
       60,
       600},
      {"scale up: pods being deleted are ignored",
       {2,
        requests(4, "1.0"),
        levels({500, 700}),
        {},
        {CS::True, CS::True, CS::False, CS::False},
        {PP::Running, PP::Running, PP::Running, PP::Running},
        {false, false, true, true}},
       "",
       30,
       4,
       60,
       1200},
      // 1.4 / 5 = 28 % -> 28 / 50 = 0.56 -> ceil(2.8) = 3
      {"scale down", {5, requests(5, "1.0"), levels({100, 300, 500, 250, 250})}, "", 50, 3, 28, 2 * 280},
      {"scale down: container metric",
       {5, requests(5, "1.0"), {{1000, 100}, {1000, 300}, {1000, 500}, {1000, 250}, {1000, 250}}},
       "container2",
       50,
       3,
       28,
       280},
      // Ready pods only: 0.9 / 3 = 30 % -> 0.6 -> ceil(1.8) = 2
      {"scale down: exclude unready pods",
       {5,
        requests(5, "1.0"),
        levels({100, 300, 500, 250, 250}),
        {},
        {CS::True, CS::True, CS::True, CS::False, CS::False}},
       "",
       50,
       2,
       30,
       600},
      {"scale down: exclude unscheduled (pending) pods",
       {5,
        requests(5, "1.0"),
        levels({100}),
        {},
        {CS::True, CS::False, CS::False, CS::False, CS::False},
        {PP::Running, PP::Pending, PP::Pending, PP::Pending, PP::Pending}},
       "",
       50,
       1,
       10,
       200},
      {"scale down: ignore hot-CPU pods",
       {5,
        requests(5, "1.0"),
        levels({100, 300, 500, 250, 250}),
        {},
        {},
        {},
        {},
        {cool(), cool(), cool(), hot(), hot()}},
       "",
       50,
       2,
       30,
       600},
      {"scale down: failed pods ignored",
       {5,
        requests(7, "1.0"),
        levels({100, 300, 500, 250, 250}),
        {},
        {CS::True, CS::True, CS::True, CS::True, CS::True, CS::False, CS::False},
        {PP::Running, PP::Running, PP::Running, PP::Running, PP::Running, PP::Failed, PP::Failed}},
       "",
       50,
       3,
       28,
       560},
      {"scale down: pods being deleted are ignored",
       {5,
        requests(7, "1.0"),
        levels({100, 300, 500, 250, 250}),
        {},
        {CS::True, CS::True, CS::True, CS::True, CS::True, CS::False, CS::False},
        {PP::Running, PP::Running, PP::Running, PP::Running, PP::Running, PP::Running, PP::Running},
        {false, false, false, false, false, true, true}},
       "",
       50,
       3,
       28,
       560},
      // 6.12 / 6.0 = 102 % -> 1.02 is within 0.1
      {"tolerance: no scale within 10 %",
       {3, {"0.9", "1.0", "1.1"}, levels({1010, 1030, 1020})},
       "",
       100,
       3,
       102,
       2040},
      {"configurable tolerance: outside of a 0 % tolerance",
       {3, {"0.9", "1.0", "1.1"}, levels({909, 1010, 1111})},
       "",
       100,
       4,
       101,
       2020,
       "",
       Tolerances{0, 0}},
      {"configurable tolerance: within a 200 % scale-up tolerance",
       {3, {"0.9", "1.0", "1.1"}, levels({1890, 1910, 1900})},
       "",
       100,
       3,
       190,
       3800,
       "",
       Tolerances{0.1, 2.0}},
      {"configurable tolerance: outside an 8 % scale-up tolerance",
       {3, {"0.9", "1.0", "1.1"}, levels({1100, 1080, 1090})},
       "",
       100,
       4,
       109,
       2180,
       "",
       Tolerances{2.0, 0.08}},
      {"configurable tolerance: within a 36 % scale-down tolerance",
       {3, {"0.9", "1.0", "1.1"}, levels({660, 640, 650})},
       "",
       100,
       3,
       65,
       1300,
       "",
       Tolerances{0.36, 0.1}},
      {"configurable tolerance: outside a 34 % scale-down tolerance",
       {3, {"0.9", "1.0", "1.1"}, levels({660, 640, 650})},
       "",
       100,
       2,
       65,
       1300,
       "",
       Tolerances{0.34, 0.1}},
      // values for pods that are not listed are left out: 47 / 8 = 587 % -> ceil(5.87 * 4) = 24
      {"superfluous metrics are ignored",
       {4, requests(4, "1.0"), levels({4000, 9500, 3000, 7000, 3200, 2000})},
       "",
       100,
       24,
       587,
       2 * 5875},
      // 0.99 / 4 = 24 %; scale-down: the 2 missing pods at 100 %: 4.99 / 8 = 62 % -> ceil(0.62 * 4) = 3
      {"missing pods count as 100 % on scale-down", {4, requests(4, "1.0"), levels({400, 95})}, "", 100, 3, 24, 495},
      {"missing metrics: no change at the target", {2, requests(2, "1.0"), levels({1000})}, "", 100, 2, 100, 2000},
      // 190 %; scale-up: missing pod at 0 %: 95 % is within -> keep 2
      {"missing pods count as 0 % on scale-up", {2, requests(2, "1.0"), levels({1900})}, "", 100, 2, 190, 3800},
      // 60 %; missing pod at 100 %: 80 % -> ceil(0.8 * 2) = 2
      {"missing metrics: no change below target", {2, requests(2, "1.0"), levels({600})}, "", 100, 2, 60, 1200},
      // Ready pod at 45 % (0.9), missing pod at 100 %: 72 % = 1.44 flips direction -> keep 3
      {"missing and unready: direction flip keeps the count",
       {3, requests(3, "1.0"), levels({100, 450}), {}, {CS::False, CS::True, CS::True}},
       "",
       50,
       3,
       45,
       900},
      {"missing and hot cpu: direction flip keeps the count",
       {3, requests(3, "1.0"), levels({100, 450}), {}, {}, {}, {}, {hot(), cool(), cool()}},
       "",
       50,
       3,
       45,
       900},
      // Ready pod at 200 % (4.0); unready and missing at 0: 66 % = 1.32 -> ceil(3.96) = 4
      {"missing and unready: scale up",
       {3, requests(3, "1.0"), levels({100, 2000}), {}, {CS::False, CS::True, CS::True}},
       "",
       50,
       4,
       200,
       4000},
      {"missing and hot cpu: scale up",
       {3,
        requests(3, "1.0"),
        levels({100, 2000}),
        {},
        {CS::False, CS::True, CS::True},
        {},
        {},
        {hot(), cool(), cool()}},
       "",
       50,
       4,
       200,
       4000},
      // 10 %; missing pod at 100 %: 2.4 / 6 = 40 % = 0.8 -> ceil(0.8 * 3) = 3
      {"missing and unready: scale down",
       {4, requests(4, "1.0"), levels({100, 100, 100}), {}, {CS::False, CS::True, CS::True, CS::True}},
       "",
       50,
       3,
       10,
       200},
      // target 300 %: a missing pod is assumed at 300 % of its request: (0.4 + 12) / 10 = 124 % -> ceil(0.41 * 3) = 2
      {"missing pods count at the target above 100 % on scale-down",
       {4, {"1.0", "1.0", "2.0", "2.0"}, levels({200, 100, 100}), {}, {CS::False, CS::True, CS::True, CS::True}},
       "",
       300,
       2,
       6,
       200},
      // surge pod without metrics at 100 %: 40 % -> ceil(0.8 * 3) = 3 > 2 on a scale-down -> keep 2
      {"rolling update with max surge keeps the count",
       {2, requests(3, "1.0"), levels({100, 100}), {}, {}, {PP::Running, PP::Running, PP::Running}},
       "",
       50,
       2,
       10,
       200},
      {"values for other pods only: error",
       {1, requests(1, "1.0"), levels({100}), {"an-older-pod-name"}},
       "",
       100,
       0,
       0,
       0,
       "no metrics returned matched known pods"},
      {"no samples at all: error",
       {4, requests(3, "1.0"), {}},
       "",
       100,
       0,
       0,
       0,
       "unable to get metrics for resource cpu: no metrics returned from resource metrics API"},
      {"missing cpu request: error",
       {1, {}, levels({200})},
       "",
       100,
       0,
       0,
       0,
       "missing request for cpu in container container1 of Pod c1/test-namespace/test-pod-0"},
      // A pod without the container requests none of it (a missing pod, see
      // "ContainerResource: ..." below): a value for it matches no request.
      {"container only in the samples: no known request",
       {1, requests(1, "1.0"), {{100, 100, 100}}},
       "container3",
       100,
       0,
       0,
       0,
       "no metrics returned matched known pods"},
      {"every pod unready: error",
       {2, requests(2, "1.0"), levels({100, 100}), {}, {CS::False, CS::False}},
       "",
       50,
       0,
       0,
       0,
       "did not receive metrics for targeted pods (pods might be unready)"},
  };
  for (const auto& c : cases) {
    SECTION(c.name) {
      auto result = resource_replicas(c.fixture.current_replicas, c.target_utilization, "cpu", c.container,
                                      c.tolerances, c.fixture.pods(), c.fixture.samples(), t0(), kUpstreamTestConfig);
      if (!c.expected_error.empty()) {
        REQUIRE_FALSE(result.ok());
        CHECK_THAT(result.error().message, Catch::Contains(c.expected_error));
      } else {
        REQUIRE(result.ok());
        CHECK(result->replicas == c.expected_replicas);
        CHECK(result->utilization == c.expected_utilization);
        CHECK(result->usage == c.expected_raw);
      }
    }
  }
}

TEST_CASE("replica calculator: the tolerance band is computed on the truncated utilization",
          "[autoscaler][replica_calculator]") {
  // Upstream TestReplicaCalcComputedToleranceAlgImplementation: 10 pods using
  // 150m each against 300m requests (spread +-100m) are at 50 %. A target of
  // int(100 / (2 * 0.9) + 1) = 56 % gives 50 / 56 = 0.89, just outside the
  // tolerance: ceil(0.89 * 10) = 9. A target of 55 % gives 0.909, inside: 10.
  Fixture f{};
  f.current_replicas = 10;
  f.requests = {"400m", "200m", "310m", "290m", "302m", "298m", "301m", "299m", "300m", "300m"};
  f.levels = levels({150, 150, 150, 150, 150, 150, 150, 150, 150, 150});
  auto outside = resource_replicas(10, 56, "cpu", "", kDefault, f.pods(), f.samples(), t0(), kUpstreamTestConfig);
  REQUIRE(outside.ok());
  CHECK(outside->utilization == 50);
  CHECK(outside->replicas == 9);
  auto inside = resource_replicas(10, 55, "cpu", "", kDefault, f.pods(), f.samples(), t0(), kUpstreamTestConfig);
  REQUIRE(inside.ok());
  CHECK(inside->replicas == 10);
}

TEST_CASE("replica calculator: memory is not subject to the cpu readiness rules", "[autoscaler][replica_calculator]") {
  // Same pods as "scale up: unready pod scales less", but for memory the
  // not-Ready pod counts: 50 % / 30 % -> ceil(1.667 * 3) = 5.
  Fixture f{3, {}, {}, {}, {CS::False, CS::True, CS::True}};
  std::vector<Pod> pods = f.pods();
  std::vector<PodResourceSample> samples{};
  const std::int64_t usage[] = {300, 500, 700};
  for (std::size_t i = 0; i < pods.size(); ++i) {
    for (auto& c : pods[i].containers) c.requests["memory"] = q("1");
    PodResourceSample s{};
    s.key = pods[i].key;
    s.containers = {ContainerUsage{"container1", {{"memory", milli(usage[i])}}},
                    ContainerUsage{"container2", {{"memory", milli(usage[i])}}}};
    samples.push_back(s);
  }
  auto result = resource_replicas(3, 30, "memory", "", kDefault, pods, samples, t0(), kUpstreamTestConfig);
  REQUIRE(result.ok());
  CHECK(result->utilization == 50);
  CHECK(result->replicas == 5);
}

struct PlainCase {
  std::string name{};
  Fixture fixture{};  // levels[i][0] is pod i's value
  std::int64_t target = 0;
  std::int32_t expected_replicas = 0;
  std::int64_t expected_usage = 0;
  Tolerances tolerances = kDefault;
};

std::vector<std::vector<std::int64_t>> values(std::initializer_list<std::int64_t> v) {
  std::vector<std::vector<std::int64_t>> out{};
  for (auto x : v) out.push_back({x});
  return out;
}

TEST_CASE("replica calculator: Pods metrics, average value (ported upstream table)",
          "[autoscaler][replica_calculator]") {
  const std::vector<PlainCase> cases = {
      // average 20 / 15 = 1.33 -> ceil(4) = 4
      {"scale up", {3, {}, values({20000, 10000, 30000})}, 15000, 4, 20000},
      // readiness does not matter for custom metrics: average 30 / 15 -> 6
      {"unready hot pods still count for custom metrics",
       {3, {}, values({50000, 10000, 30000}), {}, {CS::True, CS::True, CS::False}, {}, {}, {cool(), cool(), hot()}},
       15000,
       6,
       30000},
      // 95 / 3 = 31666 -> 2.11 -> ceil(6.33) = 7
      {"unready hot pods: scale up",
       {3, {}, values({50000, 15000, 30000}), {}, {CS::False, CS::True, CS::False}, {}, {}, {hot(), cool(), hot()}},
       15000,
       7,
       31666},
      {"scale down", {5, {}, values({12000, 12000, 12000, 12000, 12000})}, 20000, 3, 12000},
      // 20666 / 20000 = 1.033: within 0.1
      {"tolerance", {3, {}, values({20000, 21000, 21000})}, 20000, 3, 20666},
      {"configurable tolerance: 1 % scale-up",
       {3, {}, values({20000, 21000, 21000})},
       20000,
       4,
       20666,
       Tolerances{0.1, 0.01}},
      // 2 of 5 pods missing; average 20000 == target -> keep 5
      {"missing metrics at the target: no change", {5, {}, values({20000, 19000, 21000})}, 20000, 5, 20000},
      // 10 / 17 = 0.59; surge pod at the target: 37 / 3 = 12.3 / 17 = 0.73 -> ceil(2.18) = 3 > 2 -> keep 2
      {"rolling update with max surge",
       {2, {}, values({10000, 10000}), {}, {}, {PP::Running, PP::Running, PP::Running}},
       17000,
       2,
       10000},
      // missing pod on scale-up counts as 0: (30 + 0) / 2 = 15 -> 1.0 -> within -> keep 2
      {"missing pod counts as 0 on scale-up", {2, {}, values({30000})}, 15000, 2, 30000},
  };
  for (const auto& c : cases) {
    SECTION(c.name) {
      std::vector<PodMetricSample> samples{};
      for (std::size_t i = 0; i < c.fixture.levels.size(); ++i) {
        samples.push_back(PodMetricSample{key("test-pod-" + std::to_string(i), "c1", "test-namespace"),
                                          milli(c.fixture.levels[i][0]), Timestamp{}});
      }
      auto result = pods_metric_replicas(c.fixture.current_replicas, c.target, "qps", c.tolerances, c.fixture.pods(),
                                         samples, t0(), kUpstreamTestConfig);
      REQUIRE(result.ok());
      CHECK(result->replicas == c.expected_replicas);
      CHECK(result->usage == c.expected_usage);
    }
  }
}

TEST_CASE("replica calculator: Pods metric without any value is an error", "[autoscaler][replica_calculator]") {
  Fixture f{3};
  auto result = pods_metric_replicas(3, 1000, "qps", kDefault, f.pods(), {}, t0(), kUpstreamTestConfig);
  REQUIRE_FALSE(result.ok());
  CHECK(result.error().message == "unable to get metric qps: no metrics returned from custom metrics API");
}

TEST_CASE("replica calculator: Resource with an AverageValue target", "[autoscaler][replica_calculator]") {
  // Per-pod usage is the sum over containers: 600m, 1000m, 1400m -> average 1000m
  // against 500m -> 2.0 -> 6. The cpu readiness rules apply: pod 0 not Ready is
  // left out on the way up and counted as 0: (1000 + 1400 + 0) / 3 = 800 -> ceil(4.8) = 5.
  Fixture f{3, requests(3, "1.0"), levels({300, 500, 700})};
  auto all = raw_resource_replicas(3, 500, "cpu", "", kDefault, f.pods(), f.samples(), t0(), kUpstreamTestConfig);
  REQUIRE(all.ok());
  CHECK(all->replicas == 6);
  CHECK(all->usage == 1000);
  f.readiness = {CS::False, CS::True, CS::True};
  auto unready = raw_resource_replicas(3, 500, "cpu", "", kDefault, f.pods(), f.samples(), t0(), kUpstreamTestConfig);
  REQUIRE(unready.ok());
  CHECK(unready->usage == 1200);
  CHECK(unready->replicas == 5);
  // ContainerResource with AverageValue: container2 only, 300/500/700 -> 500 vs 250 -> 6
  auto container = raw_resource_replicas(3, 250, "cpu", "container2", kDefault,
                                         Fixture{3, requests(3, "1.0"), levels({300, 500, 700})}.pods(), f.samples(),
                                         t0(), kUpstreamTestConfig);
  REQUIRE(container.ok());
  CHECK(container->usage == 500);
  CHECK(container->replicas == 6);
}

struct ObjectCase {
  std::string name{};
  bool per_pod = false;       // AverageValue target
  std::int32_t replicas = 0;  // current (Value) or status (AverageValue) replicas
  std::vector<ConditionStatus> readiness{};
  std::int64_t usage = 0;
  std::int64_t target = 0;
  std::int32_t expected_replicas = 0;
  std::int64_t expected_usage = 0;
  Tolerances tolerances = kDefault;
};

TEST_CASE("replica calculator: Object metrics, value and average value (ported upstream table)",
          "[autoscaler][replica_calculator]") {
  const std::vector<ObjectCase> cases = {
      // 20 / 15 = 1.33 * 3 ready pods -> 4
      {"value: scale up", false, 3, {}, 20000, 15000, 4, 20000},
      // only Ready pods multiply: 5.0 * 1 -> 5 (15 if the unready counted)
      {"value: unready pods are not counted", false, 3, {CS::False, CS::True, CS::False}, 50000, 10000, 5, 50000},
      {"value: scale down", false, 5, {}, 12000, 20000, 3, 12000},
      {"value: tolerance", false, 3, {}, 20666, 20000, 3, 20666},
      {"value: configurable tolerance", false, 3, {}, 20666, 20000, 4, 20666, Tolerances{0.1, 0.01}},
      {"value: saturates at MaxInt32",
       false,
       3,
       {},
       std::numeric_limits<std::int64_t>::max(),
       1,
       std::numeric_limits<std::int32_t>::max(),
       std::numeric_limits<std::int64_t>::max()},
      // 20 / (5 * 3) = 1.33 -> ceil(20 / 5) = 4; reported per pod ceil(20 / 3) = 6667
      {"average value: scale up", true, 3, {}, 20000, 5000, 4, 6667},
      {"average value: scale down", true, 5, {}, 6000, 2000, 3, 1200},
      // 20166 / 20000 = 1.008 within
      {"average value: tolerance", true, 4, {}, 20166, 5000, 4, 5042},
      {"average value: configurable tolerance", true, 4, {}, 20208, 5000, 5, 5052, Tolerances{0.1, 0.01}},
  };
  for (const auto& c : cases) {
    SECTION(c.name) {
      Fixture f{c.replicas, {}, {}, {}, c.readiness};
      auto result = c.per_pod ? object_per_pod_metric_replicas(c.replicas, c.target, c.usage, c.tolerances)
                              : object_metric_replicas(c.replicas, c.target, c.usage, c.tolerances, f.pods());
      REQUIRE(result.ok());
      CHECK(result->replicas == c.expected_replicas);
      CHECK(result->usage == c.expected_usage);
    }
  }
}

struct ExternalCase {
  std::string name{};
  bool per_pod = false;
  std::int32_t replicas = 0;
  std::vector<ConditionStatus> readiness{};
  std::vector<std::int64_t> values{};
  std::int64_t target = 0;
  std::int32_t expected_replicas = 0;
  std::int64_t expected_usage = 0;
  Tolerances tolerances = kDefault;
};

TEST_CASE("replica calculator: External metrics, value and average value (ported upstream table)",
          "[autoscaler][replica_calculator]") {
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  const std::vector<ExternalCase> cases = {
      // 8600 / 4400 = 1.95 * 1 ready pod -> 2 (6 if unready pods counted)
      {"value: unready pods are not counted", false, 3, {CS::False, CS::True, CS::False}, {8600}, 4400, 2, 8600},
      {"value: scale down", false, 5, {}, {8600}, 14334, 3, 8600},
      {"value: tolerance", false, 3, {}, {8600}, 8888, 3, 8600},
      {"value: configurable tolerance", false, 3, {}, {8900}, 8800, 4, 8900, Tolerances{0.1, 0.01}},
      // all matching series are summed: 5000 + 3600
      {"value: series are summed", false, 3, {}, {5000, 3600}, 4400, 6, 8600},
      {"value: the sum saturates", false, 3, {}, {kMax / 2 + 1, kMax / 2 + 1}, kMax, 3, kMax},
      // 8600 / (2150 * 3) = 1.33 -> ceil(8600 / 2150) = 4; per pod ceil(8600 / 3) = 2867
      {"average value: scale up", true, 3, {}, {8600}, 2150, 4, 2867},
      {"average value: scale down", true, 5, {}, {8600}, 2867, 3, 1720},
      {"average value: tolerance", true, 3, {}, {8600}, 2900, 3, 2867},
      {"average value: configurable tolerance", true, 3, {}, {8600}, 2800, 4, 2867, Tolerances{0.1, 0.01}},
      {"average value: replicas saturate at MaxInt32",
       true,
       1,
       {},
       {kMax},
       1,
       std::numeric_limits<std::int32_t>::max(),
       kMax},
  };
  for (const auto& c : cases) {
    SECTION(c.name) {
      Fixture f{c.replicas, {}, {}, {}, c.readiness};
      auto result = c.per_pod ? external_per_pod_metric_replicas(c.replicas, c.target, c.values, c.tolerances)
                              : external_metric_replicas(c.replicas, c.target, c.values, c.tolerances, f.pods());
      REQUIRE(result.ok());
      CHECK(result->replicas == c.expected_replicas);
      CHECK(result->usage == c.expected_usage);
    }
  }
}

TEST_CASE("replica calculator: from zero replicas, Object and External scale to ceil(ratio)",
          "[autoscaler][replica_calculator]") {
  // With no replicas there are no pods; neither the tolerance nor the ready
  // pod count applies (upstream getUsageRatioReplicaCount).
  auto up = external_metric_replicas(0, 10000, {25000}, kDefault, {});
  REQUIRE(up.ok());
  CHECK(up->replicas == 3);
  auto stay = object_metric_replicas(0, 10000, 0, kDefault, {});
  REQUIRE(stay.ok());
  CHECK(stay->replicas == 0);
  // 10.5 / 10 is within the tolerance, but from zero that does not hold: ceil(1.05) = 2
  auto small = object_metric_replicas(0, 10000, 10500, kDefault, {});
  REQUIRE(small.ok());
  CHECK(small->replicas == 2);
  // AverageValue from zero: ceil(30 / 10) = 3, the reported value is the total
  auto per_pod = external_per_pod_metric_replicas(0, 10000, {30000}, kDefault);
  REQUIRE(per_pod.ok());
  CHECK(per_pod->replicas == 3);
  CHECK(per_pod->usage == 30000);
  // With replicas but no pods, the ready count cannot be taken
  auto no_pods = object_metric_replicas(2, 10000, 30000, kDefault, {});
  REQUIRE_FALSE(no_pods.ok());
  CHECK_THAT(no_pods.error().message, Catch::Contains("no pods returned by selector"));
}

struct GroupCase {
  std::string name{};
  Pod pod{};
  std::optional<PodMetric> metric{};
  bool cpu = true;
  std::string expected{};  // "ready", "unready", "missing", "ignored"
};

Pod group_pod(PodPhase phase, std::optional<PodReadyCondition> ready, std::optional<Timestamp> start,
              bool deleting = false) {
  Pod p{};
  p.key = key("p");
  p.phase = phase;
  p.ready = ready;
  p.start_time = start;
  p.deleting = deleting;
  return p;
}

TEST_CASE("replica calculator: grouping pods into ready, unready, missing and ignored (ported upstream table)",
          "[autoscaler][replica_calculator]") {
  const Timestamp now = t0();
  const std::vector<GroupCase> cases = {
      {"memory: a pod with a value is ready whatever its condition",
       group_pod(PodPhase::Succeeded, std::nullopt, std::nullopt), PodMetric{1, now, 1min}, false, "ready"},
      {"cpu: a pod without a Ready condition is unready", group_pod(PodPhase::Succeeded, std::nullopt, now),
       PodMetric{1, {}, {}}, true, "unready"},
      {"cpu: Ready with a fresh full-window sample during initialization counts",
       group_pod(PodPhase::Succeeded, PodReadyCondition{CS::True, now - 30s}, now - 1min), PodMetric{1, now, 30s}, true,
       "ready"},
      {"cpu: Ready but the sample window began before the transition during initialization",
       group_pod(PodPhase::Succeeded, PodReadyCondition{CS::True, now - 30s}, now - 1min), PodMetric{1, now, 60s}, true,
       "unready"},
      {"cpu: not Ready within the readiness delay after start (never ready) is unready",
       group_pod(PodPhase::Succeeded, PodReadyCondition{CS::False, now - 9min - 54s}, now - 10min),
       PodMetric{1, {}, {}}, true, "unready"},
      {"cpu: Ready after initialization counts even with an old sample",
       group_pod(PodPhase::Succeeded, PodReadyCondition{CS::True, now - 3min}, now - 3min),
       PodMetric{1, now - 2min, 1min}, true, "ready"},
      {"cpu: not Ready after having been ready counts",
       group_pod(PodPhase::Succeeded, PodReadyCondition{CS::False, now - 9min}, now - 10min), PodMetric{1, {}, {}},
       true, "ready"},
      {"cpu: not Ready, transition just past the readiness delay, counts",
       group_pod(PodPhase::Succeeded, PodReadyCondition{CS::False, now - 9min - 50s}, now - 10min),
       PodMetric{1, {}, {}}, true, "ready"},
      {"a pod without a value is missing", group_pod(PodPhase::Succeeded, std::nullopt, now - 3min), std::nullopt, true,
       "missing"},
      {"pending pods are unready", group_pod(PodPhase::Pending, std::nullopt, std::nullopt), std::nullopt, true,
       "unready"},
      {"pods being deleted are ignored", group_pod(PodPhase::Pending, std::nullopt, std::nullopt, true),
       PodMetric{1, {}, {}}, true, "ignored"},
      {"failed pods are ignored", group_pod(PodPhase::Failed, std::nullopt, std::nullopt), PodMetric{1, {}, {}}, true,
       "ignored"},
  };
  for (const auto& c : cases) {
    SECTION(c.name) {
      PodMetricsInfo metrics{};
      if (c.metric) metrics[c.pod.key] = *c.metric;
      PodGroups g = group_pods({c.pod}, metrics, c.cpu, now, kUpstreamTestConfig);
      std::string got = g.ready_count == 1           ? "ready"
                        : g.unready.count(c.pod.key) ? "unready"
                        : g.missing.count(c.pod.key) ? "missing"
                        : g.ignored.count(c.pod.key) ? "ignored"
                                                     : "none";
      CHECK(got == c.expected);
      CHECK(g.ready_count + g.unready.size() + g.missing.size() + g.ignored.size() == 1);
    }
  }
}

TEST_CASE("replica calculator: the default readiness settings are 5 min and 30 s", "[autoscaler][replica_calculator]") {
  const CalculatorConfig defaults;
  CHECK(defaults.cpu_initialization_period == 5min);
  CHECK(defaults.initial_readiness_delay == 30s);
  // Started 4 min ago: still initializing under the default, so a sample
  // whose window began before the Ready transition is left out.
  Pod pod = group_pod(PodPhase::Running, PodReadyCondition{CS::True, t0() - 30s}, t0() - 4min);
  PodMetricsInfo metrics{{pod.key, PodMetric{1, t0(), 60s}}};
  CHECK(group_pods({pod}, metrics, true, t0(), defaults).unready.size() == 1);
  CHECK(group_pods({pod}, metrics, true, t0(), kUpstreamTestConfig).ready_count == 1);
}

TEST_CASE("replica calculator: requests are summed over containers or taken from one",
          "[autoscaler][replica_calculator]") {
  Pod pod{};
  pod.key = key("test-pod");
  pod.containers = {Container{"container1", {{"cpu", q("100m")}}}, Container{"container2", {{"cpu", q("50m")}}}};
  auto all = calculate_requests({pod}, "", "cpu");
  REQUIRE(all.ok());
  CHECK(all->at(pod.key) == 150);
  auto one = calculate_requests({pod}, "container1", "cpu");
  REQUIRE(one.ok());
  CHECK(one->at(pod.key) == 100);
  pod.containers[0].requests.clear();
  auto missing = calculate_requests({pod}, "", "cpu");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().message == "missing request for cpu in container container1 of Pod member1/default/test-pod");
  // Only the named container needs the request.
  auto other = calculate_requests({pod}, "container2", "cpu");
  REQUIRE(other.ok());
  CHECK(other->at(pod.key) == 50);
}

// Upstream TestCalculateRequests (pod-level resources, KEP-2837, on by
// default since Kubernetes 1.34), with cases for overhead, memory-only
// pod-level requests and a resource requested nowhere.
TEST_CASE("replica calculator: pod-level requests replace the containers' sum", "[autoscaler][replica_calculator]") {
  struct Case {
    std::string name;
    ResourceList pod_level;
    std::vector<Container> containers;
    std::string container;
    std::int64_t expected = 0;  // millicores
    std::string error{};
    ResourceList overhead{};
  };
  const Container c1{"container1", {{"cpu", q("100m")}}};
  const Container c2{"container2", {{"cpu", q("50m")}}};
  const Container bare{"container1", {}};
  const std::vector<Case> cases = {
      {"not set: the containers' sum", {}, {c1, c2}, "", 150},
      {"pod-level requests override the containers'", {{"cpu", q("800m")}}, {c1, c2}, "", 800},
      {"a container without requests fails without pod-level requests",
       {},
       {bare, c2},
       "",
       0,
       "missing request for cpu in container container1 of Pod member1/default/test-pod"},
      {"pod-level requests override a missing container request", {{"cpu", q("800m")}}, {bare, c2}, "", 800},
      {"a named container is summed alone", {}, {c1, c2}, "container1", 100},
      {"a named container ignores pod-level requests", {{"cpu", q("800m")}}, {c1, c2}, "container1", 100},
      {"pod-level memory only: cpu is the containers' sum", {{"memory", q("1Gi")}}, {c1, bare}, "", 100},
      {"pod-level memory only and no container requests cpu",
       {{"memory", q("1Gi")}},
       {bare},
       "",
       0,
       "missing pod-level request for cpu in Pod member1/default/test-pod"},
      {"an unsupported pod-level resource is not pod-level requests",
       {{"example.com/gpu", q("1")}},
       {bare, c2},
       "",
       0,
       "missing request for cpu in container container1 of Pod member1/default/test-pod"},
      {"overhead adds to pod-level requests", {{"cpu", q("800m")}}, {c1}, "", 900, "", {{"cpu", q("100m")}}},
      {"overhead does not add to the containers' sum", {}, {c1}, "", 100, "", {{"cpu", q("100m")}}},
  };
  for (const auto& c : cases) {
    SECTION(c.name) {
      Pod pod{};
      pod.key = key("test-pod");
      pod.requests = c.pod_level;
      pod.overhead = c.overhead;
      pod.containers = c.containers;
      auto requests = calculate_requests({pod}, c.container, "cpu");
      if (c.error.empty()) {
        REQUIRE(requests.ok());
        CHECK(requests->at(pod.key) == c.expected);
      } else {
        REQUIRE_FALSE(requests.ok());
        CHECK(requests.error().message == c.error);
      }
    }
  }
}

// A pod-level request carries through to the utilization: 2 pods each using
// 400m of a pod-level 1 cpu (containers 100m + 50m) are at 40 %.
TEST_CASE("replica calculator: utilization is measured against pod-level requests",
          "[autoscaler][replica_calculator]") {
  std::vector<Pod> pods = {ready_pod("web-0", "member1"), ready_pod("web-1", "member1")};
  for (auto& pod : pods) {
    pod.containers = {Container{"app", {{"cpu", q("100m")}}}, Container{"proxy", {{"cpu", q("50m")}}}};
    pod.requests = {{"cpu", q("1")}};
  }
  std::vector<PodResourceSample> samples = {cpu_sample(pods[0].key, "400m"), cpu_sample(pods[1].key, "400m")};
  // 800m / 2000m = 40 %; target 80 % -> 0.5 -> ceil(2 * 0.5) = 1
  auto cpu = resource_replicas(2, 80, "cpu", "", kDefault, pods, samples, t0(), CalculatorConfig{});
  REQUIRE(cpu.ok());
  CHECK(cpu->utilization == 40);
  CHECK(cpu->replicas == 1);
}

TEST_CASE("replica calculator: same-name pods in two clusters are two pods", "[autoscaler][replica_calculator]") {
  // StatefulSet web-0 in member1 and in member2. Keyed by name only, one
  // value would overwrite the other (as in Karmada's controller).
  std::vector<Pod> pods = {ready_pod("web-0", "member1"), ready_pod("web-0", "member2")};
  std::vector<PodResourceSample> samples = {cpu_sample(pods[0].key, "100m"), cpu_sample(pods[1].key, "20m")};
  // (100 + 20) / 200 = 60 % -> 60 / 50 = 1.2 -> ceil(2.4) = 3
  auto cpu = resource_replicas(2, 50, "cpu", "", kDefault, pods, samples, t0(), CalculatorConfig{});
  REQUIRE(cpu.ok());
  CHECK(cpu->utilization == 60);
  CHECK(cpu->usage == 60);
  CHECK(cpu->replicas == 3);
  // Pods metric: (1000 + 200) / 2 = 600 against 500 -> ceil(1.2 * 2) = 3
  auto custom =
      pods_metric_replicas(2, 500, "qps", kDefault, pods, {pod_value(pods[0].key, "1"), pod_value(pods[1].key, "200m")},
                           t0(), CalculatorConfig{});
  REQUIRE(custom.ok());
  CHECK(custom->usage == 600);
  CHECK(custom->replicas == 3);
}

}  // namespace
}  // namespace fedmetrics::autoscaler
