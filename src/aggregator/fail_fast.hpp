#pragma once
// The members that stopped answering, for the fan-out: a MemberBreaker
// (member_breaker.hpp) for each member with unanswered requests lately, fed
// every reply a query gets; the members whose breaker is open are left out
// of the plans and of the member snapshot the loop reads, and probed off
// every query's path through the Scheduler, one request at a time, until
// their first answer. Thread-safe: replies come from any thread.
#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "aggregator/member_breaker.hpp"
#include "fedmetrics/aggregator/aggregator.hpp"
#include "fedmetrics/aggregator/member_cluster.hpp"

namespace fedmetrics::aggregator {

class FailFast : public std::enable_shared_from_this<FailFast> {
 public:
  // From AggregatorOptions: fail_fast_threshold, the probe delays,
  // member_timeout (each probe's deadline), schedule, wall_clock,
  // on_member_answering; `clock` is the Aggregator's.
  FailFast(std::shared_ptr<MemberSource> source, const AggregatorOptions& options, Clock clock);

  // On: a threshold above 0 and a scheduler for the probes.
  [[nodiscard]] bool enabled() const { return breaker_.threshold > 0 && schedule_ != nullptr; }
  [[nodiscard]] std::chrono::system_clock::time_point wall_now() const;

  // A query's reply from `cluster`, whose request left at `sent`.
  void record(const std::string& cluster, Reply reply, std::chrono::system_clock::time_point sent);

  // The chosen members (indices into `members`) that do not answer, moved to
  // `unasked` with why; the others kept in their order.
  void leave_out(std::vector<std::size_t>& chosen, std::vector<LeftOutMember>& unasked,
                 const MemberList& members) const;
  // `inner` with the members that do not answer moved to its left-out ones
  // (LeftOutMember::member set), in name order as the source's are.
  [[nodiscard]] std::shared_ptr<const MemberSnapshot> snapshot(std::shared_ptr<const MemberSnapshot> inner) const;

 private:
  using Breakers = std::map<std::string, MemberBreaker, std::less<>>;
  // What a breaker's change leads to, done outside mutex_.
  struct FollowUp {
    std::optional<std::chrono::steady_clock::duration> probe_in;
    std::optional<std::string> answering;  // for on_member_answering: the reason, or empty when it answers again
  };
  FollowUp settle(Breakers::iterator it, MemberBreaker::Change change);
  void follow_up(const std::string& cluster, FollowUp next);
  void schedule_probe(const std::string& cluster, std::chrono::steady_clock::duration delay);
  void probe(const std::string& cluster);
  void probed(const std::string& cluster, Reply reply, std::chrono::system_clock::time_point sent);

  const std::shared_ptr<MemberSource> source_;
  const BreakerOptions breaker_;
  const std::chrono::milliseconds probe_timeout_;
  const Scheduler schedule_;
  const Clock clock_;
  const WallClock wall_clock_;
  const std::function<void(std::string_view member, std::string_view reason)> on_member_answering_;

  mutable std::mutex mutex_;
  Breakers breakers_;  // guarded by mutex_; a member that answers has none
  // How many breakers are not Closed: while none is, the plans and the
  // snapshot are left as they are, with no lock and no copy.
  std::atomic<std::size_t> not_asked_{0};
};

}  // namespace fedmetrics::aggregator
