#pragma once
// Scenario files with "mode": "distributed" (docs/simulate.md,
// "Distributed mode"): the FederatedHPA, the
// rebalance window, and per step the members with what their own HPAs
// report. The members' HPA decisions are given, not computed: the scenario
// replays the distributor alone.
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fedmetrics/autoscaler/distributor.hpp"
#include "fedmetrics/autoscaler/hpa_spec.hpp"
#include "fedmetrics/k8s/expected.hpp"

namespace fedmetrics::autoscaler {

// One member at one step; absent fields carry over (weight
// and replicas from the previous step, min/max from the previous decision).
struct DistributedScenarioMember {
  std::optional<std::int32_t> weight;
  std::optional<std::int32_t> min_replicas;  // overrides: start from a given state
  std::optional<std::int32_t> max_replicas;
  std::optional<std::int32_t> current_replicas;
  std::optional<std::int32_t> desired_replicas;
  std::optional<Timestamp> last_scale_time;    // absent at every step unless given
  std::optional<std::string> scaling_limited;  // the ScalingLimited reason when True
};

struct DistributedScenarioStep {
  nlohmann::json at_written;  // `at` as written, echoed in the output
  Timestamp at{};
  std::optional<FederatedHPA> hpa;  // a new spec from this step on
  // The members at this step: one absent has left, a new name has joined.
  std::map<std::string, DistributedScenarioMember, std::less<>> members;
};

struct DistributedScenario {
  FederatedHPA hpa;
  std::chrono::nanoseconds rebalance_window = kDefaultRebalanceWindow;
  Timestamp start{};
  std::vector<DistributedScenarioStep> steps;
};

// Errors name the field: "steps[1].members.member1.currentReplicas: must be a non-negative integer".
k8s::Expected<DistributedScenario> decode_distributed_scenario(const nlohmann::json& json);

}  // namespace fedmetrics::autoscaler
