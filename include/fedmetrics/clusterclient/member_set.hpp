#pragma once
// The one place that holds a source's member clusters: a RestMemberCluster per
// member, kept in step with the list of endpoints the source currently names
// (kubeconfig contexts, Karmada Cluster objects), and published as an
// immutable snapshot swapped whole. Each member's capability discovery runs
// (and its health probe) in the background, a coroutine on the runtime's
// threads (transport/async.hpp; never on the request path):
// every `discovery_interval`, and with backoff after a failure; an
// unreachable member is retried, never forgotten. What a member serves is
// logged when it changes, not on every refresh.
//
// The snapshot also holds the members left out (aggregator::LeftOutMember):
// those the source names but offers no endpoint for (a Karmada Cluster not
// Ready), and those whose endpoint the client cannot use. They are reported
// in every answer that misses them, never dropped in silence.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "fedmetrics/aggregator/member_cluster.hpp"
#include "fedmetrics/clusterclient/rest_member_cluster.hpp"
#include "fedmetrics/transport/executor.hpp"
#include "fedmetrics/transport/task.hpp"

namespace fedmetrics::clusterclient {

struct MemberSetOptions {
  std::chrono::milliseconds discovery_interval{30'000};
  std::chrono::milliseconds discovery_timeout{5'000};
  kube::ClientOptions client;
  // What the aggregator is given for a member: its client as it is (null),
  // or a MemberCluster around it (a member whose metrics come from its
  // Prometheus; `prometheus` is where the member source says that is, or
  // null). Called once per client made; may throw, as the client's own
  // making does, to refuse the endpoint.
  std::function<std::shared_ptr<aggregator::MemberCluster>(std::shared_ptr<RestMemberCluster> member,
                                                           const kube::ClusterEndpoint* prometheus)>
      serve_as;
};

// What to do with an endpoint the set cannot use (its name given twice, or
// TLS material the client cannot load).
enum class OnBadEndpoint {
  Throw,         // std::runtime_error naming it, and the set is left as it was (start-up)
  KeepPrevious,  // logged once until it changes; the member keeps its previous endpoint, if it had one
};

class MemberSet {
 public:
  // Starts the discovery loop; the set is empty until the first reconcile().
  MemberSet(kube::ClientRuntime& runtime, MemberSetOptions options);
  ~MemberSet();
  MemberSet(const MemberSet&) = delete;
  MemberSet& operator=(const MemberSet&) = delete;

  [[nodiscard]] std::shared_ptr<const aggregator::MemberList> members() const {
    auto snapshot = snapshot_.load();
    return {snapshot, &snapshot->members};  // shares the snapshot's lifetime
  }
  [[nodiscard]] std::shared_ptr<const aggregator::MemberSnapshot> snapshot() const { return snapshot_.load(); }

  // Makes the set match `desired`, one endpoint per member name: a new name is
  // added, a name no longer given is dropped, and a member whose endpoint
  // changed (server, CA, token, ...) is replaced by a new client; an unchanged
  // member keeps its client, its connections and its capabilities. Then swaps
  // in the new snapshot, with `left_out` (members the source knows but gives
  // no endpoint for) and the endpoints it could not use that have no previous
  // one. Changes are logged, except on the first call (the caller reports the
  // initial set). Called by one thread at a time.
  // `prometheus`: the Prometheus the source names for some members (for
  // options.serve_as); a member whose Prometheus changed is made anew too.
  void reconcile(const std::vector<kube::ClusterEndpoint>& desired, OnBadEndpoint on_bad,
                 std::vector<aggregator::LeftOutMember> left_out = {},
                 const std::map<std::string, kube::ClusterEndpoint>& prometheus = {});

  // Blocks until every member has had one discovery attempt or `timeout`
  // passed. "Every member" is known once: not before the first reconcile().
  void wait_for_first_discovery(std::chrono::milliseconds timeout);
  // Calls `ready` once, on the discovery loop's strand, when every member has
  // had one discovery attempt or `timeout` has passed, whichever is first:
  // start-up waits for it without blocking a thread. Never after stop().
  void when_discovered(std::chrono::milliseconds timeout, std::function<void()> ready) const;
  // The same, awaited (start-up): ends when every member has had one
  // discovery attempt or `timeout` has passed, on the awaiting coroutine's
  // executor; cancelled with it.
  async::Task<void> first_discovery(std::chrono::milliseconds timeout) const;

  // The endpoint the set reaches member `name` at (as planned, with its
  // credentials); nullopt when it is no member. For clients of another API
  // of the member (distributed mode's member HPAs) that reach it the same way.
  [[nodiscard]] std::optional<kube::ClusterEndpoint> endpoint_of(const std::string& name) const;
  // The member clients, by name: what /metrics reads of each (their stats
  // and last health probe) without casting the aggregator's members.
  [[nodiscard]] std::vector<std::shared_ptr<const RestMemberCluster>> clients() const;

  // Stops the discovery loop and drops the members; no discovery starts
  // after it returns. Call it before destroying the ClientRuntime they use.
  void stop();

 private:
  struct Member {
    std::shared_ptr<RestMemberCluster> cluster;
    std::shared_ptr<aggregator::MemberCluster> served;  // what the snapshot holds: `cluster`, or options.serve_as's
    std::optional<kube::ClusterEndpoint> prometheus;    // as the source named it
    std::chrono::steady_clock::time_point next_discovery{};
    std::chrono::milliseconds backoff{500};
    bool in_flight = false;
    bool attempted = false;
    std::string last_capabilities;  // for logging changes once
    std::string last_health;        // the last probe's reason, likewise
  };
  // What discovery callbacks touch: shared with them, so that a callback that
  // arrives after this set is gone finds valid memory (and does nothing).
  struct Shared {
    std::mutex mutex;
    std::condition_variable wake;                           // wait_for_first_discovery
    std::shared_ptr<async::Wakeup> wakeup;                  // the discovery loop
    void changed();                                         // both, with `mutex` held
    std::map<std::string, Member> members;                  // by name
    std::map<std::string, kube::ClusterEndpoint> rejected;  // endpoints already refused and logged, by name
    struct Waiter {
      std::chrono::steady_clock::time_point deadline;
      std::function<void()> ready;
    };
    std::vector<Waiter> discovery_waiters;     // when_discovered(), called by the discovery loop
    [[nodiscard]] bool all_attempted() const;  // with `mutex` held
    bool reconciled = false;
    bool stopping = false;
  };

  void discover(const std::string& name);  // with shared_->mutex held
  // The next discovery due, started, and the when_discovered() waiters
  // whose wait is over called; when to look again. On the loop's strand.
  std::chrono::steady_clock::time_point discover_due();

  kube::ClientRuntime& runtime_;
  MemberSetOptions options_;
  std::atomic<std::shared_ptr<const aggregator::MemberSnapshot>> snapshot_;
  std::shared_ptr<Shared> shared_ = std::make_shared<Shared>();
  std::unique_ptr<async::Job> discovery_;  // last: started once the rest is in place
};

// The member sources built on a MemberSet: refreshed in the background, so
// the composition root waits for their first discovery and stops them before
// the ClientRuntime goes.
class RefreshingMemberSource : public aggregator::MemberSource {
 public:
  // Every implementation has its MemberSet's snapshot, with the members left out.
  [[nodiscard]] std::shared_ptr<const aggregator::MemberSnapshot> snapshot() const override = 0;
  // Blocks until every member has had one discovery attempt or `timeout` passed.
  virtual void wait_for_first_discovery(std::chrono::milliseconds timeout) = 0;
  // Its member clients (MemberSet::when_discovered, MemberSet::endpoint_of).
  [[nodiscard]] virtual const MemberSet& member_set() const = 0;
  // Stops every background loop and drops the member clients.
  virtual void stop() = 0;
};

}  // namespace fedmetrics::clusterclient
