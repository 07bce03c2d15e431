#pragma once
// Where the simulated Karmada scheduler puts a workload's replicas: by
// static weights, or (Karmada 1.18's overflow affinities) over cluster
// groups by what each member has room for. Internal to the sim module
// (federation.cpp).
#include <cstdint>
#include <vector>

#include "fedmetrics/sim/federation.hpp"

namespace fedmetrics::sim::detail {

// The replicas of `workload` that `member` has room for now, as Karmada's
// general estimator counts them (karmada-io/karmada
// pkg/estimator/client/general.go): what its nodes can allocate (cpu,
// memory, 110 pods and 100Gi of ephemeral storage per node) less the
// requests of every pod it holds, divided by one pod's requests; a resource
// its nodes lack leaves no room. At most `replicas` (Karmada's bound when no
// estimate limits a cluster).
std::int32_t free_replicas(const Federation& f, std::size_t member, std::size_t workload, std::int32_t replicas);

// The workload's placement for `replicas`, in propagation order (members
// with none included): static weights, or the overflow groups
// (autoscaler/overflow_placement.hpp). `previous` is the placement it had,
// empty for the first; when the overflow groups cannot hold the replicas,
// Karmada leaves the placement as it was.
std::vector<TargetCluster> place_workload(const Federation& f, std::size_t workload, std::int32_t replicas,
                                          const std::vector<TargetCluster>& previous);

}  // namespace fedmetrics::sim::detail
