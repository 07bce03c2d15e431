// The reflector's schedule on a fake server and fake time: the backoff of
// failed lists, the resumption of a watch the server ended, the relist
// after 410 Gone, and its stop.
#include <catch2/catch.hpp>

#include <string>

#include "fedmetrics/kube/reflector.hpp"
#include "server/run_task.hpp"
#include "support/fake_clock.hpp"
#include "support/fake_list_watch.hpp"

namespace fedmetrics::kube {
namespace {

using namespace std::chrono_literals;
using fedmetrics::server::testing::Stepped;
using fedmetrics::testing::FakeClock;
using fedmetrics::testing::FakeListWatch;

HttpResult list_of(const std::string& resource_version, const std::vector<std::string>& names) {
  std::string items;
  for (const auto& name : names)
    items += std::string(items.empty() ? "" : ",") + R"({"metadata":{"name":")" + name + R"(","namespace":"a"}})";
  return HttpReply{
      200,
      R"({"kind":"LeaseList","metadata":{"resourceVersion":")" + resource_version + R"("},"items":[)" + items + "]}",
      ""};
}

std::string added(const std::string& name, const std::string& resource_version) {
  return R"({"type":"ADDED","object":{"metadata":{"name":")" + name + R"(","namespace":"a","resourceVersion":")" +
         resource_version + R"("}}})";
}

struct Fixture {
  std::shared_ptr<FakeListWatch> server = std::make_shared<FakeListWatch>();
  FakeClock clock;
  int changes = 0;
  std::unique_ptr<Reflector> reflector;

  Fixture() {
    ReflectorOptions options;
    options.what = "test leases";
    options.collection = ResourcePath::in_group("coordination.k8s.io", "v1", "leases", "a");
    options.min_backoff = 100ms;
    options.max_backoff = 400ms;
    options.now = [this] { return clock.now(); };
    options.sleep_for = [this](std::chrono::steady_clock::duration d) { return clock.sleep_for(d); };
    reflector = std::make_unique<Reflector>(server, options, [this](const ReflectorChange&) { ++changes; });
  }
  // Moves time to the next sleep's end: how long that sleep was.
  std::chrono::milliseconds next_pause(Stepped<bool>& run) {
    const auto before = clock.now();
    REQUIRE(clock.advance_to_next());
    run.step();
    return std::chrono::duration_cast<std::chrono::milliseconds>(clock.now() - before);
  }
};

// The reflector's run, to its cancellation (Stepped wants a value).
async::Task<bool> run_of(Reflector& reflector) {
  auto running = reflector.run();
  co_await std::move(running);
  co_return true;
}

}  // namespace

TEST_CASE("Reflector: failed lists back off doubling to the maximum, then the list and a watch", "[kube][reflector]") {
  Fixture f;
  for (int i = 0; i < 5; ++i) f.server->lists.push_back(k8s::Error{k8s::ErrorKind::Refused, "connection refused"});
  f.server->lists.push_back(list_of("7", {"x"}));
  Stepped<bool> run(run_of(*f.reflector));
  run.step();
  CHECK(f.server->count("list") == 1);
  CHECK_FALSE(f.reflector->synced());
  CHECK(f.next_pause(run) == 100ms);
  CHECK(f.next_pause(run) == 200ms);
  CHECK(f.next_pause(run) == 400ms);
  CHECK(f.next_pause(run) == 400ms);  // the maximum
  CHECK(f.next_pause(run) == 400ms);
  CHECK(f.server->count("list") == 6);
  CHECK(f.reflector->synced());  // the sixth list answered: the objects, then a watch from its resourceVersion
  CHECK(f.reflector->items().size() == 1);
  CHECK(f.changes == 1);
  REQUIRE(f.server->count("watch") == 1);
  CHECK_THAT(f.server->requests.back(), Catch::Contains("resourceVersion=7"));
  CHECK(f.reflector->stats().failures == 5);
  CHECK_FALSE(f.clock.advance_to_next());  // watching, not waiting
  run.cancel();
  run.step();
  CHECK(run.ended_by_cancellation());
}

TEST_CASE("Reflector: a watch the server ended is resumed, one that expired is followed by a list",
          "[kube][reflector]") {
  Fixture f;
  f.server->lists.push_back(list_of("7", {"x"}));
  f.server->lists.push_back(list_of("20", {"x", "y", "z"}));
  f.server->watches.push_back({{added("y", "8")}, HttpReply{200, "", ""}});  // the server's timeoutSeconds
  f.server->watches.push_back({{}, HttpReply{410, R"({"kind":"Status","code":410,"reason":"Expired"})", ""}});
  Stepped<bool> run(run_of(*f.reflector));
  run.step();
  // Listed, watched from 7, resumed from 8 at once (no pause), then 410.
  REQUIRE(f.server->requests.size() == 3);
  CHECK_THAT(f.server->requests[1], Catch::Contains("resourceVersion=7"));
  CHECK_THAT(f.server->requests[2], Catch::Contains("resourceVersion=8"));
  CHECK(f.reflector->items().size() == 2);
  // A list after the short pause, not at once, and not counted as a failure.
  CHECK(f.server->count("list") == 1);
  CHECK(f.next_pause(run) == 100ms);
  CHECK(f.server->count("list") == 2);
  CHECK(f.reflector->items().size() == 3);
  CHECK_THAT(f.server->requests.back(), Catch::Contains("resourceVersion=20"));
  CHECK(f.reflector->stats().expired == 1);
  CHECK(f.reflector->stats().failures == 0);
  CHECK(f.changes == 3);  // the first list, the ADDED event, the relist
  run.cancel();
  run.step();
  CHECK(run.ended_by_cancellation());
}

TEST_CASE("Reflector: stopped while it backs off or watches, it ends at once and reports nothing more",
          "[kube][reflector]") {
  SECTION("backing off") {
    Fixture f;
    Stepped<bool> run(run_of(*f.reflector));
    run.step();
    REQUIRE(f.clock.sleepers() == 1);  // the list failed: waiting for the retry
    run.cancel();
    run.step();
    CHECK(run.ended_by_cancellation());
    CHECK(f.server->count("list") == 1);
  }
  SECTION("watching") {
    Fixture f;
    f.server->lists.push_back(list_of("7", {"x"}));
    Stepped<bool> run(run_of(*f.reflector));
    run.step();
    REQUIRE(f.server->count("watch") == 1);  // open until cancelled
    run.cancel();
    run.step();
    CHECK(run.ended_by_cancellation());
    CHECK(f.changes == 1);
  }
}

}  // namespace fedmetrics::kube
