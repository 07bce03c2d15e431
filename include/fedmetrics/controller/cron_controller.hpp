#pragma once
// Scheduled scaling (docs/cron.md): the CronFederatedHPAs matching the
// loop's label selector, run on the leader only, on the same control-plane
// port and strand executor as the FederatedHPA loop.
//
// One coroutine: a pass lists the CronFederatedHPAs, and for each rule of those due decides
// with autoscaler::plan_cron_rule whether a firing is due (from the status's
// history, so that a change of leader neither loses a run within
// --cron-missed-run-deadline nor repeats one), runs it (a FederatedHPA's
// min/max in one conditional write, or the workload's scale; read again and
// retried on a conflict), records it with what was applied, emits
// ScaleSucceeded / ScaleFailed / InvalidRule Events and writes the status
// when it changed. Each object is checked on its own cadence: when it is new
// or changed (a new metadata.generation), just after its earliest next
// firing, and otherwise a resync period after its last check. Passes are
// children of the leadership term: losing the lease cancels the one in
// flight before its next write, and what the loop remembered of the
// histories is dropped (the next term checks every object at once).
#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "fedmetrics/controller/clock.hpp"
#include "fedmetrics/controller/control_plane.hpp"
#include "fedmetrics/k8s/time.hpp"
#include "fedmetrics/transport/executor.hpp"
#include "fedmetrics/transport/task.hpp"

namespace fedmetrics::controller {

struct CronControllerOptions {
  k8s::LabelSelector selector;                                             // --autoscaler-label-selector
  std::chrono::milliseconds resync_period{15'000};                         // changes of the objects are seen within it
  std::string default_time_zone = "UTC";                                   // --cron-default-time-zone
  std::chrono::nanoseconds missed_run_deadline = std::chrono::minutes(5);  // --cron-missed-run-deadline
  std::function<k8s::Timestamp()> clock;                                   // wall clock
  std::shared_ptr<Clock> monotonic;  // what the loop waits on; unset: steady_clock()
  std::function<bool()> active;      // the leader election; unset: always
};

// A duration histogram as Karmada's CronFederatedHPA metrics have it
// (exponential buckets from 1 ms, doubling, 12 of them); counts per bucket,
// not cumulative (the exporter accumulates).
struct DurationHistogram {
  static constexpr std::size_t kBuckets = 12;
  static double upper_bound(std::size_t i) { return 0.001 * static_cast<double>(1u << i); }
  std::array<std::uint64_t, kBuckets> buckets{};  // an observation above the last bound is only in count
  std::uint64_t count = 0;
  double sum = 0;
  void observe(double seconds);
};

struct CronControllerStats {
  // fedmetrics_cronfederatedhpa_process_duration_seconds{result}: one object's reconcile
  // (error: it could not be decoded, a rule failed, or its status could not be written).
  DurationHistogram process_success;
  DurationHistogram process_error;
  // fedmetrics_cronfederatedhpa_rule_process_duration_seconds{result}: one rule's run
  // (error: a failed execution or an invalid rule recorded).
  DurationHistogram rule_success;
  DurationHistogram rule_error;
  std::uint64_t passes = 0;
  std::uint64_t runs = 0;         // successful executions
  std::uint64_t failed_runs = 0;  // failed executions (invalid rules not counted)
  std::uint64_t missed_runs = 0;  // firings skipped, older than the deadline
};

class CronController {
 public:
  // Uses the ports' crons (required), federated_hpas, federated_hpa_writer,
  // scales and events.
  CronController(async::Executor executor, ControlPlanePorts control_plane, CronControllerOptions options);
  ~CronController();
  CronController(const CronController&) = delete;
  CronController& operator=(const CronController&) = delete;

  // Starts the loop (first pass at once). Thread-safe.
  void start();
  // Cancels the loop and a pass in flight; completes once none runs. A
  // coroutine on any executor: nothing blocks. Once only.
  async::Task<void> shutdown();
  // shutdown() for an owner on another thread than the runtime's: blocks
  // until it has completed. The runtime must still run.
  void stop();
  // A pass now (this replica just became the leader). Thread-safe.
  void sync_soon();
  // This replica stopped leading: the pass in flight is cancelled before its
  // next write, the remembered histories dropped. Thread-safe.
  void cancel_in_flight();
  // One pass, a child of the leadership term; completes when it has ended (tests).
  async::Task<void> pass_now();

  [[nodiscard]] CronControllerStats stats() const;

 private:
  struct State;
  // Owned here; the posts of the thread-safe calls hold it weakly, the
  // coroutines by reference (they end in shutdown(), before it goes).
  std::shared_ptr<State> state_;
};

}  // namespace fedmetrics::controller
