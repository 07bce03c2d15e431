// The fan-out (Aggregator) against fake members: who is asked with what,
// when the answer is delivered, coalescing, the result cache, threads.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/strand.hpp>

#include "support/fake_member_cluster.hpp"
#include "fedmetrics/aggregator/aggregator.hpp"

using namespace fedmetrics;
using namespace fedmetrics::aggregator;
using namespace fedmetrics::aggregator::testing;
using namespace std::chrono_literals;

namespace {

// A clock the test moves by hand.
struct FakeClock {
  std::chrono::steady_clock::time_point now{std::chrono::seconds(1000)};
  Clock function() {
    return [this] { return now; };
  }
};

// Collects the answers of the queries it was given (single-threaded tests).
template <class A>
struct Received {
  std::vector<A> answers;
  std::vector<SharedAnswer<A>> shared;
  // Starts the query on `loop` and runs what is ready: answered by then,
  // unless a member it waits for is deferred.
  void ask(Loop& loop, async::Task<SharedAnswer<A>> query) {
    boost::asio::co_spawn(loop.context(), std::move(query), [this](const std::exception_ptr& e, SharedAnswer<A> a) {
      if (e) std::rethrow_exception(e);
      answers.push_back(*a);
      shared.push_back(std::move(a));
    });
    loop.poll();
  }
};

struct World {
  std::shared_ptr<FakeSource> source = std::make_shared<FakeSource>();
  FakeClock clock;
  Loop loop;

  // The member's deferred calls answered, and what that made ready run.
  void release(FakeMember& member) {
    member.release();
    loop.poll();
  }

  std::shared_ptr<FakeMember> add(std::string name,
                                  std::shared_ptr<const MemberCapabilities> caps = resource_capabilities()) {
    auto m = std::make_shared<FakeMember>(std::move(name), std::move(caps));
    source->list.push_back(m);
    return m;
  }
  std::unique_ptr<Aggregator> aggregator(AggregatorOptions options = {}) {
    return std::make_unique<Aggregator>(source, std::move(options), clock.function());
  }
};

ResourceMetricsQuery pods_in(std::string ns, std::string labels = "") {
  ResourceMetricsQuery q;
  q.kind = ResourceMetricsQuery::Kind::Pods;
  q.namespace_name = std::move(ns);
  q.label_selector = selector(labels);
  return q;
}

std::shared_ptr<MemberCapabilities> custom_capabilities(std::vector<std::string> custom,
                                                        std::vector<std::string> external = {}) {
  auto caps = std::make_shared<MemberCapabilities>();
  caps->custom_metrics = k8s::CustomMetricsVersion::V1beta2;
  for (auto& name : custom) caps->custom_metric_resources.push_back(custom_resource(std::move(name)));
  caps->external_metrics = !external.empty();
  for (auto& name : external) caps->external_metric_resources.push_back(external_resource(std::move(name)));
  return caps;
}

AggregatorOptions options_with(std::chrono::milliseconds member_timeout,
                               std::chrono::milliseconds cache_ttl = std::chrono::milliseconds(0)) {
  AggregatorOptions options;
  options.member_timeout = member_timeout;
  options.cache_ttl = cache_ttl;
  return options;
}

}  // namespace

TEST_CASE("Aggregator: asks every member at once with the member deadline and answers when the last one calls back",
          "[aggregator]") {
  World w;
  auto m1 = w.add("member1");
  auto m2 = w.add("member2");
  m1->deferred = m2->deferred = true;
  m1->pod_metrics_answer = std::vector{pod("default", "a")};
  m2->pod_metrics_answer = std::vector{pod("default", "b")};
  auto agg = w.aggregator(options_with(3s));

  Received<PodMetricsAnswer> got;
  auto query = pods_in("default");
  query.encode_list = true;
  got.ask(w.loop, agg->pod_metrics(query));
  // Both asked before either answered: parallel, not one after the other.
  REQUIRE(m1->pod_calls.size() == 1);
  REQUIRE(m2->pod_calls.size() == 1);
  CHECK(m1->pod_calls[0].deadline == w.clock.now + 3s);
  CHECK(m2->pod_calls[0].deadline == w.clock.now + 3s);
  CHECK(m1->pod_calls[0].namespace_name == "default");

  w.release(*m2);
  CHECK(got.answers.empty());
  w.release(*m1);
  REQUIRE(got.answers.size() == 1);
  // A list the caller writes as JSON comes as JSON only, merged from the
  // items each member's answer encoded.
  CHECK(items_of(got.answers[0]).empty());
  REQUIRE(got.answers[0].json_list);
  std::string json;
  for (const std::string_view piece : got.answers[0].json_list->pieces) json += piece;
  auto a = pod("default", "a"), b = pod("default", "b");
  a.metadata.annotations[std::string(kQueryFromClusterAnnotation)] = "member1";
  b.metadata.annotations[std::string(kQueryFromClusterAnnotation)] = "member2";
  CHECK(json == k8s::encode_pod_metrics_list({a, b}));
}

TEST_CASE("Aggregator: members answering at once still yield exactly one answer, after the last one", "[aggregator]") {
  World w;
  auto m1 = w.add("member1");
  auto m2 = w.add("member2");
  m1->nodes = std::vector{node("n1")};
  m2->nodes = std::vector{node("n2")};
  auto agg = w.aggregator();
  Received<NodeMetricsAnswer> got;
  ResourceMetricsQuery q;
  q.kind = ResourceMetricsQuery::Kind::Nodes;
  got.ask(w.loop, agg->node_metrics(q));
  REQUIRE(got.answers.size() == 1);
  CHECK(items_of(got.answers[0]).size() == 2);
}

TEST_CASE("Aggregator: a fedmetrics/cluster selector chooses the members and is not forwarded", "[aggregator]") {
  struct Row {
    std::string selector;
    bool member1_asked;
    bool member2_asked;
  };
  const Row rows[] = {
      {"fedmetrics/cluster=member1,app=web", true, false},
      {"app=web,fedmetrics/cluster!=member1", false, true},
      {"app=web,fedmetrics/cluster in (member1,member2)", true, true},
      {"app=web,fedmetrics/cluster notin (member2)", true, false},
      {"app=web,fedmetrics/cluster", true, true},
  };
  for (const Row& row : rows) {
    CAPTURE(row.selector);
    World w;
    auto m1 = w.add("member1");
    auto m2 = w.add("member2");
    m1->pod_metrics_answer = std::vector{pod("default", "web-1")};
    m2->pod_metrics_answer = std::vector{pod("default", "web-2")};
    auto agg = w.aggregator();
    Received<PodMetricsAnswer> got;
    got.ask(w.loop, agg->pod_metrics(pods_in("default", row.selector)));
    CHECK(m1->pod_calls.size() == (row.member1_asked ? 1u : 0u));
    CHECK(m2->pod_calls.size() == (row.member2_asked ? 1u : 0u));
    for (const auto& m : {m1, m2})
      for (const auto& call : m->pod_calls) CHECK(call.labels == "app=web");
    REQUIRE(got.answers.size() == 1);
    CHECK(items_of(got.answers[0]).size() == (row.member1_asked ? 1u : 0u) + (row.member2_asked ? 1u : 0u));
    CHECK(got.answers[0].warnings.empty());
  }
}

TEST_CASE("Aggregator: a fedmetrics/cluster selector naming no member warns instead of looking like an empty cluster",
          "[aggregator]") {
  World w;
  auto caps = custom_capabilities({"pods/http_requests"}, {"queue_depth"});
  caps->resource_metrics = true;
  auto m1 = w.add("member1", caps);
  m1->pod_metrics_answer = std::vector{pod("default", "web-1")};
  m1->external = std::vector{external_value({{"queue", "a"}}, "1")};
  auto agg = w.aggregator();

  Received<PodMetricsAnswer> typo;
  typo.ask(w.loop, agg->pod_metrics(pods_in("default", "fedmetrics/cluster=membr1")));
  CHECK(m1->pod_calls.empty());
  REQUIRE(typo.answers.size() == 1);
  CHECK(items_of(typo.answers[0]).empty());
  CHECK(typo.answers[0].warnings ==
        std::vector<std::string>{"fedmetrics/cluster: no member cluster is named 'membr1'"});
  CHECK(typo.answers[0].missing_members.empty());  // a note about the query, no member's part missing

  // One of two names known: that member answers, the other name is warned about.
  Received<PodMetricsAnswer> one_known;
  one_known.ask(w.loop, agg->pod_metrics(pods_in("default", "fedmetrics/cluster in (member1,member9)")));
  REQUIRE(one_known.answers.size() == 1);
  CHECK(items_of(one_known.answers[0]).size() == 1);
  CHECK(one_known.answers[0].warnings ==
        std::vector<std::string>{"fedmetrics/cluster: no member cluster is named 'member9'"});

  // Exclusions name no one to find: no warning.
  Received<PodMetricsAnswer> excluded;
  excluded.ask(w.loop, agg->pod_metrics(pods_in("default", "fedmetrics/cluster notin (member9)")));
  REQUIRE(excluded.answers.size() == 1);
  CHECK(excluded.answers[0].warnings.empty());

  // Custom metrics: a name in both selectors is one warning.
  CustomMetricsQuery custom;
  custom.resource = {"", "pods"};
  custom.namespace_name = "default";
  custom.name = "*";
  custom.metric = "http_requests";
  custom.label_selector = selector("fedmetrics/cluster=nope");
  custom.metric_selector = selector("fedmetrics/cluster in (nope,member1)");
  Received<CustomMetricsAnswer> both_selectors;
  both_selectors.ask(w.loop, agg->custom_metrics(custom));
  REQUIRE(both_selectors.answers.size() == 1);
  CHECK(both_selectors.answers[0].warnings ==
        std::vector<std::string>{"fedmetrics/cluster: no member cluster is named 'nope'"});
  CHECK(both_selectors.answers[0].missing_members.empty());

  Received<ExternalMetricsAnswer> ext;
  ext.ask(w.loop,
          agg->external_metrics(ExternalMetricsQuery{"default", "queue_depth", selector("fedmetrics/cluster=nope")}));
  REQUIRE(ext.answers.size() == 1);
  CHECK(ext.answers[0].warnings == std::vector<std::string>{"fedmetrics/cluster: no member cluster is named 'nope'"});
}

TEST_CASE("Aggregator: cluster requirements in metricLabelSelector choose members for custom and external metrics",
          "[aggregator]") {
  World w;
  auto m1 = w.add("member1", custom_capabilities({"pods/http_requests"}, {"queue_depth"}));
  auto m2 = w.add("member2", custom_capabilities({"pods/http_requests"}, {"queue_depth"}));
  m1->external = std::vector{external_value({{"queue", "a"}}, "1")};
  m2->external = std::vector{external_value({{"queue", "b"}}, "2")};
  auto agg = w.aggregator();

  Received<ExternalMetricsAnswer> ext;
  ext.ask(w.loop, agg->external_metrics(
                      ExternalMetricsQuery{"default", "queue_depth", selector("fedmetrics/cluster=member2,queue")}));
  CHECK(m1->external_calls.empty());
  REQUIRE(m2->external_calls.size() == 1);
  CHECK(m2->external_calls[0].metric_selector.to_string() == "queue");
  REQUIRE(ext.answers.size() == 1);
  const auto& series = items_of(ext.answers[0]);
  REQUIRE(series.size() == 1);
  CHECK(series[0].metric_labels.at("fedmetrics/cluster") == "member2");

  CustomMetricsQuery q;
  q.resource = {"", "pods"};
  q.namespace_name = "default";
  q.name = "*";
  q.metric = "http_requests";
  q.label_selector = selector("app=web");
  q.metric_selector = selector("fedmetrics/cluster=member1");
  Received<CustomMetricsAnswer> custom;
  custom.ask(w.loop, agg->custom_metrics(q));
  REQUIRE(m1->custom_calls.size() == 1);
  CHECK(m2->custom_calls.empty());
  CHECK(m1->custom_calls[0].label_selector.to_string() == "app=web");
  CHECK(m1->custom_calls[0].metric_selector.empty());
  CHECK(custom.answers.size() == 1);
}

TEST_CASE("Aggregator: a get by name asks for the one name with a field selector", "[aggregator]") {
  World w;
  auto m1 = w.add("member1");
  auto m2 = w.add("member2");
  m2->pod_metrics_answer = std::vector{pod("default", "web-0")};
  auto agg = w.aggregator();
  auto q = pods_in("default", "app=web");
  q.name = "web-0";
  Received<PodMetricsAnswer> got;
  got.ask(w.loop, agg->pod_metrics(q));
  REQUIRE(m1->pod_calls.size() == 1);
  CHECK(m1->pod_calls[0].fields == "metadata.name=web-0");
  CHECK(m1->pod_calls[0].labels.empty());
  REQUIRE(got.answers.size() == 1);
  const auto& items = items_of(got.answers[0]);
  REQUIRE(items.size() == 1);
  CHECK(items[0].metadata.annotations.at(std::string(kQueryFromClusterAnnotation)) == "member2");
}

TEST_CASE("Aggregator: only members whose capabilities serve the query are asked", "[aggregator]") {
  World w;
  auto unknown = w.add("unknown", nullptr);
  auto no_metrics_server = w.add("plain", std::make_shared<MemberCapabilities>());
  auto knows = w.add("knows", custom_capabilities({"deployments.apps/rps"}));
  knows->custom = std::vector{metric_value("Deployment", "default", "web", "5")};
  auto agg = w.aggregator();

  Received<PodMetricsAnswer> pods;
  pods.ask(w.loop, agg->pod_metrics(pods_in("default")));
  CHECK(unknown->pod_calls.size() == 1);  // capabilities unknown: asked anyway
  CHECK(no_metrics_server->pod_calls.empty());

  CustomMetricsQuery q;
  q.resource = {"apps", "deployments"};
  q.namespace_name = "default";
  q.name = "web";
  q.metric = "rps";
  Received<CustomMetricsAnswer> custom;
  custom.ask(w.loop, agg->custom_metrics(q));
  CHECK(unknown->custom_calls.empty());
  CHECK(no_metrics_server->custom_calls.empty());
  CHECK(knows->custom_calls.size() == 1);
  REQUIRE(custom.answers.size() == 1);
  CHECK(items_of(custom.answers[0]).size() == 1);
  // The undiscovered member may have it too: its absence is a warning, not silence.
  REQUIRE(custom.answers[0].warnings.size() == 1);
  CHECK(custom.answers[0].warnings[0] ==
        "unknown: left out: its metrics discovery has not succeeded yet, so which metrics it has is unknown");
  CHECK(custom.answers[0].missing_members == std::vector<std::string>{"unknown"});

  q.metric = "unknown_metric";
  Received<CustomMetricsAnswer> not_yet;
  not_yet.ask(w.loop, agg->custom_metrics(q));
  CHECK(knows->custom_calls.size() == 1);  // nobody asked
  REQUIRE(not_yet.answers.size() == 1);
  // No discovered member has it, but the undiscovered one might: 503, not 404.
  CHECK(status_of(not_yet.answers[0]).code == 503);
  CHECK(status_of(not_yet.answers[0]).message.find("could not be asked: unknown: left out: its metrics discovery") !=
        std::string::npos);

  unknown->set_capabilities(std::make_shared<MemberCapabilities>());  // discovered: it has no custom metrics
  Received<CustomMetricsAnswer> missing;
  missing.ask(w.loop, agg->custom_metrics(q));
  REQUIRE(missing.answers.size() == 1);
  CHECK(status_of(missing.answers[0]).code == 404);
  CHECK(status_of(missing.answers[0]).message ==
        "the server could not find the metric unknown_metric for "
        "deployments.apps web");
}

TEST_CASE("Aggregator: an undiscovered member chosen for external metrics is a warning, and alone a 503",
          "[aggregator]") {
  World w;
  auto unknown = w.add("unknown", nullptr);
  auto knows = w.add("knows", custom_capabilities({}, {"queue_depth"}));
  knows->external = std::vector{external_value({{"queue", "a"}}, "3")};
  auto agg = w.aggregator();

  Received<ExternalMetricsAnswer> both;
  both.ask(w.loop, agg->external_metrics(ExternalMetricsQuery{"default", "queue_depth", {}}));
  REQUIRE(both.answers.size() == 1);
  CHECK(items_of(both.answers[0]).size() == 1);
  REQUIRE(both.answers[0].warnings.size() == 1);
  CHECK(both.answers[0].warnings[0].rfind("unknown: ", 0) == 0);
  CHECK(unknown->external_calls.empty());

  // Choosing the undiscovered member alone: it is the only one asked for, and it cannot be.
  Received<ExternalMetricsAnswer> alone;
  alone.ask(w.loop, agg->external_metrics(
                        ExternalMetricsQuery{"default", "queue_depth", selector("fedmetrics/cluster=unknown")}));
  REQUIRE(alone.answers.size() == 1);
  CHECK(status_of(alone.answers[0]).code == 503);
  CHECK(status_of(alone.answers[0]).message.find("unknown: left out: its metrics discovery") != std::string::npos);

  // Choosing the discovered one: no warning about the other.
  Received<ExternalMetricsAnswer> chosen;
  chosen.ask(w.loop, agg->external_metrics(
                         ExternalMetricsQuery{"default", "queue_depth", selector("fedmetrics/cluster=knows")}));
  REQUIRE(chosen.answers.size() == 1);
  CHECK(chosen.answers[0].warnings.empty());
}

TEST_CASE("Aggregator: with no member at all, metrics.k8s.io answers 503", "[aggregator]") {
  World w;
  auto agg = w.aggregator();
  Received<PodMetricsAnswer> got;
  got.ask(w.loop, agg->pod_metrics(pods_in("")));
  REQUIRE(got.answers.size() == 1);
  CHECK(status_of(got.answers[0]).code == 503);
}

TEST_CASE("Aggregator: partial failure is a warning per failed member, counted and reported to the hook",
          "[aggregator]") {
  World w;
  auto m1 = w.add("member1");
  auto m2 = w.add("member2");
  auto m3 = w.add("member3");
  m1->pod_metrics_answer = std::vector{pod("default", "web-0")};
  m2->pod_metrics_answer = error(MemberError::Kind::Timeout, "no answer within 3s");
  m3->pod_metrics_answer = error(MemberError::Kind::Refused, "connection refused");
  std::vector<std::string> reported;
  AggregatorOptions options;
  options.on_member_error = [&](std::string_view member, const MemberError& e) {
    reported.push_back(std::string(member) + "/" + std::string(to_string(e.kind)));
  };
  auto agg = w.aggregator(options);
  Received<PodMetricsAnswer> got;
  got.ask(w.loop, agg->pod_metrics(pods_in("default")));
  REQUIRE(got.answers.size() == 1);
  CHECK(items_of(got.answers[0]).size() == 1);
  CHECK(got.answers[0].warnings ==
        std::vector<std::string>{"member2: timeout: no answer within 3s", "member3: refused: connection refused"});
  CHECK(reported == std::vector<std::string>{"member2/timeout", "member3/refused"});
  const AggregatorStats stats = agg->stats();
  CHECK(stats.member_calls == 3);
  CHECK(stats.member_errors == 2);
  CHECK(stats.member_errors_by_cluster ==
        std::map<std::string, std::uint64_t, std::less<>>{{"member2", 1}, {"member3", 1}});

  m1->pod_metrics_answer = error(MemberError::Kind::Tls, "bad certificate");
  Received<PodMetricsAnswer> all_failed;
  all_failed.ask(w.loop, agg->pod_metrics(pods_in("default")));
  REQUIRE(all_failed.answers.size() == 1);
  CHECK(status_of(all_failed.answers[0]).code == 503);
}

TEST_CASE("Aggregator: identical queries in flight together share one fan-out", "[aggregator]") {
  World w;
  auto m1 = w.add("member1");
  auto m2 = w.add("member2");
  m1->deferred = m2->deferred = true;
  m1->pod_metrics_answer = std::vector{pod("default", "a")};
  m2->pod_metrics_answer = std::vector{pod("default", "b")};
  auto agg = w.aggregator();

  Received<PodMetricsAnswer> first;
  Received<PodMetricsAnswer> second;
  Received<PodMetricsAnswer> different;
  first.ask(w.loop, agg->pod_metrics(pods_in("default", "b=1,a=1")));
  second.ask(w.loop, agg->pod_metrics(pods_in("default", "a=1, b=1")));  // same query, other spelling
  different.ask(w.loop, agg->pod_metrics(pods_in("kube-system", "a=1,b=1")));
  CHECK(m1->pod_calls.size() == 2);  // one per distinct query
  CHECK(m2->pod_calls.size() == 2);
  CHECK(agg->stats().coalesced == 1);
  CHECK(agg->stats().fan_outs == 2);

  w.release(*m1);
  w.release(*m2);
  REQUIRE(first.answers.size() == 1);
  REQUIRE(second.answers.size() == 1);
  REQUIRE(different.answers.size() == 1);
  CHECK(items_of(first.answers[0]).size() == 2);
  CHECK(items_of(second.answers[0]).size() == 2);
  // Not a copy each: one answer object, so that its encoding is made once.
  CHECK(first.shared[0] == second.shared[0]);
  CHECK(first.shared[0] != different.shared[0]);
  int encoded = 0;
  auto encode = [&] {
    ++encoded;
    return std::string("bytes");
  };
  CHECK(*first.shared[0]->encodings->get("pods", encode) == "bytes");
  CHECK(second.shared[0]->encodings->get("pods", encode) == first.shared[0]->encodings->get("pods", encode));
  CHECK(encoded == 1);

  // Finished: the next identical query fans out again (no cache configured).
  Received<PodMetricsAnswer> later;
  later.ask(w.loop, agg->pod_metrics(pods_in("default", "a=1,b=1")));
  CHECK(m1->pod_calls.size() == 3);
  w.release(*m1);
  w.release(*m2);
  CHECK(later.answers.size() == 1);
}

TEST_CASE("Aggregator: the result cache serves repeats within cache_ttl, measured on the injected clock",
          "[aggregator]") {
  World w;
  auto m1 = w.add("member1");
  m1->pod_metrics_answer = std::vector{pod("default", "a")};
  auto agg = w.aggregator(options_with(3s, 5s));

  Received<PodMetricsAnswer> got;
  got.ask(w.loop, agg->pod_metrics(pods_in("default")));
  CHECK(m1->pod_calls.size() == 1);

  m1->pod_metrics_answer = std::vector{pod("default", "a"), pod("default", "b")};
  w.clock.now += 4s;
  got.ask(w.loop, agg->pod_metrics(pods_in("default")));
  CHECK(m1->pod_calls.size() == 1);  // from the cache
  REQUIRE(got.answers.size() == 2);
  CHECK(items_of(got.answers[1]).size() == 1);
  CHECK(got.shared[1] == got.shared[0]);  // the cached answer itself, encodings included
  CHECK(agg->stats().cache_hits == 1);

  w.clock.now += 1s;  // 5 s after the answer: expired
  got.ask(w.loop, agg->pod_metrics(pods_in("default")));
  CHECK(m1->pod_calls.size() == 2);
  REQUIRE(got.answers.size() == 3);
  CHECK(items_of(got.answers[2]).size() == 2);

  // Failures are not cached: the next query asks again.
  m1->pod_metrics_answer = error(MemberError::Kind::Refused, "connection refused");
  got.ask(w.loop, agg->pod_metrics(pods_in("other")));
  got.ask(w.loop, agg->pod_metrics(pods_in("other")));
  CHECK(m1->pod_calls.size() == 4);
}

TEST_CASE("Aggregator: a partial answer (some member failed) is not cached", "[aggregator]") {
  World w;
  auto m1 = w.add("member1");
  auto m2 = w.add("member2");
  m1->pod_metrics_answer = std::vector{pod("default", "a")};
  m2->pod_metrics_answer = error(MemberError::Kind::Timeout, "deadline exceeded");
  auto agg = w.aggregator(options_with(3s, 5s));
  Received<PodMetricsAnswer> got;
  got.ask(w.loop, agg->pod_metrics(pods_in("default")));
  REQUIRE(got.answers.size() == 1);
  CHECK(got.answers[0].warnings.size() == 1);
  m2->pod_metrics_answer = std::vector{pod("default", "b")};  // member2 recovers
  got.ask(w.loop, agg->pod_metrics(pods_in("default")));
  REQUIRE(got.answers.size() == 2);
  CHECK(items_of(got.answers[1]).size() == 2);  // asked again, not served the partial answer
  CHECK(agg->stats().cache_hits == 0);
}

TEST_CASE("Aggregator: without cache_ttl nothing is cached", "[aggregator]") {
  World w;
  auto m1 = w.add("member1");
  m1->pod_metrics_answer = std::vector{pod("default", "a")};
  auto agg = w.aggregator();
  Received<PodMetricsAnswer> got;
  got.ask(w.loop, agg->pod_metrics(pods_in("default")));
  got.ask(w.loop, agg->pod_metrics(pods_in("default")));
  CHECK(m1->pod_calls.size() == 2);
  CHECK(got.answers.size() == 2);
}

namespace {

// An io_context run by two threads, each query on a strand of its own, as
// the server's workers and the autoscaler ask the one Aggregator.
struct Threads {
  boost::asio::io_context io;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work = boost::asio::make_work_guard(io);
  std::vector<std::thread> threads;
  Threads() {
    for (int i = 0; i < 2; ++i) threads.emplace_back([this] { io.run(); });
  }
  ~Threads() {
    work.reset();
    for (auto& t : threads) t.join();
  }
  template <class A>
  void ask(async::Task<SharedAnswer<A>> query, std::function<void(SharedAnswer<A>)> done) {
    boost::asio::co_spawn(boost::asio::make_strand(io), std::move(query),
                          [done = std::move(done)](const std::exception_ptr& e, SharedAnswer<A> a) {
                            if (!e) done(std::move(a));  // else never answered: the test's wait fails
                          });
  }
};

// Waits up to 10 s for `condition`, calling `meanwhile` between looks.
bool wait_for(
    const std::function<bool()>& condition, const std::function<void()>& meanwhile = [] {}) {
  const auto until = std::chrono::steady_clock::now() + 10s;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > until) return false;
    meanwhile();
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

}  // namespace

TEST_CASE("Aggregator: members may answer from other threads, to queries waiting on other strands",
          "[aggregator][threads]") {
  World w;
  auto m1 = w.add("member1");
  auto m2 = w.add("member2");
  m1->deferred = m2->deferred = true;
  m1->pod_metrics_answer = std::vector{pod("default", "a")};
  m2->pod_metrics_answer = std::vector{pod("default", "b")};
  auto agg = w.aggregator();

  std::mutex mutex;
  std::vector<PodMetricsAnswer> answers;
  std::atomic<int> calls{0};
  auto done = [&](SharedAnswer<PodMetricsAnswer> a) {
    std::lock_guard lock(mutex);
    answers.push_back(*a);
    calls.fetch_add(1);
  };
  Threads threads;
  threads.ask<PodMetricsAnswer>(agg->pod_metrics(pods_in("default")), done);
  REQUIRE(wait_for([&] { return m1->pending() == 1 && m2->pending() == 1; }));
  threads.ask<PodMetricsAnswer>(agg->pod_metrics(pods_in("default")), done);  // coalesced onto the same fan-out
  REQUIRE(wait_for([&] { return agg->stats().coalesced == 1; }));

  std::thread t1([&] { m1->release(); });
  std::thread t2([&] { m2->release(); });
  t1.join();
  t2.join();

  REQUIRE(wait_for([&] { return calls.load() == 2; }));
  std::lock_guard lock(mutex);
  REQUIRE(answers.size() == 2);
  for (const auto& a : answers) CHECK(items_of(a).size() == 2);
  CHECK(agg->stats().fan_outs == 1);
  CHECK(agg->has_served());
}

TEST_CASE("Aggregator: a query arriving while another thread completes the fan-out is answered exactly once",
          "[aggregator][threads]") {
  World w;
  auto m1 = w.add("member1");
  m1->deferred = true;
  m1->pod_metrics_answer = std::vector{pod("default", "a")};
  AggregatorOptions options;
  options.cache_ttl = std::chrono::milliseconds(0);
  auto agg = w.aggregator(options);
  std::atomic<int> answered{0};
  auto done = [&](SharedAnswer<PodMetricsAnswer> a) {
    if (std::holds_alternative<std::vector<k8s::PodMetrics>>(a->result)) answered.fetch_add(1);
  };
  Threads threads;
  for (int round = 0; round < 50; ++round) {
    threads.ask<PodMetricsAnswer>(agg->pod_metrics(pods_in("default")), done);
    REQUIRE(wait_for([&] { return m1->pending() == 1; }));
    std::thread member([&] { m1->release(); });
    // Races with the completion on `member`: joins the fan-out or starts a new one.
    threads.ask<PodMetricsAnswer>(agg->pod_metrics(pods_in("default")), done);
    member.join();
    // The new fan-out's call, if one was started, answered too.
    REQUIRE(wait_for([&] { return answered.load() == 2 * (round + 1); }, [&] { m1->release(); }));
  }
  CHECK(answered.load() == 100);
  const auto stats = agg->stats();
  CHECK(stats.fan_outs + stats.coalesced == 100);
}

TEST_CASE("Aggregator: destroying the aggregator while members are still working is safe", "[aggregator]") {
  World w;
  auto m1 = w.add("member1");
  m1->deferred = true;
  m1->pod_metrics_answer = std::vector{pod("default", "a")};
  Received<PodMetricsAnswer> got;
  {
    auto agg = w.aggregator();
    got.ask(w.loop, agg->pod_metrics(pods_in("default")));
  }
  w.release(*m1);
  REQUIRE(got.answers.size() == 1);
  CHECK(items_of(got.answers[0]).size() == 1);
}

TEST_CASE("Aggregator: discovery comes from capabilities and never calls a member", "[aggregator][discovery]") {
  World w;
  auto m1 = w.add("member1", custom_capabilities({"pods/http_requests", "services/rps"}, {"queue_depth"}));
  auto m2 = w.add("member2", custom_capabilities({"pods/http_requests"}, {"backlog", "queue_depth"}));
  w.add("member3", nullptr);
  auto agg = w.aggregator();
  const auto custom = agg->custom_metrics_resources(k8s::CustomMetricsVersion::V1beta2);
  CHECK(custom.group_version == "custom.metrics.k8s.io/v1beta2");
  REQUIRE(custom.resources.size() == 2);
  CHECK(custom.resources[0].name == "pods/http_requests");
  CHECK(custom.resources[1].name == "services/rps");
  const auto external = agg->external_metrics_resources();
  REQUIRE(external.resources.size() == 2);
  CHECK(external.resources[0].name == "backlog");
  CHECK(m1->calls() + m2->calls() == 0);
}

TEST_CASE("Aggregator: has_served turns true after a successful member call or a member's discovery", "[aggregator]") {
  World w;
  auto m1 = w.add("member1", nullptr);
  m1->pod_metrics_answer = error(MemberError::Kind::Refused, "connection refused");
  auto agg = w.aggregator();
  CHECK_FALSE(agg->has_served());
  Received<PodMetricsAnswer> got;
  got.ask(w.loop, agg->pod_metrics(pods_in("default")));
  CHECK_FALSE(agg->has_served());  // a failure is not serving
  m1->pod_metrics_answer = std::vector{pod("default", "a")};
  got.ask(w.loop, agg->pod_metrics(pods_in("default")));
  CHECK(agg->has_served());

  World other;
  other.add("member1");  // capabilities known: discovery answered
  CHECK(other.aggregator()->has_served());
}

TEST_CASE("Aggregator: asks the slowest member first, as measured on the injected clock", "[aggregator]") {
  World w;
  std::vector<std::string> order;
  std::map<std::string, std::shared_ptr<FakeMember>> members;
  for (const char* name : {"fast", "slow", "middle"}) {
    auto m = w.add(name);
    m->deferred = true;
    m->pod_metrics_answer = std::vector{pod("default", std::string(name) + "-pod")};
    m->call_order = &order;
    members[name] = m;
  }
  auto agg = w.aggregator(options_with(3s));
  auto round = [&](std::vector<std::pair<std::string, std::chrono::milliseconds>> answer_times) {
    order.clear();
    Received<PodMetricsAnswer> got;
    const auto started = w.clock.now;
    got.ask(w.loop, agg->pod_metrics(pods_in("default")));
    for (const auto& [name, after] : answer_times) {
      w.clock.now = started + after;
      w.release(*members[name]);
    }
    REQUIRE(got.answers.size() == 1);
    // The answer's items do not depend on the order the members were asked in.
    CHECK(items_of(got.answers[0]).size() == 3);
    return order;
  };
  // Nothing measured yet: the members' own order.
  CHECK(round({{"fast", 1ms}, {"middle", 3ms}, {"slow", 5ms}}) == std::vector<std::string>{"fast", "slow", "middle"});
  // Then slowest first.
  CHECK(round({{"fast", 1ms}, {"middle", 3ms}, {"slow", 5ms}}) == std::vector<std::string>{"slow", "middle", "fast"});
  // A moving average: one quick answer from "slow" does not reorder at once,
  // a sustained change does.
  CHECK(round({{"slow", 1ms}, {"fast", 2ms}, {"middle", 3ms}}) == std::vector<std::string>{"slow", "middle", "fast"});
  for (int i = 0; i < 10; ++i) round({{"slow", 1ms}, {"middle", 3ms}, {"fast", 6ms}});
  CHECK(round({{"slow", 1ms}, {"middle", 3ms}, {"fast", 6ms}}) == std::vector<std::string>{"fast", "middle", "slow"});
}

TEST_CASE("Aggregator: a member the source left out is reported in every answer that misses it, never silently",
          "[aggregator][left_out]") {
  World w;
  auto m1 = w.add("member1", custom_capabilities({"deployments.apps/rps", "pods/rps"}, {"queue_depth"}));
  auto m3 = w.add("member3", custom_capabilities({"deployments.apps/rps", "pods/rps"}, {"queue_depth"}));
  for (const auto& m : {m1, m3}) {
    auto caps = std::make_shared<MemberCapabilities>(*m->capabilities());
    caps->resource_metrics = true;
    m->set_capabilities(caps);
  }
  m1->pod_metrics_answer = std::vector{pod("default", "web-1")};
  m3->pod_metrics_answer = std::vector{pod("default", "web-3")};
  m1->custom = std::vector{metric_value("Deployment", "default", "web", "13333m")};
  m3->custom = std::vector{metric_value("Deployment", "default", "web", "13333m")};
  w.source->left_out = {{"member2", "Cluster NotReady (ClusterNotReachable)"}};
  const std::string warning = "member2: left out: Cluster NotReady (ClusterNotReachable)";
  std::vector<std::string> reported;
  AggregatorOptions options;
  options.on_member_error = [&](std::string_view member, const MemberError&) { reported.emplace_back(member); };
  auto agg = w.aggregator(options);

  // `kubectl top pod`: the pods of the members asked, and the Warning.
  Received<PodMetricsAnswer> list;
  list.ask(w.loop, agg->pod_metrics(pods_in("default")));
  REQUIRE(list.answers.size() == 1);
  CHECK(items_of(list.answers[0]).size() == 2);
  CHECK(list.answers[0].warnings == std::vector<std::string>{warning});
  CHECK(list.answers[0].missing_members == std::vector<std::string>{"member2"});

  // A pod that only member2 runs: 503 naming it, not 404.
  ResourceMetricsQuery get = pods_in("default");
  get.name = "web-2";
  Received<PodMetricsAnswer> by_name;
  by_name.ask(w.loop, agg->pod_metrics(get));
  REQUIRE(by_name.answers.size() == 1);
  CHECK(status_of(by_name.answers[0]).code == 503);
  CHECK_THAT(status_of(by_name.answers[0]).message, Catch::Contains(warning));

  // A Deployment's custom metric, summed over the members asked: kept, with the Warning.
  CustomMetricsQuery object;
  object.resource = {"apps", "deployments"};
  object.namespace_name = "default";
  object.name = "web";
  object.metric = "rps";
  Received<CustomMetricsAnswer> summed;
  summed.ask(w.loop, agg->custom_metrics(object));
  REQUIRE(summed.answers.size() == 1);
  REQUIRE(items_of(summed.answers[0]).size() == 1);
  CHECK(items_of(summed.answers[0])[0].value.to_string() == "26666m");
  CHECK(summed.answers[0].warnings == std::vector<std::string>{warning});
  // What the autoscaler reads: the sum lacks member2's part.
  CHECK(summed.answers[0].missing_members == std::vector<std::string>{"member2"});

  // An external metric only member2 could give: 503 naming it.
  Received<ExternalMetricsAnswer> external;
  external.ask(w.loop, agg->external_metrics(
                           ExternalMetricsQuery{"default", "queue_depth", selector("fedmetrics/cluster=member2")}));
  REQUIRE(external.answers.size() == 1);
  CHECK(status_of(external.answers[0]).code == 503);
  CHECK_THAT(status_of(external.answers[0]).message, Catch::Contains(warning));
  CHECK(external.answers[0].warnings.empty());  // no "no member cluster is named 'member2'": it is known

  // Excluded on purpose by the client: no Warning.
  Received<PodMetricsAnswer> excluded;
  excluded.ask(w.loop, agg->pod_metrics(pods_in("default", "fedmetrics/cluster!=member2")));
  REQUIRE(excluded.answers.size() == 1);
  CHECK(items_of(excluded.answers[0]).size() == 2);
  CHECK(excluded.answers[0].warnings.empty());
  CHECK(excluded.answers[0].missing_members.empty());

  // Not asked, so neither counted nor logged as a member failure.
  CHECK(reported.empty());
  CHECK(agg->stats().member_errors == 0);
}

TEST_CASE("Aggregator: a request every member refuses with the same client error is answered with it, not logged",
          "[aggregator][client_error]") {
  World w;
  auto m1 = w.add("member1");
  auto m2 = w.add("member2");
  MemberError too_large{MemberError::Kind::HttpStatus, "HTTP 431", 431, std::nullopt};
  m1->pod_metrics_answer = too_large;
  m2->pod_metrics_answer = too_large;
  std::vector<std::string> reported;
  AggregatorOptions options;
  options.on_member_error = [&](std::string_view member, const MemberError&) { reported.emplace_back(member); };
  auto agg = w.aggregator(options);

  Received<PodMetricsAnswer> refused;
  refused.ask(w.loop, agg->pod_metrics(pods_in("default")));
  REQUIRE(refused.answers.size() == 1);
  CHECK(status_of(refused.answers[0]).code == 431);
  CHECK(refused.answers[0].warnings.empty());
  CHECK(reported.empty());
  CHECK(agg->stats().member_errors == 0);

  // One member refusing alone is that member's failure: reported and counted.
  m2->pod_metrics_answer = std::vector{pod("default", "web-0")};
  Received<PodMetricsAnswer> partial;
  partial.ask(w.loop, agg->pod_metrics(pods_in("default", "app=other")));
  REQUIRE(partial.answers.size() == 1);
  CHECK(items_of(partial.answers[0]).size() == 1);
  CHECK(reported == std::vector<std::string>{"member1"});
  CHECK(agg->stats().member_errors == 1);
}

TEST_CASE("Aggregator: the result cache holds at most cache_max_entries answers, dropping the oldest first",
          "[aggregator]") {
  World w;
  auto m1 = w.add("member1");
  m1->pod_metrics_answer = std::vector{pod("default", "a")};
  auto options = options_with(3s, 10s);
  options.cache_max_entries = 2;
  auto agg = w.aggregator(options);
  Received<PodMetricsAnswer> got;

  got.ask(w.loop, agg->pod_metrics(pods_in("a")));
  w.clock.now += 1s;
  got.ask(w.loop, agg->pod_metrics(pods_in("b")));
  w.clock.now += 1s;
  got.ask(w.loop, agg->pod_metrics(pods_in("c")));  // full: "a", the oldest, makes room
  CHECK(m1->pod_calls.size() == 3);

  got.ask(w.loop, agg->pod_metrics(pods_in("b")));
  got.ask(w.loop, agg->pod_metrics(pods_in("c")));
  CHECK(m1->pod_calls.size() == 3);  // both still cached
  CHECK(agg->stats().cache_hits == 2);

  got.ask(w.loop, agg->pod_metrics(pods_in("a")));  // evicted: asked again, and now "b" makes room
  CHECK(m1->pod_calls.size() == 4);
  got.ask(w.loop, agg->pod_metrics(pods_in("c")));
  CHECK(m1->pod_calls.size() == 4);
  got.ask(w.loop, agg->pod_metrics(pods_in("b")));
  CHECK(m1->pod_calls.size() == 5);  // "c" had made room for it
  got.ask(w.loop, agg->pod_metrics(pods_in("a")));
  CHECK(m1->pod_calls.size() == 5);
}
