#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fedmetrics/sim/event_fields.hpp"
#include "fedmetrics/sim/object_store.hpp"

using namespace fedmetrics;
using nlohmann::json;

namespace {

const k8s::Timestamp kNow = k8s::parse_time("2026-08-22T10:15:30Z").value();

sim::ResourceType core_event_type() {
  sim::ResourceType t;
  t.version = "v1";
  t.resource = "events";
  t.kind = "Event";
  t.selectable_fields = sim::core_event_fields();
  return t;
}

sim::ResourceType events_v1_type() {
  sim::ResourceType t;
  t.group = "events.k8s.io";
  t.version = "v1";
  t.resource = "events";
  t.kind = "Event";
  t.selectable_fields = sim::events_v1_event_fields();
  return t;
}

// A core/v1 Event as fedmetrics records one about a FederatedHPA.
json event(const std::string& name, const std::string& type, const std::string& reason,
           const std::string& involved = "nginx") {
  return {{"metadata", {{"name", name}, {"namespace", "default"}}},
          {"involvedObject",
           {{"apiVersion", "autoscaling.karmada.io/v1alpha1"},
            {"kind", "FederatedHPA"},
            {"name", involved},
            {"namespace", "default"},
            {"uid", "uid-" + involved}}},
          {"reason", reason},
          {"message", "m"},
          {"type", type},
          {"source", {{"component", "fedmetrics-autoscaler"}}},
          {"reportingComponent", "fedmetrics-autoscaler"}};
}

bool selects(const sim::ResourceType& type, const std::string& selector, const json& object) {
  auto parsed = sim::parse_field_selector(type, selector);
  if (!parsed) FAIL("unexpected error: " << parsed.error().message);
  return sim::fields_match(type.selectable_fields, *parsed, object);
}

std::string refused(const sim::ResourceType& type, const std::string& selector) {
  auto parsed = sim::parse_field_selector(type, selector);
  if (parsed) return "accepted";
  return parsed.error().message;
}

}  // namespace

TEST_CASE("Event field selectors: kube-apiserver's fields of a core/v1 Event", "[sim][event_fields]") {
  const auto type = core_event_type();
  const json e = event("nginx.1", "Warning", "FailedGetScale");
  struct Case {
    const char* selector;
    bool selected;
  };
  const std::vector<Case> cases = {
      {"", true},
      {"involvedObject.kind=FederatedHPA", true},
      {"involvedObject.kind=Deployment", false},
      {"involvedObject.name=nginx", true},
      {"involvedObject.name==nginx", true},
      {"involvedObject.name!=nginx", false},
      {"involvedObject.namespace=default", true},
      {"involvedObject.uid=uid-nginx", true},
      {"involvedObject.apiVersion=autoscaling.karmada.io/v1alpha1", true},
      {"involvedObject.resourceVersion=", true},  // absent: ""
      {"involvedObject.fieldPath!=", false},
      {"reason=FailedGetScale", true},
      {"reason!=FailedGetScale", false},
      {"reportingComponent=fedmetrics-autoscaler", true},
      {"source=fedmetrics-autoscaler", true},
      {"source=kubelet", false},
      {"type=Warning", true},
      {"type=Normal", false},
      {"type!=Normal", true},
      {"metadata.name=nginx.1", true},
      {"metadata.namespace=default", true},
      {"metadata.namespace=kube-system", false},
      // kubectl describe's selector: every term must hold.
      {"involvedObject.name=nginx,involvedObject.namespace=default,involvedObject.kind=FederatedHPA,"
       "involvedObject.uid=uid-nginx",
       true},
      {"involvedObject.name=nginx,involvedObject.uid=uid-other", false},
  };
  for (const auto& c : cases) {
    INFO(c.selector);
    CHECK(selects(type, c.selector, e) == c.selected);
  }
}

TEST_CASE("Event field selectors: source falls back to reportingComponent", "[sim][event_fields]") {
  const auto type = core_event_type();
  json e = event("nginx.1", "Normal", "SuccessfulRescale");
  e.erase("source");
  CHECK(selects(type, "source=fedmetrics-autoscaler", e));
  e["source"] = {{"component", "other"}};
  CHECK(selects(type, "source=other", e));
  CHECK_FALSE(selects(type, "source=fedmetrics-autoscaler", e));
  // A field of the wrong JSON type reads as absent.
  e["type"] = 3;
  CHECK(selects(type, "type=", e));
}

TEST_CASE("Event field selectors: other fields are refused with kube-apiserver's messages", "[sim][event_fields]") {
  CHECK(refused(core_event_type(), "message=x") == "field label not supported: message");
  CHECK(refused(core_event_type(), "type=Warning,spec.x=y") == "field label not supported: spec.x");
  // events.k8s.io/v1 names the fields its own way, and not the core way.
  CHECK(refused(events_v1_type(), "regarding.name=nginx,reportingController=c,source=c,type=Normal") == "accepted");
  CHECK(refused(events_v1_type(), "involvedObject.name=nginx") == "field label not supported: involvedObject.name");
  // A type without selectable fields of its own: the default conversion.
  sim::ResourceType configmaps;
  configmaps.version = "v1";
  configmaps.resource = "configmaps";
  configmaps.kind = "ConfigMap";
  CHECK(refused(configmaps, "type=Warning") ==
        "\"type\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\"");
  CHECK(refused(configmaps, "metadata.name=a") == "accepted");
  // Malformed selectors keep the parser's message.
  CHECK(refused(core_event_type(), "type") == "invalid selector: 'type'; can't understand 'type'");
}

TEST_CASE("Event field selectors: events.k8s.io/v1 reads regarding and reportingController", "[sim][event_fields]") {
  const auto type = events_v1_type();
  const json e = {{"metadata", {{"name", "e"}, {"namespace", "default"}}},
                  {"regarding", {{"kind", "FederatedHPA"}, {"name", "nginx"}}},
                  {"reason", "SuccessfulRescale"},
                  {"reportingController", "fedmetrics-autoscaler"},
                  {"type", "Normal"}};
  CHECK(selects(type, "regarding.kind=FederatedHPA,regarding.name=nginx", e));
  CHECK(selects(type, "reportingController=fedmetrics-autoscaler", e));
  CHECK(selects(type, "source=fedmetrics-autoscaler", e));  // no deprecatedSource: the controller
  CHECK_FALSE(selects(type, "type=Warning", e));
}

TEST_CASE("ObjectStore: a list and a watch select Events on their fields", "[sim][event_fields][object_store]") {
  sim::ObjectStore store([] { return kNow; });
  store.register_type(core_event_type());
  const auto* type = store.find_type("", "v1", "events");
  REQUIRE(type != nullptr);
  REQUIRE(std::holds_alternative<json>(store.create(*type, "default", event("a", "Normal", "SuccessfulRescale"))));
  REQUIRE(std::holds_alternative<json>(store.create(*type, "default", event("b", "Warning", "FailedGetScale"))));
  REQUIRE(
      std::holds_alternative<json>(store.create(*type, "default", event("c", "Warning", "FailedGetScale", "ghost"))));
  auto names = [](const sim::StoreResult& result) {
    std::vector<std::string> out;
    for (const auto& item : std::get<json>(result)["items"]) out.push_back(item["metadata"]["name"].get<std::string>());
    return out;
  };
  auto warnings = sim::parse_field_selector(*type, "type=Warning");
  REQUIRE(warnings);
  CHECK(names(store.list(*type, "", {}, *warnings)) == std::vector<std::string>{"b", "c"});
  auto about_nginx = sim::parse_field_selector(*type, "involvedObject.kind=FederatedHPA,involvedObject.name=nginx");
  REQUIRE(about_nginx);
  CHECK(names(store.list(*type, "default", {}, *about_nginx)) == std::vector<std::string>{"a", "b"});

  // The watch sees only the Warnings, from its start on.
  std::vector<std::string> seen;
  auto id = store.watch(*type, "", {}, *warnings, "0", [&seen](const sim::WatchEvent& e) {
    seen.push_back(e.type + " " + e.object["metadata"]["name"].get<std::string>());
    return true;
  });
  REQUIRE(id);
  REQUIRE(std::holds_alternative<json>(store.create(*type, "default", event("d", "Normal", "SuccessfulRescale"))));
  REQUIRE(std::holds_alternative<json>(store.create(*type, "default", event("e", "Warning", "FailedGetScale"))));
  // A change that makes an Event stop matching is a DELETED for this watch.
  REQUIRE(std::holds_alternative<json>(
      store.patch(*type, "default", "b", sim::PatchType::Merge, json{{"type", "Normal"}})));
  store.unwatch(*id);
  CHECK(seen == std::vector<std::string>{"ADDED b", "ADDED c", "ADDED e", "DELETED b"});
}
