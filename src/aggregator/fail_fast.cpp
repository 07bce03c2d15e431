#include "aggregator/fail_fast.hpp"

#include <algorithm>
#include <utility>

namespace fedmetrics::aggregator {

FailFast::FailFast(std::shared_ptr<MemberSource> source, const AggregatorOptions& options, Clock clock)
    : source_(std::move(source)),
      breaker_{options.fail_fast_threshold, options.first_probe_delay, options.max_probe_delay},
      probe_timeout_(options.member_timeout),
      schedule_(options.schedule),
      clock_(std::move(clock)),
      wall_clock_(options.wall_clock),
      on_member_answering_(options.on_member_answering) {}

std::chrono::system_clock::time_point FailFast::wall_now() const {
  return wall_clock_ ? wall_clock_() : std::chrono::system_clock::now();
}

void FailFast::record(const std::string& cluster, Reply reply, std::chrono::system_clock::time_point sent) {
  if (!enabled() || reply == Reply::Neither) return;
  FollowUp next;
  {
    std::lock_guard lock(mutex_);
    auto it = breakers_.find(cluster);
    if (it == breakers_.end()) {
      if (reply == Reply::Answered) return;  // the common case: nothing to remember
      it = breakers_.emplace(cluster, MemberBreaker(breaker_)).first;
    }
    next = settle(it, it->second.record(reply, clock_(), sent));
  }
  follow_up(cluster, std::move(next));
}

void FailFast::leave_out(std::vector<std::size_t>& chosen, std::vector<LeftOutMember>& unasked,
                         const MemberList& members) const {
  if (not_asked_.load(std::memory_order_acquire) == 0) return;
  std::lock_guard lock(mutex_);
  std::erase_if(chosen, [&](std::size_t i) {
    auto it = breakers_.find(members[i]->name());
    if (it == breakers_.end() || it->second.asked()) return false;
    unasked.push_back(LeftOutMember{members[i]->name(), it->second.reason()});
    return true;
  });
}

std::shared_ptr<const MemberSnapshot> FailFast::snapshot(std::shared_ptr<const MemberSnapshot> inner) const {
  if (not_asked_.load(std::memory_order_acquire) == 0) return inner;
  auto out = std::make_shared<MemberSnapshot>();
  out->left_out = inner->left_out;
  {
    std::lock_guard lock(mutex_);
    for (const auto& m : inner->members) {
      auto it = breakers_.find(m->name());
      if (it == breakers_.end() || it->second.asked()) out->members.push_back(m);
      else out->left_out.push_back(LeftOutMember{m->name(), it->second.reason(), m});
    }
  }
  std::stable_sort(out->left_out.begin(), out->left_out.end(),
                   [](const LeftOutMember& a, const LeftOutMember& b) { return a.name < b.name; });
  return out;
}

// After `change` of the breaker at `it` (mutex_ held): the count of members
// not asked, the breaker dropped once it has nothing to remember, and what
// to do next.
FailFast::FollowUp FailFast::settle(Breakers::iterator it, MemberBreaker::Change change) {
  FollowUp next;
  if (change == MemberBreaker::Change::Opened) {
    not_asked_.fetch_add(1, std::memory_order_acq_rel);
    next.probe_in = it->second.probe_due() - clock_();
    next.answering = it->second.reason();
  } else if (change == MemberBreaker::Change::Closed) {
    not_asked_.fetch_sub(1, std::memory_order_acq_rel);
    next.answering = std::string();
  }
  if (it->second.asked() && it->second.unanswered() == 0) breakers_.erase(it);
  return next;
}

void FailFast::follow_up(const std::string& cluster, FollowUp next) {
  if (next.probe_in) schedule_probe(cluster, *next.probe_in);
  if (next.answering && on_member_answering_) on_member_answering_(cluster, *next.answering);
}

void FailFast::schedule_probe(const std::string& cluster, std::chrono::steady_clock::duration delay) {
  schedule_(std::max(delay, std::chrono::steady_clock::duration::zero()), [weak = weak_from_this(), cluster] {
    if (auto self = weak.lock()) self->probe(cluster);
  });
}

// A probe of `cluster` when its breaker is due, off every query's path.
void FailFast::probe(const std::string& cluster) {
  std::shared_ptr<MemberCluster> member;
  const auto snapshot = source_ ? source_->snapshot() : nullptr;
  if (snapshot)
    for (const auto& m : snapshot->members)
      if (m->name() == cluster) member = m;
  std::optional<std::chrono::steady_clock::duration> not_yet;
  {
    std::lock_guard lock(mutex_);
    auto it = breakers_.find(cluster);
    if (it == breakers_.end()) return;  // it answered meanwhile
    if (member == nullptr) {
      // Gone from the source: forgotten; asked afresh if it comes back.
      if (!it->second.asked()) not_asked_.fetch_sub(1, std::memory_order_acq_rel);
      breakers_.erase(it);
      return;
    }
    const auto now = clock_();
    if (!it->second.start_probe(now)) {
      // Asked again meanwhile (then nothing to do), or an earlier timer of
      // a breaker that closed and opened again since (its own is pending).
      if (it->second.state() != MemberBreaker::State::Open) return;
      not_yet = it->second.probe_due() - now;
    }
  }
  if (not_yet) return schedule_probe(cluster, *not_yet);
  const auto sent = wall_now();
  member->probe(clock_() + probe_timeout_, [weak = weak_from_this(), cluster, sent](std::optional<MemberError> error) {
    if (auto self = weak.lock()) self->probed(cluster, error ? classify(*error) : Reply::Answered, sent);
  });
}

void FailFast::probed(const std::string& cluster, Reply reply, std::chrono::system_clock::time_point sent) {
  FollowUp next;
  {
    std::lock_guard lock(mutex_);
    auto it = breakers_.find(cluster);
    if (it == breakers_.end()) return;
    const bool was_probing = it->second.state() == MemberBreaker::State::Probing;
    next = settle(it, it->second.probed(reply, clock_(), sent));
    // Still not answering: the next probe, at the backoff the breaker set.
    if (was_probing && !next.answering) next.probe_in = breakers_.at(cluster).probe_due() - clock_();
  }
  follow_up(cluster, std::move(next));
}

}  // namespace fedmetrics::aggregator
