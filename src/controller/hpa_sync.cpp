// HpaController: one sync of a FederatedHPA up to the calculation: its
// spec and annotations, its mode, its target's scale, the pods and the
// metrics of the members that host it.

#include "controller/hpa_controller_state.hpp"

#include <spdlog/spdlog.h>

namespace fedmetrics::controller {

namespace {

using async::Task;

}  // namespace

Task<void> HpaController::State::sync_guarded(nlohmann::json object, FederatedHPAKey key) {
  struct Free {
    State* state;
    FederatedHPAKey key;
    ~Free() {
      auto& m = state->memory[key];
      m.busy = false;
      // Its next sync came due meanwhile (or it changed): the scheduler starts it now.
      if (m.due_while_busy) state->wake.notify();
      state->count([](ControllerStats& s) { ++s.syncs; });
    }
  } free{this, key};
  bool slot = false;
  bool cancelled = false;
  Outcome outcome;
  std::chrono::steady_clock::time_point started;
  try {
    co_await slots.acquire();
    slot = true;
    started = std::chrono::steady_clock::now();  // the reconcile, not the wait for a slot
    co_await sync(object, key, outcome);
  } catch (const std::exception& e) {
    if (async::is_cancellation(e)) {
      cancelled = true;
      count([](ControllerStats& s) { ++s.cancelled_syncs; });
      spdlog::debug("autoscaler: {}: sync cancelled (leadership ended or stopping)", key.str());
    } else {
      outcome.failed(SyncError::Internal);
      spdlog::warn("autoscaler: {}: {}", key.str(), e.what());
    }
  }
  if (slot) slots.release();
  // A sync cancelled with its leadership term is no reconciliation.
  if (slot && !cancelled)
    monitor->observe_reconciliation(outcome.action, outcome.error, std::chrono::steady_clock::now() - started);
}

Task<void> HpaController::State::sync(const nlohmann::json& object, const FederatedHPAKey& key, Outcome& outcome) {
  const auto& meta = object.value("metadata", nlohmann::json::object());
  EventSubject subject{meta.value("namespace", ""), meta.value("name", ""), meta.value("uid", "")};
  if (auto& m = memory[key]; !m.status_known) {
    // The first sync of this term: the previous status is the object's.
    // The scale-event history is not on the object; upstream loses it
    // on a restart as well.
    auto observed = observed_status(object);
    m.status = std::move(observed.status);
    m.seed_desired = !observed.has_desired_replicas;
    m.history = {};
    m.status_known = true;
  }
  if (deleted_with_member_hpas(object)) {
    // Deleted while distributed: cleaned up as on the way back, then let go.
    const DistributedContext context = distributed_context();
    const bool finished = co_await finish_deletion(context, object, subject);
    if (!finished) outcome.failed(SyncError::Internal);
    co_return;
  }
  // A spec that cannot be decoded, or that the API server would have
  // refused (a control plane without Karmada's webhook stores it), is
  // never acted on, in either mode: ScalingActive False, reason
  // FailedConvertHPA (upstream's Event for an HPA it cannot use as
  // written), the message naming the field. The Event repeats at every
  // sync as one Event whose count grows (event_correlator.hpp).
  auto decoded = autoscaler::decode_federated_hpa(object);
  autoscaler::FederatedHPA hpa;
  if (decoded) hpa = std::move(*decoded);
  hpa.name = subject.name;
  hpa.namespace_name = subject.namespace_name;
  hpa.generation = meta.value("generation", std::int64_t{0});
  const std::optional<k8s::Error> unusable =
      decoded ? autoscaler::validate_federated_hpa_spec(hpa.spec) : std::optional<k8s::Error>(decoded.error());
  if (unusable) {
    const std::string message = unusable->message;
    co_await fail_early(hpa, subject, key, outcome, SyncError::Spec, "ScalingActive", "FailedConvertHPA", message);
    co_return;
  }
  const auto target = hpa.spec.scale_target_ref;

  // Its own period (autoscaling.fedmetrics.io/sync-period): when invalid,
  // the sync period stands (start_sync) and nothing is scaled until the
  // annotation is fixed.
  if (auto period = sync_period_of(object, options.sync_period); !period) {
    const std::string message = period.error().message;
    co_await fail_early(hpa, subject, key, outcome, SyncError::Spec, "ScalingActive", "InvalidSyncPeriod", message);
    co_return;
  }

  // The mode annotation (docs/distributed-mode.md). An invalid value is InvalidMode
  // (nothing scaled); distributed mode writes member HPAs instead of the
  // scale; a FederatedHPA back from distributed mode has its member HPAs
  // deleted before it is scaled centrally again.
  std::optional<std::string> mode_annotation;
  std::optional<std::string> distribution_annotation;
  if (const auto annotations = meta.value("annotations", nlohmann::json::object()); annotations.is_object()) {
    const auto it = annotations.find(std::string(autoscaler::kModeAnnotation));
    if (it != annotations.end() && it->is_string()) mode_annotation = it->get<std::string>();
    const auto shares = annotations.find(std::string(autoscaler::kDistributionAnnotation));
    if (shares != annotations.end()) distribution_annotation = shares->is_string() ? shares->get<std::string>() : "";
  }
  auto mode = autoscaler::parse_scaling_mode(mode_annotation);
  if (!mode) {
    const std::string message = mode.error().message;
    co_await fail_early(hpa, subject, key, outcome, SyncError::Spec, "ScalingActive", "InvalidMode", message);
    co_return;
  }
  const DistributedContext context = distributed_context();
  if (*mode == autoscaler::ScalingMode::Distributed) {
    if (!options.member_hpas) {
      const std::string message =
          "autoscaling.fedmetrics.io/mode is distributed, but this fedmetrics cannot write member HPAs; the "
          "FederatedHPA is not scaled centrally either. Remove the annotation, or set it to centralized, to "
          "scale it centrally";
      co_await fail_early(hpa, subject, key, outcome, SyncError::Internal, "ScalingActive",
                          "DistributedModeUnavailable", message);
      co_return;
    }
    if (const auto others = ambiguous(key); !others.empty()) {
      // No selector is read in this mode: the target names the pods.
      const std::string message = ambiguous_target_message(target.kind, target.name, others);
      co_await fail_early(hpa, subject, key, outcome, SyncError::Internal, "ScalingActive", "AmbiguousSelector",
                          message);
      co_return;
    }
    const bool synced = co_await sync_distributed(context, object, hpa, subject);
    if (!synced) outcome.failed(SyncError::Internal);
    memory[key].status_known = false;  // a later centralized sync starts from the object's status
    co_return;
  }
  if (distribution_annotation) {
    const bool left = co_await leave_distributed(context, object, hpa, *distribution_annotation);
    if (!left) {
      const std::string message =
          "leaving distributed mode: the member HPAs fedmetrics created could not all be deleted yet (a member "
          "is NotReady or unreachable); it is scaled centrally once they are";
      co_await fail_early(hpa, subject, key, outcome, SyncError::Internal, "ScalingActive", "LeavingDistributedMode",
                          message);
      co_return;
    }
    spdlog::info("autoscaler: {}: left distributed mode: scaled centrally again", key.str());
  }

  auto scale = co_await control_plane.scales->get_scale(hpa.namespace_name, target);
  if (!scale) {
    const std::string message =
        "the HPA controller was unable to get the target's current scale: " + scale.error().message;
    co_await fail_early(hpa, subject, key, outcome, SyncError::Internal, "AbleToScale", "FailedGetScale", message);
    co_return;
  }
  if (scale->selector.empty()) {
    const std::string message = "selector is required";
    co_await fail_early(hpa, subject, key, outcome, SyncError::Internal, "ScalingActive", "SelectorRequired", message,
                        scale->spec_replicas);
    co_return;
  }
  auto selector = k8s::LabelSelector::parse(scale->selector);
  if (!selector) {
    const std::string message =
        "couldn't convert selector into a corresponding internal selector object: " + selector.error().message;
    co_await fail_early(hpa, subject, key, outcome, SyncError::Internal, "ScalingActive", "InvalidSelector", message,
                        scale->spec_replicas);
    co_return;
  }
  // Upstream's AmbiguousSelector (horizontal.go, validateAndParseSelector):
  // while another FederatedHPA scales the same workload, neither scales it.
  if (const auto others = ambiguous(key); !others.empty()) {
    const std::string message = ambiguous_selector_message(scale->selector, others);
    co_await fail_early(hpa, subject, key, outcome, SyncError::Internal, "ScalingActive", "AmbiguousSelector", message,
                        scale->spec_replicas);
    co_return;
  }

  k8s::Expected<std::optional<std::vector<TargetCluster>>> hosts = std::optional<std::vector<TargetCluster>>();
  if (control_plane.placement) hosts = co_await control_plane.placement->target_clusters(hpa.namespace_name, target);
  if (!hosts) {
    // The binding could not be read this time: ask every member rather than fail the sync.
    spdlog::warn("autoscaler: {}: cannot read the target's ResourceBinding, asking every member: {}", key.str(),
                 hosts.error().message);
    hosts = std::optional<std::vector<TargetCluster>>();
  }

  // The pods and metrics of the members that host the target (all of them when that is not known).
  auto snapshot = members->snapshot();
  std::optional<std::set<std::string>> host_set;
  if (*hosts) {
    host_set.emplace();
    for (const auto& c : **hosts) host_set->insert(c.name);
  }
  aggregator::MemberList chosen;
  for (const auto& m : snapshot->members)
    if (!host_set || host_set->count(m->name())) chosen.push_back(m);
  auto deadline = std::chrono::steady_clock::now() + options.member_timeout;
  // Shared reads: from the members' watches of the namespace (shared_reads.cpp).
  auto listing_pods = list_pods(chosen, hpa.namespace_name, *selector, deadline, options.member_pods.get());
  auto listing = co_await std::move(listing_pods);
  if (options.member_pods) note_reads(key, chosen);
  add_members_not_asked(listing, *snapshot, host_set);
  for (const auto& f : listing.failed_members)
    spdlog::warn("autoscaler: {}: pods missing this sync (counted as missing pods): {}", key.str(), f);
  // Calibration and unread members (member_placement.hpp).
  auto placement = member_placement(*hosts, listing, scale->status_replicas);
  // Shared reads: the resource metrics from each member's fetch of the namespace, not a query of this sync's own.
  ResourceFetch shared;
  if (options.member_pods) {
    // The members the sync's own query would ask: the hosts, or every member.
    std::vector<std::string> asked;
    for (const auto& m : (host_set && host_set->empty()) ? snapshot->members : chosen) asked.push_back(m->name());
    std::set<autoscaler::PodKey> listed;
    for (const auto& p : listing.pods) listed.insert(p.key);
    shared = [this, asked = std::move(asked), ns = hpa.namespace_name, labels = *selector, listed = std::move(listed),
              max_age = memory[key].period] { return shared_resource_samples(asked, ns, labels, listed, max_age); };
  }
  auto gathering = gather_metrics(*metrics, autoscaler::with_defaults(hpa.spec), hpa.namespace_name, *selector,
                                  listing.pods, host_set, shared);
  auto gathered = co_await std::move(gathering);
  co_await decide(hpa, subject, key, *scale, listing.pods, gathered, placement, outcome);  // no temporaries (GCC 12)
}

}  // namespace fedmetrics::controller
