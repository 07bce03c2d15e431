// The fan-out: plan (merge.hpp), ask the chosen members in parallel (one
// coroutine each), merge when the last one has answered, answer every waiter.
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
#include "aggregator/plan.hpp"
#include "fedmetrics/transport/async.hpp"

namespace fedmetrics::aggregator {
namespace {

// The answer of a fan-out in flight, which every query that joins it awaits.
template <class A>
using Flight = async::OneShot<SharedAnswer<A>>;

using AnyAnswer = std::variant<SharedAnswer<PodMetricsAnswer>, SharedAnswer<NodeMetricsAnswer>,
                               SharedAnswer<CustomMetricsAnswer>, SharedAnswer<ExternalMetricsAnswer>>;
using AnyFlight = std::variant<Flight<PodMetricsAnswer>, Flight<NodeMetricsAnswer>, Flight<CustomMetricsAnswer>,
                               Flight<ExternalMetricsAnswer>>;

// What a query does on arrival: take the cached answer, or wait for the
// flight's, starting its fan-out when `lead`.
template <class A>
struct Admission {
  SharedAnswer<A> cached;
  std::optional<Flight<A>> flight;  // unless cached
  bool lead = false;
};

// When a fan-out started, for the answer times and the breakers.
struct Started {
  std::chrono::steady_clock::time_point at;
  std::chrono::system_clock::time_point sent;  // `at` on the wall clock (when the breakers are on)
};

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
    if (!a.result.ok()) missing.push_back(a.cluster);
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

struct Aggregator::State {
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
  std::map<std::string, AnyFlight> in_flight;  // guarded by mutex
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

  // Members that stopped answering (fail_fast.hpp); its probes hold its state weakly.
  const std::unique_ptr<FailFast> fail_fast = std::make_unique<FailFast>(source, options, clock);

  [[nodiscard]] bool cache_enabled() const { return options.cache_ttl.count() > 0; }

  [[nodiscard]] std::shared_ptr<const MemberSnapshot> source_snapshot() const {
    auto members = source ? source->snapshot() : nullptr;
    return members ? members : std::make_shared<const MemberSnapshot>();
  }

  // The members as the answers see them (Aggregator::members()).
  [[nodiscard]] std::shared_ptr<const MemberSnapshot> snapshot() const {
    return fail_fast->snapshot(source_snapshot());
  }

  // Answers from the cache or joins a fan-out in flight, or registers `key`
  // as in flight (lead: the caller starts its fan-out).
  template <class A>
  Admission<A> admit(const std::string& key) {
    queries.fetch_add(1, std::memory_order_relaxed);
    Admission<A> out;
    std::unique_lock lock(mutex);
    if (cache_enabled()) {
      if (auto it = cache.find(key); it != cache.end()) {
        if (clock() < it->second.expires) {
          out.cached = std::get<SharedAnswer<A>>(it->second.answer);
          lock.unlock();
          cache_hits.fetch_add(1, std::memory_order_relaxed);
          return out;
        }
        cache_order.erase(it->second.position);
        cache.erase(it);
      }
    }
    if (auto it = in_flight.find(key); it != in_flight.end()) {
      out.flight = std::get<Flight<A>>(it->second);
      coalesced.fetch_add(1, std::memory_order_relaxed);
      return out;
    }
    out.flight.emplace();
    in_flight.emplace(key, AnyFlight(*out.flight));
    out.lead = true;
    return out;
  }

  // Ends the fan-out for `key`: every waiter gets the same answer, exactly
  // once, outside the lock (a waiter may well ask again).
  template <class A>
  void finish(const std::string& key, A value) {
    SharedAnswer<A> answer = share(std::move(value));
    std::optional<Flight<A>> flight;
    {
      std::lock_guard lock(mutex);
      auto it = in_flight.find(key);
      flight = std::get<Flight<A>>(std::move(it->second));
      in_flight.erase(it);
      if (cache_enabled() && cacheable(*answer)) {
        cache_insert(key, AnyAnswer(answer), clock());
      }
    }
    flight->set(std::move(answer));
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
  void deliver(MemberAnswer<R>& slot, MemberResult<R> result, const Started& started) {
    record_answer_time(slot.cluster, clock() - started.at);
    const MemberError* failed = result.ok() ? nullptr : &result.error();
    fail_fast->record(slot.cluster, failed ? classify(*failed) : Reply::Answered, started.sent);
    if (failed) {
      // A client error counts as a member failure only if the others did not
      // all refuse the request alike: decided when the last one has answered.
      if (!is_client_error(*failed)) record_error(slot.cluster, *failed);
    } else {
      served.store(true, std::memory_order_relaxed);
    }
    slot.result = std::move(result);
  }

  // One member's part of a fan-out: its call awaited, its answer put in `slot`.
  template <class R>
  async::Task<void> ask(MemberAnswer<R>& slot, async::Task<MemberResult<R>> call, Started started) {
    std::optional<MemberResult<R>> result;
    try {
      auto value = co_await std::move(call);
      result.emplace(std::move(value));
    } catch (const std::exception& e) {
      // A member that throws instead of answering (a bug) is a failed member, not a failed query.
      result.emplace(MemberError{MemberError::Kind::Internal, std::string("member call failed: ") + e.what()});
    }
    deliver(slot, std::move(*result), started);
  }

  // Asks members[chosen...] through `call(member, deadline)`, which returns
  // the member's task, all at once on this executor, the slowest first; ends
  // when the last one has answered. No timer: each member answers by
  // `deadline`.
  template <class R, class Call>
  async::Task<std::vector<MemberAnswer<R>>> gather(const MemberList& members, std::vector<std::size_t> chosen,
                                                   Call call) {
    fan_outs.fetch_add(1, std::memory_order_relaxed);
    std::vector<MemberAnswer<R>> answers;
    answers.reserve(chosen.size());
    for (const std::size_t i : chosen)
      answers.push_back({members[i]->name(), MemberError{MemberError::Kind::Internal, "not answered"}});
    if (chosen.empty()) co_return answers;
    Started started{clock(), {}};
    if (fail_fast->enabled()) started.sent = fail_fast->wall_now();
    const Deadline deadline = started.at + options.member_timeout;
    std::vector<async::Task<void>> asks;
    asks.reserve(chosen.size());
    for (const std::size_t i : slowest_first(members, chosen)) {
      member_calls.fetch_add(1, std::memory_order_relaxed);
      asks.push_back(ask<R>(answers[i], call(*members[chosen[i]], deadline), started));
    }
    co_await async::when_all(std::move(asks));
    if (!common_client_error(answers)) {
      for (const auto& a : answers)
        if (!a.result.ok() && is_client_error(a.result.error())) record_error(a.cluster, a.result.error());
    }
    co_return answers;
  }

  // A fan-out in its own coroutine: its answer is `key`'s flight's, whoever
  // still waits for it. `fan_out` never ends without an answer: an
  // exception (a bug) is answered as an internal error.
  template <class A>
  static async::Task<void> lead(std::shared_ptr<State> self, std::string key, async::Task<A> fan_out) {
    std::optional<A> answer;
    try {
      auto value = co_await std::move(fan_out);
      answer.emplace(std::move(value));
    } catch (const std::exception& e) {
      answer.emplace(A{k8s::Status::internal_error(e.what()), {}});
    }
    self->finish<A>(key, std::move(*answer));
  }

  // A query: the cached answer, or the answer of the fan-out in flight for
  // `key`, started here (on this coroutine's executor) when there is none.
  // `fan_out` is not started unless this query leads.
  template <class A>
  static async::Task<SharedAnswer<A>> answer(std::shared_ptr<State> self, std::string key, async::Task<A> fan_out) {
    auto admitted = self->admit<A>(key);
    if (admitted.cached) co_return admitted.cached;
    if (admitted.lead) {
      const auto executor = co_await boost::asio::this_coro::executor;
      auto leading = lead<A>(self, key, std::move(fan_out));
      // Not a child of this query: its other waiters keep waiting when this one is cancelled.
      boost::asio::co_spawn(executor, std::move(leading), [](const std::exception_ptr&) {});
    }
    auto waiting = admitted.flight->wait();
    auto shared = co_await std::move(waiting);
    co_return shared;
  }

  // A fan-out: plan (merge.hpp), ask each chosen member through `call`
  // (which returns its task), merge. `query` lives in this frame for the
  // whole fan-out, read by every member's call and the merge, never copied
  // per member: a selector may be up to kMaxSelectorBytes and a parse of it
  // about 100 times that.
  template <class R, class A, class Query, class Plan, class Call, class Merge>
  async::Task<A> fan_out(Query query, Plan plan_for, Call call, Merge merge) {
    const auto snapshot = source_snapshot();
    const MemberList& members = snapshot->members;
    auto plan = plan_for(members, query, snapshot->left_out);
    if (plan.early) co_return A{*plan.early, plan.warnings};
    fail_fast->leave_out(plan.members, plan.unasked, members);
    const Query& forwarded = plan.forwarded;
    auto gathering = gather<R>(members, plan.members, [&](MemberCluster& m, Deadline deadline) {
      return call(m, forwarded, query, deadline);
    });
    auto answers = co_await std::move(gathering);
    add_unasked(answers, plan.unasked);
    auto missing = missing_members(answers);
    co_return with_notes(merge(std::move(answers), query), plan.warnings, std::move(missing));
  }
};

namespace {

// A member's pods or nodes with its items put through `prepare` as that
// member answers, while the others are still working: after the last one,
// only its own items are left to prepare, then the sorting and joining.
// (The member's answer time, which orders the next fan-out, includes this
// preparation: tens of microseconds against milliseconds.)
async::Task<MemberResult<PreparedItems<k8s::PodMetrics>>> prepared_pods(MemberCluster& member,
                                                                        const ResourceMetricsQuery& forwarded,
                                                                        const ResourceMetricsQuery& query,
                                                                        Deadline deadline) {
  auto asking =
      member.pod_metrics(forwarded.namespace_name, forwarded.label_selector, forwarded.field_selector, deadline);
  auto result = co_await std::move(asking);
  if (!result) co_return result.error();
  co_return prepare_pod_metrics(member.name(), std::move(*result), query);
}

// A member's pods for a list written as JSON, as encoded items
// (MemberCluster::pod_metrics_items). `query` lives in the fan-out's frame
// until every member has answered (gather awaits them all), so the
// preparation only points at it.
async::Task<MemberResult<k8s::EncodedItems>> encoded_pods(MemberCluster& member, const ResourceMetricsQuery& forwarded,
                                                          const ResourceMetricsQuery& query, Deadline deadline) {
  std::shared_ptr<const ResourceMetricsQuery> unowned(std::shared_ptr<const void>(), &query);
  return member.pod_metrics_items(forwarded.namespace_name, forwarded.label_selector, forwarded.field_selector,
                                  item_preparation(member.name(), std::move(unowned)), deadline);
}

async::Task<MemberResult<PreparedItems<k8s::NodeMetrics>>> prepared_nodes(MemberCluster& member,
                                                                          const ResourceMetricsQuery& forwarded,
                                                                          const ResourceMetricsQuery& query,
                                                                          Deadline deadline) {
  auto asking = member.node_metrics(forwarded.label_selector, forwarded.field_selector, deadline);
  auto result = co_await std::move(asking);
  if (!result) co_return result.error();
  co_return prepare_node_metrics(member.name(), std::move(*result), query);
}

async::Task<MemberResult<std::vector<k8s::MetricValue>>> custom_values(MemberCluster& member,
                                                                       const CustomMetricsQuery& forwarded,
                                                                       const CustomMetricsQuery&, Deadline deadline) {
  return member.custom_metrics(forwarded, deadline);
}

async::Task<MemberResult<std::vector<k8s::ExternalMetricValue>>> external_values(MemberCluster& member,
                                                                                 const ExternalMetricsQuery& forwarded,
                                                                                 const ExternalMetricsQuery&,
                                                                                 Deadline deadline) {
  return member.external_metrics(forwarded, deadline);
}

}  // namespace

Aggregator::Aggregator(std::shared_ptr<MemberSource> members, AggregatorOptions options, Clock clock)
    : state_(std::make_shared<State>(std::move(members), std::move(options), clock ? std::move(clock) : Clock([] {
                                       return std::chrono::steady_clock::now();
                                     }))) {}

Aggregator::~Aggregator() = default;

async::Task<SharedAnswer<PodMetricsAnswer>> Aggregator::pod_metrics(ResourceMetricsQuery query) {
  query.kind = ResourceMetricsQuery::Kind::Pods;
  std::string key = query_key(query);
  if (query.encode_list && query.name.empty()) {
    // A list the API server writes as JSON: each member's text becomes
    // encoded items, merged without PodMetrics values (merge_encoded_pod_metrics).
    auto fan_out = state_->fan_out<k8s::EncodedItems, PodMetricsAnswer>(std::move(query), plan_resource_metrics,
                                                                        encoded_pods, merge_encoded_pod_metrics);
    return State::answer<PodMetricsAnswer>(state_, std::move(key), std::move(fan_out));
  }
  auto fan_out = state_->fan_out<PreparedItems<k8s::PodMetrics>, PodMetricsAnswer>(
      std::move(query), plan_resource_metrics, prepared_pods, merge_prepared_pod_metrics);
  return State::answer<PodMetricsAnswer>(state_, std::move(key), std::move(fan_out));
}

async::Task<SharedAnswer<NodeMetricsAnswer>> Aggregator::node_metrics(ResourceMetricsQuery query) {
  query.kind = ResourceMetricsQuery::Kind::Nodes;
  query.namespace_name.clear();  // nodes are cluster-scoped
  std::string key = query_key(query);
  auto fan_out = state_->fan_out<PreparedItems<k8s::NodeMetrics>, NodeMetricsAnswer>(
      std::move(query), plan_resource_metrics, prepared_nodes, merge_prepared_node_metrics);
  return State::answer<NodeMetricsAnswer>(state_, std::move(key), std::move(fan_out));
}

async::Task<SharedAnswer<CustomMetricsAnswer>> Aggregator::custom_metrics(CustomMetricsQuery query) {
  std::string key = query_key(query);
  auto fan_out = state_->fan_out<std::vector<k8s::MetricValue>, CustomMetricsAnswer>(
      std::move(query), plan_custom_metrics, custom_values, merge_custom_metrics);
  return State::answer<CustomMetricsAnswer>(state_, std::move(key), std::move(fan_out));
}

async::Task<SharedAnswer<ExternalMetricsAnswer>> Aggregator::external_metrics(ExternalMetricsQuery query) {
  std::string key = query_key(query);
  auto fan_out = state_->fan_out<std::vector<k8s::ExternalMetricValue>, ExternalMetricsAnswer>(
      std::move(query), plan_external_metrics, external_values, merge_external_metrics);
  return State::answer<ExternalMetricsAnswer>(state_, std::move(key), std::move(fan_out));
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
