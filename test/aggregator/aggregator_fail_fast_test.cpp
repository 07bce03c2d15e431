// The fan-out with a member that stops answering: left out of the answers at
// once after three unanswered requests, probed in the background on the
// injected scheduler (fake time, no sleeps), asked again after its first
// answer; and what the autoscaling loop reads of it meanwhile.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>

#include "support/fake_member_cluster.hpp"
#include "support/fake_metrics_service.hpp"
#include "fedmetrics/aggregator/aggregator.hpp"
#include "fedmetrics/controller/metrics_gatherer.hpp"
#include "fedmetrics/k8s/time.hpp"

using namespace fedmetrics;
using namespace fedmetrics::aggregator;
using namespace fedmetrics::aggregator::testing;
using namespace std::chrono_literals;

namespace {

// Fake time: a steady clock moved by hand and the timers due on it, whose
// coroutines run on the test's loop.
struct FakeTime {
  std::chrono::steady_clock::time_point now{std::chrono::seconds(1000)};
  std::vector<std::pair<std::chrono::steady_clock::time_point, std::function<async::Task<void>()>>> timers;
  Loop loop;

  Scheduler scheduler() {
    return [this](std::chrono::steady_clock::duration delay, std::function<async::Task<void>()> task) {
      timers.emplace_back(now + delay, std::move(task));
    };
  }
  // Moves the clock by `d`, running every timer due meanwhile in time order.
  void advance(std::chrono::steady_clock::duration d) {
    const auto until = now + d;
    for (;;) {
      auto next = std::min_element(timers.begin(), timers.end(),
                                   [](const auto& a, const auto& b) { return a.first < b.first; });
      if (next == timers.end() || next->first > until) break;
      now = std::max(now, next->first);
      auto task = std::move(next->second);
      timers.erase(next);
      loop.spawn(task());
      loop.poll();
    }
    now = until;
  }
};

const std::string kSince = "2026-11-28T13:00:00Z";

struct World {
  FakeTime time;
  std::shared_ptr<FakeSource> source = std::make_shared<FakeSource>();
  std::vector<std::pair<std::string, std::string>> answering;  // on_member_answering calls
  std::unique_ptr<Aggregator> aggregator;

  std::shared_ptr<FakeMember> add(std::string name) {
    auto m = std::make_shared<FakeMember>(std::move(name));
    m->pod_metrics_answer = std::vector{pod("default", "web-" + m->name())};
    source->list.push_back(m);
    return m;
  }
  void start(int threshold = 3) {
    AggregatorOptions options;
    options.member_timeout = 1s;
    options.fail_fast_threshold = threshold;
    options.schedule = time.scheduler();
    options.wall_clock = [] {
      auto t = k8s::parse_time(kSince);
      return std::chrono::time_point_cast<std::chrono::system_clock::duration>(*t);
    };
    options.on_member_answering = [this](std::string_view member, std::string_view reason) {
      answering.emplace_back(member, reason);
    };
    aggregator = std::make_unique<Aggregator>(source, std::move(options), [this] { return time.now; });
  }
  PodMetricsAnswer pods() { return *time.loop.run(aggregator->pod_metrics(pods_in_default())); }
  // The member's deferred calls answered, and what that made ready run.
  void release(FakeMember& member) {
    member.release();
    time.loop.poll();
  }
  static ResourceMetricsQuery pods_in_default() {
    ResourceMetricsQuery q;
    q.kind = ResourceMetricsQuery::Kind::Pods;
    q.namespace_name = "default";
    return q;
  }
};

MemberError timeout() { return error(MemberError::Kind::Timeout, "no answer within 1s"); }

std::vector<std::string> names(const MemberList& members) {
  std::vector<std::string> out;
  for (const auto& m : members) out.push_back(m->name());
  return out;
}

}  // namespace

TEST_CASE(
    "Aggregator fail-fast: a member that stops answering is left out after three timeouts, probed, and "
    "asked again after its first answer",
    "[aggregator][fail_fast]") {
  World w;
  w.add("member1");
  w.add("member2");
  auto m3 = w.add("member3");
  w.start();
  m3->pod_metrics_answer = timeout();
  m3->nodes = timeout();  // the probe (a node list, the port's default probe)
  const std::string left_out = "member3: left out: not answering since " + kSince + " (3 timeouts)";

  // The first three queries ask it, each one waiting for its deadline.
  for (int i = 1; i <= 3; ++i) {
    auto answer = w.pods();
    CHECK(m3->pod_calls.size() == static_cast<std::size_t>(i));
    CHECK(items_of(answer).size() == 2);
    CHECK(answer.warnings == std::vector<std::string>{"member3: timeout: no answer within 1s"});
  }
  CHECK(w.answering == std::vector<std::pair<std::string, std::string>>{
                           {"member3", "not answering since " + kSince + " (3 timeouts)"}});

  // From the fourth on, it is not asked: the others' answer at once, with the Warning.
  auto fast = w.pods();
  CHECK(m3->pod_calls.size() == 3);
  CHECK(items_of(fast).size() == 2);
  CHECK(fast.warnings == std::vector<std::string>{left_out});
  CHECK(fast.missing_members == std::vector<std::string>{"member3"});
  // Not asked, so not one more member failure.
  CHECK(w.aggregator->stats().member_errors == 3);
  CHECK(w.aggregator->stats().member_calls == 3 * 3 + 2);

  // Probed in the background: one second later, then two, four (the backoff).
  CHECK(m3->node_calls.empty());
  w.time.advance(999ms);
  CHECK(m3->node_calls.empty());
  w.time.advance(1ms);
  CHECK(m3->node_calls.size() == 1);
  CHECK(m3->node_calls[0].deadline == w.time.now + 1s);  // the member timeout
  w.time.advance(1999ms);
  CHECK(m3->node_calls.size() == 1);
  w.time.advance(1ms);
  CHECK(m3->node_calls.size() == 2);
  // Each unanswered probe counts.
  CHECK(w.pods().warnings ==
        std::vector<std::string>{"member3: left out: not answering since " + kSince + " (5 timeouts)"});

  // One probe at a time: while one is unanswered, no other leaves.
  m3->deferred = true;
  w.time.advance(4s);
  CHECK(m3->node_calls.size() == 3);
  w.time.advance(60s);
  CHECK(m3->node_calls.size() == 3);
  CHECK(m3->pending() == 1);

  // That probe times out too: the next one eight seconds later.
  w.release(*m3);
  m3->deferred = false;
  CHECK(w.answering.size() == 1);
  w.time.advance(7999ms);
  CHECK(m3->node_calls.size() == 3);

  // It answers again: the probe's answer brings it back, and the next query asks it.
  m3->nodes = std::vector<k8s::NodeMetrics>{};
  w.time.advance(1ms);
  CHECK(m3->node_calls.size() == 4);
  CHECK(w.answering.back() == std::pair<std::string, std::string>{"member3", ""});
  m3->pod_metrics_answer = std::vector{pod("default", "web-member3")};
  auto back = w.pods();
  CHECK(m3->pod_calls.size() == 4);
  CHECK(items_of(back).size() == 3);
  CHECK(back.warnings.empty());
  CHECK(back.missing_members.empty());
  // No probe once it answers.
  w.time.advance(120s);
  CHECK(m3->node_calls.size() == 4);
  CHECK(w.time.timers.empty());
}

TEST_CASE("Aggregator fail-fast: error answers, our own rate limit and an answer in between never leave a member out",
          "[aggregator][fail_fast]") {
  World w;
  w.add("member1");
  auto m2 = w.add("member2");
  w.start();
  MemberError http500 = error(MemberError::Kind::HttpStatus, "HTTP 500: etcd is down");
  http500.http_status = 500;
  m2->pod_metrics_answer = http500;
  for (int i = 0; i < 5; ++i) w.pods();
  m2->pod_metrics_answer = error(MemberError::Kind::Throttled, "client rate limit");
  for (int i = 0; i < 5; ++i) w.pods();
  // Two timeouts, an answer, two timeouts: never three in a row.
  for (auto result :
       {MemberResult<std::vector<k8s::PodMetrics>>(timeout()), MemberResult<std::vector<k8s::PodMetrics>>(timeout()),
        MemberResult<std::vector<k8s::PodMetrics>>(std::vector{pod("default", "web-2")}),
        MemberResult<std::vector<k8s::PodMetrics>>(timeout()), MemberResult<std::vector<k8s::PodMetrics>>(timeout())}) {
    m2->pod_metrics_answer = result;
    w.pods();
  }
  CHECK(m2->pod_calls.size() == 15);
  CHECK(w.answering.empty());
  CHECK(w.time.timers.empty());
  // The third in a row does.
  w.pods();
  CHECK(w.answering.size() == 1);
  CHECK(m2->pod_calls.size() == 16);
  w.pods();
  CHECK(m2->pod_calls.size() == 16);
}

TEST_CASE("Aggregator fail-fast: the threshold is how many unanswered requests in a row, and 0 turns it off",
          "[aggregator][fail_fast]") {
  for (const int threshold : {1, 2, 5, 0}) {
    INFO("threshold " << threshold);
    World w;
    w.add("member1");
    auto m2 = w.add("member2");
    w.start(threshold);
    m2->pod_metrics_answer = timeout();
    for (int i = 0; i < 8; ++i) w.pods();
    // Asked until it has left `threshold` requests unanswered; with 0, always.
    CHECK(m2->pod_calls.size() == static_cast<std::size_t>(threshold == 0 ? 8 : threshold));
    CHECK(w.time.timers.size() == (threshold == 0 ? 0U : 1U));
  }
}

TEST_CASE("Aggregator fail-fast: custom metrics only warn of a member left out when it lists the metric",
          "[aggregator][fail_fast]") {
  World w;
  auto m1 = w.add("member1");
  auto m2 = w.add("member2");
  auto caps = [](std::vector<std::string> metrics) {
    auto c = std::make_shared<MemberCapabilities>();
    c->resource_metrics = true;
    c->custom_metrics = k8s::CustomMetricsVersion::V1beta2;
    for (auto& m : metrics) c->custom_metric_resources.push_back(custom_resource(std::move(m)));
    return c;
  };
  m1->set_capabilities(caps({"pods/rps", "pods/queue"}));
  m2->set_capabilities(caps({"pods/rps"}));
  m1->custom = std::vector{metric_value("Pod", "default", "web-1", "1")};
  w.start();
  m2->pod_metrics_answer = timeout();
  for (int i = 0; i < 3; ++i) w.pods();
  REQUIRE(w.answering.size() == 1);

  CustomMetricsQuery q;
  q.resource = {"", "pods"};
  q.namespace_name = "default";
  q.name = "*";
  q.metric = "queue";  // member2 does not list it: it would not be asked anyway
  const auto queue = w.time.loop.run(w.aggregator->custom_metrics(q));
  CHECK(queue->warnings.empty());
  q.metric = "rps";
  const auto rps = w.time.loop.run(w.aggregator->custom_metrics(q));
  CHECK(m2->custom_calls.empty());
  CHECK(rps->warnings ==
        std::vector<std::string>{"member2: left out: not answering since " + kSince + " (3 timeouts)"});
  // Discovery still lists what member2 serves: it is only not asked for now.
  CHECK(w.aggregator->custom_metrics_resources(k8s::CustomMetricsVersion::V1beta2).resources.size() == 2);
}

TEST_CASE("Aggregator fail-fast: a member gone from the source while left out is forgotten",
          "[aggregator][fail_fast]") {
  World w;
  w.add("member1");
  auto m2 = w.add("member2");
  w.start();
  m2->pod_metrics_answer = timeout();
  for (int i = 0; i < 4; ++i) w.pods();
  REQUIRE(m2->pod_calls.size() == 3);
  w.source->list.pop_back();
  w.time.advance(1s);  // its probe finds it gone
  CHECK(m2->node_calls.empty());
  CHECK(w.time.timers.empty());
  // Back in the source (a new endpoint, say): asked afresh.
  w.source->list.push_back(m2);
  m2->pod_metrics_answer = std::vector{pod("default", "web-2")};
  w.pods();
  CHECK(m2->pod_calls.size() == 4);
}

TEST_CASE(
    "Aggregator fail-fast: the autoscaling loop reads a member that stopped answering as a member the "
    "source left out (pods missing, not absent), without asking it",
    "[aggregator][fail_fast]") {
  // The loop's view of a sync over member1 and member2, each with one of the
  // target's two replicas, through `source`.
  struct Read {
    controller::PodListing listing;
    autoscaler::MemberPlacement placement;
    std::vector<std::string> asked;
  };
  World w;
  auto read = [&w](MemberSource& source) {
    auto snapshot = source.snapshot();
    const std::string namespace_name = "default";
    const k8s::LabelSelector everything;
    auto listing = w.time.loop.run(controller::list_pods(snapshot->members, namespace_name, everything, {}));
    const std::set<std::string> hosts{"member1", "member2"};
    controller::add_members_not_asked(listing, *snapshot, hosts);
    auto placement = controller::member_placement(
        std::vector<controller::TargetCluster>{{"member1", 1}, {"member2", 1}}, listing, 2);
    return Read{listing, placement, names(snapshot->members)};
  };

  auto m1 = w.add("member1");
  auto m2 = w.add("member2");
  m1->pod_list = std::vector{ready_pod("default", "web-a")};
  m2->pod_list = std::vector{ready_pod("default", "web-b")};
  w.start();
  m2->pod_metrics_answer = timeout();
  for (int i = 0; i < 3; ++i) w.pods();
  REQUIRE(w.answering.size() == 1);

  // What the loop reads through the aggregator's view of the members.
  auto asked = w.aggregator->members();
  const Read failing_fast = read(*asked);
  CHECK(failing_fast.asked == std::vector<std::string>{"member1"});
  CHECK(m2->pod_list_calls.empty());  // not even asked for its pods
  CHECK(failing_fast.listing.pods.size() == 1);
  CHECK(failing_fast.listing.unread_members == std::vector<std::string>{"member2"});
  CHECK(failing_fast.listing.failed_members ==
        std::vector<std::string>{"member2: left out: not answering since " + kSince + " (3 timeouts)"});
  // Its replica is a missing pod, which holds any scale-down (member_placement.hpp).
  CHECK(failing_fast.placement.unread_members == std::map<std::string, std::int32_t, std::less<>>{{"member2", 1}});
  // Its client is still there for /metrics, beside the reason.
  const auto snapshot = asked->snapshot();
  REQUIRE(snapshot->left_out.size() == 1);
  CHECK(snapshot->left_out[0].member == m2);

  // The same as a member whose Karmada Cluster is NotReady, today's unreadable member.
  auto not_ready = std::make_shared<FakeSource>();
  not_ready->list = {m1};
  not_ready->left_out = {{"member2", "Cluster NotReady (ClusterNotReachable)"}};
  const Read left_out = read(*not_ready);
  CHECK(left_out.listing.pods.size() == failing_fast.listing.pods.size());
  CHECK(left_out.listing.pods[0].key == failing_fast.listing.pods[0].key);
  CHECK(left_out.listing.unread_members == failing_fast.listing.unread_members);
  CHECK(left_out.placement.unread_members == failing_fast.placement.unread_members);
  CHECK(left_out.placement.member_replicas == failing_fast.placement.member_replicas);

  // Answering again: read again.
  m2->nodes = std::vector<k8s::NodeMetrics>{};
  w.time.advance(1s);
  const Read back = read(*asked);
  CHECK(back.asked == std::vector<std::string>{"member1", "member2"});
  CHECK(back.listing.pods.size() == 2);
  CHECK(back.listing.unread_members.empty());
}

TEST_CASE(
    "gather_metrics: a sync cancelled while its metrics are asked still waits for their answers, so that no "
    "fan-out it started outlives it",
    "[aggregator][controller]") {
  Loop loop;
  fedmetrics::testing::FakeMetricsService service;
  service.hold = true;  // the fan-out has not answered yet
  autoscaler::FederatedHPASpec spec;
  autoscaler::MetricSpec cpu;
  cpu.type = autoscaler::MetricSourceType::Resource;
  cpu.resource_name = "cpu";
  spec.metrics = {cpu};
  const std::string namespace_name = "default";
  const k8s::LabelSelector everything;
  const std::vector<autoscaler::Pod> pods;
  const std::optional<std::set<std::string>> hosts;
  boost::asio::cancellation_signal cancel;
  bool ended = false;
  std::exception_ptr failure;
  boost::asio::co_spawn(loop.context(),
                        controller::gather_metrics(service, spec, namespace_name, everything, pods, hosts),
                        boost::asio::bind_cancellation_slot(
                            cancel.slot(), [&](const std::exception_ptr& e, const controller::GatheredMetrics&) {
                              ended = true;
                              failure = e;
                            }));
  loop.poll();
  REQUIRE(service.held() == 1);
  cancel.emit(boost::asio::cancellation_type::terminal);
  loop.poll();
  CHECK_FALSE(ended);  // still waiting for the answer it asked for
  service.release();
  loop.poll();
  CHECK(ended);
  CHECK_FALSE(failure);
}
