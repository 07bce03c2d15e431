// A scenario's overflow placement, replayed step by step (docs/simulate.md,
// "Overflow placement").
#include <algorithm>

#include "fedmetrics/autoscaler/scenario.hpp"

namespace fedmetrics::autoscaler {

PlacementReplay::Outcome PlacementReplay::place(const ScenarioStep& step, std::int32_t replicas) {
  for (const auto& [name, available] : step.available_replicas) placement_.available_replicas[name] = available;
  std::vector<OverflowGroup> groups;
  for (const auto& group : placement_.groups) {
    auto& tier = groups.emplace_back(OverflowGroup{group.name, {}});
    for (const auto& name : group.clusters) {
      auto ran = previous_.find(name);
      const std::int32_t scheduled = ran == previous_.end() ? 0 : ran->second;
      // What a cluster can add: its limit less what it runs, never below
      // zero (a cluster over its limit keeps its replicas, as Karmada's
      // estimator reports no room there). Without a limit, the whole count,
      // as Karmada assumes when no estimator bounds a cluster.
      auto limit = placement_.available_replicas.find(name);
      const std::int32_t free =
          limit == placement_.available_replicas.end() ? replicas : std::max(limit->second - scheduled, 0);
      tier.clusters.push_back({name, free, scheduled});
    }
  }
  auto placed = place_overflow(replicas, groups);
  if (!placed) return {previous_, placed.error().message};
  previous_ = std::move(*placed);
  return {previous_, std::nullopt};
}

}  // namespace fedmetrics::autoscaler
