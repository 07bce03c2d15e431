#pragma once
// Event correlation as client-go's EventRecorder does it
// (tools/record/events_cache.go, EventCorrelator), so that a FederatedHPA
// failing the same way at every sync updates one Event's count rather than
// writing a new Event each time, and a thousand failing FederatedHPAs do
// not flood the control plane:
//
//  - aggregation: more than 10 Events about one object with the same type
//    and reason but different messages within 10 minutes (since the last
//    such one) are combined into one Event whose message begins
//    "(combined from similar events): ";
//  - de-duplication: an Event identical to one already written (same object,
//    type, reason, message) is a patch of that Event's count, lastTimestamp
//    and message, not a new Event;
//  - spam filter: per object, a token bucket of burst 25 refilled by one
//    token every 5 minutes; an Event without a token is dropped (its
//    occurrence is still counted, so the next patch carries the full count).
//
// Every cache is an LRU of 4096 entries, as upstream's. Pure: the clock is
// an argument and nothing is written here; EventRecorder does the writes.
#include <chrono>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <string>
#include <unordered_map>

#include "fedmetrics/controller/event_sink.hpp"
#include "fedmetrics/k8s/expected.hpp"
#include "fedmetrics/k8s/time.hpp"

namespace fedmetrics::controller {

// A core/v1 Event as written.
struct Event {
  std::string name;  // "<object name>.<hex nanoseconds>", as client-go names Events
  EventSubject subject;
  std::string type;
  std::string reason;
  std::string message;
  std::int32_t count = 1;
  k8s::Timestamp first_timestamp{};
  k8s::Timestamp last_timestamp{};
};

struct EventDecision {
  enum class Action {
    Create,  // write `event` as a new Event
    Patch,   // set count, lastTimestamp and message of the existing Event `event.name`
    Drop,    // rate-limited: write nothing
  } action = Action::Drop;
  Event event;
};

// client-go's CorrelatorOptions and their defaults.
struct CorrelatorOptions {
  std::size_t lru_entries = 4096;                // maxLruCacheEntries
  std::size_t aggregate_max_events = 10;         // defaultAggregateMaxEvents
  std::chrono::seconds aggregate_interval{600};  // defaultAggregateIntervalInSeconds
  double spam_burst = 25;                        // defaultSpamBurst: Events per object
  double spam_qps = 1.0 / 300;                   // defaultSpamQPS: one more every 5 minutes
};

class EventCorrelator {
 public:
  explicit EventCorrelator(CorrelatorOptions options = {});
  ~EventCorrelator();
  EventCorrelator(EventCorrelator&&) noexcept;
  EventCorrelator& operator=(EventCorrelator&&) noexcept;

  EventDecision correlate(const EventOccurrence& occurrence, k8s::Timestamp now);

 private:
  struct Caches;
  CorrelatorOptions options_;
  std::unique_ptr<Caches> caches_;
};

// Where the recorder writes Events (the control plane's core/v1 Events).
// Callback style still: the recorder is called from any thread and runs no
// coroutines of its own.
class EventWriter {
 public:
  using Done = std::function<void(k8s::Expected<bool>)>;
  virtual ~EventWriter() = default;
  virtual void create_event(const Event& event, Done done) = 0;
  // Sets count, lastTimestamp and message of the Event named `event.name`.
  // false (not an error) when that Event no longer exists (404: the control
  // plane's --event-ttl removed it).
  virtual void patch_event(const Event& event, Done done) = 0;
};

struct EventRecorderStats {
  std::uint64_t created = 0;
  std::uint64_t patched = 0;
  std::uint64_t dropped = 0;  // rate-limited
  std::uint64_t failed = 0;   // the write failed
};

// Records occurrences through the correlator (client-go's recordToSink):
// a patch that finds the Event gone creates it again with the count it
// would have had. Thread-safe.
class EventRecorder final : public EventSink {
 public:
  EventRecorder(std::shared_ptr<EventWriter> writer, std::function<k8s::Timestamp()> clock,
                CorrelatorOptions options = {});
  void record(const EventOccurrence& occurrence) override;
  [[nodiscard]] EventRecorderStats stats() const;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace fedmetrics::controller
