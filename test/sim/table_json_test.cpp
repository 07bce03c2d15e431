#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "fedmetrics/k8s/url.hpp"
#include "sim/table_json.hpp"

using namespace fedmetrics;
using nlohmann::json;

namespace {

constexpr const char* kKubectlAccept =
    "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";

transport::HttpRequest get(const std::string& target, const std::string& accept) {
  return {"GET", target, {{"Accept", accept}}};
}

k8s::Expected<std::optional<k8s::IncludeObject>> table_request(const std::string& target, const std::string& accept) {
  auto decoded = k8s::parse_request_target(target);
  REQUIRE(decoded);
  return sim::detail::table_request(get(target, accept), *decoded);
}

// A printer's Table of `doc`: a Name column and one row per item.
json printed(const json& doc) {
  json rows = json::array();
  const json items = doc.contains("items") ? doc["items"] : json::array({doc});
  for (const auto& item : items) rows.push_back({{"cells", {item["metadata"]["name"]}}});
  return {{"kind", "Table"},
          {"apiVersion", "meta.k8s.io/v1"},
          {"metadata", json::object()},
          {"columnDefinitions", {{{"name", "Name"}}}},
          {"rows", rows}};
}

const json kEvent = {{"kind", "Event"},
                     {"apiVersion", "v1"},
                     {"metadata", {{"name", "e1"}, {"namespace", "default"}, {"resourceVersion", "12"}}},
                     {"lastTimestamp", "2026-08-22T10:15:30Z"}};

// A list whose items, as kube-apiserver writes them, lack kind and apiVersion.
const json kList = {{"kind", "EventList"},
                    {"apiVersion", "v1"},
                    {"metadata", {{"resourceVersion", "40"}}},
                    {"items",
                     {{{"metadata", {{"name", "e1"}, {"namespace", "default"}}}, {"lastTimestamp", "t1"}},
                      {{"metadata", {{"name", "e2"}, {"namespace", "kube-system"}}}, {"lastTimestamp", "t2"}}}}};

}  // namespace

TEST_CASE("Sim tables: the request's Accept and includeObject", "[sim][table_json]") {
  CHECK_FALSE(*table_request("/api/v1/events", "application/json"));
  CHECK(*table_request("/api/v1/events", kKubectlAccept) == k8s::IncludeObject::Metadata);
  CHECK(*table_request("/api/v1/events?includeObject=Object", kKubectlAccept) == k8s::IncludeObject::Object);
  CHECK(*table_request("/api/v1/events?includeObject=None", kKubectlAccept) == k8s::IncludeObject::None);
  auto bad = table_request("/api/v1/events?includeObject=All", kKubectlAccept);
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message ==
        "Unable to convert to Table as requested: includeObject: Unsupported value: \"All\": supported values: "
        "\"Metadata\", \"None\", \"Object\"");
  // Without a Table the parameter means nothing.
  CHECK_FALSE(*table_request("/api/v1/events?includeObject=All", "application/json"));
}

TEST_CASE("Sim tables: each row carries its object as includeObject asks", "[sim][table_json]") {
  using k8s::IncludeObject;
  json none = printed(kList);
  sim::detail::complete_table(none, kList, IncludeObject::None);
  CHECK(none["rows"][0]["object"].is_null());
  CHECK(none["rows"][1]["object"].is_null());

  json metadata = printed(kList);
  sim::detail::complete_table(metadata, kList, IncludeObject::Metadata);
  CHECK(metadata["rows"][1]["object"] == json{{"kind", "PartialObjectMetadata"},
                                              {"apiVersion", "meta.k8s.io/v1"},
                                              {"metadata", {{"name", "e2"}, {"namespace", "kube-system"}}}});

  // Object: the whole item, which kubectl --sort-by reads (.lastTimestamp), with its kind and apiVersion.
  json object = printed(kList);
  sim::detail::complete_table(object, kList, IncludeObject::Object);
  CHECK(object["rows"][0]["object"] == json{{"kind", "Event"},
                                            {"apiVersion", "v1"},
                                            {"metadata", {{"name", "e1"}, {"namespace", "default"}}},
                                            {"lastTimestamp", "t1"}});
  CHECK(object["rows"][1]["object"]["lastTimestamp"] == "t2");
  CHECK(object["columnDefinitions"].size() == 1);
}

TEST_CASE("Sim tables: the resourceVersion is the list's or the object's", "[sim][table_json]") {
  json list = printed(kList);
  sim::detail::complete_table(list, kList, k8s::IncludeObject::Metadata);
  CHECK(list["metadata"] == json{{"resourceVersion", "40"}});
  json one = printed(kEvent);
  sim::detail::complete_table(one, kEvent, k8s::IncludeObject::Object);
  CHECK(one["metadata"] == json{{"resourceVersion", "12"}});
  CHECK(one["rows"][0]["object"] == kEvent);
  json unversioned = {{"metadata", {{"name", "x"}}}};
  json none = printed(unversioned);
  sim::detail::complete_table(none, unversioned, k8s::IncludeObject::Metadata);
  CHECK(none["metadata"] == json::object());  // "" is left out
}

TEST_CASE("Sim tables: a watch's events are Tables, the columns only on the first", "[sim][table_json]") {
  int calls = 0;
  auto as_table = sim::detail::watch_tables(
      [&calls](json& object) {
        ++calls;
        object["status"] = "as read";  // what the server shows, in the row's object too
        return printed(object);
      },
      k8s::IncludeObject::Object);
  const json first = as_table(kEvent);
  CHECK(first["kind"] == "Table");
  CHECK(first["columnDefinitions"].size() == 1);
  CHECK(first["rows"][0]["cells"] == json::array({"e1"}));
  CHECK(first["rows"][0]["object"]["status"] == "as read");
  CHECK(first["metadata"]["resourceVersion"] == "12");
  json changed = kEvent;
  changed["metadata"]["resourceVersion"] = "13";
  const json second = as_table(changed);
  CHECK(second["columnDefinitions"].is_null());
  CHECK(second["rows"].size() == 1);
  CHECK(second["metadata"]["resourceVersion"] == "13");
  CHECK(calls == 2);
}
