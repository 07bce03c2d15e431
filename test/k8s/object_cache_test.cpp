#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "fedmetrics/k8s/object_cache.hpp"

using namespace fedmetrics::k8s;
using nlohmann::json;
using Kind = ObjectCache::EventOutcome::Kind;

namespace {

json object(const std::string& ns, const std::string& name, const std::string& rv, int value = 0) {
  json meta = {{"name", name}, {"resourceVersion", rv}};
  if (!ns.empty()) meta["namespace"] = ns;
  return {{"metadata", meta}, {"spec", {{"value", value}}}};
}

std::string event(const std::string& type, const json& obj) { return json{{"type", type}, {"object", obj}}.dump(); }

std::vector<std::string> keys(const ObjectCache& cache) {
  std::vector<std::string> out;
  for (const auto& item : cache.items()) out.push_back(ObjectCache::key_of(item));
  return out;
}

}  // namespace

TEST_CASE("ObjectCache: a list replaces everything and reports the new keys", "[k8s][object_cache]") {
  ObjectCache cache;
  json list = {{"kind", "ClusterList"},
               {"metadata", {{"resourceVersion", "10"}}},
               {"items", {object("", "b", "7"), object("", "a", "9")}}};
  auto added = cache.replace(list.dump());
  REQUIRE(added);
  CHECK(*added == std::vector<std::string>{"a", "b"});
  CHECK(cache.resource_version() == "10");
  CHECK(keys(cache) == std::vector<std::string>{"a", "b"});

  // A relist: b is gone, c is new, a stays (not reported as added).
  list = {{"metadata", {{"resourceVersion", "20"}}}, {"items", {object("", "a", "9"), object("", "c", "15")}}};
  added = cache.replace(list.dump());
  REQUIRE(added);
  CHECK(*added == std::vector<std::string>{"c"});
  CHECK(keys(cache) == std::vector<std::string>{"a", "c"});
  CHECK(cache.resource_version() == "20");

  // "items": null is an empty list (Go marshals a nil slice so).
  CHECK(cache.replace(R"({"metadata":{"resourceVersion":"21"},"items":null})"));
  CHECK(cache.size() == 0);
}

TEST_CASE("ObjectCache: a body that is not a List changes nothing", "[k8s][object_cache]") {
  ObjectCache cache;
  REQUIRE(cache.replace(json{{"metadata", {{"resourceVersion", "3"}}}, {"items", {object("ns", "x", "2")}}}.dump()));
  for (std::string bad : {"", "not json", "[]", R"({"kind":"Status"})", R"({"items":{}})",
                          R"({"items":[{"metadata":{}}]})", R"({"items":[{"metadata":{"name":7}}]})"}) {
    auto result = cache.replace(bad);
    CHECK_FALSE(result);
    CHECK(keys(cache) == std::vector<std::string>{"ns/x"});
    CHECK(cache.resource_version() == "3");
  }
}

TEST_CASE("ObjectCache: watch events add, modify, delete and move the resourceVersion", "[k8s][object_cache]") {
  ObjectCache cache;
  REQUIRE(cache.replace(R"({"metadata":{"resourceVersion":"5"},"items":[]})"));

  auto added = cache.apply(event("ADDED", object("default", "web", "6", 1)));
  CHECK(added.kind == Kind::Added);
  CHECK(added.key == "default/web");
  CHECK(cache.resource_version() == "6");

  // The same name in another namespace is another object.
  CHECK(cache.apply(event("ADDED", object("other", "web", "7"))).kind == Kind::Added);
  CHECK(cache.size() == 2);

  auto modified = cache.apply(event("MODIFIED", object("default", "web", "8", 2)));
  CHECK(modified.kind == Kind::Modified);
  REQUIRE(cache.find("default/web") != nullptr);
  CHECK(cache.find("default/web")->at("spec").at("value") == 2);
  // ADDED for a key already held (a replayed event) is a modification.
  CHECK(cache.apply(event("ADDED", object("default", "web", "9", 3))).kind == Kind::Modified);
  // MODIFIED for a key not held (after a relist raced the event) adds it.
  CHECK(cache.apply(event("MODIFIED", object("default", "late", "10"))).kind == Kind::Added);

  auto deleted = cache.apply(event("DELETED", object("default", "web", "11")));
  CHECK(deleted.kind == Kind::Deleted);
  CHECK(deleted.key == "default/web");
  CHECK(cache.find("default/web") == nullptr);
  CHECK(cache.resource_version() == "11");

  // A bookmark carries only a resourceVersion.
  auto bookmark = cache.apply(R"({"type":"BOOKMARK","object":{"kind":"Cluster","metadata":{"resourceVersion":"40"}}})");
  CHECK(bookmark.kind == Kind::Bookmark);
  CHECK(cache.resource_version() == "40");
  CHECK(keys(cache) == std::vector<std::string>{"default/late", "other/web"});
}

TEST_CASE("ObjectCache: 410 means list again, any other ERROR or junk is a failure", "[k8s][object_cache]") {
  ObjectCache cache;
  REQUIRE(cache.replace(json{{"metadata", {{"resourceVersion", "3"}}}, {"items", {object("", "a", "2")}}}.dump()));
  json gone = {{"kind", "Status"},    {"apiVersion", "v1"},
               {"status", "Failure"}, {"message", "too old resource version: 3 (90)"},
               {"reason", "Expired"}, {"code", 410}};
  auto expired = cache.apply(event("ERROR", gone));
  CHECK(expired.kind == Kind::Expired);
  CHECK(expired.message == "too old resource version: 3 (90)");

  json internal = {{"kind", "Status"}, {"status", "Failure"}, {"message", "etcd is sad"}, {"code", 500}};
  auto failed = cache.apply(event("ERROR", internal));
  CHECK(failed.kind == Kind::Failed);
  CHECK(failed.message == "the server ended the watch: etcd is sad");

  for (std::string bad : {"", "{", "[1]", R"({"type":"ADDED"})", R"({"type":"ADDED","object":"x"})",
                          R"({"type":"SYNC","object":{"metadata":{"name":"a"}}})",
                          R"({"type":"ADDED","object":{"metadata":{"namespace":"x"}}})"}) {
    CAPTURE(bad);
    CHECK(cache.apply(bad).kind == Kind::Failed);
  }
  // None of that changed the objects or the resourceVersion.
  CHECK(keys(cache) == std::vector<std::string>{"a"});
  CHECK(cache.resource_version() == "3");
}
