#pragma once
// What the simulated pods use. A workload's offered load is spread evenly over
// its serving pods across all members (ready and not terminating, as a
// Service's endpoints are); a pod uses its share plus a small baseline, capped
// at its CPU limit, and reports its share of the requests per second as the
// http_requests series. Pure.
#include <cstdint>
#include <string>
#include <vector>

#include "fedmetrics/sim/world.hpp"

namespace fedmetrics::sim {

struct ContainerUsage {
  std::string name;
  std::int64_t cpu_nanocores = 0;  // nanocores
  std::int64_t memory_bytes = 0;   // bytes, whole 4 KiB pages
  friend bool operator==(const ContainerUsage&, const ContainerUsage&) = default;
};

struct PodUsage {
  std::vector<ContainerUsage> containers;
  double requests_per_second = 0.0;
  [[nodiscard]] std::int64_t cpu_nanocores() const;
  [[nodiscard]] std::int64_t memory_bytes() const;
};

// The usage of one pod of `workload` under `load` when `serving_pods` pods
// share it; `serving` tells whether this pod is one of them.
PodUsage pod_usage(const WorkloadSpec& workload, const Load& load, std::size_t serving_pods, bool serving);

// What a node's system daemons use besides its pods.
inline constexpr std::int64_t kNodeBaselineNanocores = 100'000'000;      // 100m
inline constexpr std::int64_t kNodeBaselineBytes = 768LL * 1024 * 1024;  // 768Mi

}  // namespace fedmetrics::sim
