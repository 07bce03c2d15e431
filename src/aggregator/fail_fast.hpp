#pragma once
// The members that stopped answering, for the fan-out: a MemberBreaker
// (member_breaker.hpp) for each member with unanswered requests lately, fed
// every reply a query gets; the members whose breaker is open are left out
// of the plans and of the member snapshot the loop reads, and probed off
// every query's path through the Scheduler, one request at a time, until
// their first answer. Thread-safe: replies come from any thread. The probes
// hold the state weakly: one that comes due after the Aggregator is gone
// does nothing.
#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "aggregator/member_breaker.hpp"
#include "fedmetrics/aggregator/aggregator.hpp"
#include "fedmetrics/aggregator/member_cluster.hpp"

namespace fedmetrics::aggregator {

class FailFast {
 public:
  // From AggregatorOptions: fail_fast_threshold, the probe delays,
  // member_timeout (each probe's deadline), schedule, wall_clock,
  // on_member_answering; `clock` is the Aggregator's.
  FailFast(std::shared_ptr<MemberSource> source, const AggregatorOptions& options, Clock clock);

  // On: a threshold above 0 and a scheduler for the probes.
  [[nodiscard]] bool enabled() const;
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
  struct Core;
  std::shared_ptr<Core> core_;
};

}  // namespace fedmetrics::aggregator
