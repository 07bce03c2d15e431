#pragma once
// The control-plane ports in memory, one fake each, as the API server would
// keep the objects; FakeControlPlane bundles them for a loop. Thread-safe
// where a test reads while the loop runs.
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fedmetrics/controller/control_plane.hpp"
#include "support/held.hpp"

namespace fedmetrics::testing {

using controller::EventOccurrence;
using controller::Scale;
using controller::TargetCluster;
using nlohmann::json;

inline bool selected(const k8s::LabelSelector& selector, const json& object) {
  k8s::Labels labels;
  const json raw = object["metadata"].value("labels", json::object());  // named: items() refers to it
  for (const auto& [k, v] : raw.items()) labels[k] = v.get<std::string>();
  return selector.matches(labels);
}

inline void bump_resource_version(json& object) {
  const std::string rv = object["metadata"].value("resourceVersion", "0");
  object["metadata"]["resourceVersion"] = std::to_string(std::stoi(rv.empty() ? "0" : rv) + 1);
}

// A watch that ends by clearing the callback it installed.
struct FakeWatch final : controller::Watch {
  std::function<void()> on_end;
  ~FakeWatch() override {
    if (on_end) on_end();
  }
};

// The FederatedHPAs: listed, read, watched and written.
struct FakeFederatedHPAs final : controller::FederatedHPAStore, controller::FederatedHPAWriter {
  std::vector<json> objects;
  std::map<std::string, json> statuses;     // the last status written, by "namespace/name"
  std::vector<json> status_history;         // every status written, in order
  std::vector<std::string> status_writers;  // "namespace/name" of every status written, in order
  Held hold_status_writes;                  // written at once, answered when released
  std::optional<std::string> distribution;  // the distribution annotation last written
  int replica_writes = 0;
  int conflicts_to_answer = 0;         // the next N replica writes conflict (another writer changed the object)
  std::function<void(json)> on_added;  // set while watched
  std::atomic<bool> watching{false};

  json* find(const std::string& ns, const std::string& name) {
    for (auto& o : objects)
      if (o["metadata"].value("namespace", "") == ns && o["metadata"].value("name", "") == name) return &o;
    return nullptr;
  }
  async::Task<k8s::Expected<std::vector<json>>> list(const k8s::LabelSelector& selector) override {
    std::vector<json> out;
    for (const auto& o : objects)
      if (selected(selector, o)) out.push_back(o);
    co_return out;
  }
  async::Task<k8s::Expected<std::vector<json>>> list_from_server(const k8s::LabelSelector& selector) override {
    co_return co_await list(selector);
  }
  async::Task<k8s::Expected<json>> get(const std::string& ns, const std::string& name) override {
    if (json* o = find(ns, name)) co_return *o;
    co_return k8s::Error{"federatedhpas \"" + name + "\" not found"};
  }
  std::unique_ptr<controller::Watch> watch(const k8s::LabelSelector&, std::function<void(json)> added) override {
    on_added = std::move(added);
    watching = true;
    auto w = std::make_unique<FakeWatch>();
    w->on_end = [this] { watching = false; };
    return w;
  }
  async::Task<k8s::Expected<bool>> update_status(const std::string& ns, const std::string& name,
                                                 const json& status) override {
    statuses[ns + "/" + name] = status;
    status_history.push_back(status);
    status_writers.push_back(ns + "/" + name);
    co_await hold_status_writes.wait();
    co_return true;
  }
  async::Task<k8s::Expected<bool>> update_replicas(const std::string& ns, const std::string& name, std::int32_t min,
                                                   std::int32_t max, const std::string& resource_version) override {
    json* o = find(ns, name);
    if (o == nullptr) co_return k8s::Error{"federatedhpas \"" + name + "\" not found"};
    if (conflicts_to_answer > 0) {
      --conflicts_to_answer;
      bump_resource_version(*o);
      co_return k8s::Error{"Operation cannot be fulfilled: the object has been modified"};
    }
    if (resource_version != (*o)["metadata"].value("resourceVersion", ""))
      co_return k8s::Error{"stale resourceVersion"};
    ++replica_writes;
    (*o)["spec"]["minReplicas"] = min;
    (*o)["spec"]["maxReplicas"] = max;
    bump_resource_version(*o);
    co_return true;
  }
  // An object being deleted goes when its last finalizer does.
  async::Task<k8s::Expected<bool>> set_finalizers(const std::string& ns, const std::string& name,
                                                  const std::vector<std::string>& finalizers,
                                                  const std::string&) override {
    for (auto it = objects.begin(); it != objects.end(); ++it) {
      if ((*it)["metadata"]["name"] != name || (*it)["metadata"].value("namespace", "") != ns) continue;
      if (finalizers.empty() && (*it)["metadata"].contains("deletionTimestamp")) objects.erase(it);
      else (*it)["metadata"]["finalizers"] = finalizers;
      co_return true;
    }
    co_return k8s::Error{"federatedhpas \"" + name + "\" not found"};
  }
  async::Task<k8s::Expected<bool>> set_distribution_annotation(const std::string& ns, const std::string& name,
                                                               const std::optional<std::string>& value) override {
    distribution = value;
    annotate(ns, name, "autoscaling.fedmetrics.io/distribution", value);
    co_return true;
  }
  async::Task<k8s::Expected<bool>> set_annotation(const std::string& ns, const std::string& name,
                                                  const std::string& key,
                                                  const std::optional<std::string>& value) override {
    ++annotation_writes[key];
    annotate(ns, name, key, value);
    co_return true;
  }
  std::map<std::string, int> annotation_writes;  // set_annotation calls, per annotation
  // A merge patch of a deleted object has nothing left to annotate.
  void annotate(const std::string& ns, const std::string& name, const std::string& key,
                const std::optional<std::string>& value) {
    json* o = find(ns, name);
    if (o == nullptr) return;
    auto& meta = (*o)["metadata"];
    if (value) meta["annotations"][key] = *value;
    else if (meta.contains("annotations")) meta["annotations"].erase(key);
  }
};

// The scale subresource of one target (named `target`; any other is not found) and its retain label.
struct FakeScaleClient final : controller::ScaleClient {
  std::string target = "web";
  Scale scale{2, 2, "app=web", "7"};
  std::vector<std::int32_t> updates;  // every replica count written
  bool conflict = false;              // every write conflicts
  bool syncer_wins = false;           // a write is answered with `keeps` (the members' sum), not the count written
  std::int32_t keeps = 4;
  std::optional<bool> retain;  // the template's retain-replicas label, as last written
  Held hold_reads;             // get_scale answers when released, with the scale as it is then
  std::string hold_only;       // when set, only the reads of this target are held

  // More targets than `target`, by name, each with its scale; every write to one is in `writes` ("name=replicas").
  std::map<std::string, Scale> others;
  std::vector<std::string> writes;

  async::Task<k8s::Expected<Scale>> get_scale(const std::string&,
                                              const autoscaler::CrossVersionObjectReference& ref) override {
    if (hold_only.empty() || ref.name == hold_only) co_await hold_reads.wait();
    if (auto* other = other_scale(ref.name)) co_return *other;
    if (ref.name != target) co_return k8s::Error{"deployments.apps \"" + ref.name + "\" not found"};
    co_return scale;
  }
  async::Task<k8s::Expected<Scale>> update_scale(const std::string&, const autoscaler::CrossVersionObjectReference& ref,
                                                 std::int32_t replicas, const std::string& rv) override {
    Scale& s = other_scale(ref.name) != nullptr ? *other_scale(ref.name) : scale;
    if (conflict || rv != s.resource_version)
      co_return k8s::Error{"Operation cannot be fulfilled on deployments.apps: the object has been modified"};
    updates.push_back(replicas);
    writes.push_back(ref.name + "=" + std::to_string(replicas));
    s.spec_replicas = syncer_wins ? keeps : replicas;
    s.resource_version = std::to_string(std::stoi(rv) + 1);
    co_return s;
  }
  Scale* other_scale(const std::string& name) {
    auto it = others.find(name);
    return it == others.end() ? nullptr : &it->second;
  }
  async::Task<k8s::Expected<bool>> get_retain_replicas(const std::string&,
                                                       const autoscaler::CrossVersionObjectReference&) override {
    co_return retain.value_or(false);
  }
  async::Task<k8s::Expected<bool>> set_retain_replicas(const std::string&,
                                                       const autoscaler::CrossVersionObjectReference&,
                                                       bool value) override {
    retain = value;
    co_return true;
  }
};

// The targets' ResourceBindings: one placement for every target.
struct FakePlacement final : controller::PlacementReader {
  std::optional<std::vector<TargetCluster>> clusters;           // nullopt: no binding
  bool fails = false;                                           // the binding cannot be read
  std::map<std::string, std::vector<TargetCluster>> by_target;  // a placement of its own, by target name
  async::Task<k8s::Expected<std::optional<std::vector<TargetCluster>>>> target_clusters(
      const std::string&, const autoscaler::CrossVersionObjectReference& ref) override {
    if (fails) co_return k8s::Error{"the server is currently unable to handle the request"};
    if (auto it = by_target.find(ref.name); it != by_target.end())
      co_return std::optional<std::vector<TargetCluster>>(it->second);
    co_return clusters;
  }
};

// The CronFederatedHPAs; a status written is kept on the object.
struct FakeCronStore final : controller::CronStore {
  std::mutex mutex;
  std::vector<json> objects;
  bool status_fails = false;
  int status_writes = 0;
  std::function<void()> on_change;  // set while watched

  async::Task<k8s::Expected<std::vector<json>>> list(const k8s::LabelSelector& selector) override {
    std::vector<json> out;
    std::lock_guard lock(mutex);
    for (const auto& o : objects)
      if (selected(selector, o)) out.push_back(o);
    co_return out;
  }
  async::Task<k8s::Expected<bool>> update_status(const std::string&, const std::string& name,
                                                 const json& status) override {
    if (status_fails) co_return k8s::Error{"etcd timeout"};
    std::lock_guard lock(mutex);
    ++status_writes;
    for (auto& o : objects)
      if (o["metadata"]["name"] == name) o["status"] = status;
    co_return true;
  }
  std::unique_ptr<controller::Watch> watch(const k8s::LabelSelector&, std::function<void()> changed) override {
    on_change = std::move(changed);
    auto w = std::make_unique<FakeWatch>();
    w->on_end = [this] { on_change = nullptr; };
    return w;
  }
  json status(const std::string& name) {
    std::lock_guard lock(mutex);
    for (auto& o : objects)
      if (o["metadata"]["name"] == name) return o.value("status", json::object());
    return {};
  }
};

// Events recorded, as "Type Reason: message".
struct FakeEvents final : controller::EventSink {
  std::mutex mutex;
  std::vector<std::string> recorded;
  std::vector<EventOccurrence> occurrences;
  void record(const EventOccurrence& e) override {
    std::lock_guard lock(mutex);
    recorded.push_back(e.type + " " + e.reason + ": " + e.message);
    occurrences.push_back(e);
  }
};

struct FakeControlPlane {
  std::shared_ptr<FakeFederatedHPAs> federated_hpas = std::make_shared<FakeFederatedHPAs>();
  std::shared_ptr<FakeScaleClient> scales = std::make_shared<FakeScaleClient>();
  std::shared_ptr<FakePlacement> placement = std::make_shared<FakePlacement>();
  std::shared_ptr<FakeCronStore> crons = std::make_shared<FakeCronStore>();
  std::shared_ptr<FakeEvents> events = std::make_shared<FakeEvents>();
  [[nodiscard]] controller::ControlPlanePorts ports() const {
    return {federated_hpas, federated_hpas, scales, placement, crons, events};
  }
};

}  // namespace fedmetrics::testing
