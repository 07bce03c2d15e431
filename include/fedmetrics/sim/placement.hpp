#pragma once
// Karmada's replica division for a Divided/Weighted propagation with a
// static weight list, and the names of the pods a member runs. Pure.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace fedmetrics::sim {

struct ClusterWeight {
  std::string cluster;
  std::int64_t weight = 1;
  std::int32_t last_replicas = 0;  // what the previous schedule gave this cluster
};

struct TargetCluster {
  std::string name;
  std::int32_t replicas = 0;
  friend bool operator==(const TargetCluster&, const TargetCluster&) = default;
};

// Divides `replicas` over the clusters as Karmada's scheduler does for static
// weights (pkg/util/helper Dispenser.TakeByWeight): each cluster first gets
// floor(weight * replicas / sum of weights); the replicas left over go one by
// one to the clusters in the order weight descending, then last scheduled
// replicas descending, then cluster name ascending. When every weight is 0 all
// clusters weigh 1 (getStaticWeightInfoList). The result keeps the input
// order and includes clusters that get 0 replicas.
std::vector<TargetCluster> divide_replicas(std::int32_t replicas, const std::vector<ClusterWeight>& clusters);

// The pod-template-hash of a pod template (its canonical JSON text): FNV-32a,
// spelled with Kubernetes' safe alphabet (rand.SafeEncodeString), as the
// Deployment controller's ComputeHash names ReplicaSets. One template, one
// hash, in every member.
std::string pod_template_hash(std::string_view pod_template);

// The five-character pod-name suffix for the n-th pod created from `hash`
// (Kubernetes uses five random safe-alphabet characters; ours are derived from
// the ordinal so that a world with a seed always names pods the same way).
// `seed` is the hash and the member's name, so that members name their pods apart.
std::string pod_suffix(std::string_view seed, std::uint64_t ordinal);

// A deterministic RFC 4122-shaped uid for an object name.
std::string object_uid(std::string_view identity);

}  // namespace fedmetrics::sim
