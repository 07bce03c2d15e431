#include "fedmetrics/controller/hpa_controller.hpp"

#include "controller/hpa_controller_state.hpp"

namespace fedmetrics::controller {

namespace {

namespace asio = boost::asio;
using async::Task;

}  // namespace

Task<void> HpaController::State::drain() {
  stopping = true;
  watch.reset();  // no watch event after this (stop() has reset it already)
  scope.cancel();
  term.cancel();
  co_await scope.join();
  co_await term.join();
}

HpaController::HpaController(async::Executor executor, ControlPlanePorts control_plane,
                             std::shared_ptr<aggregator::MetricsService> metrics,
                             std::shared_ptr<aggregator::MemberSource> members, ControllerOptions options)
    : state_(std::make_shared<State>(async::make_strand(executor), options.concurrent_syncs)) {
  state_->control_plane = std::move(control_plane);
  state_->metrics = std::move(metrics);
  state_->members = std::move(members);
  state_->options = std::move(options);
  if (!state_->options.monitor) state_->options.monitor = std::make_shared<NoAutoscalerMetrics>();
  state_->monitor = state_->options.monitor.get();
  if (!state_->options.monotonic) state_->options.monotonic = steady_clock();
  if (!state_->options.clock)
    state_->options.clock = [] {
      return std::chrono::time_point_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now());
    };
}

HpaController::~HpaController() { stop(); }

void HpaController::start() {
  std::weak_ptr<State> weak = state_;
  state_->watch = state_->control_plane.federated_hpas->watch(state_->options.selector, [weak](nlohmann::json object) {
    auto state = weak.lock();
    if (!state) return;
    asio::post(state->strand, [weak, object = std::move(object)]() mutable {
      if (auto state = weak.lock()) state->sync_watched(std::move(object));
    });
  });
  asio::post(state_->strand, [weak] {
    auto state = weak.lock();
    if (state && !state->stopping) state->scope.spawn(state->schedule(), "autoscaler: the scheduler");
  });
}

void HpaController::sync_soon() {
  asio::post(state_->strand, [weak = std::weak_ptr<State>(state_)] {
    if (auto state = weak.lock()) {
      state->sync_requested = true;
      state->wake.notify();
    }
  });
}

async::Task<void> HpaController::shutdown() {
  if (state_->stopped.exchange(true)) co_return;
  // On the loop's strand; the caller resumes on its own executor.
  // Built first: no temporary in the co_await expression (GCC 12).
  auto op = asio::co_spawn(state_->strand, state_->drain(), asio::use_awaitable);
  co_await std::move(op);
}

void HpaController::stop() {
  if (state_->stopped.exchange(true)) return;
  state_->watch.reset();  // no sync_watched after this, and the watch ends off the runtime's threads
  // Every pass and sync ends before this returns: none touches what the owner is about to destroy.
  async::run_and_wait(state_->strand, [state = state_.get()] { return state->drain(); });
}

async::Task<void> HpaController::sync_all() {
  // Built first: no temporary in the co_await expression (GCC 12).
  auto op = asio::co_spawn(state_->strand, state_->pass_and_wait(), asio::use_awaitable);
  co_await std::move(op);
}

void HpaController::cancel_in_flight() {
  asio::post(state_->strand, [weak = std::weak_ptr<State>(state_)] {
    if (auto state = weak.lock()) state->end_term();
  });
}

ControllerStats HpaController::stats() const {
  std::lock_guard lock(state_->stats_mutex);
  return state_->stats;
}

}  // namespace fedmetrics::controller
