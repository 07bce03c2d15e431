#pragma once
// Scenario files for `fedmetrics simulate` (docs/simulate.md): the
// FederatedHPA, the controller settings, and per step the scale, the pods and
// what the metrics APIs answer, decoded into the same values the live loop
// builds from member clusters.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "fedmetrics/autoscaler/autoscaler.hpp"
#include "fedmetrics/autoscaler/cron_federated_hpa.hpp"
#include "fedmetrics/autoscaler/hpa_spec.hpp"
#include "fedmetrics/autoscaler/overflow_placement.hpp"
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
  // availableReplicas: what these members can hold from this step on (the
  // scenario's placement must be given).
  ClusterReplicas available_replicas;
};

// One cluster group of a placement: its affinityName and clusterNames.
struct ScenarioClusterGroup {
  std::string name;
  std::vector<std::string> clusters;
};

// `placement` (docs/simulate.md, "Overflow placement"): a Karmada
// ClusterAffinityTerm with overflow affinities, divided by dynamic weight,
// from which each step's memberReplicas are scheduled.
struct ScenarioPlacement {
  std::vector<ScenarioClusterGroup> groups;  // the primary group first
  // The replicas of the workload each cluster can hold (what it runs of it
  // included); a cluster absent has no limit.
  ClusterReplicas available_replicas;
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
  std::optional<ScenarioPlacement> placement;
};

// A scenario's placement replayed step by step, as Karmada's scheduler
// follows the template's replicas: each step schedules its replicas from the
// previous step's placement; when the clusters cannot hold them, the
// previous placement stays and `unschedulable` says why.
class PlacementReplay {
 public:
  struct Outcome {
    ClusterReplicas clusters;
    std::optional<std::string> unschedulable;
  };
  explicit PlacementReplay(ScenarioPlacement placement) : placement_(std::move(placement)) {}
  Outcome place(const ScenarioStep& step, std::int32_t replicas);

 private:
  ScenarioPlacement placement_;
  ClusterReplicas previous_;
};

// 2024-01-01T00:00:00Z, the default origin of numeric times.
Timestamp default_scenario_start();

// Errors name the field: "steps[2].pods[0].startTime: not a time".
k8s::Expected<Scenario> decode_scenario(const nlohmann::json& json);

}  // namespace fedmetrics::autoscaler
