// Deciding only on complete data (docs/autoscaling.md, "Decisions
// on complete data only"): Karmada's calibration across members, members whose pods could
// not be read (missing pods, never absent ones), and Object/External values
// that miss a member (a scale-up, never a scale-down). Also the metric
// selector in the key of Pods and Object values, and ContainerResource on a
// pod without the container.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "fedmetrics/autoscaler/autoscaler.hpp"
#include "fedmetrics/autoscaler/member_placement.hpp"
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

MetricSpec external_value(const std::string& name, MetricTargetType type, const std::string& target) {
  MetricSpec m;
  m.type = MetricSourceType::External;
  m.metric.name = name;
  m.target.type = type;
  (type == MetricTargetType::Value ? m.target.value : m.target.average_value) = q(target);
  return m;
}

MetricSpec object_value(const std::string& metric, MetricTargetType type, const std::string& target) {
  MetricSpec m;
  m.type = MetricSourceType::Object;
  m.described_object = {"Service", "web", "v1"};
  m.metric.name = metric;
  m.target.type = type;
  (type == MetricTargetType::Value ? m.target.value : m.target.average_value) = q(target);
  return m;
}

FederatedHPA make_hpa(std::vector<MetricSpec> metrics, std::int32_t min = 1, std::int32_t max = 20) {
  return hpa_of(std::move(metrics), min, max);
}

// No stabilization window: a scale-down shows at once.
ControllerConfig no_window() {
  ControllerConfig config;
  config.downscale_stabilization = 0s;
  return config;
}

const HorizontalPodAutoscalerCondition& condition(const SyncResult& r, std::string_view type) {
  const auto* c = find_condition(r.status.conditions, type);
  REQUIRE(c != nullptr);
  return *c;
}

TEST_CASE("calibration: sum(member replicas) / template replicas, 1 when unknown", "[autoscaler][placement]") {
  struct Case {
    std::string name;
    std::map<std::string, std::int32_t, std::less<>> members;
    std::int32_t template_replicas;
    double expected;
  };
  const std::vector<Case> cases = {
      {"no placement", {}, 2, 1.0},
      {"Duplicated: 2 replicas in each of 3 members", {{"m1", 2}, {"m2", 2}, {"m3", 2}}, 2, 3.0},
      {"Divided: 3 + 1 of 4", {{"m1", 3}, {"m2", 1}}, 4, 1.0},
      {"target at zero (scale from zero)", {{"m1", 2}}, 0, 1.0},
      {"binding without replicas", {{"m1", 0}, {"m2", 0}}, 2, 1.0},
  };
  for (const auto& c : cases) {
    SECTION(c.name) {
      MemberPlacement placement;
      placement.member_replicas = c.members;
      CHECK(calibration(placement, c.template_replicas) == Approx(c.expected));
    }
  }
}

TEST_CASE("sync: calibration across members divides pod-derived counts", "[autoscaler][placement]") {
  const FederatedHPA hpa = make_hpa({cpu_utilization(50)});
  struct Case {
    std::string name;
    std::string cpu;  // per pod, of 100m requested
    bool duplicated;  // memberReplicas 2 in each of the 3 members
    std::int32_t expected;
  };
  const std::vector<Case> cases = {
      // 6 pods at 25 % (half the 50 % target): ceil(0.5 * 6) = 3 without the
      // calibration, a scale-up that the load does not call for.
      {"Duplicated, half the target: no scale-up (1 replica)", "25m", true, 1},
      {"the same pods without the placement: 3", "25m", false, 3},
      // 6 pods at 75 %: ceil(1.5 * 6 / 3) = 3, where 6 pods alone give 9.
      {"Duplicated, 1.5 times the target: 3", "75m", true, 3},
  };
  for (const auto& c : cases) {
    SECTION(c.name) {
      SyncInput in = cpu_pods(2, {"member1", "member2", "member3"}, 2, c.cpu);
      if (c.duplicated) in.placement.member_replicas = {{"member1", 2}, {"member2", 2}, {"member3", 2}};
      SyncResult r = sync(hpa, {}, {}, in, no_window());
      // Without behavior the scale-up is limited to max(2 * 2, 4) = 4.
      CHECK(r.desired_replicas == std::min(c.expected, 4));
    }
  }
}

TEST_CASE("sync: an unread member's replicas are missing pods, never absent ones", "[autoscaler][placement]") {
  const FederatedHPA hpa = make_hpa({cpu_utilization(50)});
  SECTION("under load elsewhere, a member that did not answer cannot cause a scale-down") {
    // member1's 2 pods at 10 % of request (0.2 of the target); member2 runs 2
    // more that could not be read. Missing pods count at 100 % of their
    // request on a scale-down: (10 + 10 + 100 + 100) / 400 = 55 % > 50 %,
    // the direction flips, the count stays.
    SyncInput in = cpu_pods(4, {"member1"}, 2, "10m");
    SyncResult without = sync(hpa, {}, {}, in, no_window());
    CHECK(without.desired_replicas == 1);  // what the old loop did: 2 pods at 0.2 -> 1

    in.placement.member_replicas = {{"member1", 2}, {"member2", 2}};
    in.placement.unread_members = {{"member2", 2}};
    SyncResult r = sync(hpa, {}, {}, in, no_window());
    CHECK(r.desired_replicas == 4);
    CHECK_FALSE(r.rescale);
    REQUIRE(r.incomplete.has_value());
    CHECK_THAT(*r.incomplete, Catch::Contains("pods of member2 could not be read (2 placed replicas"));
    CHECK_THAT(condition(r, "ScalingActive").message, Catch::Contains("member2"));
  }
  SECTION("a scale-up still happens, damped: unread pods count at 0 %") {
    // member1's 2 pods at 200 % (4x the target); 2 unread pods at 0:
    // (200 + 200) / 400 = 100 % -> ratio 2 -> ceil(2 * 4) = 8 (limited to 8 = 2 x 4).
    SyncInput in = cpu_pods(4, {"member1"}, 2, "200m");
    in.placement.member_replicas = {{"member1", 2}, {"member2", 2}};
    in.placement.unread_members = {{"member2", 2}};
    SyncResult r = sync(hpa, {}, {}, in, no_window());
    CHECK(r.desired_replicas == 8);
  }
  SECTION("a stray value of an unread member does not count beside its missing pods") {
    MetricSpec qps;
    qps.type = MetricSourceType::Pods;
    qps.metric.name = "qps";
    qps.target.type = MetricTargetType::AverageValue;
    qps.target.average_value = q("10");
    SyncInput in;
    in.now = t0();
    in.scale = {2, 2};
    in.pods = {ready_pod("web-0", "member1")};  // member2's pod list failed
    // ... but a value of its pod came: counted, it alone would ask for a scale-up.
    in.metrics.pods.emplace("qps", std::vector<PodMetricSample>{pod_value(key("web-0", "member1"), "1"),
                                                                pod_value(key("web-0", "member2"), "100")});
    in.placement.unread_members = {{"member2", 1}};
    SyncResult r = sync(make_hpa({qps}), {}, {}, in, no_window());
    // 1 of 10, the missing pod at the target: (1 + 10) / 2 = 5.5 -> ceil(0.55 * 2) = 2.
    CHECK(r.desired_replicas == 2);
  }
  SECTION("the synthetic pods take the first listed pod's requests") {
    std::vector<Pod> pods = {ready_pod("web-0", "member1", "250m")};
    MemberPlacement placement;
    placement.unread_members = {{"member2", 2}};
    auto all = with_unread_members(pods, placement, "default", t0());
    REQUIRE(all.size() == 3);
    CHECK(all[1].key.cluster == "member2");
    CHECK(all[1].containers.at(0).requests.at("cpu") == q("250m"));
    CHECK(is_running_and_ready(all[2]));
  }
}

TEST_CASE("sync: an Object or External value that misses a member scales up, never down", "[autoscaler][placement]") {
  struct Case {
    std::string name;
    MetricSpec spec;
    std::string value;
    std::vector<std::string> missing;
    std::int32_t expected;
  };
  const std::vector<Case> cases = {
      // 4 ready pods; value 10 vs target 40: ceil(0.25 * 4) = 1.
      {"External Value, complete: scale-down", external_value("queue", MetricTargetType::Value, "40"), "10", {}, 1},
      {"External Value, member2 missing: held at 4",
       external_value("queue", MetricTargetType::Value, "40"),
       "10",
       {"member2"},
       4},
      {"External Value, member2 missing, over target: scale-up",
       external_value("queue", MetricTargetType::Value, "40"),
       "80",
       {"member2"},
       8},
      {"External AverageValue, missing: held",
       external_value("queue", MetricTargetType::AverageValue, "10"),
       "10",
       {"member2", "member3"},
       4},
      {"Object Value, missing: held", object_value("rps", MetricTargetType::Value, "40"), "10", {"member2"}, 4},
      {"Object AverageValue, missing, over target: scale-up",
       object_value("rps", MetricTargetType::AverageValue, "5"),
       "30",
       {"member2"},
       6},
  };
  for (const auto& c : cases) {
    SECTION(c.name) {
      SyncInput in;
      in.now = t0();
      in.scale = {4, 4};
      for (int i = 0; i < 4; ++i) in.pods.push_back(ready_pod("w-" + std::to_string(i)));
      if (c.spec.type == MetricSourceType::External) {
        in.metrics.externals = {ExternalMetricValues{"queue", "", std::vector<k8s::Quantity>{q(c.value)}, c.missing}};
      } else {
        in.metrics.objects = {ObjectMetricValue{"Service", "web", "rps", q(c.value), "", c.missing}};
      }
      SyncResult r = sync(make_hpa({c.spec}), {}, {}, in, no_window());
      CHECK(r.desired_replicas == c.expected);
      // The value is still reported.
      REQUIRE(r.status.current_metrics.size() == 1);
      const auto& current = r.status.current_metrics[0].current;
      CHECK((current.value || current.average_value));
      if (!c.missing.empty()) {
        REQUIRE(r.incomplete.has_value());
        for (const auto& m : c.missing) CHECK_THAT(*r.incomplete, Catch::Contains(m));
        CHECK_THAT(condition(r, "ScalingActive").message, Catch::Contains("misses " + c.missing[0]));
      } else {
        CHECK_FALSE(r.incomplete.has_value());
      }
    }
  }
}

// A small deterministic generator (no std::random_device: the same cases every run).
struct Lcg {
  std::uint64_t state;
  std::int64_t next(std::int64_t lo, std::int64_t hi) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return lo + static_cast<std::int64_t>((state >> 33) % static_cast<std::uint64_t>(hi - lo + 1));
  }
};

TEST_CASE(
    "property: an incomplete metric never proposes fewer than the current replicas, and never less than "
    "the complete one would",
    "[autoscaler][placement]") {
  Lcg rng{20261124};
  for (int i = 0; i < 500; ++i) {
    const std::int32_t current = static_cast<std::int32_t>(rng.next(1, 12));
    const bool external = rng.next(0, 1) == 1;
    const auto type = rng.next(0, 1) == 1 ? MetricTargetType::Value : MetricTargetType::AverageValue;
    const std::string target = std::to_string(rng.next(1, 50));
    const std::string value = std::to_string(rng.next(0, 1000));
    const MetricSpec spec = external ? external_value("queue", type, target) : object_value("rps", type, target);
    FederatedHPA hpa = make_hpa({spec}, 1, 100);

    SyncInput in;
    in.now = t0();
    in.scale = {current, current};
    for (std::int32_t p = 0; p < current; ++p) in.pods.push_back(ready_pod("w-" + std::to_string(p)));
    auto with_missing = [&](std::vector<std::string> missing) {
      SyncInput copy = in;
      if (external) {
        copy.metrics.externals = {ExternalMetricValues{"queue", "", std::vector<k8s::Quantity>{q(value)}, missing}};
      } else {
        copy.metrics.objects = {ObjectMetricValue{"Service", "web", "rps", q(value), "", missing}};
      }
      return sync(hpa, {}, {}, copy, no_window());
    };
    const SyncResult complete = with_missing({});
    const SyncResult incomplete = with_missing({"member2"});
    INFO("current " << current << (external ? " external " : " object ") << value << " / " << target);
    CHECK(incomplete.desired_replicas >= current);
    CHECK(incomplete.desired_replicas >= complete.desired_replicas);
    if (complete.desired_replicas > current) CHECK(incomplete.desired_replicas == complete.desired_replicas);
  }
}

TEST_CASE("sync: metrics of one name with different selectors do not share values", "[autoscaler][placement]") {
  SECTION("Pods") {
    MetricSpec get;
    get.type = MetricSourceType::Pods;
    get.metric.name = "qps";
    get.metric.selector = *k8s::LabelSelector::parse("verb=GET");
    get.target.type = MetricTargetType::AverageValue;
    get.target.average_value = q("10");
    MetricSpec post = get;
    post.metric.selector = *k8s::LabelSelector::parse("verb=POST");
    SyncInput in;
    in.now = t0();
    in.scale = {2, 2};
    in.pods = {ready_pod("w-0"), ready_pod("w-1")};
    in.metrics.pods.emplace(
        pods_metric_key("qps", "verb=GET"),
        std::vector<PodMetricSample>{pod_value(in.pods[0].key, "40"), pod_value(in.pods[1].key, "40")});
    in.metrics.pods.emplace(
        pods_metric_key("qps", "verb=POST"),
        std::vector<PodMetricSample>{pod_value(in.pods[0].key, "5"), pod_value(in.pods[1].key, "5")});
    SyncResult r = sync(make_hpa({get, post}), {}, {}, in, no_window());
    REQUIRE(r.status.current_metrics.size() == 2);
    CHECK(r.status.current_metrics[0].current.average_value == 40000);
    CHECK(r.status.current_metrics[1].current.average_value == 5000);
  }
  SECTION("Object") {
    MetricSpec get = object_value("rps", MetricTargetType::Value, "10");
    get.metric.selector = *k8s::LabelSelector::parse("verb=GET");
    MetricSpec post = get;
    post.metric.selector = *k8s::LabelSelector::parse("verb=POST");
    SyncInput in;
    in.now = t0();
    in.scale = {2, 2};
    in.pods = {ready_pod("w-0"), ready_pod("w-1")};
    in.metrics.objects = {ObjectMetricValue{"Service", "web", "rps", q("30"), "verb=GET"},
                          ObjectMetricValue{"Service", "web", "rps", q("7"), "verb=POST"}};
    SyncResult r = sync(make_hpa({get, post}), {}, {}, in, no_window());
    REQUIRE(r.status.current_metrics.size() == 2);
    CHECK(r.status.current_metrics[0].current.value == 30000);
    CHECK(r.status.current_metrics[1].current.value == 7000);
  }
}

TEST_CASE("ContainerResource: a pod without the named container is a missing pod, not a failed metric",
          "[autoscaler][placement]") {
  // web-0 runs the new template (app + proxy), web-1 the old one (app only).
  Pod with = ready_pod("web-0");
  with.containers.push_back(Container{"proxy", {{"cpu", q("100m")}}});
  Pod without = ready_pod("web-1");
  PodResourceSample s0 = cpu_sample(with.key, "50m");
  s0.containers.push_back(ContainerUsage{"proxy", {{"cpu", q("10m")}}});
  PodResourceSample s1 = cpu_sample(without.key, "50m");

  auto requests = calculate_requests({with, without}, "proxy", "cpu");
  REQUIRE(requests.ok());
  CHECK(requests->at(without.key) == 0);

  // proxy at 10 % of a 50 % target: a scale-down, web-1 missing (at 100 % of
  // its zero request): the ratio stays 0.2 over 2 pods -> ceil(0.4) = 1.
  auto result =
      resource_replicas(2, 50, "cpu", "proxy", Tolerances{}, {with, without}, {s0, s1}, t0(), CalculatorConfig{});
  REQUIRE(result.ok());
  CHECK(result->utilization == 10);
  CHECK(result->replicas == 1);
}

}  // namespace
}  // namespace fedmetrics::autoscaler
