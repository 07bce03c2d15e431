#include "fedmetrics/controller/event_correlator.hpp"

#include <algorithm>
#include <mutex>
#include <set>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace fedmetrics::controller {

namespace {

// A bounded map that forgets the least recently used entry (groupcache's lru).
template <class V>
class Lru {
 public:
  explicit Lru(std::size_t capacity) : capacity_(std::max<std::size_t>(1, capacity)) {}
  // The entry for `key`, made most recent; nullptr when there is none.
  V* get(const std::string& key) {
    auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    order_.splice(order_.begin(), order_, it->second);
    return &it->second->second;
  }
  V& put(const std::string& key, V value) {
    if (V* existing = get(key)) return *existing = std::move(value);
    order_.emplace_front(key, std::move(value));
    index_[key] = order_.begin();
    if (order_.size() > capacity_) {
      index_.erase(order_.back().first);
      order_.pop_back();
    }
    return order_.front().second;
  }

 private:
  std::size_t capacity_;
  std::list<std::pair<std::string, V>> order_;
  std::unordered_map<std::string, typename std::list<std::pair<std::string, V>>::iterator> index_;
};

// Keys join their fields with a separator no Kubernetes name contains
// (client-go joins with ""; a separator keeps "ab"+"c" apart from "a"+"bc").
std::string join(std::initializer_list<std::string_view> parts) {
  std::string out;
  for (auto p : parts) {
    out.append(p);
    out.push_back('\x1f');
  }
  return out;
}

std::string object_key(const EventSubject& s) { return join({s.kind, s.namespace_name, s.name, s.uid}); }

struct AggregateRecord {
  std::set<std::string> messages;  // the distinct messages seen (localKeys)
  k8s::Timestamp last{};
};

struct EventLog {
  std::int32_t count = 0;
  k8s::Timestamp first_timestamp{};
  std::string name;
};

// A token bucket on the caller's clock (flowcontrol's token bucket with TryAccept).
struct SpamRecord {
  double tokens = 0;
  k8s::Timestamp refilled{};
};

}  // namespace

struct EventCorrelator::Caches {
  explicit Caches(std::size_t n) : aggregates(n), logs(n), spam(n) {}
  Lru<AggregateRecord> aggregates;
  Lru<EventLog> logs;
  Lru<SpamRecord> spam;
};

EventCorrelator::EventCorrelator(CorrelatorOptions options)
    : options_(options), caches_(std::make_unique<Caches>(options.lru_entries)) {}
EventCorrelator::~EventCorrelator() = default;
EventCorrelator::EventCorrelator(EventCorrelator&&) noexcept = default;
EventCorrelator& EventCorrelator::operator=(EventCorrelator&&) noexcept = default;

EventDecision EventCorrelator::correlate(const EventOccurrence& o, k8s::Timestamp now) {
  EventDecision decision;
  Event& event = decision.event;
  event.subject = o.subject;
  event.type = o.type;
  event.reason = o.reason;
  event.message = o.message;

  // Aggregation (EventAggregator with EventAggregatorByReasonFunc): grouped
  // by object, type and reason; the message tells the group's events apart.
  const std::string aggregate_key = join({object_key(o.subject), o.type, o.reason});
  std::string cache_key = join({aggregate_key, o.message});
  AggregateRecord* record = caches_->aggregates.get(aggregate_key);
  if (record == nullptr || now - record->last > options_.aggregate_interval)
    record = &caches_->aggregates.put(aggregate_key, AggregateRecord{});
  record->messages.insert(o.message);
  record->last = now;
  if (record->messages.size() >= options_.aggregate_max_events) {
    // Keep the set below the limit; the group is now one Event whose cache
    // key is the group's, so that each further one patches it.
    record->messages.erase(record->messages.begin());
    event.message = "(combined from similar events): " + o.message;
    cache_key = aggregate_key;
  }

  // De-duplication (eventLogger.eventObserve): a known Event gets count + 1.
  if (EventLog* log = caches_->logs.get(cache_key); log != nullptr && log->count > 0) {
    decision.action = EventDecision::Action::Patch;
    event.name = log->name;
    event.first_timestamp = log->first_timestamp;
    event.count = log->count + 1;
  } else {
    decision.action = EventDecision::Action::Create;
    event.name = fmt::format("{}.{:x}", o.subject.name, now.time_since_epoch().count());
    event.first_timestamp = now;
    event.count = 1;
  }
  event.last_timestamp = now;
  caches_->logs.put(cache_key, EventLog{event.count, event.first_timestamp, event.name});

  // Spam filter (EventSourceObjectSpamFilter), after the observation as upstream.
  SpamRecord* bucket = caches_->spam.get(object_key(o.subject));
  if (bucket == nullptr) bucket = &caches_->spam.put(object_key(o.subject), SpamRecord{options_.spam_burst, now});
  const double elapsed = std::chrono::duration<double>(now - bucket->refilled).count();
  if (elapsed > 0) {
    bucket->tokens = std::min(options_.spam_burst, bucket->tokens + elapsed * options_.spam_qps);
    bucket->refilled = now;
  }
  // (The tolerance keeps a refill that lands exactly on a whole token from
  // being lost to floating-point rounding.)
  if (bucket->tokens < 1 - 1e-9) {
    decision.action = EventDecision::Action::Drop;
    return decision;
  }
  bucket->tokens -= 1;
  return decision;
}

struct EventRecorder::State {
  std::shared_ptr<EventWriter> sink;
  std::function<k8s::Timestamp()> clock;
  mutable std::mutex mutex;
  EventCorrelator correlator;
  EventRecorderStats stats;

  void count(std::uint64_t EventRecorderStats::*field) {
    std::lock_guard lock(mutex);
    ++(stats.*field);
  }
};

EventRecorder::EventRecorder(std::shared_ptr<EventWriter> sink, std::function<k8s::Timestamp()> clock,
                             CorrelatorOptions options)
    : state_(std::make_shared<State>()) {
  state_->sink = std::move(sink);
  state_->clock = std::move(clock);
  state_->correlator = EventCorrelator(options);
}

void EventRecorder::record(const EventOccurrence& occurrence) {
  EventDecision decision;
  {
    std::lock_guard lock(state_->mutex);
    decision = state_->correlator.correlate(occurrence, state_->clock());
    if (decision.action == EventDecision::Action::Drop) ++state_->stats.dropped;
  }
  auto state = state_;
  auto created = [state, reason = occurrence.reason](k8s::Expected<bool> ok) {
    if (ok) return state->count(&EventRecorderStats::created);
    state->count(&EventRecorderStats::failed);
    spdlog::debug("autoscaler: cannot record event {}: {}", reason, ok.error().message);
  };
  switch (decision.action) {
    case EventDecision::Action::Drop: return;
    case EventDecision::Action::Create: return state->sink->create_event(decision.event, created);
    case EventDecision::Action::Patch:
      return state->sink->patch_event(
          decision.event, [state, event = decision.event, created](k8s::Expected<bool> found) {
            if (found && *found) return state->count(&EventRecorderStats::patched);
            if (!found) {
              state->count(&EventRecorderStats::failed);
              return spdlog::debug("autoscaler: cannot update event {}: {}", event.name, found.error().message);
            }
            // The Event expired on the control plane: create it again, as client-go does after a NotFound patch.
            state->sink->create_event(event, created);
          });
  }
}

EventRecorderStats EventRecorder::stats() const {
  std::lock_guard lock(state_->mutex);
  return state_->stats;
}

}  // namespace fedmetrics::controller
