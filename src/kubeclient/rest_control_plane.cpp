#include "fedmetrics/kubeclient/rest_control_plane.hpp"

#include <stdexcept>

#include "fedmetrics/autoscaler/distributor.hpp"
#include "fedmetrics/k8s/karmada_cluster.hpp"
#include "fedmetrics/kube/kubeconfig.hpp"
#include "fedmetrics/kube/reflector.hpp"
#include "kubeclient/collection_watch.hpp"
#include "kubeclient/rest_event_writer.hpp"
#include "kubeclient/rest_json.hpp"

namespace fedmetrics::kubeclient {

using nlohmann::json;

namespace {

kube::ResourcePath scale_path(const std::string& ns, const autoscaler::CrossVersionObjectReference& target) {
  auto path = target_path(ns, target);
  path.subresource = "scale";
  return path;
}

kube::ResourcePath federated_hpa(const std::string& ns, const std::string& name, std::string subresource = {}) {
  auto path = karmada_autoscaling("federatedhpas", ns, name);
  path.subresource = std::move(subresource);
  return path;
}

k8s::Expected<controller::Scale> scale_from(const json& doc) {
  if (!doc.is_object()) return k8s::Error{"the scale subresource answered something else than a Scale"};
  try {
    controller::Scale s;
    const auto& spec = doc.value("spec", json::object());
    const auto& status = doc.value("status", json::object());
    s.spec_replicas = spec.value("replicas", 0);
    s.status_replicas = status.value("replicas", 0);
    s.selector = status.value("selector", "");
    s.resource_version = doc.value("metadata", json::object()).value("resourceVersion", "");
    return s;
  } catch (const json::exception& e) {
    return k8s::Error{std::string("the scale subresource answered a malformed Scale: ") + e.what()};
  }
}

}  // namespace

// The FederatedHPAs' watch, which list() reads from while it lives.
struct RestControlPlane::CacheWatch final : controller::Watch {
  CacheWatch(RestControlPlane& o, std::unique_ptr<CollectionWatch> w) : owner(o), watch(std::move(w)) {}
  RestControlPlane& owner;  // outlives its watches
  std::unique_ptr<CollectionWatch> watch;
  ~CacheWatch() override {
    {
      std::lock_guard lock(owner.cache_mutex_);
      if (owner.cache_ == &watch->reflector()) owner.cache_ = nullptr;
    }
    watch.reset();
  }
};

RestControlPlane::RestControlPlane(kube::ClientRuntime& runtime, const std::string& kubeconfig,
                                   std::chrono::milliseconds timeout)
    : executor_(runtime.executor()), timeout_(timeout) {
  auto endpoint = kube::load_kubeconfig_current_context(kubeconfig);
  if (!endpoint) throw std::runtime_error("--kubeconfig: " + endpoint.error().message);
  try {
    kube::ClientOptions options;
    options.peer_name = "the control plane";
    client_ = std::make_shared<kube::HttpsClient>(runtime, *endpoint, options);
    // The elector makes one call at a time (a GET, then a PUT, every retry
    // period). The user agent names the client, as kube-controller-manager's
    // leader election adds "/leader-election" to its own.
    options.max_connections = 2;
    options.user_agent += "/leader-election";
    lease_client_ = std::make_shared<kube::HttpsClient>(runtime, std::move(*endpoint), options);
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("--kubeconfig: ") + e.what());
  }
  events_ = std::make_shared<controller::EventRecorder>(std::make_shared<RestEventWriter>(client_, timeout_), [] {
    return std::chrono::time_point_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now());
  });
}

RestControlPlane::~RestControlPlane() = default;

controller::ControlPlanePorts RestControlPlane::ports(const std::shared_ptr<RestControlPlane>& control_plane) {
  controller::ControlPlanePorts ports;
  ports.federated_hpas = control_plane;
  ports.federated_hpa_writer = control_plane;
  ports.scales = control_plane;
  ports.placement = control_plane;
  ports.crons = std::make_shared<RestCronStore>(control_plane);
  ports.events = control_plane->events_;
  return ports;
}

std::unique_ptr<controller::Watch> RestControlPlane::watch(const k8s::LabelSelector& selector,
                                                           std::function<void(json)> on_added) {
  auto watch = std::make_unique<CollectionWatch>(client_, executor_, "federatedhpas", "autoscaler: FederatedHPAs",
                                                 selector, timeout_,
                                                 [on_added = std::move(on_added)](const kube::ReflectorChange& change) {
                                                   // An edit too: the loop syncs a new generation at once.
                                                   if (!on_added) return;
                                                   for (const auto& object : change.added) on_added(object);
                                                   for (const auto& object : change.modified) on_added(object);
                                                 });
  std::lock_guard lock(cache_mutex_);
  cache_ = &watch->reflector();
  cached_selector_ = selector.to_string();
  return std::make_unique<CacheWatch>(*this, std::move(watch));
}

async::Task<k8s::Expected<std::vector<json>>> RestControlPlane::list(const k8s::LabelSelector& selector) {
  // From the watch once it has listed; until then (or for another selector) a list.
  {
    std::lock_guard lock(cache_mutex_);
    if (cache_ && cache_->synced() && selector.to_string() == cached_selector_) co_return cache_->items();
  }
  auto op = list_from_server(selector);
  co_return co_await std::move(op);
}

async::Task<k8s::Expected<std::vector<json>>> RestControlPlane::list_from_server(const k8s::LabelSelector& selector) {
  auto op =
      request_json(client_, "GET", karmada_autoscaling("federatedhpas").with("labelSelector", selector.to_string()), "",
                   "", std::chrono::steady_clock::now() + timeout_);
  auto reply = co_await std::move(op);
  co_return items_of(std::move(reply), "FederatedHPA list");
}

async::Task<k8s::Expected<json>> RestControlPlane::get(const std::string& namespace_name, const std::string& name) {
  auto op = request_json(client_, "GET", federated_hpa(namespace_name, name), "", "",
                         std::chrono::steady_clock::now() + timeout_);
  auto reply = co_await std::move(op);
  co_return std::move(reply.body);
}

async::Task<k8s::Expected<bool>> RestControlPlane::update_replicas(const std::string& namespace_name,
                                                                   const std::string& name, std::int32_t min_replicas,
                                                                   std::int32_t max_replicas,
                                                                   const std::string& resource_version) {
  // A merge patch carrying metadata.resourceVersion is conditional on it
  // (409 Conflict when the object changed since it was read).
  json patch = {{"metadata", {{"resourceVersion", resource_version}}},
                {"spec", {{"minReplicas", min_replicas}, {"maxReplicas", max_replicas}}}};
  auto op = request_json(client_, "PATCH", federated_hpa(namespace_name, name), "application/merge-patch+json",
                         patch.dump(), std::chrono::steady_clock::now() + timeout_);
  auto reply = co_await std::move(op);
  co_return written(reply);
}

async::Task<k8s::Expected<bool>> RestControlPlane::update_status(const std::string& namespace_name,
                                                                 const std::string& name, const json& status) {
  // A merge patch keeps fields the new status leaves out: clear them explicitly.
  json cleared = status;
  for (const char* field : {"observedGeneration", "lastScaleTime", "currentMetrics", "conditions"})
    if (!cleared.contains(field)) cleared[field] = nullptr;
  auto op =
      request_json(client_, "PATCH", federated_hpa(namespace_name, name, "status"), "application/merge-patch+json",
                   json{{"status", std::move(cleared)}}.dump(), std::chrono::steady_clock::now() + timeout_);
  auto reply = co_await std::move(op);
  co_return written(reply);
}

async::Task<k8s::Expected<bool>> RestControlPlane::set_finalizers(const std::string& namespace_name,
                                                                  const std::string& name,
                                                                  const std::vector<std::string>& finalizers,
                                                                  const std::string& resource_version) {
  // A merge patch replaces the whole list: conditional on the resourceVersion
  // it was read at, so that a finalizer another controller added meanwhile is
  // not lost (409 Conflict instead).
  json patch = {{"metadata", {{"resourceVersion", resource_version}, {"finalizers", finalizers}}}};
  auto op = request_json(client_, "PATCH", federated_hpa(namespace_name, name), "application/merge-patch+json",
                         patch.dump(), std::chrono::steady_clock::now() + timeout_);
  auto reply = co_await std::move(op);
  co_return written(reply);
}

async::Task<k8s::Expected<bool>> RestControlPlane::set_distribution_annotation(
    const std::string& namespace_name, const std::string& name, const std::optional<std::string>& value) {
  const std::string key(autoscaler::kDistributionAnnotation);
  auto op = set_annotation(namespace_name, name, key, value);
  co_return co_await std::move(op);
}

async::Task<k8s::Expected<bool>> RestControlPlane::set_annotation(const std::string& namespace_name,
                                                                  const std::string& name, const std::string& key,
                                                                  const std::optional<std::string>& value) {
  // A merge patch of the one annotation; null removes it.
  json annotation = value ? json(*value) : json(nullptr);
  json patch = {{"metadata", {{"annotations", {{key, annotation}}}}}};
  auto op = request_json(client_, "PATCH", federated_hpa(namespace_name, name), "application/merge-patch+json",
                         patch.dump(), std::chrono::steady_clock::now() + timeout_);
  auto reply = co_await std::move(op);
  co_return written(reply);
}

async::Task<k8s::Expected<controller::Scale>> RestControlPlane::get_scale(
    const std::string& namespace_name, const autoscaler::CrossVersionObjectReference& target) {
  auto op = request_json(client_, "GET", scale_path(namespace_name, target), "", "",
                         std::chrono::steady_clock::now() + timeout_);
  auto reply = co_await std::move(op);
  if (!reply.body) co_return reply.body.error();
  co_return scale_from(*reply.body);
}

async::Task<k8s::Expected<controller::Scale>> RestControlPlane::update_scale(
    const std::string& namespace_name, const autoscaler::CrossVersionObjectReference& target, std::int32_t replicas,
    const std::string& resource_version) {
  json scale = {
      {"apiVersion", "autoscaling/v1"},
      {"kind", "Scale"},
      {"metadata", {{"name", target.name}, {"namespace", namespace_name}, {"resourceVersion", resource_version}}},
      {"spec", {{"replicas", replicas}}}};
  auto op = request_json(client_, "PUT", scale_path(namespace_name, target), "application/json", scale.dump(),
                         std::chrono::steady_clock::now() + timeout_);
  auto reply = co_await std::move(op);
  if (!reply.body) co_return reply.body.error();
  co_return scale_from(*reply.body);
}

async::Task<k8s::Expected<bool>> RestControlPlane::set_retain_replicas(
    const std::string& namespace_name, const autoscaler::CrossVersionObjectReference& target, bool retain) {
  // A merge patch of the one label: the template's other labels and its spec stay as they are.
  json value = retain ? json("true") : json(nullptr);
  json patch = {{"metadata", {{"labels", {{std::string(autoscaler::kRetainReplicasLabel), value}}}}}};
  auto op = request_json(client_, "PATCH", target_path(namespace_name, target), "application/merge-patch+json",
                         patch.dump(), std::chrono::steady_clock::now() + timeout_);
  auto reply = co_await std::move(op);
  // A target that is gone has no label left to remove.
  if (reply.status == 404 && !retain) co_return false;
  co_return written(reply);
}

async::Task<k8s::Expected<bool>> RestControlPlane::get_retain_replicas(
    const std::string& namespace_name, const autoscaler::CrossVersionObjectReference& target) {
  auto op = request_json(client_, "GET", target_path(namespace_name, target), "", "",
                         std::chrono::steady_clock::now() + timeout_);
  auto reply = co_await std::move(op);
  if (!reply.body) co_return reply.body.error();
  const auto meta = reply.body->value("metadata", json::object());
  const auto labels = meta.is_object() ? meta.value("labels", json::object()) : json::object();
  const auto it = labels.is_object() ? labels.find(std::string(autoscaler::kRetainReplicasLabel)) : labels.end();
  co_return it != labels.end() && it->is_string() && it->get<std::string>() == "true";
}

async::Task<k8s::Expected<std::optional<std::vector<controller::TargetCluster>>>> RestControlPlane::target_clusters(
    const std::string& namespace_name, const autoscaler::CrossVersionObjectReference& target) {
  using Clusters = std::optional<std::vector<controller::TargetCluster>>;
  const auto binding = kube::ResourcePath::in_group("work.karmada.io", "v1alpha2", "resourcebindings", namespace_name,
                                                    k8s::resource_binding_name(target.name, target.kind));
  auto op = request_json(client_, "GET", binding, "", "", std::chrono::steady_clock::now() + timeout_);
  auto reply = co_await std::move(op);
  // No binding (not propagated by Karmada, or no Karmada at all): every member.
  if (reply.status == 404) co_return Clusters();
  if (!reply.body) co_return reply.body.error();
  try {
    std::vector<controller::TargetCluster> clusters;
    for (const auto& c : reply.body->value("spec", json::object()).value("clusters", json::array()))
      clusters.push_back({c.at("name").get<std::string>(), c.value("replicas", std::int32_t{0})});
    co_return Clusters(std::move(clusters));
  } catch (const json::exception& e) {
    co_return k8s::Error{"GET " + binding.target() + ": a malformed ResourceBinding: " + e.what()};
  }
}

}  // namespace fedmetrics::kubeclient
