// The fan-out: plan (merge.hpp), ask the chosen members in parallel, count
// their callbacks, merge when the last one arrives, answer every waiter.
#include "fedmetrics/aggregator/aggregator.hpp"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <iterator>
#include <list>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "aggregator/fail_fast.hpp"
#include "aggregator/merge.hpp"

namespace fedmetrics::aggregator {
namespace {

template <class A>
using Waiters = std::vector<AnswerCallback<A>>;

using AnyAnswer = std::variant<SharedAnswer<PodMetricsAnswer>, SharedAnswer<NodeMetricsAnswer>,
                               SharedAnswer<CustomMetricsAnswer>, SharedAnswer<ExternalMetricsAnswer>>;
using AnyWaiters = std::variant<Waiters<PodMetricsAnswer>, Waiters<NodeMetricsAnswer>, Waiters<CustomMetricsAnswer>,
                                Waiters<ExternalMetricsAnswer>>;

// The answers of one fan-out, one slot per asked member. Each slot is written
// by its member's callback only; the last callback (the one that takes
// `remaining` to zero, acq_rel) sees every slot and merges.
template <class R>
struct Gather {
  std::vector<MemberAnswer<R>> answers;
  std::unique_ptr<std::atomic<bool>[]> answered;  // guards against a member calling back twice
  std::atomic<std::size_t> remaining{0};
  std::function<void(std::vector<MemberAnswer<R>>)> on_all;
  std::chrono::steady_clock::time_point started;
  std::chrono::system_clock::time_point sent;  // `started` on the wall clock, for the breakers
};

// A member's result with its items put through `prepare`; an error as it is.
template <class T, class Prepare>
auto prepared(MemberResult<T> result, Prepare prepare) -> MemberResult<decltype(prepare(std::declval<T>()))> {
  if (auto* value = std::get_if<T>(&result)) return prepare(std::move(*value));
  return std::get<MemberError>(std::move(result));
}

// How much of a member's answer time the latest one counts for (an EWMA).
constexpr double kLatencyWeight = 0.2;

// An answer worth keeping for cache_ttl: complete (no member failed) and not
// a server-side failure, so a recovered member is seen by the very next query.
template <class A>
bool cacheable(const A& answer) {
  const auto* status = std::get_if<k8s::Status>(&answer.result);
  return answer.warnings.empty() && (status == nullptr || status->code < 500);
}

// The members whose part is missing: every one that failed or was not asked.
template <class R>
std::vector<std::string> missing_members(const std::vector<MemberAnswer<R>>& answers) {
  std::vector<std::string> missing;
  for (const auto& a : answers)
    if (std::holds_alternative<MemberError>(a.result)) missing.push_back(a.cluster);
  std::sort(missing.begin(), missing.end());
  missing.erase(std::unique(missing.begin(), missing.end()), missing.end());
  return missing;
}

// The plan's own warnings after the members', and which members are missing.
template <class A>
A with_notes(A answer, const std::vector<std::string>& notes, std::vector<std::string> missing) {
  answer.warnings.insert(answer.warnings.end(), notes.begin(), notes.end());
  answer.missing_members = std::move(missing);
  return answer;
}

// The chosen members a plan did not ask, as failed members of the answer.
template <class R>
void add_unasked(std::vector<MemberAnswer<R>>& answers, const std::vector<LeftOutMember>& unasked) {
  for (const LeftOutMember& m : unasked) answers.push_back(MemberAnswer<R>{m.name, left_out_error(m.reason)});
}

}  // namespace

struct Aggregator::State : std::enable_shared_from_this<Aggregator::State> {
  State(std::shared_ptr<MemberSource> source_in, AggregatorOptions options_in, Clock clock_in)
      : source(std::move(source_in)), options(std::move(options_in)), clock(std::move(clock_in)) {}

  const std::shared_ptr<MemberSource> source;
  const AggregatorOptions options;
  const Clock clock;

  struct Cached {
    std::chrono::steady_clock::time_point expires;
    AnyAnswer answer;
    std::list<std::string>::iterator position;  // in cache_order
  };

  mutable std::mutex mutex;
  std::map<std::string, AnyWaiters> in_flight;  // guarded by mutex
  // The result cache, bounded by options.cache_max_entries. One TTL for all
  // entries, so insertion order is expiry order: cache_order lists the keys
  // oldest first, and both expiry and eviction pop from its front (O(1) per
  // entry, amortised over the inserts that made them).
  std::unordered_map<std::string, Cached> cache;                        // guarded by mutex
  std::list<std::string> cache_order;                                   // guarded by mutex
  std::map<std::string, std::uint64_t, std::less<>> errors_by_cluster;  // guarded by mutex
  // Each member's answer time (seconds, moving average), to ask the slowest
  // first: the answer waits for it, so its request should leave first and
  // the others' be sent (and their answers read) while it works.
  std::map<std::string, double, std::less<>> answer_seconds;  // guarded by mutex

  std::atomic<std::uint64_t> queries{0};
  std::atomic<std::uint64_t> fan_outs{0};
  std::atomic<std::uint64_t> coalesced{0};
  std::atomic<std::uint64_t> cache_hits{0};
  std::atomic<std::uint64_t> member_calls{0};
  std::atomic<std::uint64_t> member_errors{0};
  std::atomic<bool> served{false};

  // Members that stopped answering (fail_fast.hpp); shared with its probes' timers.
  const std::shared_ptr<FailFast> fail_fast = std::make_shared<FailFast>(source, options, clock);

  [[nodiscard]] bool cache_enabled() const { return options.cache_ttl.count() > 0; }

  [[nodiscard]] std::shared_ptr<const MemberSnapshot> source_snapshot() const {
    auto members = source ? source->snapshot() : nullptr;
    return members ? members : std::make_shared<const MemberSnapshot>();
  }

  // The members as the answers see them (Aggregator::members()).
  [[nodiscard]] std::shared_ptr<const MemberSnapshot> snapshot() const {
    return fail_fast->snapshot(source_snapshot());
  }

  // Answers from the cache or joins a fan-out in flight (and returns false),
  // or registers `key` as in flight (and returns true: the caller fans out).
  template <class A>
  bool admit(const std::string& key, AnswerCallback<A>& done) {
    queries.fetch_add(1, std::memory_order_relaxed);
    std::unique_lock lock(mutex);
    if (cache_enabled()) {
      if (auto it = cache.find(key); it != cache.end()) {
        if (clock() < it->second.expires) {
          SharedAnswer<A> answer = std::get<SharedAnswer<A>>(it->second.answer);
          lock.unlock();
          cache_hits.fetch_add(1, std::memory_order_relaxed);
          done(std::move(answer));
          return false;
        }
        cache_order.erase(it->second.position);
        cache.erase(it);
      }
    }
    if (auto it = in_flight.find(key); it != in_flight.end()) {
      std::get<Waiters<A>>(it->second).push_back(std::move(done));
      coalesced.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    Waiters<A> waiters;
    waiters.push_back(std::move(done));
    in_flight.emplace(key, std::move(waiters));
    return true;
  }

  // Ends the fan-out for `key`: every waiter gets the same answer, exactly
  // once, outside the lock (a waiter may well ask again).
  template <class A>
  void finish(const std::string& key, A value) {
    SharedAnswer<A> answer = share(std::move(value));
    Waiters<A> waiters;
    {
      std::lock_guard lock(mutex);
      auto it = in_flight.find(key);
      waiters = std::move(std::get<Waiters<A>>(it->second));
      in_flight.erase(it);
      if (cache_enabled() && cacheable(*answer)) {
        cache_insert(key, AnyAnswer(answer), clock());
      }
    }
    for (auto& waiter : waiters) waiter(answer);
  }

  // Stores `answer` under `key` until now + cache_ttl: the expired entries
  // leave first, then the oldest ones while the cache is full. mutex held.
  void cache_insert(const std::string& key, AnyAnswer answer, std::chrono::steady_clock::time_point now) {
    if (auto it = cache.find(key); it != cache.end()) {
      cache_order.erase(it->second.position);
      cache.erase(it);
    }
    const std::size_t capacity = std::max<std::size_t>(options.cache_max_entries, 1);
    while (!cache_order.empty()) {
      auto oldest = cache.find(cache_order.front());
      if (now < oldest->second.expires && cache.size() < capacity) break;
      cache.erase(oldest);
      cache_order.pop_front();
    }
    cache_order.push_back(key);
    cache.emplace(key, Cached{now + options.cache_ttl, std::move(answer), std::prev(cache_order.end())});
  }

  void record_error(const std::string& cluster, const MemberError& error) {
    member_errors.fetch_add(1, std::memory_order_relaxed);
    {
      std::lock_guard lock(mutex);
      ++errors_by_cluster[cluster];
    }
    if (options.on_member_error) options.on_member_error(cluster, error);
  }

  void record_answer_time(const std::string& cluster, std::chrono::steady_clock::duration took) {
    const double seconds = std::chrono::duration<double>(took).count();
    std::lock_guard lock(mutex);
    auto [it, inserted] = answer_seconds.try_emplace(cluster, seconds);
    if (!inserted) it->second += kLatencyWeight * (seconds - it->second);
  }

  // The order to ask `chosen` in: slowest (as seen so far) first; members
  // not seen yet keep their place after them.
  std::vector<std::size_t> slowest_first(const MemberList& members, const std::vector<std::size_t>& chosen) const {
    std::vector<std::pair<double, std::size_t>> keyed;
    keyed.reserve(chosen.size());
    {
      std::lock_guard lock(mutex);
      for (std::size_t i = 0; i < chosen.size(); ++i) {
        auto it = answer_seconds.find(members[chosen[i]]->name());
        keyed.emplace_back(it == answer_seconds.end() ? -1.0 : it->second, i);
      }
    }
    std::stable_sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    std::vector<std::size_t> order;
    order.reserve(keyed.size());
    for (const auto& [seconds, i] : keyed) order.push_back(i);
    return order;
  }

  template <class R>
  void deliver(Gather<R>& gather, std::size_t i, MemberResult<R>&& result) {
    if (gather.answered[i].exchange(true, std::memory_order_acq_rel)) return;  // broken member contract
    record_answer_time(gather.answers[i].cluster, clock() - gather.started);
    const auto* failed = std::get_if<MemberError>(&result);
    fail_fast->record(gather.answers[i].cluster, failed ? classify(*failed) : Reply::Answered, gather.sent);
    if (const auto* error = failed) {
      // A client error counts as a member failure only if the others did not
      // all refuse the request alike: decided when the last one has answered.
      if (!is_client_error(*error)) record_error(gather.answers[i].cluster, *error);
    } else {
      served.store(true, std::memory_order_relaxed);
    }
    gather.answers[i].result = std::move(result);
    if (gather.remaining.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      auto on_all = std::move(gather.on_all);
      on_all(std::move(gather.answers));
    }
  }

  // Asks members[chosen...] through `call`, then merges with `merge` and
  // finishes `key`. No timer: each member calls back by `deadline`.
  template <class R, class A, class Call, class Merge>
  void fan_out(const std::string& key, const MemberList& members, const std::vector<std::size_t>& chosen, Call call,
               Merge merge) {
    fan_outs.fetch_add(1, std::memory_order_relaxed);
    if (chosen.empty()) {
      finish<A>(key, merge(std::vector<MemberAnswer<R>>{}));
      return;
    }
    auto gather = std::make_shared<Gather<R>>();
    gather->answers.resize(chosen.size());
    for (std::size_t i = 0; i < chosen.size(); ++i) gather->answers[i].cluster = members[chosen[i]]->name();
    gather->answered = std::make_unique<std::atomic<bool>[]>(chosen.size());
    gather->remaining.store(chosen.size(), std::memory_order_relaxed);
    gather->on_all = [self = shared_from_this(), key, merge = std::move(merge)](std::vector<MemberAnswer<R>> answers) {
      if (!common_client_error(answers)) {
        for (const auto& a : answers)
          if (const auto* error = std::get_if<MemberError>(&a.result); error && is_client_error(*error))
            self->record_error(a.cluster, *error);
      }
      self->finish<A>(key, merge(std::move(answers)));
    };
    gather->started = clock();
    if (fail_fast->enabled()) gather->sent = fail_fast->wall_now();
    const Deadline deadline = gather->started + options.member_timeout;
    for (const std::size_t i : slowest_first(members, chosen)) {
      member_calls.fetch_add(1, std::memory_order_relaxed);
      // The callback may run right here (synchronously) or later on any thread.
      call(*members[chosen[i]], deadline, [self = shared_from_this(), gather, i](MemberResult<R> result) {
        self->deliver(*gather, i, std::move(result));
      });
    }
  }
};

Aggregator::Aggregator(std::shared_ptr<MemberSource> members, AggregatorOptions options, Clock clock)
    : state_(std::make_shared<State>(std::move(members), std::move(options), clock ? std::move(clock) : Clock([] {
                                       return std::chrono::steady_clock::now();
                                     }))) {}

Aggregator::~Aggregator() = default;

void Aggregator::pod_metrics(const ResourceMetricsQuery& query, AnswerCallback<PodMetricsAnswer> done) {
  ResourceMetricsQuery q = query;
  q.kind = ResourceMetricsQuery::Kind::Pods;
  const std::string key = query_key(q);
  if (!state_->admit<PodMetricsAnswer>(key, done)) return;
  const auto snapshot = state_->source_snapshot();
  const MemberList& members = snapshot->members;
  auto plan = plan_resource_metrics(members, q, snapshot->left_out);
  if (plan.early) return state_->finish<PodMetricsAnswer>(key, PodMetricsAnswer{*plan.early, plan.warnings});
  state_->fail_fast->leave_out(plan.members, plan.unasked, members);
  // Each member's items are filtered, annotated and (for a list the caller
  // writes as JSON) encoded as that member answers, on its client's thread
  // while the others are still working: after the last one, only its own
  // items are left to prepare, then the sorting and joining. (The member's
  // answer time, which orders the next fan-out, includes this preparation:
  // tens of microseconds against milliseconds.)
  using Items = std::vector<k8s::PodMetrics>;
  using R = PreparedItems<k8s::PodMetrics>;
  // One query (selectors included) for the whole fan-out, shared by every
  // member's callback and the merge, never copied per member: a selector may
  // be up to kMaxSelectorBytes and a parse of it about 100 times that.
  const auto shared = std::make_shared<const ResourceMetricsQuery>(std::move(q));
  if (shared->encode_list && shared->name.empty()) {
    // A list the API server writes as JSON: each member's text becomes
    // encoded items, merged without PodMetrics values (merge_encoded_pod_metrics).
    using Encoded = k8s::EncodedItems;
    state_->fan_out<Encoded, PodMetricsAnswer>(
        key, members, plan.members,
        [fwd = std::move(plan.forwarded), shared](MemberCluster& m, Deadline deadline, MemberCallback<Encoded> cb) {
          m.pod_metrics_items(fwd.namespace_name, fwd.label_selector, fwd.field_selector,
                              item_preparation(m.name(), shared), deadline, std::move(cb));
        },
        [shared, unasked = std::move(plan.unasked),
         notes = std::move(plan.warnings)](std::vector<MemberAnswer<Encoded>> answers) {
          add_unasked(answers, unasked);
          auto missing = missing_members(answers);
          return with_notes(merge_encoded_pod_metrics(std::move(answers), *shared), notes, std::move(missing));
        });
    return;
  }
  state_->fan_out<R, PodMetricsAnswer>(
      key, members, plan.members,
      [fwd = std::move(plan.forwarded), shared](MemberCluster& m, Deadline deadline, MemberCallback<R> cb) {
        m.pod_metrics(fwd.namespace_name, fwd.label_selector, fwd.field_selector, deadline,
                      [cb = std::move(cb), shared, cluster = m.name()](MemberResult<Items> result) {
                        cb(prepared(std::move(result), [&](Items items) {
                          return prepare_pod_metrics(cluster, std::move(items), *shared);
                        }));
                      });
      },
      [shared, unasked = std::move(plan.unasked),
       notes = std::move(plan.warnings)](std::vector<MemberAnswer<R>> answers) {
        add_unasked(answers, unasked);
        auto missing = missing_members(answers);
        return with_notes(merge_prepared_pod_metrics(std::move(answers), *shared), notes, std::move(missing));
      });
}

void Aggregator::node_metrics(const ResourceMetricsQuery& query, AnswerCallback<NodeMetricsAnswer> done) {
  ResourceMetricsQuery q = query;
  q.kind = ResourceMetricsQuery::Kind::Nodes;
  q.namespace_name.clear();  // nodes are cluster-scoped
  const std::string key = query_key(q);
  if (!state_->admit<NodeMetricsAnswer>(key, done)) return;
  const auto snapshot = state_->source_snapshot();
  const MemberList& members = snapshot->members;
  auto plan = plan_resource_metrics(members, q, snapshot->left_out);
  if (plan.early) return state_->finish<NodeMetricsAnswer>(key, NodeMetricsAnswer{*plan.early, plan.warnings});
  state_->fail_fast->leave_out(plan.members, plan.unasked, members);
  using Items = std::vector<k8s::NodeMetrics>;
  using R = PreparedItems<k8s::NodeMetrics>;
  const auto shared = std::make_shared<const ResourceMetricsQuery>(std::move(q));  // as in pod_metrics
  state_->fan_out<R, NodeMetricsAnswer>(
      key, members, plan.members,
      [fwd = std::move(plan.forwarded), shared](MemberCluster& m, Deadline deadline, MemberCallback<R> cb) {
        m.node_metrics(fwd.label_selector, fwd.field_selector, deadline,
                       [cb = std::move(cb), shared, cluster = m.name()](MemberResult<Items> result) {
                         cb(prepared(std::move(result), [&](Items items) {
                           return prepare_node_metrics(cluster, std::move(items), *shared);
                         }));
                       });
      },
      [shared, unasked = std::move(plan.unasked),
       notes = std::move(plan.warnings)](std::vector<MemberAnswer<R>> answers) {
        add_unasked(answers, unasked);
        auto missing = missing_members(answers);
        return with_notes(merge_prepared_node_metrics(std::move(answers), *shared), notes, std::move(missing));
      });
}

void Aggregator::custom_metrics(const CustomMetricsQuery& query, AnswerCallback<CustomMetricsAnswer> done) {
  const std::string key = query_key(query);
  if (!state_->admit<CustomMetricsAnswer>(key, done)) return;
  const auto snapshot = state_->source_snapshot();
  const MemberList& members = snapshot->members;
  auto plan = plan_custom_metrics(members, query, snapshot->left_out);
  if (plan.early) return state_->finish<CustomMetricsAnswer>(key, CustomMetricsAnswer{*plan.early, plan.warnings});
  state_->fail_fast->leave_out(plan.members, plan.unasked, members);
  using R = std::vector<k8s::MetricValue>;
  state_->fan_out<R, CustomMetricsAnswer>(
      key, members, plan.members,
      [fwd = std::move(plan.forwarded)](MemberCluster& m, Deadline deadline, MemberCallback<R> cb) {
        m.custom_metrics(fwd, deadline, std::move(cb));
      },
      [query, unasked = std::move(plan.unasked),
       notes = std::move(plan.warnings)](std::vector<MemberAnswer<R>> answers) {
        add_unasked(answers, unasked);
        auto missing = missing_members(answers);
        return with_notes(merge_custom_metrics(std::move(answers), query), notes, std::move(missing));
      });
}

void Aggregator::external_metrics(const ExternalMetricsQuery& query, AnswerCallback<ExternalMetricsAnswer> done) {
  const std::string key = query_key(query);
  if (!state_->admit<ExternalMetricsAnswer>(key, done)) return;
  const auto snapshot = state_->source_snapshot();
  const MemberList& members = snapshot->members;
  auto plan = plan_external_metrics(members, query, snapshot->left_out);
  if (plan.early) return state_->finish<ExternalMetricsAnswer>(key, ExternalMetricsAnswer{*plan.early, plan.warnings});
  state_->fail_fast->leave_out(plan.members, plan.unasked, members);
  using R = std::vector<k8s::ExternalMetricValue>;
  state_->fan_out<R, ExternalMetricsAnswer>(
      key, members, plan.members,
      [fwd = std::move(plan.forwarded)](MemberCluster& m, Deadline deadline, MemberCallback<R> cb) {
        m.external_metrics(fwd, deadline, std::move(cb));
      },
      [query, unasked = std::move(plan.unasked),
       notes = std::move(plan.warnings)](std::vector<MemberAnswer<R>> answers) {
        add_unasked(answers, unasked);
        auto missing = missing_members(answers);
        return with_notes(merge_external_metrics(std::move(answers), query), notes, std::move(missing));
      });
}

namespace {
std::vector<std::shared_ptr<const MemberCapabilities>> capabilities_of(const MemberList& members) {
  std::vector<std::shared_ptr<const MemberCapabilities>> out;
  out.reserve(members.size());
  for (const auto& m : members) out.push_back(m->capabilities());
  return out;
}
}  // namespace

k8s::APIResourceList Aggregator::custom_metrics_resources(k8s::CustomMetricsVersion version) const {
  return merge_custom_metric_resources(capabilities_of(state_->source_snapshot()->members), version);
}

k8s::APIResourceList Aggregator::external_metrics_resources() const {
  return merge_external_metric_resources(capabilities_of(state_->source_snapshot()->members));
}

bool Aggregator::has_served() const {
  if (state_->served.load(std::memory_order_relaxed)) return true;
  const auto snapshot = state_->source_snapshot();
  for (const auto& m : snapshot->members)
    if (m->capabilities()) return true;
  return false;
}

namespace {
// The members as the aggregator asks them (Aggregator::members()).
class AskedMembers final : public MemberSource {
 public:
  explicit AskedMembers(std::function<std::shared_ptr<const MemberSnapshot>()> snapshot)
      : snapshot_(std::move(snapshot)) {}
  [[nodiscard]] std::shared_ptr<const MemberList> members() const override {
    auto s = snapshot_();
    return {s, &s->members};  // shares the snapshot's lifetime
  }
  [[nodiscard]] std::shared_ptr<const MemberSnapshot> snapshot() const override { return snapshot_(); }

 private:
  std::function<std::shared_ptr<const MemberSnapshot>()> snapshot_;
};
}  // namespace

std::shared_ptr<MemberSource> Aggregator::members() const {
  return std::make_shared<AskedMembers>([state = state_] { return state->snapshot(); });
}

AggregatorStats Aggregator::stats() const {
  AggregatorStats out;
  out.queries = state_->queries.load(std::memory_order_relaxed);
  out.fan_outs = state_->fan_outs.load(std::memory_order_relaxed);
  out.coalesced = state_->coalesced.load(std::memory_order_relaxed);
  out.cache_hits = state_->cache_hits.load(std::memory_order_relaxed);
  out.member_calls = state_->member_calls.load(std::memory_order_relaxed);
  out.member_errors = state_->member_errors.load(std::memory_order_relaxed);
  std::lock_guard lock(state_->mutex);
  out.member_errors_by_cluster = state_->errors_by_cluster;
  return out;
}

}  // namespace fedmetrics::aggregator
