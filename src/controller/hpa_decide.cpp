// HpaController: the calculation of one sync and what it writes: the
// scale, the status and the Events.

#include "controller/hpa_controller_state.hpp"

#include <spdlog/spdlog.h>

// GCC 12 inlines Asio's coroutine frame allocation into decide() and then
// reports its own matching operator delete as mismatched: a false positive
// (see transport/tls_server_session.cpp).
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

namespace fedmetrics::controller {

namespace {

using async::Task;
using autoscaler::ConditionStatus;

}  // namespace

void HpaController::State::observe_metric_computations(const autoscaler::SyncResult& result,
                                                       const autoscaler::FederatedHPAStatus& previous,
                                                       const std::vector<std::chrono::nanoseconds>& fetch_durations,
                                                       std::chrono::steady_clock::duration calculation) {
  const auto& computed = result.metric_computations;
  if (computed.empty()) return;
  const auto share = calculation / static_cast<int>(computed.size());
  for (std::size_t i = 0; i < computed.size(); ++i) {
    const auto& c = computed[i];
    ScaleAction action = ScaleAction::None;
    SyncError error = SyncError::None;
    if (!c.replicas) error = c.invalid_spec ? SyncError::Spec : SyncError::Internal;
    else if (*c.replicas > previous.current_replicas) action = ScaleAction::ScaleUp;
    else if (*c.replicas < previous.current_replicas) action = ScaleAction::ScaleDown;
    const auto fetched = i < fetch_durations.size() ? fetch_durations[i] : std::chrono::nanoseconds(0);
    monitor->observe_metric_computation(action, error, c.type, fetched + share);
  }
}

Task<void> HpaController::State::decide(const autoscaler::FederatedHPA& hpa, const EventSubject& subject,
                                        const FederatedHPAKey& key, const Scale& scale,
                                        std::vector<autoscaler::Pod>& pods, GatheredMetrics& gathered,
                                        const autoscaler::MemberPlacement& placement, Outcome& outcome) {
  co_await async::throw_if_cancelled();  // the remembered status belongs to the term; Events follow
  auto previous = memory[key].status;
  auto history = memory[key].history;
  // A FederatedHPA no controller has written a status for: it wants what
  // its target has until the calculation says otherwise, never 0.
  if (memory[key].seed_desired) previous.desired_replicas = scale.spec_replicas;
  autoscaler::SyncInput input;
  input.scale = {scale.spec_replicas, scale.status_replicas};
  input.pods = std::move(pods);
  input.metrics = std::move(gathered.snapshot);
  input.now = options.clock();
  input.placement = placement;
  const auto calculation_started = std::chrono::steady_clock::now();
  auto result = autoscaler::sync(hpa, previous, std::move(history), input, options.algorithm);
  observe_metric_computations(result, previous, gathered.fetch_durations,
                              std::chrono::steady_clock::now() - calculation_started);
  if (result.error) {
    outcome.failed(SyncError::Internal);  // upstream: metrics that failed, even when the valid ones scale
    const auto* active = autoscaler::find_condition(result.status.conditions, "ScalingActive");
    std::string reason =
        active != nullptr && active->status == ConditionStatus::False ? active->reason : "FailedComputeMetricsReplicas";
    count([](ControllerStats& s) { ++s.errors; });
    record_event(subject, "Warning", reason, *result.error);
  }
  // Members whose data was missing: the decision held any scale-down on it.
  if (result.incomplete) record_event(subject, "Warning", "IncompleteMetrics", *result.incomplete);
  if (!result.rescale) {
    co_await write_status(hpa, key, result.status, result.history, outcome);
    co_await write_decision(hpa, key, result.decision);
    co_return;
  }

  auto updated = co_await control_plane.scales->update_scale(hpa.namespace_name, hpa.spec.scale_target_ref,
                                                             result.desired_replicas, scale.resource_version);
  if (!updated) {
    // A conflict or an outage: the status says so and the next sync tries again.
    auto failure = autoscaler::rescale_failed(result, previous, updated.error().message, options.clock());
    count([](ControllerStats& s) { ++s.errors; });
    outcome.failed(SyncError::Internal);
    co_await async::throw_if_cancelled();
    record_event(subject, "Warning", "FailedRescale",
                 "New size: " + std::to_string(result.desired_replicas) + "; reason: " + result.rescale_reason +
                     "; error: " + updated.error().message);
    co_await write_status(hpa, key, failure.status, failure.history, outcome);
    auto decision = result.decision;
    decision.detail += "; not applied: the scale update failed: " + updated.error().message;
    co_await write_decision(hpa, key, decision);
    co_return;
  }
  // Upstream's action: the new scale was written.
  outcome.action = result.desired_replicas > result.current_replicas ? ScaleAction::ScaleUp : ScaleAction::ScaleDown;
  co_await async::throw_if_cancelled();
  record_event(subject, "Normal", "SuccessfulRescale",
               "New size: " + std::to_string(result.desired_replicas) + "; reason: " + result.rescale_reason);
  spdlog::info("autoscaler: {}: {} -> {} replicas ({})", key.str(), result.current_replicas, result.desired_replicas,
               result.rescale_reason);
  count([](ControllerStats& s) { ++s.rescales; });
  co_await write_status(hpa, key, result.status, result.history, outcome);
  co_await write_decision(hpa, key, result.decision);
}

Task<void> HpaController::State::write_decision(const autoscaler::FederatedHPA& hpa, const FederatedHPAKey& key,
                                                const autoscaler::Decision& decision) {
  auto document = autoscaler::to_json(decision);
  const std::string value = document.dump();
  document.erase("time");
  std::string written_without_time = document.dump();
  if (memory[key].decision_written == written_without_time) co_return;
  co_await async::throw_if_cancelled();
  const std::string annotation(autoscaler::kDecisionAnnotation);
  const std::optional<std::string> annotated = value;
  auto written =
      co_await control_plane.federated_hpa_writer->set_annotation(hpa.namespace_name, hpa.name, annotation, annotated);
  if (!written) {
    spdlog::warn("autoscaler: {}: cannot write its decision for explain: {}", key.str(), written.error().message);
    co_return;
  }
  // As write_status: a write that ended after the term did leaves no memory behind.
  co_await async::throw_if_cancelled();
  memory[key].decision_written = std::move(written_without_time);
}

Task<void> HpaController::State::write_status(const autoscaler::FederatedHPA& hpa, const FederatedHPAKey& key,
                                              const autoscaler::FederatedHPAStatus& status,
                                              const autoscaler::ScalingHistory& history, Outcome& outcome) {
  co_await async::throw_if_cancelled();
  auto& m = memory[key];
  m.status = status;
  m.history = history;
  m.seed_desired = false;
  auto document = nlohmann::json::parse(autoscaler::to_json(status).dump());
  auto written =
      co_await control_plane.federated_hpa_writer->update_status(hpa.namespace_name, hpa.name, std::move(document));
  if (!written) {
    outcome.failed(SyncError::Internal);
    spdlog::warn("autoscaler: {}: cannot update status: {}", key.str(), written.error().message);
    co_return;
  }
  // The write cannot be cancelled once sent: if the term ended meanwhile,
  // end_term() has already forgotten this object's gauges, and a follower
  // must not bring them back (two replicas would report the same series).
  co_await async::throw_if_cancelled();
  monitor->set_replicas(hpa.namespace_name, hpa.name, status.current_replicas, status.desired_replicas);
}

Task<void> HpaController::State::fail_early(const autoscaler::FederatedHPA& hpa, const EventSubject& subject,
                                            const FederatedHPAKey& key, Outcome& outcome, SyncError error,
                                            const char* condition, const char* reason, const std::string& message,
                                            std::optional<std::int32_t> scale_replicas) {
  outcome.failed(error);
  auto status = memory[key].status;
  auto history = memory[key].history;
  if (memory[key].seed_desired && scale_replicas) status.desired_replicas = *scale_replicas;
  count([](ControllerStats& s) { ++s.errors; });
  autoscaler::set_condition(status.conditions, condition, ConditionStatus::False, reason, message, options.clock());
  co_await async::throw_if_cancelled();
  record_event(subject, "Warning", reason, message);
  spdlog::info("autoscaler: {}: {}: {}", key.str(), reason, message);
  co_await write_status(hpa, key, status, history, outcome);
}

void HpaController::State::record_event(const EventSubject& subject, const char* type, const std::string& reason,
                                        const std::string& message) {
  control_plane.events->record({subject, type, reason, message});
}

}  // namespace fedmetrics::controller
