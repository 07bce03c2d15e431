#include "sim/federation_placement.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <string>

#include "fedmetrics/autoscaler/overflow_placement.hpp"

namespace fedmetrics::sim::detail {

namespace {

constexpr std::int64_t kPodsPerNode = 110;  // the kubelet's default maxPods, as the members' Nodes say

// One pod's requests (milli-units): the pod-level ones when the template has
// them, else the sum of its containers'.
std::map<std::string, std::int64_t> pod_requests(const WorkloadSpec& w) {
  std::map<std::string, std::int64_t> out;
  if (!w.pod_requests.empty()) {
    for (const auto& [name, q] : w.pod_requests) out[name] = q.milli_value();
    return out;
  }
  for (const auto& c : w.containers)
    for (const auto& [name, q] : c.requests) out[name] += q.milli_value();
  return out;
}

// What a member's nodes can allocate (milli-units), as its Nodes report it.
std::map<std::string, std::int64_t> allocatable(const MemberSpec& m) {
  std::map<std::string, std::int64_t> out;
  for (const auto& node : m.nodes) {
    out["cpu"] += node.cpu.milli_value();
    out["memory"] += node.memory.milli_value();
    out["pods"] += kPodsPerNode * 1000;
    out["ephemeral-storage"] += k8s::Quantity::parse("100Gi").value().milli_value();
  }
  return out;
}

std::vector<ClusterWeight> static_weights(const Federation& f, const WorkloadSpec& w,
                                          const std::vector<TargetCluster>& previous) {
  std::vector<ClusterWeight> out;
  for (const auto& cluster : w.propagation.clusters) {
    ClusterWeight cw{cluster, 1, 0};
    auto it = w.propagation.weights.find(cluster);
    if (it != w.propagation.weights.end()) {
      cw.weight = it->second;
    } else if (auto m = f.world.member_index(cluster)) {
      cw.weight = f.world.members[*m].weight;
    }
    for (const auto& t : previous)
      if (t.name == cluster) cw.last_replicas = t.replicas;
    out.push_back(std::move(cw));
  }
  return out;
}

}  // namespace

std::int32_t free_replicas(const Federation& f, std::size_t member, std::size_t workload, std::int32_t replicas) {
  auto room = allocatable(f.world.members[member]);
  for (const auto& pod : f.members[member].pods) {
    room["pods"] -= 1000;
    for (const auto& [name, milli] : pod_requests(f.world.workloads[pod.workload])) room[name] -= milli;
  }
  auto wanted = pod_requests(f.world.workloads[workload]);
  wanted["pods"] = 1000;
  std::int64_t fits = replicas;
  for (const auto& [name, milli] : wanted) {
    if (milli <= 0) continue;
    auto it = room.find(name);
    const std::int64_t left = it == room.end() ? 0 : std::max<std::int64_t>(it->second, 0);
    fits = std::min(fits, left / milli);
  }
  return static_cast<std::int32_t>(std::max<std::int64_t>(fits, 0));
}

std::vector<TargetCluster> place_workload(const Federation& f, std::size_t workload, std::int32_t replicas,
                                          const std::vector<TargetCluster>& previous) {
  const auto& w = f.world.workloads[workload];
  if (w.propagation.groups.empty()) return divide_replicas(replicas, static_weights(f, w, previous));
  auto scheduled = [&](const std::string& name) {
    for (const auto& t : previous)
      if (t.name == name) return t.replicas;
    return 0;
  };
  std::vector<autoscaler::OverflowGroup> groups;
  for (const auto& group : w.propagation.groups) {
    auto& tier = groups.emplace_back(autoscaler::OverflowGroup{group.name, {}});
    for (const auto& name : group.clusters) {
      auto member = f.world.member_index(name);
      const std::int32_t room = member ? free_replicas(f, *member, workload, replicas) : 0;
      tier.clusters.push_back({name, room, scheduled(name)});
    }
  }
  std::vector<TargetCluster> out;
  auto placed = autoscaler::place_overflow(replicas, groups);
  for (const auto& name : w.propagation.clusters) {
    std::int32_t n = scheduled(name);  // unschedulable: the placement stays as it was
    if (placed) {
      auto it = placed->find(name);
      n = it == placed->end() ? 0 : it->second;
    }
    out.push_back({name, n});
  }
  return out;
}

}  // namespace fedmetrics::sim::detail
