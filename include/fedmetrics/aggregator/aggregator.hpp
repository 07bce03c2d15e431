#pragma once
// The MetricsService that answers every query by asking the member clusters
// in parallel and merging their answers (src/aggregator/merge.hpp holds the
// pure merge rules). The fan-out is a group of coroutines, one per member,
// on the executor of the query that started it. It waits on no timer: each
// member's call ends by the deadline it is given (the client enforces it),
// so an answer is ready when the last member has answered, never later than
// the member timeout.
//
// Identical queries in flight together share one fan-out (coalescing); an
// optional result cache answers repeats within cache_ttl. The fan-out is not
// the child of the query that started it: a waiter that is cancelled leaves
// at once, and the fan-out goes on to its end for the others, the cache and
// the breakers. Time comes from the injected clock, so tests drive it.
//
// A member whose last `fail_fast_threshold` requests all went unanswered
// (timed out, or could not connect) is left out of every answer at once,
// with a Warning saying since when, instead of costing each query its whole
// member timeout; it is probed in the background (`schedule`), one request
// at a time with a backoff, and asked again after its first answer
// (src/aggregator/fail_fast.hpp, member_breaker.hpp).
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "fedmetrics/aggregator/member_cluster.hpp"
#include "fedmetrics/aggregator/metrics_service.hpp"

namespace fedmetrics::aggregator {

using Clock = std::function<std::chrono::steady_clock::time_point()>;
using WallClock = std::function<std::chrono::system_clock::time_point()>;
// Runs the coroutine `task()` once, `delay` from now, on any executor (a
// timer of the composition root's runtime; a test's fake time). A task may
// run after the Aggregator is gone: it then does nothing.
using Scheduler =
    std::function<void(std::chrono::steady_clock::duration delay, std::function<async::Task<void>()> task)>;

struct AggregatorOptions {
  // Deadline of every member call, from the moment the fan-out starts (--member-timeout).
  std::chrono::milliseconds member_timeout{3000};
  // Result cache window (--cache-ttl); zero or negative turns the cache off.
  std::chrono::milliseconds cache_ttl{0};
  // At most this many answers in the result cache (--cache-max-entries); when
  // full, the oldest (the next to expire) makes room. Zero counts as one.
  std::size_t cache_max_entries = 1024;
  // Called once per failed member call, on the executor of the fan-out, so the composition root can log it. Optional;
  // must be thread-safe.
  std::function<void(std::string_view member, const MemberError& error)> on_member_error;
  // When a member stops answering (`reason` is the Warning's, after "left
  // out: ") and when it answers again (`reason` empty), once each, so that
  // the composition root logs it. Optional; must be thread-safe.
  std::function<void(std::string_view member, std::string_view reason)> on_member_answering;
  // Leaving out members that do not answer (--member-failure-threshold);
  // off without a scheduler for the probes.
  int fail_fast_threshold = 3;
  // The first probe of a member left out comes this long after, each
  // unanswered probe doubles the wait, up to the cap.
  std::chrono::milliseconds first_probe_delay{1000};
  std::chrono::milliseconds max_probe_delay{16000};
  Scheduler schedule;
  // Dates "not answering since"; the system clock when not given.
  WallClock wall_clock;
};

// Counters since construction, for the server's /metrics.
struct AggregatorStats {
  std::uint64_t queries = 0;        // every query received
  std::uint64_t fan_outs = 0;       // queries that asked the members
  std::uint64_t coalesced = 0;      // queries attached to a fan-out already in flight
  std::uint64_t cache_hits = 0;     // queries answered from the result cache
  std::uint64_t member_calls = 0;   // calls made to members
  std::uint64_t member_errors = 0;  // of those, the ones that failed
  std::map<std::string, std::uint64_t, std::less<>> member_errors_by_cluster;
};

class Aggregator final : public MetricsService {
 public:
  Aggregator(
      std::shared_ptr<MemberSource> members, AggregatorOptions options,
      Clock clock = [] { return std::chrono::steady_clock::now(); });
  ~Aggregator() override;
  Aggregator(const Aggregator&) = delete;
  Aggregator& operator=(const Aggregator&) = delete;

  async::Task<SharedAnswer<PodMetricsAnswer>> pod_metrics(ResourceMetricsQuery query) override;
  async::Task<SharedAnswer<NodeMetricsAnswer>> node_metrics(ResourceMetricsQuery query) override;
  async::Task<SharedAnswer<CustomMetricsAnswer>> custom_metrics(CustomMetricsQuery query) override;
  async::Task<SharedAnswer<ExternalMetricsAnswer>> external_metrics(ExternalMetricsQuery query) override;

  [[nodiscard]] k8s::APIResourceList custom_metrics_resources(k8s::CustomMetricsVersion version) const override;
  [[nodiscard]] k8s::APIResourceList external_metrics_resources() const override;
  // True once a member call succeeded or a member's discovery did
  // (its capabilities are known).
  [[nodiscard]] bool has_served() const override;

  [[nodiscard]] AggregatorStats stats() const;

  // The member set as the aggregator asks it: the source's, with the members
  // that do not answer moved to the left-out ones (LeftOutMember::member set).
  // The autoscaling loop and /metrics read this one, so that they see the
  // members the answers see. Valid as long as the Aggregator.
  [[nodiscard]] std::shared_ptr<MemberSource> members() const;

 private:
  struct State;
  // Shared with the fan-outs in flight and the probes, so that destroying
  // the Aggregator before the last member answered is safe.
  std::shared_ptr<State> state_;
};

}  // namespace fedmetrics::aggregator
