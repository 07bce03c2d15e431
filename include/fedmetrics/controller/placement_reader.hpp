#pragma once
// Where Karmada placed a scale target: its ResourceBinding's spec.clusters.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fedmetrics/autoscaler/hpa_spec.hpp"
#include "fedmetrics/k8s/expected.hpp"
#include "fedmetrics/transport/task.hpp"

namespace fedmetrics::controller {

// One member a ResourceBinding schedules the target to (spec.clusters[]),
// with the replicas placed there (with a Duplicated placement, the
// template's replicas in every member; 0 when the binding gives none).
struct TargetCluster {
  std::string name;
  std::int32_t replicas = 0;
  friend bool operator==(const TargetCluster&, const TargetCluster&) = default;
};

class PlacementReader {
 public:
  virtual ~PlacementReader() = default;
  // The members the target is scheduled to, or nullopt when that is not
  // known (no binding): then every member is asked.
  virtual async::Task<k8s::Expected<std::optional<std::vector<TargetCluster>>>> target_clusters(
      const std::string& namespace_name, const autoscaler::CrossVersionObjectReference& target) = 0;
};

}  // namespace fedmetrics::controller
