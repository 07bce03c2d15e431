// Event correlation as client-go's EventCorrelator: tables of occurrences
// and what each becomes (a new Event, a patch of an existing one's count, or
// nothing), then the recorder over a fake sink at the scale of the issue.
#include <catch2/catch.hpp>

#include <map>
#include <set>
#include <mutex>

#include "fedmetrics/controller/event_correlator.hpp"
#include "support/fake_event_writer.hpp"

namespace fedmetrics::controller {
namespace {

using Action = EventDecision::Action;

k8s::Timestamp at(double second) {
  return k8s::Timestamp(std::chrono::nanoseconds(static_cast<std::int64_t>((1'787'000'000 + second) * 1e9)));
}

EventSubject fhpa(std::string name) { return {"shop", std::move(name), "uid-" + name}; }

struct Step {
  double second;
  std::string object;
  std::string reason;
  std::string message;
  Action action;
  int event;  // which Event it writes: the index of the step that created it (-1: none)
  std::int32_t count;
  std::string written_message;  // "" = the message itself
};

void run_table(const std::vector<Step>& steps, CorrelatorOptions options = {}) {
  EventCorrelator correlator(options);
  std::vector<std::string> names;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const auto& s = steps[i];
    INFO("step " << i << ": " << s.object << " " << s.reason << " \"" << s.message << "\" at " << s.second << " s");
    auto d = correlator.correlate({fhpa(s.object), "Warning", s.reason, s.message}, at(s.second));
    names.push_back(d.event.name);
    CHECK(d.action == s.action);
    if (s.action == Action::Drop) continue;
    CHECK(d.event.count == s.count);
    CHECK(d.event.last_timestamp == at(s.second));
    CHECK(d.event.message == (s.written_message.empty() ? s.message : s.written_message));
    CHECK(d.event.subject.name == s.object);
    if (s.action == Action::Create) {
      CHECK(d.event.first_timestamp == at(s.second));
      CHECK(d.event.name.starts_with(s.object + "."));
    }
    REQUIRE(s.event >= 0);
    CHECK(d.event.name == names.at(static_cast<std::size_t>(s.event)));
  }
}

TEST_CASE("EventCorrelator: a repeated Event is a patch of its count, what differs is a new Event") {
  run_table({
      {0, "web", "FailedGetScale", "deployments.apps \"web\" not found", Action::Create, 0, 1, ""},
      {15, "web", "FailedGetScale", "deployments.apps \"web\" not found", Action::Patch, 0, 2, ""},
      {30, "web", "FailedGetScale", "deployments.apps \"web\" not found", Action::Patch, 0, 3, ""},
      // Another message, another reason, another object: each its own Event.
      {45, "web", "FailedGetScale", "connection refused", Action::Create, 3, 1, ""},
      {45, "web", "FailedComputeMetricsReplicas", "connection refused", Action::Create, 4, 1, ""},
      {45, "api", "FailedGetScale", "deployments.apps \"web\" not found", Action::Create, 5, 1, ""},
      // De-duplication has no time window (upstream's eventLogger is an LRU only).
      {4000, "web", "FailedGetScale", "deployments.apps \"web\" not found", Action::Patch, 0, 4, ""},
  });
}

TEST_CASE("EventCorrelator: the 10th different message of one reason within 10 minutes is combined") {
  std::vector<Step> steps;
  for (int i = 0; i < 9; ++i)
    steps.push_back({i * 10.0, "web", "FailedGetPodsMetric", "m" + std::to_string(i), Action::Create, i, 1, ""});
  steps.push_back({90, "web", "FailedGetPodsMetric", "m9", Action::Create, 9, 1, "(combined from similar events): m9"});
  // The group is one Event now: more different messages patch it.
  steps.push_back(
      {100, "web", "FailedGetPodsMetric", "m10", Action::Patch, 9, 2, "(combined from similar events): m10"});
  // Another reason is its own group.
  steps.push_back({100, "web", "FailedRescale", "m10", Action::Create, 11, 1, ""});
  // More than 10 minutes after the group's last Event it starts over.
  steps.push_back({701, "web", "FailedGetPodsMetric", "m11", Action::Create, 12, 1, ""});
  run_table(steps);
}

TEST_CASE("EventCorrelator: different messages spread out over more than 10 minutes are never combined") {
  std::vector<Step> steps;
  for (int i = 0; i < 12; ++i)
    steps.push_back({i * 601.0, "web", "FailedGetPodsMetric", "m" + std::to_string(i), Action::Create, i, 1, ""});
  run_table(steps);
}

TEST_CASE("EventCorrelator: 25 Events per object, then one every 5 minutes, other objects unaffected") {
  std::vector<Step> steps;
  // Messages alternate between two reasons (so the aggregation stays out of it).
  for (int i = 0; i < 25; ++i)
    steps.push_back({i * 1.0, "web", "FailedGetScale", "down", i == 0 ? Action::Create : Action::Patch, 0, i + 1, ""});
  steps.push_back({25, "web", "FailedGetScale", "down", Action::Drop, -1, 0, ""});
  steps.push_back({26, "api", "FailedGetScale", "down", Action::Create, 26, 1, ""});
  steps.push_back({100, "web", "FailedGetScale", "down", Action::Drop, -1, 0, ""});
  // 300 s after the bucket emptied (at 24 s) one token is back; the occurrences
  // dropped meanwhile were still counted (25 written + 2 dropped + this one).
  steps.push_back({325, "web", "FailedGetScale", "down", Action::Patch, 0, 28, ""});
  steps.push_back({326, "web", "FailedGetScale", "down", Action::Drop, -1, 0, ""});
  run_table(steps);
}

TEST_CASE("EventCorrelator: the caches are LRUs: an Event evicted from them is created anew") {
  CorrelatorOptions small;
  small.lru_entries = 2;
  run_table(
      {
          {0, "a", "FailedGetScale", "x", Action::Create, 0, 1, ""},
          {1, "b", "FailedGetScale", "x", Action::Create, 1, 1, ""},
          {2, "a", "FailedGetScale", "x", Action::Patch, 0, 2, ""},   // a is recent again
          {3, "c", "FailedGetScale", "x", Action::Create, 3, 1, ""},  // evicts b
          {4, "b", "FailedGetScale", "x", Action::Create, 4, 1, ""},
      },
      small);
}

TEST_CASE("EventRecorder: 1,000 failing FederatedHPAs write 1,000 Events, then patches at the spam filter's rate") {
  auto sink = std::make_shared<testing::FakeEventWriter>();
  double now = 0;
  EventRecorder recorder(sink, [&] { return at(now); });
  // Each FederatedHPA fails its sync every 15 s for an hour, each time with
  // the same Event (4 a minute: 4,000 writes a minute without correlation).
  std::size_t writes_first_half = 0;
  for (now = 0; now < 3600; now += 15) {
    if (now == 1800) writes_first_half = sink->created.size() + sink->patched.size();
    for (int i = 0; i < 1000; ++i)
      recorder.record({fhpa("fhpa-" + std::to_string(i)), "Warning", "FailedGetScale", "the target is gone"});
  }
  CHECK(sink->created.size() == 1000);  // one Event per object, its count going up
  const auto writes_second_half = sink->created.size() + sink->patched.size() - writes_first_half;
  // After the burst of 25: one write per object every 5 minutes, 6 in 30 minutes.
  CHECK(writes_second_half == 6000);
  CHECK(recorder.stats().dropped > 100'000);
  // The count written last includes the dropped occurrences: 240 in the hour, the last written at 3300 s.
  CHECK(sink->patched.back().count == 221);
}

TEST_CASE("EventRecorder: a patch of an Event the control plane no longer has creates it again, count kept") {
  auto sink = std::make_shared<testing::FakeEventWriter>();
  double now = 0;
  EventRecorder recorder(sink, [&] { return at(now); });
  recorder.record({fhpa("web"), "Warning", "FailedGetScale", "gone"});
  REQUIRE(sink->created.size() == 1);
  sink->gone.insert(sink->created[0].name);  // --event-ttl removed it
  now = 15;
  recorder.record({fhpa("web"), "Warning", "FailedGetScale", "gone"});
  REQUIRE(sink->created.size() == 2);
  CHECK(sink->created[1].name == sink->created[0].name);
  CHECK(sink->created[1].count == 2);
  CHECK(sink->created[1].first_timestamp == at(0));
  CHECK(sink->created[1].last_timestamp == at(15));
  CHECK(recorder.stats().created == 2);
}

}  // namespace
}  // namespace fedmetrics::controller
