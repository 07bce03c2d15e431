#pragma once
// Karmada 1.18's overflow affinities: where the scheduler puts a Divided
// workload's replicas when its placement names a primary cluster group and
// supplementary ("overflow") groups (PropagationPolicy
// spec.placement.clusterAffinities[].overflowAffinities). Pure: shared by
// `fedmetrics simulate` and the simulated control plane, so that the
// placement a FederatedHPA's calibration reads is the one Karmada would make.
//
// The rules, as karmada-io/karmada v1.18.0 schedules them
// (pkg/scheduler/core/common.go, assignWorkloadReplicas; the tiers from
// pkg/scheduler/core/spreadconstraint/group_clusters.go, getClusterOverflowOrder):
//   - the groups are tiers, the primary group first; a cluster listed in
//     several groups belongs to the first that lists it;
//   - each tier in turn takes min(replicas still to place, the replicas its
//     clusters can hold), where a cluster can hold what it is free to run now
//     plus what it already runs of the workload; so a scale-up fills the
//     primary group before it spills to the next, and a scale-down gives back
//     the replicas of the last groups first (the earlier tiers keep theirs);
//   - within a tier the replicas are divided by dynamic weight
//     (dynamicWeight: AvailableReplicas, pkg/scheduler/core/division_algorithm.go)
//     in Karmada's steady mode: a tier that grows keeps its clusters'
//     replicas and divides the new ones in proportion to what each cluster is
//     free to run; a tier that shrinks divides what it keeps in proportion to
//     what each cluster ran; the division is Webster's (Sainte-Laguë) method
//     (pkg/util/helper/webstermethod.go), ties to the cluster with fewer
//     replicas, then the smaller name;
//   - when every tier together cannot hold the replicas, the workload is
//     unschedulable and Karmada keeps its previous placement.
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "fedmetrics/k8s/expected.hpp"

namespace fedmetrics::autoscaler {

struct OverflowCluster {
  std::string name;
  // Replicas of the workload the cluster is free to add now (Karmada's
  // estimator: what its nodes have left, for the workload's requests).
  std::int32_t free = 0;
  // Replicas the previous schedule placed there (the ResourceBinding's
  // spec.clusters[].replicas; 0 when none).
  std::int32_t scheduled = 0;
};

// One cluster group: the primary group (the first) or a supplementary one.
struct OverflowGroup {
  std::string name;  // its affinityName
  std::vector<OverflowCluster> clusters;
};

// Replicas per cluster; a cluster that gets none is absent.
using ClusterReplicas = std::map<std::string, std::int32_t, std::less<>>;

// Where `replicas` go over `groups` (primary first). Errors: a negative
// count (kind invalid), or groups that cannot hold the replicas (kind
// conflict: Karmada's "not enough" unschedulable error; the caller keeps the
// previous placement).
k8s::Expected<ClusterReplicas> place_overflow(std::int32_t replicas, const std::vector<OverflowGroup>& groups);

}  // namespace fedmetrics::autoscaler
