#pragma once
// The state of a simulated federation at one moment, as a plain value: the
// world, each workload's replicas, placement and offered load, and each
// member's pods and faults. Changes (load, replicas, faults) make a new value;
// the shell swaps it whole under readers (an immutable snapshot).
// Readiness and termination are functions of time, so answering a request at
// `now` needs no timers.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "fedmetrics/k8s/time.hpp"
#include "fedmetrics/sim/load_model.hpp"
#include "fedmetrics/sim/placement.hpp"
#include "fedmetrics/sim/world.hpp"

namespace fedmetrics::sim {

struct SimPod {
  std::string name;
  std::size_t workload = 0;  // index into World::workloads
  std::string node;
  std::string uid;
  std::string template_hash;
  k8s::Timestamp created{};               // creation and start time
  std::optional<k8s::Timestamp> deleted;  // deletionTimestamp
};

struct MemberState {
  std::vector<SimPod> pods;  // in creation order
  Faults faults;
  std::uint64_t next_ordinal = 0;  // pods ever created here, for names
  std::size_t next_node = 0;       // round-robin node assignment
};

struct WorkloadState {
  std::int32_t replicas = 0;
  std::vector<TargetCluster> placement;  // in propagation order
  Load load;                             // offered to the serving pods of the members without a load of their own
  // Members offered a load of their own (index into World::members): shared
  // by that member's serving pods alone, so one member can be hot while
  // another idles.
  std::map<std::size_t, Load> member_loads;
  // The template is labelled resourcetemplate.karmada.io/retain-replicas:
  // "true": each member keeps its own replica count (Karmada no longer
  // divides), and `replicas` follows their sum (Karmada's replicas syncer).
  bool retain_replicas = false;
};

// Which serving pods share which load, counted once per answer: the pods of a
// member with a load of its own share that load; every other serving pod of
// the workload shares the workload's load.
struct LoadShares {
  std::vector<std::size_t> shared;                                 // per workload
  std::map<std::pair<std::size_t, std::size_t>, std::size_t> own;  // (member, workload) with its own load
};

// A workload's pods that exist and that serve (Federation::serving).
struct PodCounts {
  std::size_t existing = 0;
  std::size_t serving = 0;
};

struct Federation {
  World world;
  k8s::Timestamp started{};
  std::vector<MemberState> members;
  std::vector<WorkloadState> workloads;
  std::uint64_t resource_version = 1;  // bumped by every change

  // Builds the world as it stands at `start`: pods placed and already running.
  static Federation create(World world, k8s::Timestamp start);

  // A pod exists until its termination grace has passed after deletion.
  [[nodiscard]] bool exists(const SimPod& pod, k8s::Timestamp now) const;
  // Running: its containers started (startupDelay after creation); Pending before.
  [[nodiscard]] bool running(const SimPod& pod, k8s::Timestamp now) const;
  [[nodiscard]] k8s::Timestamp started_at(const SimPod& pod) const;
  // Ready: running for at least readinessDelay; deletion does not clear it
  // (the kubelet keeps Ready until the containers stop).
  [[nodiscard]] bool ready(const SimPod& pod, k8s::Timestamp now) const;
  // Serving: ready and not being deleted (in the Service's endpoints).
  [[nodiscard]] bool serving(const SimPod& pod, k8s::Timestamp now) const;
  [[nodiscard]] std::size_t serving_pods(std::size_t workload, k8s::Timestamp now) const;
  // serving_pods of every workload, in one pass over the pods.
  [[nodiscard]] std::vector<std::size_t> serving_pods_by_workload(k8s::Timestamp now) const;
  // The pods of every workload, counted in one pass over the pods.
  [[nodiscard]] std::vector<PodCounts> pod_counts_by_workload(k8s::Timestamp now) const;
  [[nodiscard]] LoadShares load_shares(k8s::Timestamp now) const;
  // What a pod of `member` uses: its share of the load it is offered.
  [[nodiscard]] PodUsage usage(std::size_t member, const SimPod& pod, k8s::Timestamp now) const;
  // The same, with load_shares(now) counted by the caller (once per answer
  // rather than once per pod).
  [[nodiscard]] PodUsage usage(std::size_t member, const SimPod& pod, k8s::Timestamp now,
                               const LoadShares& shares) const;
  // When the pod became Ready, or when it will.
  [[nodiscard]] k8s::Timestamp ready_since(const SimPod& pod) const;

  // New values with one thing changed.
  [[nodiscard]] Federation with_load(std::size_t workload, Load load) const;
  // A member's own load for a workload; nullopt returns the member to the
  // workload's shared load.
  [[nodiscard]] Federation with_member_load(std::size_t workload, std::size_t member, std::optional<Load> load) const;
  // The template's count: divided over the members (Karmada's scheduler),
  // unless the workload retains its members' replicas, which then stay (and
  // the count stays their sum).
  [[nodiscard]] Federation with_replicas(std::size_t workload, std::int32_t replicas, k8s::Timestamp now) const;
  // A member's own replica count for a workload, as the member's HPA
  // controller sets its Deployment's scale: that member's pods follow; the
  // other members stay, and so does the template's count unless the workload
  // retains its members' replicas (then it is their sum). Unchanged when the
  // workload is not propagated to the member.
  [[nodiscard]] Federation with_member_replicas(std::size_t workload, std::size_t member, std::int32_t replicas,
                                                k8s::Timestamp now) const;
  // Retain on or off for a workload; on, `replicas` becomes the members' sum at once.
  [[nodiscard]] Federation with_retain_replicas(std::size_t workload, bool retain) const;
  [[nodiscard]] Federation with_faults(std::size_t member, Faults faults) const;
  [[nodiscard]] Federation with_external_value(std::string_view metric, k8s::Quantity value) const;
};

}  // namespace fedmetrics::sim
