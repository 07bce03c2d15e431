#pragma once
// What only a federation adds to the replica calculation
// (docs/autoscaling.md, "Decisions on complete data only"): where Karmada placed the
// replicas, and which members could not be read this sync. Pure values and
// functions, shared by the live loop and `fedmetrics simulate`.
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "fedmetrics/autoscaler/pod_state.hpp"

namespace fedmetrics::autoscaler {

struct MemberPlacement {
  // The replicas placed in each member (the ResourceBinding's
  // spec.clusters[].replicas; with a Duplicated placement every member runs
  // the template's replicas). Empty: not known, calibration 1.
  std::map<std::string, std::int32_t, std::less<>> member_replicas;
  // Members whose pods and pod metrics could not be read this sync, with the
  // replicas placed there: those replicas are missing pods, never absent ones.
  std::map<std::string, std::int32_t, std::less<>> unread_members;
};

// Karmada's FederatedHPA calibration, sum(member replicas) / template
// replicas: the factor by which the pods the members run outnumber the
// replicas the FederatedHPA scales. Every replica count derived from a count
// of pods is divided by it before it is rounded up, as Karmada's replica
// calculator does. 1 when either side is unknown or zero (scale from zero).
double calibration(const MemberPlacement& placement, std::int32_t template_replicas);

// The pods with the unread members' replicas added as pods without metrics
// ("missing pods" to the HPA's rules): Running, Ready, started an hour
// before `now`, named "<unread N of M>" in their member, each with the
// containers and requests of `pods.front()` (the workload's pods share one
// template). Pods already listed for an unread member are kept as they are.
std::vector<Pod> with_unread_members(const std::vector<Pod>& pods, const MemberPlacement& placement,
                                     std::string_view namespace_name, Timestamp now);

// The resource samples without those of unread members: a member whose pods
// could not be read has only missing pods, so a stray sample of it must not
// count as well.
std::vector<PodResourceSample> without_unread_members(std::vector<PodResourceSample> samples,
                                                      const MemberPlacement& placement);
std::vector<PodMetricSample> without_unread_members(std::vector<PodMetricSample> samples,
                                                    const MemberPlacement& placement);

}  // namespace fedmetrics::autoscaler
