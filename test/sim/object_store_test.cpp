#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "fedmetrics/sim/object_store.hpp"

using namespace fedmetrics;
using nlohmann::json;
using sim::ObjectStore;
using sim::PatchType;
using sim::ResourceType;
using sim::WatchEvent;

namespace {

const k8s::Timestamp kNow = k8s::parse_time("2026-08-22T10:15:30Z").value();

ObjectStore make_store(std::size_t history = 10'000) {
  return ObjectStore([] { return kNow; }, history);
}

// A Karmada CRD with a status subresource.
ResourceType fhpa_type() {
  ResourceType t;
  t.group = "autoscaling.karmada.io";
  t.version = "v1alpha1";
  t.resource = "federatedhpas";
  t.kind = "FederatedHPA";
  t.status_subresource = true;
  return t;
}

// A CRD without one: status is an ordinary field.
ResourceType widget_type() {
  ResourceType t;
  t.group = "example.io";
  t.version = "v1";
  t.resource = "widgets";
  t.kind = "Widget";
  return t;
}

ResourceType configmap_type() {
  ResourceType t;
  t.version = "v1";
  t.resource = "configmaps";
  t.kind = "ConfigMap";
  return t;
}

ResourceType cluster_type() {
  ResourceType t;
  t.group = "cluster.karmada.io";
  t.version = "v1alpha1";
  t.resource = "clusters";
  t.kind = "Cluster";
  t.namespaced = false;
  t.status_subresource = true;
  return t;
}

json fhpa(const std::string& name, int min_replicas = 1, json labels = json::object()) {
  return {{"metadata", {{"name", name}, {"labels", std::move(labels)}}},
          {"spec", {{"minReplicas", min_replicas}, {"maxReplicas", 10}}}};
}

json ok(const sim::StoreResult& result) {
  if (const auto* status = std::get_if<k8s::Status>(&result)) FAIL("unexpected Status: " << status->to_json_string());
  return std::get<json>(result);
}

k8s::Status err(const sim::StoreResult& result) {
  if (const auto* object = std::get_if<json>(&result)) FAIL("unexpected object: " << object->dump());
  return std::get<k8s::Status>(result);
}

std::string rv_of(const json& object) { return object["metadata"]["resourceVersion"].get<std::string>(); }

// Collects events; thread-safe so that it can be used from concurrent writers.
struct Recorder {
  std::mutex mu;
  std::vector<WatchEvent> events;
  sim::WatchSink sink() {
    return [this](const WatchEvent& e) {
      std::lock_guard lock(mu);
      events.push_back(e);
      return true;
    };
  }
  std::vector<std::string> summary() {  // "TYPE name rv"
    std::lock_guard lock(mu);
    std::vector<std::string> out;
    for (const auto& e : events) {
      out.push_back(e.type + " " + e.object["metadata"].value("name", "") + " " +
                    e.object["metadata"].value("resourceVersion", ""));
    }
    return out;
  }
};

k8s::LabelSelector selector(std::string_view text) { return k8s::LabelSelector::parse(text).value(); }

}  // namespace

TEST_CASE("ObjectStore: create fills the system fields and takes the next resourceVersion", "[sim][object_store]") {
  auto store = make_store();
  CHECK(store.resource_version() == 1);
  json body = fhpa("web");
  body["apiVersion"] = "wrong/v0";
  body["kind"] = "Wrong";
  body["metadata"]["uid"] = "client-chosen";
  body["metadata"]["generation"] = 7;
  auto created = ok(store.create(fhpa_type(), "default", body));
  CHECK(created["apiVersion"] == "autoscaling.karmada.io/v1alpha1");
  CHECK(created["kind"] == "FederatedHPA");
  const json& meta = created["metadata"];
  CHECK(meta["name"] == "web");
  CHECK(meta["namespace"] == "default");
  CHECK(meta["resourceVersion"] == "2");
  CHECK(meta["generation"] == 1);
  CHECK(meta["creationTimestamp"] == "2026-08-22T10:15:30Z");
  const std::string uid = meta["uid"];
  REQUIRE(uid.size() == 36);
  CHECK(uid != "client-chosen");
  CHECK(uid[8] == '-');
  CHECK(uid[13] == '-');
  CHECK(uid[14] == '4');
  CHECK(uid[18] == '-');
  CHECK(uid[23] == '-');
  CHECK(created["spec"] == json{{"minReplicas", 1}, {"maxReplicas", 10}});
  CHECK(ok(store.get(fhpa_type(), "default", "web")) == created);
  CHECK(store.resource_version() == 2);

  // One counter for all types, as etcd's revision.
  auto cm = ok(store.create(configmap_type(), "default", {{"metadata", {{"name", "web"}}}, {"data", {{"a", "1"}}}}));
  CHECK(cm["apiVersion"] == "v1");
  CHECK(rv_of(cm) == "3");
  CHECK(ok(store.create(fhpa_type(), "other", fhpa("web")))["metadata"]["uid"] != uid);  // namespaces are apart
  CHECK(store.resource_version() == 4);

  // Cluster-scoped: the namespace is dropped, from the path and from the body.
  json cluster = {{"metadata", {{"name", "member1"}, {"namespace", "default"}}}};
  auto member = ok(store.create(cluster_type(), "", cluster));
  CHECK_FALSE(member["metadata"].contains("namespace"));
  CHECK(ok(store.get(cluster_type(), "ignored", "member1")) == member);

  // A status sent at create time is kept (documented choice).
  json with_status = fhpa("seeded");
  with_status["status"] = {{"currentReplicas", 3}};
  CHECK(ok(store.create(fhpa_type(), "default", with_status))["status"]["currentReplicas"] == 3);
}

TEST_CASE("ObjectStore: create rejects what apiserver rejects, with its texts", "[sim][object_store]") {
  auto store = make_store();
  ok(store.create(fhpa_type(), "default", fhpa("web")));
  const auto rv = store.resource_version();

  auto dup = err(store.create(fhpa_type(), "default", fhpa("web")));
  CHECK(dup.code == 409);
  CHECK(dup.reason == "AlreadyExists");
  CHECK(dup.message == "federatedhpas.autoscaling.karmada.io \"web\" already exists");
  CHECK(dup.details == k8s::StatusDetails{"web", "autoscaling.karmada.io", "federatedhpas", {}, 0});

  auto nameless = err(store.create(fhpa_type(), "default", {{"spec", json::object()}}));
  CHECK(nameless.code == 422);
  CHECK(nameless.reason == "Invalid");
  CHECK(nameless.message ==
        "FederatedHPA.autoscaling.karmada.io \"\" is invalid: metadata.name: Required value: name or generateName is "
        "required");
  REQUIRE(nameless.details.causes.size() == 1);
  CHECK(nameless.details.causes[0] ==
        k8s::StatusCause{"FieldValueRequired", "Required value: name or generateName is required", "metadata.name"});
  CHECK(nameless.details.kind == "FederatedHPA");
  CHECK(err(store.create(configmap_type(), "default", json::object())).message ==
        "ConfigMap \"\" is invalid: metadata.name: Required value: name or generateName is required");

  json elsewhere = fhpa("other");
  elsewhere["metadata"]["namespace"] = "kube-system";
  auto mismatch = err(store.create(fhpa_type(), "default", elsewhere));
  CHECK(mismatch.code == 400);
  CHECK(mismatch.reason == "BadRequest");
  CHECK(mismatch.message == "the namespace of the provided object does not match the namespace sent on the request");

  json versioned = fhpa("other");
  versioned["metadata"]["resourceVersion"] = "5";
  CHECK(err(store.create(fhpa_type(), "default", versioned)).message ==
        "resourceVersion should not be set on objects to be created");
  CHECK(err(store.create(fhpa_type(), "default", json::array())).code == 400);
  CHECK(err(store.create(fhpa_type(), "default", {{"metadata", "web"}})).code == 400);
  CHECK(err(store.create(fhpa_type(), "default", {{"metadata", {{"name", 5}}}})).message ==
        "metadata.name: expected a string");
  CHECK(err(store.create(fhpa_type(), "default", fhpa("other", 1, {{"app", 1}}))).message ==
        "metadata.labels: expected a map of strings");
  CHECK(err(store.create(fhpa_type(), "", fhpa("other"))).code == 422);  // namespaced type, no namespace
  CHECK(store.resource_version() == rv);                                 // failures take no resourceVersion
}

TEST_CASE("ObjectStore: generateName adds five random characters", "[sim][object_store]") {
  auto store = make_store();
  json body = {{"metadata", {{"generateName", "web-"}}}};
  auto a = ok(store.create(fhpa_type(), "default", body));
  auto b = ok(store.create(fhpa_type(), "default", body));
  const std::string name = a["metadata"]["name"];
  REQUIRE(name.size() == 9);
  CHECK(name.starts_with("web-"));
  CHECK(name.substr(4).find_first_not_of("bcdfghjklmnpqrstvwxz2456789") == std::string::npos);
  CHECK(b["metadata"]["name"] != name);
  CHECK(ok(store.get(fhpa_type(), "default", name)) == a);
  // An explicit name wins; a long base is cut so the name fits 63 characters.
  CHECK(ok(store.create(fhpa_type(), "default",
                        {{"metadata", {{"name", "x"}, {"generateName", "web-"}}}}))["metadata"]["name"] == "x");
  auto long_name = ok(store.create(fhpa_type(), "default", {{"metadata", {{"generateName", std::string(70, 'a')}}}}));
  const std::string long_generated = long_name["metadata"]["name"];
  CHECK(long_generated.substr(0, 58) == std::string(58, 'a'));
  CHECK(long_generated.size() == 63);
}

TEST_CASE("ObjectStore: get and list", "[sim][object_store]") {
  auto store = make_store();
  auto missing = err(store.get(fhpa_type(), "default", "nope"));
  CHECK(missing.code == 404);
  CHECK(missing.message == "federatedhpas.autoscaling.karmada.io \"nope\" not found");

  ok(store.create(fhpa_type(), "b", fhpa("z", 1, {{"app", "web"}})));
  ok(store.create(fhpa_type(), "a", fhpa("y", 1, {{"app", "db"}})));
  ok(store.create(fhpa_type(), "b", fhpa("a", 1, {{"app", "web"}})));
  ok(store.create(configmap_type(), "a", {{"metadata", {{"name", "cm"}}}}));

  auto names = [](const json& list) {
    std::vector<std::string> out;
    for (const auto& item : list["items"]) {
      out.push_back(item["metadata"]["namespace"].get<std::string>() + "/" +
                    item["metadata"]["name"].get<std::string>());
    }
    return out;
  };
  auto all = ok(store.list(fhpa_type(), "", {}, {}));
  CHECK(all["apiVersion"] == "autoscaling.karmada.io/v1alpha1");
  CHECK(all["kind"] == "FederatedHPAList");
  CHECK(all["metadata"] == json{{"resourceVersion", "5"}});
  CHECK(names(all) == std::vector<std::string>{"a/y", "b/a", "b/z"});
  CHECK(all["items"][0]["kind"] == "FederatedHPA");
  CHECK(names(ok(store.list(fhpa_type(), "b", {}, {}))) == std::vector<std::string>{"b/a", "b/z"});
  CHECK(names(ok(store.list(fhpa_type(), "", selector("app=web"), {}))) == std::vector<std::string>{"b/a", "b/z"});
  CHECK(names(ok(store.list(fhpa_type(), "", selector("app!=web"), {}))) == std::vector<std::string>{"a/y"});
  auto by_name = k8s::FieldSelector::parse("metadata.name=z").value();
  CHECK(names(ok(store.list(fhpa_type(), "", {}, by_name))) == std::vector<std::string>{"b/z"});
  CHECK(ok(store.list(fhpa_type(), "c", {}, {}))["items"] == json::array());
  CHECK(ok(store.list(widget_type(), "", {}, {}))["items"] == json::array());
}

TEST_CASE("ObjectStore: update is optimistic with a resourceVersion and unconditional without", "[sim][object_store]") {
  auto store = make_store();
  auto v1 = ok(store.create(fhpa_type(), "default", fhpa("web")));  // rv 2
  json change = v1;
  change["spec"]["minReplicas"] = 2;
  auto v2 = ok(store.update(fhpa_type(), "default", "web", change));
  CHECK(rv_of(v2) == "3");

  // The same body again carries the now stale "2".
  change["spec"]["minReplicas"] = 3;
  auto stale = err(store.update(fhpa_type(), "default", "web", change));
  CHECK(stale.code == 409);
  CHECK(stale.reason == "Conflict");
  CHECK(stale.message ==
        "Operation cannot be fulfilled on federatedhpas.autoscaling.karmada.io \"web\": the object has been modified; "
        "please apply your changes to the latest version and try again");
  CHECK(store.resource_version() == 3);
  CHECK(ok(store.get(fhpa_type(), "default", "web"))["spec"]["minReplicas"] == 2);

  // Without resourceVersion, uid or creationTimestamp: unconditional, and those are kept.
  json bare = fhpa("web", 4);
  bare["metadata"]["creationTimestamp"] = "2000-01-01T00:00:00Z";
  auto v3 = ok(store.update(fhpa_type(), "default", "web", bare));
  CHECK(rv_of(v3) == "4");
  CHECK(v3["spec"]["minReplicas"] == 4);
  CHECK(v3["metadata"]["uid"] == v1["metadata"]["uid"]);
  CHECK(v3["metadata"]["creationTimestamp"] == "2026-08-22T10:15:30Z");
  CHECK(v3["metadata"]["namespace"] == "default");

  json other_uid = fhpa("web", 5);
  other_uid["metadata"]["uid"] = "abc";
  auto immutable = err(store.update(fhpa_type(), "default", "web", other_uid));
  CHECK(immutable.code == 422);
  CHECK(immutable.message ==
        "FederatedHPA.autoscaling.karmada.io \"web\" is invalid: metadata.uid: Invalid value: \"abc\": field is "
        "immutable");

  auto renamed = err(store.update(fhpa_type(), "default", "web", fhpa("api")));
  CHECK(renamed.code == 400);
  CHECK(renamed.message == "the name of the object (api) does not match the name on the URL (web)");
  json moved = fhpa("web");
  moved["metadata"]["namespace"] = "other";
  CHECK(err(store.update(fhpa_type(), "default", "web", moved)).message ==
        "the namespace of the object (other) does not match the namespace on the URL (default)");
  // No create-on-update.
  CHECK(err(store.update(fhpa_type(), "default", "new", fhpa("new"))).code == 404);
  CHECK(err(store.update(fhpa_type(), "default", "web", fhpa("web"), "scale")).code == 404);
  CHECK(err(store.update(widget_type(), "default", "web", fhpa("web"), "status")).code == 404);
  CHECK(store.resource_version() == 4);
}

TEST_CASE("ObjectStore: generation counts changes outside metadata (and outside a status subresource)",
          "[sim][object_store]") {
  auto store = make_store();
  json object = ok(store.create(fhpa_type(), "default", fhpa("web")));
  object["metadata"]["labels"]["team"] = "a";
  object = ok(store.update(fhpa_type(), "default", "web", object));
  CHECK(object["metadata"]["generation"] == 1);  // metadata only
  CHECK(rv_of(object) == "3");
  object["spec"]["maxReplicas"] = 20;
  object = ok(store.update(fhpa_type(), "default", "web", object));
  CHECK(object["metadata"]["generation"] == 2);
  object["status"] = {{"desiredReplicas", 4}};
  object = ok(store.update(fhpa_type(), "default", "web", object, "status"));
  CHECK(object["metadata"]["generation"] == 2);  // status subresource
  CHECK(object["status"]["desiredReplicas"] == 4);
  CHECK(rv_of(object) == "5");
  object["metadata"]["generation"] = 99;  // clients cannot set it
  object["metadata"]["annotations"] = {{"note", "x"}};
  CHECK(ok(store.update(fhpa_type(), "default", "web", object))["metadata"]["generation"] == 2);

  // Without a status subresource status is content like spec (the CRD strategy).
  json widget = ok(store.create(widget_type(), "default", {{"metadata", {{"name", "w"}}}, {"status", {{"a", 1}}}}));
  widget["status"]["a"] = 2;
  widget = ok(store.update(widget_type(), "default", "w", widget));
  CHECK(widget["metadata"]["generation"] == 2);
  CHECK(widget["status"]["a"] == 2);
}

TEST_CASE("ObjectStore: the status subresource keeps spec and status apart", "[sim][object_store]") {
  auto store = make_store();
  json seeded = fhpa("web", 1, {{"app", "web"}});
  seeded["status"] = {{"currentReplicas", 1}};
  json object = ok(store.create(fhpa_type(), "default", seeded));

  // The main resource: spec changes, status is the stored one.
  json main = object;
  main["spec"]["minReplicas"] = 2;
  main["status"] = {{"currentReplicas", 100}};
  object = ok(store.update(fhpa_type(), "default", "web", main));
  CHECK(object["spec"]["minReplicas"] == 2);
  CHECK(object["status"] == json{{"currentReplicas", 1}});

  // /status: only status; spec and even labels come from the stored object.
  json status = object;
  status["spec"]["minReplicas"] = 9;
  status["metadata"]["labels"] = {{"app", "hijacked"}};
  status["status"] = {{"currentReplicas", 3}};
  object = ok(store.update(fhpa_type(), "default", "web", status, "status"));
  CHECK(object["spec"]["minReplicas"] == 2);
  CHECK(object["metadata"]["labels"] == json{{"app", "web"}});
  CHECK(object["status"] == json{{"currentReplicas", 3}});
  CHECK(ok(store.get(fhpa_type(), "default", "web")) == object);

  // A /status body without status clears it; the main resource cannot.
  json cleared = object;
  cleared.erase("status");
  CHECK_FALSE(ok(store.update(fhpa_type(), "default", "web", cleared, "status")).contains("status"));
  // ... and a stale resourceVersion conflicts on /status too.
  CHECK(err(store.update(fhpa_type(), "default", "web", object, "status")).code == 409);
}

TEST_CASE("ObjectStore: an update that changes nothing writes nothing", "[sim][object_store]") {
  auto store = make_store();
  json object = ok(store.create(fhpa_type(), "default", fhpa("web")));
  Recorder events;
  REQUIRE(store.watch(fhpa_type(), "", {}, {}, rv_of(object), events.sink()));

  CHECK(ok(store.update(fhpa_type(), "default", "web", object)) == object);
  CHECK(ok(store.update(fhpa_type(), "default", "web", fhpa("web"))) == object);  // same content, no metadata
  json status_only = object;
  status_only["status"] = {{"x", 1}};  // ignored by the main resource
  CHECK(ok(store.update(fhpa_type(), "default", "web", status_only)) == object);
  CHECK(ok(store.patch(fhpa_type(), "default", "web", PatchType::Merge, json::object())) == object);
  CHECK(ok(store.patch(fhpa_type(), "default", "web", PatchType::Merge, {{"spec", {{"minReplicas", 1}}}})) == object);
  CHECK(store.resource_version() == 2);
  CHECK(events.summary().empty());

  object["spec"]["minReplicas"] = 2;
  CHECK(rv_of(ok(store.update(fhpa_type(), "default", "web", object))) == "3");
  CHECK(events.summary() == std::vector<std::string>{"MODIFIED web 3"});
}

TEST_CASE("ObjectStore: merge, strategic and JSON patches", "[sim][object_store]") {
  auto store = make_store();
  json seeded = fhpa("web", 1, {{"app", "web"}, {"tier", "front"}});
  seeded["spec"]["metrics"] = json::array({{{"type", "cpu"}}, {{"type", "memory"}}});
  ok(store.create(fhpa_type(), "default", seeded));  // rv 2

  auto merged = ok(store.patch(fhpa_type(), "default", "web", PatchType::Merge,
                               {{"metadata", {{"labels", {{"tier", nullptr}}}}}, {"spec", {{"minReplicas", 3}}}}));
  CHECK(merged["metadata"]["labels"] == json{{"app", "web"}});
  CHECK(merged["spec"]["minReplicas"] == 3);
  CHECK(merged["spec"]["maxReplicas"] == 10);
  CHECK(merged["metadata"]["generation"] == 2);
  CHECK(rv_of(merged) == "3");

  // Strategic: merged as RFC 7386 (lists replaced), directives dropped.
  auto strategic = ok(store.patch(fhpa_type(), "default", "web", PatchType::Strategic,
                                  {{"spec",
                                    {{"metrics", json::array({{{"type", "pods"}}})},
                                     {"$setElementOrder/metrics", json::array({{{"type", "pods"}}})}}}}));
  CHECK(strategic["spec"]["metrics"] == json::array({{{"type", "pods"}}}));
  CHECK_FALSE(strategic["spec"].contains("$setElementOrder/metrics"));

  auto patched = ok(store.patch(fhpa_type(), "default", "web", PatchType::Json,
                                json::array({{{"op", "test"}, {"path", "/spec/minReplicas"}, {"value", 3}},
                                             {{"op", "replace"}, {"path", "/spec/maxReplicas"}, {"value", 5}},
                                             {{"op", "add"}, {"path", "/metadata/labels/new"}, {"value", "yes"}}})));
  CHECK(patched["spec"]["maxReplicas"] == 5);
  CHECK(patched["metadata"]["labels"]["new"] == "yes");
  const auto rv = store.resource_version();
  CHECK(rv == 5);

  auto failed_test = err(store.patch(fhpa_type(), "default", "web", PatchType::Json,
                                     json::array({{{"op", "test"}, {"path", "/spec/minReplicas"}, {"value", 7}}})));
  CHECK(failed_test.code == 422);
  CHECK(failed_test.reason == "Invalid");
  CHECK(failed_test.message == "the server rejected our request due to an error in our request");
  auto no_path = err(store.patch(fhpa_type(), "default", "web", PatchType::Json,
                                 json::array({{{"op", "remove"}, {"path", "/spec/nothing"}}})));
  CHECK(no_path.code == 422);
  REQUIRE(no_path.details.causes.size() == 1);
  CHECK(no_path.details.causes[0].message == "key 'nothing' not found");
  CHECK(err(store.patch(fhpa_type(), "default", "web", PatchType::Json,
                        json::array({{{"op", "jump"}, {"path", "/spec"}}})))
            .code == 422);
  CHECK(err(store.patch(fhpa_type(), "default", "web", PatchType::Json, {{"op", "add"}})).code == 400);
  CHECK(err(store.patch(fhpa_type(), "default", "web", PatchType::Merge, json::array())).code == 400);
  // Replacing the whole document with a non-object is rejected, not stored.
  CHECK(err(store.patch(fhpa_type(), "default", "web", PatchType::Json,
                        json::array({{{"op", "add"}, {"path", ""}, {"value", 1}}})))
            .code == 400);
  CHECK(err(store.patch(fhpa_type(), "default", "web", PatchType::Merge, {{"metadata", {{"resourceVersion", "2"}}}}))
            .code == 409);
  CHECK(
      err(store.patch(fhpa_type(), "default", "web", PatchType::Merge, {{"metadata", {{"name", "other"}}}})).message ==
      "the name of the object (other) does not match the name on the URL (web)");
  CHECK(err(store.patch(fhpa_type(), "default", "absent", PatchType::Merge, json::object())).code == 404);
  CHECK(store.resource_version() == rv);

  // A patch with the current resourceVersion applies; on /status only status is taken.
  auto status = ok(store.patch(fhpa_type(), "default", "web", PatchType::Merge,
                               {{"metadata", {{"resourceVersion", "5"}, {"labels", {{"app", "x"}}}}},
                                {"spec", {{"minReplicas", 8}}},
                                {"status", {{"currentReplicas", 2}}}},
                               "status"));
  CHECK(status["status"] == json{{"currentReplicas", 2}});
  CHECK(status["spec"]["minReplicas"] == 3);
  CHECK(status["metadata"]["labels"]["app"] == "web");
  CHECK(rv_of(status) == "6");
}

TEST_CASE("ObjectStore: remove returns the object at a new resourceVersion", "[sim][object_store]") {
  auto store = make_store();
  auto created = ok(store.create(fhpa_type(), "default", fhpa("web")));
  Recorder events;
  REQUIRE(store.watch(fhpa_type(), "default", {}, {}, "2", events.sink()));
  auto removed = ok(store.remove(fhpa_type(), "default", "web"));
  CHECK(rv_of(removed) == "3");
  CHECK(removed["spec"] == created["spec"]);
  CHECK(removed["metadata"]["uid"] == created["metadata"]["uid"]);
  CHECK(err(store.get(fhpa_type(), "default", "web")).code == 404);
  CHECK(err(store.remove(fhpa_type(), "default", "web")).message ==
        "federatedhpas.autoscaling.karmada.io \"web\" not found");
  REQUIRE(events.events.size() == 1);
  CHECK(events.events[0].type == "DELETED");
  CHECK(events.events[0].object == removed);
  // The name is free again.
  CHECK(rv_of(ok(store.create(fhpa_type(), "default", fhpa("web")))) == "4");
}

TEST_CASE("ObjectStore: remove with preconditions deletes only the object that was read", "[sim][object_store]") {
  auto store = make_store();
  auto first = ok(store.create(fhpa_type(), "default", fhpa("web")));
  const std::string first_uid = first["metadata"]["uid"];
  ok(store.remove(fhpa_type(), "default", "web"));
  // Created again under the same name: another uid.
  auto second = ok(store.create(fhpa_type(), "default", fhpa("web")));
  const std::string second_uid = second["metadata"]["uid"];
  REQUIRE(first_uid != second_uid);
  auto stale = err(store.remove(fhpa_type(), "default", "web", {first_uid, std::nullopt}));
  CHECK(stale.code == 409);
  CHECK(stale.reason == "Conflict");
  CHECK(stale.message ==
        "Operation cannot be fulfilled on federatedhpas.autoscaling.karmada.io \"web\": "
        "Precondition failed: UID in precondition: " +
            first_uid + ", UID in object meta: " + second_uid);
  auto old_version = err(store.remove(fhpa_type(), "default", "web", {std::nullopt, std::string("1")}));
  CHECK(old_version.code == 409);
  CHECK(old_version.message.find(
            "Precondition failed: ResourceVersion in precondition: 1, ResourceVersion in object meta: " +
            rv_of(second)) != std::string::npos);
  ok(store.get(fhpa_type(), "default", "web"));  // still there
  ok(store.remove(fhpa_type(), "default", "web", {second_uid, rv_of(second)}));
  CHECK(err(store.get(fhpa_type(), "default", "web")).code == 404);
}

TEST_CASE("ObjectStore: an object with finalizers is marked, and goes with its last finalizer", "[sim][object_store]") {
  auto store = make_store();
  json object = fhpa("web");
  object["metadata"]["finalizers"] = {"example.com/a", "example.com/b"};
  object["metadata"]["deletionTimestamp"] = "2020-01-01T00:00:00Z";  // not the client's to set
  auto created = ok(store.create(fhpa_type(), "default", object));   // 2
  CHECK_FALSE(created["metadata"].contains("deletionTimestamp"));
  Recorder events;
  REQUIRE(store.watch(fhpa_type(), "default", {}, {}, "2", events.sink()));
  auto marked = ok(store.remove(fhpa_type(), "default", "web"));  // 3
  CHECK(marked["metadata"]["deletionTimestamp"] == "2026-08-22T10:15:30Z");
  CHECK(marked["metadata"]["deletionGracePeriodSeconds"] == 0);
  CHECK(ok(store.get(fhpa_type(), "default", "web")) == marked);
  CHECK(ok(store.remove(fhpa_type(), "default", "web")) == marked);  // again: nothing changes
  // An update keeps the mark; removing one finalizer keeps the object.
  json edited = marked;
  edited["metadata"].erase("deletionTimestamp");
  edited["metadata"]["finalizers"] = {"example.com/b"};
  auto kept = ok(store.update(fhpa_type(), "default", "web", edited));  // 4
  CHECK(kept["metadata"]["deletionTimestamp"] == "2026-08-22T10:15:30Z");
  // The last one removed: deleted.
  ok(store.patch(fhpa_type(), "default", "web", PatchType::Merge, {{"metadata", {{"finalizers", nullptr}}}}));  // 5
  CHECK(err(store.get(fhpa_type(), "default", "web")).code == 404);
  CHECK(events.summary() == std::vector<std::string>{"MODIFIED web 3", "MODIFIED web 4", "DELETED web 5"});
}

TEST_CASE("ObjectStore: a watch from \"\" or \"0\" starts with the current objects", "[sim][object_store]") {
  auto store = make_store();
  ok(store.create(fhpa_type(), "b", fhpa("z")));                              // 2
  ok(store.create(fhpa_type(), "a", fhpa("y")));                              // 3
  ok(store.create(fhpa_type(), "b", fhpa("a")));                              // 4
  ok(store.create(configmap_type(), "b", {{"metadata", {{"name", "cm"}}}}));  // 5

  Recorder all;
  Recorder in_b;
  REQUIRE(store.watch(fhpa_type(), "", {}, {}, "", all.sink()));
  REQUIRE(store.watch(fhpa_type(), "b", {}, {}, "0", in_b.sink()));
  CHECK(store.watch_count() == 2);
  CHECK(all.summary() == std::vector<std::string>{"ADDED y 3", "ADDED a 4", "ADDED z 2"});
  CHECK(in_b.summary() == std::vector<std::string>{"ADDED a 4", "ADDED z 2"});

  ok(store.patch(fhpa_type(), "a", "y", PatchType::Merge, {{"spec", {{"minReplicas", 2}}}}));  // 6
  ok(store.remove(fhpa_type(), "b", "z"));                                                     // 7
  ok(store.remove(configmap_type(), "b", "cm"));                                               // 8: other type
  CHECK(all.summary() ==
        std::vector<std::string>{"ADDED y 3", "ADDED a 4", "ADDED z 2", "MODIFIED y 6", "DELETED z 7"});
  CHECK(in_b.summary() == std::vector<std::string>{"ADDED a 4", "ADDED z 2", "DELETED z 7"});
  CHECK(all.events[0].object["apiVersion"] == "autoscaling.karmada.io/v1alpha1");
}

TEST_CASE("ObjectStore: a watch from a resourceVersion replays the changes after it", "[sim][object_store]") {
  auto store = make_store();
  ok(store.create(fhpa_type(), "default", fhpa("a")));                                               // 2
  ok(store.create(fhpa_type(), "default", fhpa("b")));                                               // 3
  ok(store.patch(fhpa_type(), "default", "a", PatchType::Merge, {{"spec", {{"minReplicas", 2}}}}));  // 4
  ok(store.create(configmap_type(), "default", {{"metadata", {{"name", "cm"}}}}));                   // 5
  ok(store.remove(fhpa_type(), "default", "b"));                                                     // 6

  Recorder from3;
  auto id = store.watch(fhpa_type(), "", {}, {}, "3", from3.sink());
  REQUIRE(id);
  CHECK(from3.summary() == std::vector<std::string>{"MODIFIED a 4", "DELETED b 6"});
  CHECK(from3.events[0].object["spec"]["minReplicas"] == 2);

  Recorder from_now;
  REQUIRE(store.watch(fhpa_type(), "", {}, {}, "6", from_now.sink()));
  CHECK(from_now.summary().empty());

  Recorder from1;  // etcd's first revision: everything
  REQUIRE(store.watch(fhpa_type(), "", {}, {}, "1", from1.sink()));
  CHECK(from1.summary() == std::vector<std::string>{"ADDED a 2", "ADDED b 3", "MODIFIED a 4", "DELETED b 6"});

  ok(store.create(fhpa_type(), "default", fhpa("c")));  // 7
  CHECK(from3.summary().back() == "ADDED c 7");
  CHECK(from_now.summary() == std::vector<std::string>{"ADDED c 7"});

  // A future resourceVersion: changes up to it are not for this watch.
  Recorder future;
  REQUIRE(store.watch(fhpa_type(), "", {}, {}, "8", future.sink()));
  ok(store.create(fhpa_type(), "default", fhpa("d")));  // 8
  ok(store.create(fhpa_type(), "default", fhpa("e")));  // 9
  CHECK(future.summary() == std::vector<std::string>{"ADDED e 9"});
}

TEST_CASE("ObjectStore: a resourceVersion older than the history is 410 Gone", "[sim][object_store]") {
  auto store = make_store(3);
  for (const char* name : {"a", "b", "c"}) ok(store.create(fhpa_type(), "default", fhpa(name)));  // 2, 3, 4
  ok(store.create(configmap_type(), "default", {{"metadata", {{"name", "cm"}}}}));                // 5
  ok(store.remove(fhpa_type(), "default", "a"));                                                  // 6
  // The history holds 4, 5, 6: other types' changes take room too.

  Recorder too_old;
  CHECK_FALSE(store.watch(fhpa_type(), "", {}, {}, "2", too_old.sink()));
  REQUIRE(too_old.events.size() == 1);
  CHECK(too_old.events[0].type == "ERROR");
  const json gone = json::parse(R"json({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
      "message":"too old resource version: 2 (3)","reason":"Expired","code":410})json");
  CHECK(too_old.events[0].object == gone);
  CHECK(store.watch_count() == 0);

  Recorder oldest;
  REQUIRE(store.watch(fhpa_type(), "", {}, {}, "3", oldest.sink()));
  CHECK(oldest.summary() == std::vector<std::string>{"ADDED c 4", "DELETED a 6"});

  Recorder garbage;
  CHECK_FALSE(store.watch(fhpa_type(), "", {}, {}, "abc", garbage.sink()));
  REQUIRE(garbage.events.size() == 1);
  CHECK(garbage.events[0].type == "ERROR");
  CHECK(garbage.events[0].object["code"] == 400);
  CHECK(garbage.events[0].object["reason"] == "BadRequest");
  CHECK_FALSE(store.watch(fhpa_type(), "", {}, {}, "-1", garbage.sink()));
  CHECK(store.watch_count() == 1);

  // No history at all: only the current resourceVersion can be watched from.
  auto none = make_store(0);
  ok(none.create(fhpa_type(), "default", fhpa("a")));
  Recorder r;
  CHECK_FALSE(none.watch(fhpa_type(), "", {}, {}, "1", r.sink()));
  CHECK(r.events.at(0).object["message"] == "too old resource version: 1 (2)");
  CHECK(none.watch(fhpa_type(), "", {}, {}, "2", r.sink()));
}

TEST_CASE("ObjectStore: selector transitions turn MODIFIED into ADDED and DELETED", "[sim][object_store]") {
  auto store = make_store();
  Recorder web;
  REQUIRE(store.watch(fhpa_type(), "", selector("app=web"), {}, "", web.sink()));
  auto by_name = k8s::FieldSelector::parse("metadata.name=x").value();
  Recorder named;
  REQUIRE(store.watch(fhpa_type(), "", {}, by_name, "", named.sink()));

  ok(store.create(fhpa_type(), "default", fhpa("x", 1, {{"app", "db"}})));                                         // 2
  ok(store.patch(fhpa_type(), "default", "x", PatchType::Merge, {{"metadata", {{"labels", {{"app", "web"}}}}}}));  // 3
  ok(store.patch(fhpa_type(), "default", "x", PatchType::Merge, {{"spec", {{"minReplicas", 2}}}}));                // 4
  ok(store.patch(fhpa_type(), "default", "x", PatchType::Merge, {{"metadata", {{"labels", {{"app", "db"}}}}}}));   // 5
  ok(store.create(fhpa_type(), "default", fhpa("y", 1, {{"app", "web"}})));                                        // 6
  ok(store.remove(fhpa_type(), "default", "x"));                                                                   // 7

  CHECK(web.summary() == std::vector<std::string>{"ADDED x 3", "MODIFIED x 4", "DELETED x 5", "ADDED y 6"});
  // The DELETED carries the last matching content, at the change's resourceVersion.
  CHECK(web.events[2].object["metadata"]["labels"] == json{{"app", "web"}});
  CHECK(web.events[2].object["spec"]["minReplicas"] == 2);
  CHECK(named.summary() ==
        std::vector<std::string>{"ADDED x 2", "MODIFIED x 3", "MODIFIED x 4", "MODIFIED x 5", "DELETED x 7"});

  // Replay from history applies the same rules.
  Recorder replay;
  REQUIRE(store.watch(fhpa_type(), "", selector("app=web"), {}, "1", replay.sink()));
  CHECK(replay.summary() == web.summary());
}

TEST_CASE("ObjectStore: a sink returning false ends its watch, unwatch stops delivery", "[sim][object_store]") {
  auto store = make_store();
  int once_calls = 0;
  REQUIRE(store.watch(fhpa_type(), "", {}, {}, "", [&](const WatchEvent&) {
    ++once_calls;
    return false;
  }));
  Recorder kept;
  auto kept_id = store.watch(fhpa_type(), "", {}, {}, "", kept.sink());
  REQUIRE(kept_id);
  CHECK(store.watch_count() == 2);
  ok(store.create(fhpa_type(), "default", fhpa("a")));
  ok(store.create(fhpa_type(), "default", fhpa("b")));
  CHECK(once_calls == 1);
  CHECK(store.watch_count() == 1);
  CHECK(kept.summary().size() == 2);

  // Ending during the initial events: the watch never starts.
  int initial_calls = 0;
  CHECK_FALSE(store.watch(fhpa_type(), "", {}, {}, "0", [&](const WatchEvent&) { return ++initial_calls < 1; }));
  CHECK(initial_calls == 1);
  CHECK(store.watch_count() == 1);

  store.unwatch(*kept_id);
  store.unwatch(*kept_id);  // twice is harmless
  ok(store.create(fhpa_type(), "default", fhpa("c")));
  CHECK(kept.summary().size() == 2);
  CHECK(store.watch_count() == 0);

  // A throwing sink ends its watch rather than the store.
  REQUIRE(store.watch(fhpa_type(), "", {}, {}, "", [](const WatchEvent&) -> bool { throw std::runtime_error("x"); }) ==
          std::nullopt);
  CHECK(store.watch_count() == 0);
}

TEST_CASE("ObjectStore: a sink may read and write the store and unwatch itself", "[sim][object_store]") {
  auto store = make_store();
  std::vector<std::string> seen;
  std::optional<std::uint64_t> self;
  self = store.watch(fhpa_type(), "", {}, {}, "", [&](const WatchEvent& e) {
    const std::string name = e.object["metadata"]["name"];
    seen.push_back(e.type + " " + name +
                   " items=" + std::to_string(ok(store.list(fhpa_type(), "", {}, {}))["items"].size()));
    // A controller reacting to an event: its own write is delivered after this call returns.
    if (name == "a" && e.type == "ADDED") ok(store.create(fhpa_type(), "default", fhpa("a-child")));
    if (name == "stop") store.unwatch(*self);
    return true;
  });
  REQUIRE(self);
  ok(store.create(fhpa_type(), "default", fhpa("a")));
  ok(store.create(fhpa_type(), "default", fhpa("stop")));
  ok(store.create(fhpa_type(), "default", fhpa("after")));
  CHECK(seen == std::vector<std::string>{"ADDED a items=1", "ADDED a-child items=2", "ADDED stop items=3"});
  CHECK(store.watch_count() == 0);
}

TEST_CASE("ObjectStore: concurrent writers, every watch sees its events in resourceVersion order",
          "[sim][object_store]") {
  auto store = make_store(100);
  ok(store.create(fhpa_type(), "default", fhpa("one", 0, {{"app", "web"}})));
  ok(store.create(fhpa_type(), "default", fhpa("two", 0, {{"app", "web"}})));

  struct Ordered {
    std::atomic<bool> inside{false};
    std::atomic<bool> overlapped{false};
    std::vector<std::uint64_t> rvs;  // written one sink call at a time, checked for that
    sim::WatchSink sink() {
      return [this](const WatchEvent& e) {
        if (inside.exchange(true)) overlapped = true;
        rvs.push_back(std::stoull(e.object["metadata"]["resourceVersion"].get<std::string>()));
        std::this_thread::yield();  // widen the window for the other writer
        inside = false;
        return true;
      };
    }
  };
  Ordered all;
  Ordered only_one;
  REQUIRE(store.watch(fhpa_type(), "", {}, {}, "3", all.sink()));
  REQUIRE(
      store.watch(fhpa_type(), "", {}, k8s::FieldSelector::parse("metadata.name=one").value(), "3", only_one.sink()));

  constexpr int kUpdates = 300;
  auto writer = [&](const char* name) {
    for (int i = 1; i <= kUpdates; ++i) {
      ok(store.patch(fhpa_type(), "default", name, PatchType::Merge, {{"spec", {{"minReplicas", i}}}}));
    }
  };
  std::thread a(writer, "one");
  std::thread b(writer, "two");
  a.join();
  b.join();

  CHECK(store.resource_version() == 3 + 2 * kUpdates);
  CHECK_FALSE(all.overlapped);
  CHECK_FALSE(only_one.overlapped);
  REQUIRE(all.rvs.size() == 2 * kUpdates);
  for (std::size_t i = 0; i < all.rvs.size(); ++i) CHECK(all.rvs[i] == 4 + i);
  REQUIRE(only_one.rvs.size() == kUpdates);
  CHECK(std::is_sorted(only_one.rvs.begin(), only_one.rvs.end()));
  CHECK(std::adjacent_find(only_one.rvs.begin(), only_one.rvs.end()) == only_one.rvs.end());
  CHECK(ok(store.get(fhpa_type(), "default", "one"))["spec"]["minReplicas"] == kUpdates);
}

TEST_CASE("ObjectStore: unwatch waits for a sink call in progress on another thread", "[sim][object_store]") {
  auto store = make_store();
  std::atomic<int> calls{0};
  std::atomic<bool> entered{false};
  std::atomic<bool> finished{false};
  auto id = store.watch(fhpa_type(), "", {}, {}, "", [&](const WatchEvent&) {
    if (calls++ == 0) {
      entered = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));  // still inside when unwatch is called
      finished = true;
    }
    return true;
  });
  REQUIRE(id);
  std::thread writer([&] { ok(store.create(fhpa_type(), "default", fhpa("a"))); });
  while (!entered) std::this_thread::yield();
  store.unwatch(*id);
  CHECK(finished);  // unwatch returned only after the sink did
  writer.join();
  ok(store.create(fhpa_type(), "default", fhpa("b")));
  CHECK(calls == 1);
  CHECK(store.watch_count() == 0);
}

TEST_CASE("ObjectStore: patch_type_from_content_type", "[sim][object_store]") {
  using sim::patch_type_from_content_type;
  CHECK(patch_type_from_content_type("application/merge-patch+json") == PatchType::Merge);
  CHECK(patch_type_from_content_type("application/strategic-merge-patch+json") == PatchType::Strategic);
  CHECK(patch_type_from_content_type("application/json-patch+json") == PatchType::Json);
  CHECK(patch_type_from_content_type("Application/Merge-Patch+JSON; charset=utf-8") == PatchType::Merge);
  CHECK(patch_type_from_content_type(" application/json-patch+json ;q=1") == PatchType::Json);
  CHECK(patch_type_from_content_type("application/apply-patch+yaml") == std::nullopt);
  CHECK(patch_type_from_content_type("application/json") == std::nullopt);
  CHECK(patch_type_from_content_type("") == std::nullopt);
}

TEST_CASE("ObjectStore: types are found by group, version and resource", "[sim][object_store]") {
  auto store = make_store();
  store.register_type(fhpa_type());
  store.register_type(configmap_type());
  const auto* found = store.find_type("autoscaling.karmada.io", "v1alpha1", "federatedhpas");
  REQUIRE(found != nullptr);
  CHECK(found->kind == "FederatedHPA");
  CHECK(found->status_subresource);
  CHECK(store.find_type("", "v1", "configmaps") != nullptr);
  CHECK(store.find_type("autoscaling.karmada.io", "v1", "federatedhpas") == nullptr);
  CHECK(store.find_type("", "v1", "federatedhpas") == nullptr);
  CHECK(store.types().size() == 2);

  // Two versions of one resource share its objects; each reads in its own apiVersion.
  ResourceType v2 = fhpa_type();
  v2.version = "v1beta1";
  ok(store.create(fhpa_type(), "default", fhpa("web")));
  CHECK(ok(store.get(v2, "default", "web"))["apiVersion"] == "autoscaling.karmada.io/v1beta1");
}
