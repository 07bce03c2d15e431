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
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "fedmetrics/controller/clock.hpp"
#include "fedmetrics/k8s/expected.hpp"
#include "fedmetrics/k8s/time.hpp"
#include "fedmetrics/transport/executor.hpp"
#include "fedmetrics/transport/task.hpp"

namespace fedmetrics::controller {

struct ElectionOptions {
  std::string namespace_name = "kube-system";        // --leader-elect-resource-namespace
  std::string name = "fedmetrics-autoscaler";        // --leader-elect-resource-name
  std::string identity;                              // hostname_random
  std::chrono::milliseconds lease_duration{15'000};  // --leader-elect-lease-duration
  std::chrono::milliseconds renew_deadline{10'000};  // --leader-elect-renew-deadline
  std::chrono::milliseconds retry_period{2'000};     // --leader-elect-retry-period
  // Called on the elector's strand each time this replica becomes the
  // leader (client-go's OnStartedLeading): the loop starts a pass at once
  // instead of when each FederatedHPA is next due, up to a sync period later.
  std::function<void()> on_started_leading;
  // Called on the elector's strand each time this replica stops leading
  // (client-go's OnStoppedLeading): the renew deadline passed, another
  // holder was seen, or stop(). The loop cancels its syncs in flight here,
  // before any further write.
  std::function<void()> on_stopped_leading;
  // The clock its retries, deadlines and lease expiry are measured on
  // (unset: steady_clock()); the Lease calls' deadlines are on it too.
  std::shared_ptr<Clock> monotonic;
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

// The Lease calls the elector makes. Each is answered by `deadline` (no
// answer by then is an error).
class LeaseClient {
 public:
  using Deadline = std::chrono::steady_clock::time_point;
  virtual ~LeaseClient() = default;
  // nullopt when the Lease does not exist.
  virtual async::Task<k8s::Expected<std::optional<nlohmann::json>>> get(const std::string& ns, const std::string& name,
                                                                        Deadline deadline) = 0;
  virtual async::Task<k8s::Expected<nlohmann::json>> create(const std::string& ns, const nlohmann::json& lease,
                                                            Deadline deadline) = 0;
  // Conditional on the lease's metadata.resourceVersion (a conflict is an error).
  virtual async::Task<k8s::Expected<nlohmann::json>> update(const std::string& ns, const std::string& name,
                                                            const nlohmann::json& lease, Deadline deadline) = 0;
};

// The election is one coroutine on a strand of `executor` (transport/async.hpp).
class LeaderElector {
 public:
  LeaderElector(async::Executor executor, std::shared_ptr<LeaseClient> client, ElectionOptions options,
                std::function<k8s::Timestamp()> clock = nullptr);
  ~LeaderElector();
  // Thread-safe.
  void start();
  // Stops trying; a leader releases the Lease first. Completes once the
  // election has ended (a Lease call in flight is answered by its deadline).
  // A coroutine on any executor: nothing blocks. Once only.
  async::Task<void> shutdown();
  // shutdown() for an owner on another thread than the runtime's: blocks
  // until it has completed. The runtime must still run.
  void stop();
  [[nodiscard]] bool leading() const;

 private:
  struct State;
  // Owned here; start()'s post holds it weakly, the coroutines by reference
  // (they end in shutdown(), before it goes).
  std::shared_ptr<State> state_;
};

}  // namespace fedmetrics::controller
