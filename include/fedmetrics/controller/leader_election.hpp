#pragma once
// Leader election on a coordination.k8s.io/v1 Lease, as client-go's
// leaderelection does it, so that only one of several `fedmetrics serve
// --enable-autoscaler` replicas scales: the holder renews the Lease every
// retry period; a contender takes it once renewTime + leaseDurationSeconds
// has passed; every write carries the Lease's resourceVersion, so two
// contenders cannot both win; a leader that cannot renew within the renew
// deadline stops leading; on shutdown the leader releases the Lease.
//
// The renew deadline is one overall deadline (client-go runs each renew
// round under context.WithTimeout(RenewDeadline)): every GET and PUT of a
// round is bounded by it, so a slow control plane makes the leader step down
// before another replica can take the Lease (lease duration after it last
// saw it renewed), never after.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "fedmetrics/k8s/expected.hpp"
#include "fedmetrics/k8s/time.hpp"

namespace fedmetrics::controller {

struct ElectionOptions {
  std::string namespace_name = "kube-system";   // --leader-elect-resource-namespace
  std::string name = "fedmetrics-autoscaler";   // --leader-elect-resource-name
  std::string identity;                         // hostname_random
  std::chrono::milliseconds lease_duration{15'000};  // --leader-elect-lease-duration
  std::chrono::milliseconds renew_deadline{10'000};  // --leader-elect-renew-deadline
  std::chrono::milliseconds retry_period{2'000};     // --leader-elect-retry-period
  // Called on the elector's thread each time this replica becomes the
  // leader (client-go's OnStartedLeading): the loop starts a pass at once
  // instead of at its next tick, up to a sync period later.
  std::function<void()> on_started_leading;
  // Called on the elector's thread each time this replica stops leading
  // (client-go's OnStoppedLeading): the renew deadline passed, another
  // holder was seen, or stop(). The loop cancels its syncs in flight here,
  // before any further write.
  std::function<void()> on_stopped_leading;
};

// What to do with the Lease as read (nullopt: it does not exist). Whether
// its holder's term has run out is the caller's observation, as in
// client-go: leaseDurationSeconds after this replica last saw the record
// change, on its own clock (the holder's renewTime is another machine's).
// Pure.
struct LeaseStep {
  enum class Action { Create, Update, Wait } action = Action::Wait;
  nlohmann::json lease;  // the object to write (with the read resourceVersion) for Create/Update
  std::string holder;    // who holds it after a successful write, or now for Wait
};
LeaseStep next_lease_step(const std::optional<nlohmann::json>& current, const ElectionOptions& options,
                          k8s::Timestamp now, bool holder_expired);
// The Lease with holderIdentity cleared (release on shutdown), or nullopt when `identity` does not hold it.
std::optional<nlohmann::json> released_lease(const nlohmann::json& current, const std::string& identity);

// The Lease calls the elector makes (synchronous: it runs on its own
// thread). Each returns by `deadline`: no answer by then is an error.
class LeaseClient {
 public:
  using Deadline = std::chrono::steady_clock::time_point;
  virtual ~LeaseClient() = default;
  // nullopt when the Lease does not exist.
  virtual k8s::Expected<std::optional<nlohmann::json>> get(const std::string& ns, const std::string& name,
                                                           Deadline deadline) = 0;
  virtual k8s::Expected<nlohmann::json> create(const std::string& ns, const nlohmann::json& lease, Deadline deadline) = 0;
  // Conditional on the lease's metadata.resourceVersion (a conflict is an error).
  virtual k8s::Expected<nlohmann::json> update(const std::string& ns, const std::string& name,
                                               const nlohmann::json& lease, Deadline deadline) = 0;
};

class LeaderElector {
 public:
  LeaderElector(std::shared_ptr<LeaseClient> client, ElectionOptions options,
                std::function<k8s::Timestamp()> clock = nullptr);
  ~LeaderElector();
  void start();
  // Stops trying; a leader releases the Lease first.
  void stop();
  [[nodiscard]] bool leading() const { return leading_.load(); }

 private:
  void run();
  // One GET and, when it is ours to take or renew, one write, both by
  // `deadline`. True when this replica holds the Lease after it.
  bool attempt(std::chrono::steady_clock::time_point deadline);
  bool attempt_unguarded(std::chrono::steady_clock::time_point deadline);
  // Renews until the renew deadline (counted from the last successful
  // renewal's start) passes; false when it passed: the caller steps down.
  bool renew();
  void step_down(const std::string& why);
  // Waits `period` or until stop(); false when stopping.
  bool pause(std::chrono::steady_clock::duration period);

  std::shared_ptr<LeaseClient> client_;
  ElectionOptions options_;
  std::function<k8s::Timestamp()> clock_;
  std::atomic<bool> leading_{false};
  // When the attempt that last renewed began (before its GET): the Lease's
  // renewTime is no earlier, so other replicas count their lease duration
  // from no earlier than this.
  std::chrono::steady_clock::time_point last_renewal_{};
  nlohmann::json observed_spec_;                         // the Lease spec as last seen
  std::chrono::steady_clock::time_point observed_at_{};  // when it last changed, on our clock
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace fedmetrics::controller
