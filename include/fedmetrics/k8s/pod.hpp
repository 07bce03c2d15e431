#pragma once
// The fields of a core/v1 Pod that an autoscaler reads (the HPA controller's
// replica calculator and its pod lister): labels, phase, the Ready condition,
// start and deletion times, the containers' resource requests (with the
// init containers' and their restartPolicy: a native sidecar's count), and the
// pod-level requests and overhead.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fedmetrics/k8s/expected.hpp"
#include "fedmetrics/k8s/metrics_types.hpp"
#include "fedmetrics/k8s/time.hpp"

namespace fedmetrics::k8s {

struct PodCondition {
  std::string type;    // "Ready"
  std::string status;  // "True", "False", "Unknown"
  std::optional<Timestamp> last_transition_time;
  friend bool operator==(const PodCondition&, const PodCondition&) = default;
};

struct PodContainer {
  std::string name;
  ResourceList requests;
  std::string restart_policy{};  // init containers: "Always" for a native sidecar; "" when absent
  friend bool operator==(const PodContainer&, const PodContainer&) = default;
};

struct Pod {
  ObjectMeta metadata;
  std::optional<Timestamp> deletion_timestamp;
  std::vector<PodContainer> containers;       // spec.containers
  std::vector<PodContainer> init_containers;  // spec.initContainers
  ResourceList requests;                      // spec.resources.requests (pod-level resources)
  ResourceList overhead;                      // spec.overhead
  std::string phase;                          // status.phase; "" when absent
  std::vector<PodCondition> conditions;       // status.conditions
  std::optional<Timestamp> start_time;        // status.startTime
  friend bool operator==(const Pod&, const Pod&) = default;
};

Expected<Pod> pod_from_json(const nlohmann::json& in, std::string_view path = "");
// A PodList's items; errors name the item ("items[3].status.phase: ...").
Expected<std::vector<Pod>> pod_list_from_json(const nlohmann::json& in);

}  // namespace fedmetrics::k8s
