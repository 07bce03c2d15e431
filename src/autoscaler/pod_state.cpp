#include "fedmetrics/autoscaler/pod_state.hpp"

namespace fedmetrics::autoscaler {

std::string to_string(const PodKey& key) { return key.cluster + "/" + key.namespace_name + "/" + key.name; }

std::string_view to_string(ConditionStatus status) {
  switch (status) {
    case ConditionStatus::True: return "True";
    case ConditionStatus::False: return "False";
    case ConditionStatus::Unknown: return "Unknown";
  }
  return "Unknown";
}

std::string pods_metric_key(std::string_view metric_name, std::string_view selector) {
  std::string key(metric_name);
  if (!selector.empty()) key += "{" + std::string(selector) + "}";
  return key;
}

bool is_running_and_ready(const Pod& pod) {
  return pod.phase == PodPhase::Running && pod.ready && pod.ready->status == ConditionStatus::True;
}

}  // namespace fedmetrics::autoscaler
