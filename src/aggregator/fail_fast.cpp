#include "aggregator/fail_fast.hpp"

#include <algorithm>
#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <utility>

namespace fedmetrics::aggregator {

// The state the probes share with the FailFast, which they hold weakly.
struct FailFast::Core {
  Core(std::shared_ptr<MemberSource> source, const AggregatorOptions& options, Clock clock)
      : source(std::move(source)),
        breaker{options.fail_fast_threshold, options.first_probe_delay, options.max_probe_delay},
        probe_timeout(options.member_timeout),
        schedule(options.schedule),
        clock(std::move(clock)),
        wall_clock(options.wall_clock),
        on_member_answering(options.on_member_answering) {}

  using Breakers = std::map<std::string, MemberBreaker, std::less<>>;
  // What a breaker's change leads to, done outside mutex.
  struct FollowUp {
    std::optional<std::chrono::steady_clock::duration> probe_in;
    std::optional<std::string> answering;  // for on_member_answering: the reason, or empty when it answers again
  };

  const std::shared_ptr<MemberSource> source;
  const BreakerOptions breaker;
  const std::chrono::milliseconds probe_timeout;
  const Scheduler schedule;
  const Clock clock;
  const WallClock wall_clock;
  const std::function<void(std::string_view member, std::string_view reason)> on_member_answering;

  mutable std::mutex mutex;
  Breakers breakers;  // guarded by mutex; a member that answers has none
  // How many breakers are not Closed: while none is, the plans and the
  // snapshot are left as they are, with no lock and no copy.
  std::atomic<std::size_t> not_asked{0};

  [[nodiscard]] bool enabled() const { return breaker.threshold > 0 && schedule != nullptr; }
  [[nodiscard]] std::chrono::system_clock::time_point wall_now() const {
    return wall_clock ? wall_clock() : std::chrono::system_clock::now();
  }

  // After `change` of the breaker at `it` (mutex held): the count of members
  // not asked, the breaker dropped once it has nothing to remember, and what
  // to do next.
  FollowUp settle(Breakers::iterator it, MemberBreaker::Change change) {
    FollowUp next;
    if (change == MemberBreaker::Change::Opened) {
      not_asked.fetch_add(1, std::memory_order_acq_rel);
      next.probe_in = it->second.probe_due() - clock();
      next.answering = it->second.reason();
    } else if (change == MemberBreaker::Change::Closed) {
      not_asked.fetch_sub(1, std::memory_order_acq_rel);
      next.answering = std::string();
    }
    if (it->second.asked() && it->second.unanswered() == 0) breakers.erase(it);
    return next;
  }

  static void follow_up(const std::shared_ptr<Core>& self, const std::string& cluster, FollowUp next) {
    if (next.probe_in) schedule_probe(self, cluster, *next.probe_in);
    if (next.answering && self->on_member_answering) self->on_member_answering(cluster, *next.answering);
  }

  static void schedule_probe(const std::shared_ptr<Core>& self, const std::string& cluster,
                             std::chrono::steady_clock::duration delay) {
    self->schedule(std::max(delay, std::chrono::steady_clock::duration::zero()),
                   [weak = std::weak_ptr<Core>(self), cluster] { return probe(weak, cluster); });
  }

  // Whom to probe when `cluster`'s breaker is due: its client, or null when
  // there is nothing to probe now (a later probe may have been scheduled).
  static std::shared_ptr<MemberCluster> start_probe(const std::shared_ptr<Core>& self, const std::string& cluster) {
    std::shared_ptr<MemberCluster> member;
    const auto snapshot = self->source ? self->source->snapshot() : nullptr;
    if (snapshot)
      for (const auto& m : snapshot->members)
        if (m->name() == cluster) member = m;
    std::optional<std::chrono::steady_clock::duration> not_yet;
    {
      std::lock_guard lock(self->mutex);
      auto it = self->breakers.find(cluster);
      if (it == self->breakers.end()) return nullptr;  // it answered meanwhile
      if (member == nullptr) {
        // Gone from the source: forgotten; asked afresh if it comes back.
        if (!it->second.asked()) self->not_asked.fetch_sub(1, std::memory_order_acq_rel);
        self->breakers.erase(it);
        return nullptr;
      }
      const auto now = self->clock();
      if (!it->second.start_probe(now)) {
        // Asked again meanwhile (then nothing to do), or an earlier timer of
        // a breaker that closed and opened again since (its own is pending).
        if (it->second.state() != MemberBreaker::State::Open) return nullptr;
        not_yet = it->second.probe_due() - now;
      }
    }
    if (not_yet) {
      schedule_probe(self, cluster, *not_yet);
      return nullptr;
    }
    return member;
  }

  // A probe of `cluster` when its breaker is due, off every query's path.
  static async::Task<void> probe(std::weak_ptr<Core> weak, std::string cluster) {
    std::shared_ptr<MemberCluster> member;
    std::chrono::system_clock::time_point sent;
    Deadline deadline;
    if (auto self = weak.lock()) {
      member = start_probe(self, cluster);
      sent = self->wall_now();
      deadline = self->clock() + self->probe_timeout;
    }
    if (member == nullptr) co_return;
    auto asking = member->probe(deadline);
    const std::optional<MemberError> error = co_await std::move(asking);
    if (auto self = weak.lock()) probed(self, cluster, error ? classify(*error) : Reply::Answered, sent);
  }

  static void probed(const std::shared_ptr<Core>& self, const std::string& cluster, Reply reply,
                     std::chrono::system_clock::time_point sent) {
    FollowUp next;
    {
      std::lock_guard lock(self->mutex);
      auto it = self->breakers.find(cluster);
      if (it == self->breakers.end()) return;
      const bool was_probing = it->second.state() == MemberBreaker::State::Probing;
      next = self->settle(it, it->second.probed(reply, self->clock(), sent));
      // Still not answering: the next probe, at the backoff the breaker set.
      if (was_probing && !next.answering) next.probe_in = self->breakers.at(cluster).probe_due() - self->clock();
    }
    follow_up(self, cluster, std::move(next));
  }
};

FailFast::FailFast(std::shared_ptr<MemberSource> source, const AggregatorOptions& options, Clock clock)
    : core_(std::make_shared<Core>(std::move(source), options, std::move(clock))) {}

bool FailFast::enabled() const { return core_->enabled(); }

std::chrono::system_clock::time_point FailFast::wall_now() const { return core_->wall_now(); }

void FailFast::record(const std::string& cluster, Reply reply, std::chrono::system_clock::time_point sent) {
  if (!enabled() || reply == Reply::Neither) return;
  Core::FollowUp next;
  {
    std::lock_guard lock(core_->mutex);
    auto it = core_->breakers.find(cluster);
    if (it == core_->breakers.end()) {
      if (reply == Reply::Answered) return;  // the common case: nothing to remember
      it = core_->breakers.emplace(cluster, MemberBreaker(core_->breaker)).first;
    }
    next = core_->settle(it, it->second.record(reply, core_->clock(), sent));
  }
  Core::follow_up(core_, cluster, std::move(next));
}

void FailFast::leave_out(std::vector<std::size_t>& chosen, std::vector<LeftOutMember>& unasked,
                         const MemberList& members) const {
  if (core_->not_asked.load(std::memory_order_acquire) == 0) return;
  std::lock_guard lock(core_->mutex);
  std::erase_if(chosen, [&](std::size_t i) {
    auto it = core_->breakers.find(members[i]->name());
    if (it == core_->breakers.end() || it->second.asked()) return false;
    unasked.push_back(LeftOutMember{members[i]->name(), it->second.reason()});
    return true;
  });
}

std::shared_ptr<const MemberSnapshot> FailFast::snapshot(std::shared_ptr<const MemberSnapshot> inner) const {
  if (core_->not_asked.load(std::memory_order_acquire) == 0) return inner;
  auto out = std::make_shared<MemberSnapshot>();
  out->left_out = inner->left_out;
  {
    std::lock_guard lock(core_->mutex);
    for (const auto& m : inner->members) {
      auto it = core_->breakers.find(m->name());
      if (it == core_->breakers.end() || it->second.asked()) out->members.push_back(m);
      else out->left_out.push_back(LeftOutMember{m->name(), it->second.reason(), m});
    }
  }
  std::stable_sort(out->left_out.begin(), out->left_out.end(),
                   [](const LeftOutMember& a, const LeftOutMember& b) { return a.name < b.name; });
  return out;
}

}  // namespace fedmetrics::aggregator
