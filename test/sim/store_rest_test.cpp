// A watch served over the simulated stores' generic REST (sim/store_rest.hpp):
// its answer is a stream the store feeds, which ends at the watch's
// timeoutSeconds and leaves the store as soon as the server is done with it.
#include <catch2/catch.hpp>

#include <chrono>

#include <nlohmann/json.hpp>

#include "fedmetrics/k8s/url.hpp"
#include "fedmetrics/sim/object_store.hpp"
#include "sim/store_rest.hpp"

using namespace fedmetrics;
using nlohmann::json;

namespace {

sim::ResourceType widget_type() {
  sim::ResourceType t;
  t.group = "example.io";
  t.version = "v1";
  t.resource = "widgets";
  t.kind = "Widget";
  return t;
}

transport::HttpResponse get(sim::ObjectStore& store, const sim::ResourceType& type, const std::string& target) {
  transport::HttpRequest request{"GET", target};
  auto parsed = k8s::parse_request_target(target);
  REQUIRE(parsed);
  return sim::detail::serve_stored(store, type, {"default", "", ""}, request, *parsed, {});
}

}  // namespace

TEST_CASE("sim store REST: a watch ends at its timeoutSeconds and leaves the store when the server is done with it",
          "[sim]") {
  sim::ObjectStore store([] { return k8s::Timestamp(); });
  store.register_type(widget_type());
  const auto& type = *store.find_type("example.io", "v1", "widgets");
  store.create(type, "default", json{{"metadata", {{"name", "a"}}}});

  const auto before = std::chrono::steady_clock::now();
  auto answer = get(store, type, "/apis/example.io/v1/namespaces/default/widgets?watch=true&timeoutSeconds=60");
  REQUIRE(answer.stream);
  CHECK(store.watch_count() == 1);
  auto pending = answer.stream->take();
  REQUIRE(pending.pieces.size() == 1);  // the current object, ADDED
  CHECK(json::parse(pending.pieces[0])["type"] == "ADDED");
  CHECK_FALSE(pending.closed);
  REQUIRE(pending.close_at);  // the server ends the body then
  CHECK(*pending.close_at >= before + std::chrono::seconds(60));
  CHECK(*pending.close_at <= std::chrono::steady_clock::now() + std::chrono::seconds(60));

  SECTION("the client leaves, or the server ends the body: the watch goes at once, not at its next event") {
    answer.stream->abandon();
    CHECK(store.watch_count() == 0);
  }
  SECTION("until then it follows the store") {
    store.create(type, "default", json{{"metadata", {{"name", "b"}}}});
    auto next = answer.stream->take();
    REQUIRE(next.pieces.size() == 1);
    CHECK(json::parse(next.pieces[0])["object"]["metadata"]["name"] == "b");
    CHECK(store.watch_count() == 1);
    answer.stream->abandon();
    CHECK(store.watch_count() == 0);
  }
}

TEST_CASE("sim store REST: a watch from a resourceVersion too old is an ERROR event and a closed stream", "[sim]") {
  sim::ObjectStore store([] { return k8s::Timestamp(); }, 1);
  store.register_type(widget_type());
  const auto& type = *store.find_type("example.io", "v1", "widgets");
  for (const char* name : {"a", "b", "c"}) store.create(type, "default", json{{"metadata", {{"name", name}}}});
  auto answer = get(store, type, "/apis/example.io/v1/namespaces/default/widgets?watch=true&resourceVersion=1");
  REQUIRE(answer.stream);
  auto pending = answer.stream->take();
  REQUIRE(pending.pieces.size() == 1);
  CHECK(json::parse(pending.pieces[0])["type"] == "ERROR");
  CHECK(pending.closed);
  CHECK(store.watch_count() == 0);
}
