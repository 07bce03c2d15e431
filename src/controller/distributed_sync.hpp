#pragma once
// One sync of a FederatedHPA in distributed mode (docs/distributed-mode.md)
// on the live loop's strand: read the binding, the Ready members and each
// member's HPA, run the pure distributor, write the member HPAs (never one
// fedmetrics did not create), label the target template for Karmada to
// retain member replicas, write the distribution annotation, the aggregated
// status and the Events. And the way back: a FederatedHPA that leaves
// distributed mode, or is deleted, gets its member HPAs deleted and the label
// removed.
//
// Private to the controller module (Asio's awaitables in the signature).
#include "fedmetrics/transport/async.hpp"

#include <functional>
#include <map>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "fedmetrics/aggregator/member_cluster.hpp"
#include "fedmetrics/autoscaler/hpa_spec.hpp"
#include "fedmetrics/controller/autoscaler_metrics.hpp"
#include "fedmetrics/controller/control_plane.hpp"
#include "fedmetrics/controller/hpa_controller.hpp"
#include "fedmetrics/controller/member_hpas.hpp"

namespace fedmetrics::controller {

struct DistributedContext {
  const ControlPlanePorts* control_plane = nullptr;
  const aggregator::MemberSource* members = nullptr;
  const MemberHPAsFactory* member_hpas = nullptr;
  std::chrono::nanoseconds rebalance_window{};
  k8s::Timestamp now{};
  // Members seen NotReady, with when they were first seen so (the loop's
  // memory across syncs: a member NotReady for the rebalance window has left).
  std::map<std::string, k8s::Timestamp>* not_ready_since = nullptr;
  AutoscalerMetrics* monitor = nullptr;  // member HPA writes, rebalances, the replicas of the status written
};

// The FederatedHPA `object` (decoded as `hpa`) in distributed mode. Throws
// the cancellation (the leadership term ended) before any further write.
// False when a read or write it needed failed (the sync's error).
async::Task<bool> sync_distributed(const DistributedContext& context, const nlohmann::json& object,
                                   const autoscaler::FederatedHPA& hpa, const EventSubject& subject);

// A FederatedHPA that is not (or no longer) in distributed mode but still
// carries the distribution annotation (`distribution_annotation`, its
// value): the member HPAs fedmetrics created are deleted, the retain label,
// fedmetrics' finalizer and the annotation removed. True when everything was
// cleaned up (the centralized sync may then run); only the members the
// annotation names (that got an HPA) can hold that up, a NotReady one too.
async::Task<bool> leave_distributed(const DistributedContext& context, const nlohmann::json& object,
                                    const autoscaler::FederatedHPA& hpa, const std::string& distribution_annotation);

// A FederatedHPA being deleted (metadata.deletionTimestamp) that still has
// fedmetrics' finalizer (autoscaler::kMemberHPAsFinalizer, added when it
// first went distributed).
bool deleted_with_member_hpas(const nlohmann::json& object);

// Cleans up after such a FederatedHPA as leaving distributed mode does: its
// member HPAs deleted from the Ready members, the retain label removed from
// its target, then the finalizer, so that the deletion completes. A member
// that is NotReady or cannot be reached does not hold the deletion up: the
// orphan sweep deletes its member HPA once it answers. False when the label
// or the finalizer could not be written (the next sync tries again).
async::Task<bool> finish_deletion(const DistributedContext& context, const nlohmann::json& object,
                                  const EventSubject& subject);

// The orphan sweep: member HPAs fedmetrics created whose FederatedHPA is
// gone or no longer gives their member a share (member_hpa.hpp's
// orphan_reason) are deleted from every Ready member that answers, each as
// listed (its uid as precondition). This is what collects a member HPA whose
// member could not be reached when its FederatedHPA was deleted or when the
// member left. `ours`: the loop's --autoscaler-label-selector (another
// fedmetrics' FederatedHPAs are never judged). Returns how many were
// deleted; throws the cancellation before any delete.
async::Task<std::size_t> collect_orphan_member_hpas(const DistributedContext& context, const k8s::LabelSelector& ours);

}  // namespace fedmetrics::controller
