#include "fedmetrics/autoscaler/member_placement.hpp"

#include <algorithm>
#include <chrono>

namespace fedmetrics::autoscaler {

double calibration(const MemberPlacement& placement, std::int32_t template_replicas) {
  std::int64_t placed = 0;  // replicas; int64: a sum of int32 counts
  for (const auto& [member, replicas] : placement.member_replicas) placed += std::max<std::int32_t>(replicas, 0);
  if (placed <= 0 || template_replicas <= 0) return 1.0;
  return static_cast<double>(placed) / static_cast<double>(template_replicas);
}

std::vector<Pod> with_unread_members(const std::vector<Pod>& pods, const MemberPlacement& placement,
                                     std::string_view namespace_name, Timestamp now) {
  std::vector<Pod> out = pods;
  if (placement.unread_members.empty()) return out;
  std::vector<Container> containers;
  if (!pods.empty()) containers = pods.front().containers;
  for (const auto& [member, replicas] : placement.unread_members) {
    for (std::int32_t i = 0; i < replicas; ++i) {
      Pod pod;
      pod.key = PodKey{member, std::string(namespace_name),
                       "<unread " + std::to_string(i + 1) + " of " + std::to_string(replicas) + ">"};
      pod.phase = PodPhase::Running;
      // Ready long ago: its part of the load is unknown, not starting up.
      pod.ready = PodReadyCondition{ConditionStatus::True, now - std::chrono::hours(1)};
      pod.start_time = now - std::chrono::hours(1);
      pod.containers = containers;
      out.push_back(std::move(pod));
    }
  }
  return out;
}

std::vector<PodResourceSample> without_unread_members(std::vector<PodResourceSample> samples,
                                                      const MemberPlacement& placement) {
  if (placement.unread_members.empty()) return samples;
  std::erase_if(samples, [&](const PodResourceSample& s) { return placement.unread_members.contains(s.key.cluster); });
  return samples;
}

std::vector<PodMetricSample> without_unread_members(std::vector<PodMetricSample> samples,
                                                    const MemberPlacement& placement) {
  if (placement.unread_members.empty()) return samples;
  std::erase_if(samples, [&](const PodMetricSample& s) { return placement.unread_members.contains(s.key.cluster); });
  return samples;
}

}  // namespace fedmetrics::autoscaler
