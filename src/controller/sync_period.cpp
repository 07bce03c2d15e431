#include "controller/sync_period.hpp"

#include <string>

#include "fedmetrics/k8s/time.hpp"

namespace fedmetrics::controller {

k8s::Expected<std::chrono::nanoseconds> sync_period_of(const nlohmann::json& object, std::chrono::nanoseconds global) {
  const auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return global;
  const auto annotations = meta->find("annotations");
  if (annotations == meta->end() || !annotations->is_object()) return global;
  const auto value = annotations->find(std::string(kSyncPeriodAnnotation));
  if (value == annotations->end()) return global;
  const std::string keeps = "; the FederatedHPA is synced every " + k8s::format_duration(global) +
                            " (--horizontal-pod-autoscaler-sync-period) and not scaled until it is fixed";
  const std::string prefix = "annotation " + std::string(kSyncPeriodAnnotation) + ": ";
  if (!value->is_string()) return k8s::Error{prefix + "must be a string such as \"30s\" or \"1m30s\"" + keeps};
  const std::string text = value->get<std::string>();
  auto period = k8s::parse_duration(text);
  if (!period) return k8s::Error{prefix + "\"" + text + "\" is not a duration such as \"30s\" or \"1m30s\"" + keeps};
  if (*period < kMinSyncPeriod)
    return k8s::Error{prefix + "\"" + text + "\" is shorter than the minimum of " +
                      k8s::format_duration(kMinSyncPeriod) + keeps};
  return *period;
}

}  // namespace fedmetrics::controller
