// The members' pods as the loop reads them: one reflector per member and
// namespace on a fake server and fake time. A watch the member ends, or that
// expired (410 Gone), is caught up without losing or repeating a pod; a
// namespace over the cache's bound is an error that says so; keep() stops
// the watches no longer read.
#include <catch2/catch.hpp>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "fedmetrics/kubeclient/watched_member_pods.hpp"
#include "support/fake_list_watch.hpp"
#include "support/fake_member_cluster.hpp"
#include "support/run_loop.hpp"

namespace fedmetrics::kubeclient {
namespace {

using namespace std::chrono_literals;
using aggregator::testing::FakeMember;
using aggregator::testing::selector;
using testing::FakeListWatch;

std::string pod(const std::string& name, const std::string& app, const std::string& rv) {
  return R"({"metadata":{"name":")" + name + R"(","namespace":"shop","resourceVersion":")" + rv +
         R"(","labels":{"app":")" + app +
         R"("},"annotations":{"note":"dropped"}},"spec":{"containers":[{"name":"c",)"
         R"("resources":{"requests":{"cpu":"100m"}}}]},"status":{"phase":"Running"}})";
}

kube::HttpResult list_of(const std::string& rv, const std::vector<std::string>& pods) {
  std::string items;
  for (const auto& p : pods) items += (items.empty() ? "" : ",") + p;
  return kube::HttpReply{
      200, R"({"kind":"PodList","metadata":{"resourceVersion":")" + rv + R"("},"items":[)" + items + "]}", ""};
}

std::string event(const std::string& type, const std::string& object) {
  return R"({"type":")" + type + R"(","object":)" + object + "}";
}

const std::string kGone = R"x({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure",)x"
                          R"x("message":"too old resource version: 12 (18)","reason":"Expired","code":410}})x";

// A read whose end the test watches for.
async::Task<void> read_into(WatchedMemberPods& pods, const FakeMember& member, k8s::LabelSelector labels,
                            std::optional<k8s::Expected<std::vector<k8s::Pod>>>& out) {
  const std::string ns = "shop";  // the port takes it by reference: it must outlive the read
  auto reading = pods.pods(member, ns, labels, {});
  out = co_await std::move(reading);
}

struct Fixture {
  testing::RunLoop loop;
  std::map<std::string, std::shared_ptr<FakeListWatch>> servers;
  std::unique_ptr<WatchedMemberPods> pods;
  FakeMember member1{"member1"};

  explicit Fixture(std::size_t max_pods = 100) {
    WatchedMemberPodsOptions options;
    options.max_pods = max_pods;
    options.now = [clock = loop.clock] { return clock->now(); };
    options.sleep_for = [clock = loop.clock](std::chrono::steady_clock::duration d) { return clock->sleep_for(d); };
    pods = std::make_unique<WatchedMemberPods>(
        loop.executor(),
        [this](const std::string& member) -> std::shared_ptr<kube::ListWatch> {
          auto& s = servers[member];
          if (!s) s = std::make_shared<FakeListWatch>();
          return s;
        },
        options);
    servers["member1"] = std::make_shared<FakeListWatch>();
  }
  ~Fixture() {
    pods->keep({});
    pods->keep({});  // every watch cancelled (those read since the first keep too), then ended on the loop
    loop.poll();
    // And each first list's timer (on the fake clock) run out, so that no coroutine is left waiting on it.
    loop.advance(std::chrono::seconds(10));
  }
  FakeListWatch& server() { return *servers["member1"]; }

  // The names of the pods of app=`app` in shop on member1, or the error.
  std::vector<std::string> names(const std::string& app, std::string* error = nullptr) {
    auto result = loop.run(pods->pods(member1, "shop", selector("app=" + app), {}));
    std::vector<std::string> out;
    if (!result) {
      if (error) *error = result.error().message;
      return out;
    }
    for (const auto& p : *result) {
      CHECK(p.metadata.annotations.empty());  // what the autoscaler does not read is not kept
      out.push_back(p.metadata.name);
    }
    return out;
  }
};

}  // namespace

TEST_CASE("WatchedMemberPods: a watch gap resyncs without losing or duplicating pods") {
  Fixture f;
  auto& s = f.server();
  s.lists.push_back(list_of("10", {pod("web-1", "web", "3"), pod("web-2", "web", "4"), pod("api-1", "api", "5")}));
  // The member ends the first watch (its timeoutSeconds): resumed from the last resourceVersion.
  s.watches.push_back({{event("ADDED", pod("web-3", "web", "11")), event("MODIFIED", pod("web-1", "web", "12"))},
                       kube::HttpReply{200, "", ""}});
  // The second one expires: web-2 was deleted and web-4 created meanwhile, only a list says so.
  s.watches.push_back({{kGone}, std::nullopt});
  s.lists.push_back(list_of("20", {pod("web-1", "web", "12"), pod("web-3", "web", "11"), pod("web-4", "web", "19"),
                                   pod("api-1", "api", "5")}));
  // The first read starts the watch and waits for its first list.
  CHECK(f.names("web") == std::vector<std::string>{"web-1", "web-2", "web-3"});
  CHECK(f.names("api") == std::vector<std::string>{"api-1"});
  REQUIRE(s.requests.size() >= 3);
  CHECK(s.requests[0] == "list /api/v1/namespaces/shop/pods");
  CHECK(s.requests[1].find("resourceVersion=10") != std::string::npos);
  CHECK(s.requests[2].find("resourceVersion=12") != std::string::npos);  // resumed, not listed again
  // The 410: a list after a short pause, then a watch from its resourceVersion.
  f.loop.advance(1s);
  CHECK(s.count("list") == 2);
  CHECK(s.requests.back().find("resourceVersion=20") != std::string::npos);
  CHECK(f.names("web") == std::vector<std::string>{"web-1", "web-3", "web-4"});
  const auto stats = f.pods->stats();
  CHECK(stats.watches == 1);
  CHECK(stats.pods == 4);
  CHECK(stats.requests.expired == 1);
  CHECK(stats.requests.lists == 2);
}

TEST_CASE("WatchedMemberPods: reads share one watch per member and namespace") {
  Fixture f;
  f.server().lists.push_back(list_of("10", {pod("web-1", "web", "3"), pod("api-1", "api", "5")}));
  CHECK(f.names("web") == std::vector<std::string>{"web-1"});
  for (int i = 0; i < 5; ++i) CHECK(f.names("api") == std::vector<std::string>{"api-1"});
  CHECK(f.server().count("list") == 1);
  CHECK(f.server().count("watch") == 1);
  // Another namespace is a watch of its own.
  f.server().lists.push_back(list_of("11", {}));
  auto other = f.loop.run(f.pods->pods(f.member1, "billing", selector("app=web"), {}));
  REQUIRE(other);
  CHECK(other->empty());
  CHECK(f.server().requests[2] == "list /api/v1/namespaces/billing/pods");
  CHECK(f.pods->stats().watches == 2);
  // keep() stops the watches no longer read; one read since the last keep()
  // stays until the next (the sync that read it may not be counted yet).
  f.pods->keep({{"member1", "shop"}});
  f.loop.poll();
  CHECK(f.pods->stats().watches == 2);
  f.pods->keep({{"member1", "shop"}});
  f.loop.poll();
  CHECK(f.pods->stats().watches == 1);
  CHECK(f.pods->stats().stopped == 1);
  CHECK(f.server().count("watch") == 2);  // billing's ended, shop's still open
  CHECK(f.names("web") == std::vector<std::string>{"web-1"});
}

TEST_CASE("WatchedMemberPods: a namespace over the bound is an error that says so") {
  Fixture f(2);
  f.server().lists.push_back(
      list_of("10", {pod("web-1", "web", "3"), pod("web-2", "web", "4"), pod("web-3", "web", "5")}));
  std::optional<k8s::Expected<std::vector<k8s::Pod>>> first;
  f.loop.spawn(read_into(*f.pods, f.member1, selector("app=web"), first));
  f.loop.poll();
  CHECK_FALSE(first.has_value());  // waits for a first list that does not come
  std::string error;
  f.loop.advance(3s);  // the first-list timeout: that read ends, and later reads do not wait
  REQUIRE(first.has_value());
  CHECK_FALSE(first->ok());
  CHECK(f.names("web", &error).empty());
  CHECK(error == "pods of namespace shop: 3 pods, more than the 2 the autoscaler keeps of one member and namespace");
  // Under the bound again: listed, and read.
  f.server().lists.push_back(list_of("11", {pod("web-1", "web", "3"), pod("web-2", "web", "4")}));
  f.loop.advance(30s);  // the list's backoff
  CHECK(f.names("web") == std::vector<std::string>{"web-1", "web-2"});
}

}  // namespace fedmetrics::kubeclient
