#pragma once
// Scenario files for `fedmetrics simulate` (docs/simulate.md): the
// FederatedHPA, the controller settings, and per step the scale, the pods and
// what the metrics APIs answer, decoded into the same values the live loop
// builds from member clusters.
#include <cstdint>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "fedmetrics/autoscaler/autoscaler.hpp"
#include "fedmetrics/autoscaler/cron_federated_hpa.hpp"
#include "fedmetrics/autoscaler/hpa_spec.hpp"
#include "fedmetrics/autoscaler/pod_state.hpp"
#include "fedmetrics/k8s/expected.hpp"
#include "fedmetrics/k8s/time.hpp"

namespace fedmetrics::autoscaler {

struct ScenarioStep {
  nlohmann::json at_written;  // `at` as written, echoed in the output
  Timestamp at{};
  std::optional<std::int32_t> replicas;         // absent: the previous decision
  std::optional<std::int32_t> status_replicas;  // absent: replicas
  std::vector<Pod> pods;
  MetricsSnapshot metrics;
  MemberPlacement placement;  // memberReplicas, unreadMembers
};

struct Scenario {
  FederatedHPA hpa;  // as written; sync() applies the defaults
  ControllerConfig config;
  Timestamp start{};
  std::vector<ScenarioStep> steps;
  // docs/simulate.md, "Scheduled scaling": its rules fire
  // between the steps (UTC unless a rule says otherwise). Every rule is
  // valid (an invalid one is an error of the scenario, naming the field).
  std::optional<CronFederatedHPA> cron;
  // hpa.status.conditions: the FederatedHPA's conditions before the first
  // step, e.g. ScaledToZero=True for a target the autoscaler scaled to zero.
  std::vector<HorizontalPodAutoscalerCondition> conditions;
};

// 2024-01-01T00:00:00Z, the default origin of numeric times.
Timestamp default_scenario_start();

// Errors name the field: "steps[2].pods[0].startTime: not a time".
k8s::Expected<Scenario> decode_scenario(const nlohmann::json& json);

}  // namespace fedmetrics::autoscaler
