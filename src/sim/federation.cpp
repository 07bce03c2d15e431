#include "fedmetrics/sim/federation.hpp"

#include <algorithm>
#include <string>
#include <unordered_set>

#include "fedmetrics/sim/deployment.hpp"
#include "sim/federation_placement.hpp"

namespace fedmetrics::sim {

namespace {

// The names of one member's pods, still listed or not yet pruned: a new pod's
// name must be none of them. A set, so that placing a member's pods costs
// what their number costs (a scan of the member's pods per new pod made a
// world's start grow with the square of its pods).
using PodNames = std::unordered_set<std::string>;

PodNames pod_names(const MemberState& state) {
  PodNames names;
  names.reserve(state.pods.size());
  for (const auto& p : state.pods) names.insert(p.name);
  return names;
}

// The indexes of the live (not deleted) pods of `workload` in `state`, oldest first.
std::vector<std::size_t> live_pods(const MemberState& state, std::size_t workload) {
  std::vector<std::size_t> live;
  for (std::size_t i = 0; i < state.pods.size(); ++i)
    if (state.pods[i].workload == workload && !state.pods[i].deleted) live.push_back(i);
  return live;
}

// Brings `live`, the live pods of `workload` in `member`, to `wanted`: new
// pods start at `now`; surplus pods, newest first (as the ReplicaSet
// controller prefers the youngest), get a deletionTimestamp. `names` are the
// member's pod names, kept up to date.
void scale_pods(Federation& f, std::size_t member, std::size_t workload, const std::vector<std::size_t>& live,
                std::int32_t wanted, k8s::Timestamp now, PodNames& names) {
  auto& state = f.members[member];
  const auto& w = f.world.workloads[workload];
  const auto& m = f.world.members[member];
  auto have = static_cast<std::int32_t>(live.size());
  for (auto n = have; n > wanted; --n) {
    auto& pod = state.pods[live[static_cast<std::size_t>(n - 1)]];
    pod.deleted = now;
  }
  if (have >= wanted) return;
  auto hash = pod_template_hash(w);
  state.pods.reserve(state.pods.size() + static_cast<std::size_t>(wanted - have));
  for (auto n = have; n < wanted; ++n) {
    SimPod pod;
    pod.workload = workload;
    pod.template_hash = hash;
    // Unique within the member: a name of a pod still listed is never reused.
    do {
      pod.name = w.name + "-" + hash + "-" + pod_suffix(hash + "@" + m.name, state.next_ordinal++);
    } while (names.contains(pod.name));
    names.insert(pod.name);
    pod.node = m.nodes[state.next_node++ % m.nodes.size()].name;
    pod.uid = object_uid(m.name + "/" + w.namespace_name + "/" + pod.name);
    pod.created = now;
    state.pods.push_back(std::move(pod));
  }
}

void reconcile(Federation& f, std::size_t member, std::size_t workload, std::int32_t wanted, k8s::Timestamp now) {
  auto names = pod_names(f.members[member]);
  scale_pods(f, member, workload, live_pods(f.members[member], workload), wanted, now, names);
}

// What Karmada's replicas syncer writes to a retaining template: the sum of its members'.
std::int32_t member_sum(const WorkloadState& state) {
  std::int32_t sum = 0;
  for (const auto& t : state.placement) sum += t.replicas;
  return sum;
}

// Forgets pods whose termination has completed.
void prune(Federation& f, k8s::Timestamp now) {
  for (auto& member : f.members) {
    std::erase_if(member.pods, [&](const SimPod& p) { return !f.exists(p, now); });
  }
}

}  // namespace

Federation Federation::create(World world, k8s::Timestamp start) {
  Federation f;
  f.world = std::move(world);
  f.started = start;
  f.members.resize(f.world.members.size());
  for (std::size_t i = 0; i < f.members.size(); ++i) f.members[i].faults = f.world.members[i].faults;
  f.workloads.resize(f.world.workloads.size());
  for (std::size_t w = 0; w < f.workloads.size(); ++w) {
    f.workloads[w].load = f.world.workloads[w].load;
  }
  // Every workload placed in place: a new Federation per workload (as
  // with_replicas makes) would copy every pod placed before it.
  std::vector<PodNames> names(f.members.size());
  for (std::size_t w = 0; w < f.workloads.size(); ++w) {
    auto& state = f.workloads[w];
    state.replicas = f.world.workloads[w].replicas;
    state.placement = detail::place_workload(f, w, state.replicas, {});
    for (const auto& target : state.placement)
      if (auto member = f.world.member_index(target.name))
        scale_pods(f, *member, w, {}, target.replicas, start, names[*member]);
  }
  // The world starts with its pods already running and Ready: the readiness
  // delay applies to pods created later.
  for (auto& member : f.members)
    for (auto& pod : member.pods) pod.created = start - f.world.workloads[pod.workload].readiness_delay;
  f.resource_version = 1;
  return f;
}

bool Federation::exists(const SimPod& pod, k8s::Timestamp now) const {
  if (!pod.deleted) return true;
  return now < *pod.deleted + world.workloads[pod.workload].termination_grace;
}

k8s::Timestamp Federation::started_at(const SimPod& pod) const {
  return pod.created + world.workloads[pod.workload].startup_delay;
}

bool Federation::running(const SimPod& pod, k8s::Timestamp now) const {
  return exists(pod, now) && now >= started_at(pod);
}

k8s::Timestamp Federation::ready_since(const SimPod& pod) const {
  return started_at(pod) + world.workloads[pod.workload].readiness_delay;
}

bool Federation::ready(const SimPod& pod, k8s::Timestamp now) const {
  return exists(pod, now) && now >= ready_since(pod);
}

bool Federation::serving(const SimPod& pod, k8s::Timestamp now) const { return !pod.deleted && ready(pod, now); }

std::size_t Federation::serving_pods(std::size_t workload, k8s::Timestamp now) const {
  std::size_t n = 0;
  for (const auto& m : members)
    for (const auto& p : m.pods)
      if (p.workload == workload && serving(p, now)) ++n;
  return n;
}

std::vector<std::size_t> Federation::serving_pods_by_workload(k8s::Timestamp now) const {
  std::vector<std::size_t> n(world.workloads.size(), 0);
  for (const auto& m : members)
    for (const auto& p : m.pods)
      if (serving(p, now)) ++n[p.workload];
  return n;
}

std::vector<PodCounts> Federation::pod_counts_by_workload(k8s::Timestamp now) const {
  std::vector<PodCounts> counts(world.workloads.size());
  for (const auto& m : members)
    for (const auto& p : m.pods) {
      if (!exists(p, now)) continue;
      ++counts[p.workload].existing;
      if (serving(p, now)) ++counts[p.workload].serving;
    }
  return counts;
}

LoadShares Federation::load_shares(k8s::Timestamp now) const {
  LoadShares shares;
  shares.shared.assign(world.workloads.size(), 0);
  for (std::size_t m = 0; m < members.size(); ++m)
    for (const auto& p : members[m].pods) {
      if (!serving(p, now)) continue;
      if (workloads[p.workload].member_loads.contains(m)) ++shares.own[{m, p.workload}];
      else ++shares.shared[p.workload];
    }
  return shares;
}

PodUsage Federation::usage(std::size_t member, const SimPod& pod, k8s::Timestamp now) const {
  return usage(member, pod, now, load_shares(now));
}

PodUsage Federation::usage(std::size_t member, const SimPod& pod, k8s::Timestamp now, const LoadShares& shares) const {
  const auto& state = workloads[pod.workload];
  if (auto own = state.member_loads.find(member); own != state.member_loads.end()) {
    auto n = shares.own.find({member, pod.workload});
    return pod_usage(world.workloads[pod.workload], own->second, n == shares.own.end() ? 0 : n->second,
                     serving(pod, now));
  }
  return pod_usage(world.workloads[pod.workload], state.load, shares.shared[pod.workload], serving(pod, now));
}

Federation Federation::with_load(std::size_t workload, Load load) const {
  Federation f = *this;
  f.workloads[workload].load = std::move(load);
  ++f.resource_version;
  return f;
}

Federation Federation::with_member_load(std::size_t workload, std::size_t member, std::optional<Load> load) const {
  Federation f = *this;
  if (load) f.workloads[workload].member_loads[member] = std::move(*load);
  else f.workloads[workload].member_loads.erase(member);
  ++f.resource_version;
  return f;
}

Federation Federation::with_replicas(std::size_t workload, std::int32_t replicas, k8s::Timestamp now) const {
  Federation f = *this;
  prune(f, now);
  auto& state = f.workloads[workload];
  if (state.retain_replicas) {
    state.replicas = member_sum(state);
    ++f.resource_version;
    return f;
  }
  state.placement = detail::place_workload(f, workload, replicas, state.placement);
  state.replicas = replicas;
  for (const auto& target : state.placement) {
    auto member = f.world.member_index(target.name);
    if (member) reconcile(f, *member, workload, target.replicas, now);
  }
  ++f.resource_version;
  return f;
}

Federation Federation::with_member_replicas(std::size_t workload, std::size_t member, std::int32_t replicas,
                                            k8s::Timestamp now) const {
  Federation f = *this;
  prune(f, now);
  const auto& name = f.world.members[member].name;
  for (auto& target : f.workloads[workload].placement) {
    if (target.name != name) continue;
    target.replicas = replicas;
    reconcile(f, member, workload, replicas, now);
    ++f.resource_version;
  }
  auto& state = f.workloads[workload];
  if (state.retain_replicas) state.replicas = member_sum(state);
  return f;
}

Federation Federation::with_retain_replicas(std::size_t workload, bool retain) const {
  Federation f = *this;
  auto& state = f.workloads[workload];
  state.retain_replicas = retain;
  if (retain) state.replicas = member_sum(state);
  ++f.resource_version;
  return f;
}

Federation Federation::with_faults(std::size_t member, Faults faults) const {
  Federation f = *this;
  f.members[member].faults = faults;
  ++f.resource_version;
  return f;
}

Federation Federation::with_external_value(std::string_view metric, k8s::Quantity value) const {
  Federation f = *this;
  for (auto& e : f.world.external_metrics)
    if (e.name == metric) e.value = value;
  ++f.resource_version;
  return f;
}

}  // namespace fedmetrics::sim
