#include "main/control_plane_rest.hpp"

#include "fedmetrics/transport/async.hpp"

#include <atomic>
#include <stdexcept>

#include <spdlog/spdlog.h>

#include "fedmetrics/autoscaler/distributor.hpp"
#include "fedmetrics/kube/kubeconfig.hpp"
#include "fedmetrics/kube/resource_path.hpp"
#include "fedmetrics/k8s/karmada_cluster.hpp"
#include "fedmetrics/k8s/status.hpp"
#include "fedmetrics/k8s/time.hpp"
#include "main/rest_json.hpp"

namespace fedmetrics::cli {

using nlohmann::json;

namespace {

constexpr std::string_view kFederatedHpas = "/apis/autoscaling.karmada.io/v1alpha1";

std::string scale_path(const std::string& ns, const autoscaler::CrossVersionObjectReference& target) {
  return target_path(ns, target) + "/scale";
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

// core/v1 Events, written as the EventRecorder decides (POST a new one,
// merge-PATCH the count of an existing one).
class RestEventWriter : public controller::EventWriter {
 public:
  RestEventWriter(std::shared_ptr<kube::HttpsClient> client, std::chrono::milliseconds timeout)
      : client_(std::move(client)), timeout_(timeout) {}

  void create_event(const controller::Event& e, Done done) override {
    json event = {{"apiVersion", "v1"},
                  {"kind", "Event"},
                  {"metadata", {{"name", e.name}, {"namespace", e.subject.namespace_name}}},
                  {"involvedObject",
                   {{"apiVersion", "autoscaling.karmada.io/v1alpha1"},
                    {"kind", e.subject.kind},
                    {"name", e.subject.name},
                    {"namespace", e.subject.namespace_name},
                    {"uid", e.subject.uid}}},
                  {"reason", e.reason},
                  {"message", e.message},
                  {"type", e.type},
                  {"count", e.count},
                  {"firstTimestamp", k8s::format_time(e.first_timestamp)},
                  {"lastTimestamp", k8s::format_time(e.last_timestamp)},
                  {"source", {{"component", "fedmetrics-autoscaler"}}},
                  {"reportingComponent", "fedmetrics-autoscaler"}};
    send_json(*client_, "POST", events_path(e.subject.namespace_name), "application/json", event.dump(),
              std::chrono::steady_clock::now() + timeout_,
              [done = std::move(done)](JsonReply reply) { done(written(reply)); });
  }

  void patch_event(const controller::Event& e, Done done) override {
    json patch = {{"count", e.count}, {"lastTimestamp", k8s::format_time(e.last_timestamp)}, {"message", e.message}};
    send_json(*client_, "PATCH", events_path(e.subject.namespace_name) + "/" + kube::escape_path_segment(e.name),
              "application/merge-patch+json", patch.dump(), std::chrono::steady_clock::now() + timeout_,
              [done = std::move(done)](JsonReply reply) {
                if (reply.status == 404) return done(false);
                done(written(reply));
              });
  }

 private:
  static std::string events_path(const std::string& ns) {
    return "/api/v1/namespaces/" + kube::escape_path_segment(ns) + "/events";
  }
  std::shared_ptr<kube::HttpsClient> client_;
  std::chrono::milliseconds timeout_;
};

std::string selector_query(const k8s::LabelSelector& selector) {
  if (selector.empty()) return {};
  return "?labelSelector=" + kube::escape_query_value(selector.to_string());
}

std::string lease_path(const std::string& ns) {
  return "/apis/coordination.k8s.io/v1/namespaces/" + kube::escape_path_segment(ns) + "/leases";
}

}  // namespace

// A watch of a collection: the reflector runs while this lives.
struct RestControlPlane::CacheWatch final : controller::Watch {
  RestControlPlane* owner = nullptr;  // set when list() is served from it; the owner outlives its watches
  std::shared_ptr<kube::Reflector> reflector;
  ~CacheWatch() override {
    if (owner != nullptr) {
      std::lock_guard lock(owner->cache_mutex_);
      if (owner->cache_ == reflector) owner->cache_.reset();
    }
    reflector->stop();
  }
};

RestControlPlane::RestControlPlane(kube::ClientRuntime& runtime, const std::string& kubeconfig,
                                   std::chrono::milliseconds timeout)
    : timeout_(timeout) {
  auto endpoint = kube::load_kubeconfig_current_context(kubeconfig);
  if (!endpoint) throw std::runtime_error("--kubeconfig: " + endpoint.error().message);
  try {
    kube::ClientOptions options;
    options.peer_name = "the control plane";
    client_ = std::make_shared<kube::HttpsClient>(runtime, std::move(*endpoint), options);
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("--kubeconfig: ") + e.what());
  }
  events_ = std::make_shared<controller::EventRecorder>(std::make_shared<RestEventWriter>(client_, timeout_), [] {
    return std::chrono::time_point_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now());
  });
}

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

async::Task<JsonReply> RestControlPlane::call(std::string method, std::string path, std::string content_type,
                                              std::string body) {
  auto op = call_until(std::move(method), std::move(path), std::move(content_type), std::move(body),
                       std::chrono::steady_clock::now() + timeout_);
  co_return co_await std::move(op);
}

async::Task<JsonReply> RestControlPlane::call_until(std::string method, std::string path, std::string content_type,
                                                    std::string body, std::chrono::steady_clock::time_point deadline) {
  // The operation built first: its by-value arguments are not temporaries of the co_await (GCC 12).
  auto op =
      request_json(*client_, std::move(method), std::move(path), std::move(content_type), std::move(body), deadline);
  co_return co_await std::move(op);
}

std::unique_ptr<controller::Watch> RestControlPlane::watch_collection(
    const std::string& resource, const char* what, const k8s::LabelSelector& selector,
    std::function<void(const kube::ReflectorChange&)> on_change, bool serves_list) {
  kube::ReflectorOptions options;
  options.what = what;
  options.collection = kube::ResourcePath::in_group("autoscaling.karmada.io", "v1alpha1", resource)
                           .with("labelSelector", selector.to_string());
  options.request_timeout = timeout_;
  auto watch = std::make_unique<CacheWatch>();
  watch->reflector = std::make_shared<kube::Reflector>(client_, options, std::move(on_change));
  if (serves_list) {
    watch->owner = this;
    std::lock_guard lock(cache_mutex_);
    cache_ = watch->reflector;
    cached_selector_ = selector.to_string();
  }
  watch->reflector->start();
  return watch;
}

std::unique_ptr<controller::Watch> RestControlPlane::watch(const k8s::LabelSelector& selector,
                                                           std::function<void(json)> on_added) {
  return watch_collection(
      "federatedhpas", "autoscaler: FederatedHPAs", selector,
      [on_added = std::move(on_added)](const kube::ReflectorChange& change) {
        if (!on_added) return;
        for (const auto& object : change.added) on_added(object);
        for (const auto& object : change.modified) on_added(object);
      },
      /*serves_list=*/true);
}

async::Task<k8s::Expected<std::vector<json>>> RestControlPlane::list(const k8s::LabelSelector& selector) {
  // From the watch once it has listed; until then (or for another selector) a list.
  {
    std::lock_guard lock(cache_mutex_);
    if (cache_ && cache_->synced() && selector.to_string() == cached_selector_) co_return cache_->items();
  }
  auto op = list_items("federatedhpas", "FederatedHPA", selector);
  co_return co_await std::move(op);
}

async::Task<k8s::Expected<std::vector<json>>> RestControlPlane::list_from_server(const k8s::LabelSelector& selector) {
  auto op = list_items("federatedhpas", "FederatedHPA", selector);
  co_return co_await std::move(op);
}

async::Task<k8s::Expected<std::vector<json>>> RestControlPlane::list_items(std::string resource, std::string kind,
                                                                           const k8s::LabelSelector& selector) {
  auto op = call("GET", std::string(kFederatedHpas) + "/" + resource + selector_query(selector), "", "");
  auto reply = co_await std::move(op);
  if (!reply.body) co_return reply.body.error();
  auto& doc = *reply.body;
  if (!doc.contains("items") || !doc["items"].is_array()) co_return k8s::Error{kind + " list without items"};
  co_return std::vector<json>(doc["items"].begin(), doc["items"].end());
}

std::string RestControlPlane::object_path(const std::string& resource, const std::string& namespace_name,
                                          const std::string& name) {
  return std::string(kFederatedHpas) + "/namespaces/" + kube::escape_path_segment(namespace_name) + "/" + resource +
         "/" + kube::escape_path_segment(name);
}

async::Task<k8s::Expected<json>> RestControlPlane::get(const std::string& namespace_name, const std::string& name) {
  auto op = call("GET", object_path("federatedhpas", namespace_name, name), "", "");
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
  auto op =
      call("PATCH", object_path("federatedhpas", namespace_name, name), "application/merge-patch+json", patch.dump());
  auto reply = co_await std::move(op);
  co_return written(reply);
}

async::Task<k8s::Expected<bool>> RestControlPlane::update_status(const std::string& namespace_name,
                                                                 const std::string& name, const json& status) {
  // A merge patch keeps fields the new status leaves out: clear them explicitly.
  json cleared = status;
  for (const char* field : {"observedGeneration", "lastScaleTime", "currentMetrics", "conditions"})
    if (!cleared.contains(field)) cleared[field] = nullptr;
  auto op = call("PATCH", object_path("federatedhpas", namespace_name, name) + "/status",
                 "application/merge-patch+json", json{{"status", std::move(cleared)}}.dump());
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
  auto op =
      call("PATCH", object_path("federatedhpas", namespace_name, name), "application/merge-patch+json", patch.dump());
  auto reply = co_await std::move(op);
  co_return written(reply);
}

async::Task<k8s::Expected<bool>> RestControlPlane::set_distribution_annotation(
    const std::string& namespace_name, const std::string& name, const std::optional<std::string>& value) {
  json annotation = value ? json(*value) : json(nullptr);
  json patch = {{"metadata", {{"annotations", {{std::string(autoscaler::kDistributionAnnotation), annotation}}}}}};
  auto op =
      call("PATCH", object_path("federatedhpas", namespace_name, name), "application/merge-patch+json", patch.dump());
  auto reply = co_await std::move(op);
  co_return written(reply);
}

async::Task<k8s::Expected<controller::Scale>> RestControlPlane::get_scale(
    const std::string& namespace_name, const autoscaler::CrossVersionObjectReference& target) {
  auto op = call("GET", scale_path(namespace_name, target), "", "");
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
  auto op = call("PUT", scale_path(namespace_name, target), "application/json", scale.dump());
  auto reply = co_await std::move(op);
  if (!reply.body) co_return reply.body.error();
  co_return scale_from(*reply.body);
}

async::Task<k8s::Expected<bool>> RestControlPlane::set_retain_replicas(
    const std::string& namespace_name, const autoscaler::CrossVersionObjectReference& target, bool retain) {
  // A merge patch of the one label: the template's other labels and its spec stay as they are.
  json value = retain ? json("true") : json(nullptr);
  json patch = {{"metadata", {{"labels", {{std::string(autoscaler::kRetainReplicasLabel), value}}}}}};
  auto op = call("PATCH", target_path(namespace_name, target), "application/merge-patch+json", patch.dump());
  auto reply = co_await std::move(op);
  // A target that is gone has no label left to remove.
  if (reply.status == 404 && !retain) co_return false;
  co_return written(reply);
}

async::Task<k8s::Expected<bool>> RestControlPlane::get_retain_replicas(
    const std::string& namespace_name, const autoscaler::CrossVersionObjectReference& target) {
  auto op = call("GET", target_path(namespace_name, target), "", "");
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
  const std::string binding = k8s::resource_binding_name(target.name, target.kind);
  const std::string path = "/apis/work.karmada.io/v1alpha2/namespaces/" + kube::escape_path_segment(namespace_name) +
                           "/resourcebindings/" + kube::escape_path_segment(binding);
  auto op = call("GET", path, "", "");
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
    co_return k8s::Error{"GET " + path + ": a malformed ResourceBinding: " + e.what()};
  }
}

async::Task<k8s::Expected<std::vector<json>>> RestCronStore::list(const k8s::LabelSelector& selector) {
  // Never from a watch's cache: the status it holds may lag a change of leader.
  auto op = control_plane_->list_items("cronfederatedhpas", "CronFederatedHPA", selector);
  co_return co_await std::move(op);
}

async::Task<k8s::Expected<bool>> RestCronStore::update_status(const std::string& namespace_name,
                                                              const std::string& name, const json& status) {
  auto op = control_plane_->call("PATCH",
                                 RestControlPlane::object_path("cronfederatedhpas", namespace_name, name) + "/status",
                                 "application/merge-patch+json", json{{"status", status}}.dump());
  auto reply = co_await std::move(op);
  co_return written(reply);
}

std::unique_ptr<controller::Watch> RestCronStore::watch(const k8s::LabelSelector& selector,
                                                        std::function<void()> on_change) {
  return control_plane_->watch_collection(
      "cronfederatedhpas", "cron: CronFederatedHPAs", selector,
      [on_change = std::move(on_change)](const kube::ReflectorChange&) {
        if (on_change) on_change();
      },
      /*serves_list=*/false);
}

// The HTTPS client answers every request by its deadline (https_client.hpp).
async::Task<k8s::Expected<std::optional<json>>> RestLeaseClient::get(const std::string& ns, const std::string& name,
                                                                     Deadline deadline) {
  auto op = control_plane_->call_until("GET", lease_path(ns) + "/" + kube::escape_path_segment(name), "", "", deadline);
  auto reply = co_await std::move(op);
  if (reply.body) co_return std::optional<json>(std::move(*reply.body));
  if (reply.status == 404) co_return std::optional<json>();
  co_return reply.body.error();
}

async::Task<k8s::Expected<json>> RestLeaseClient::create(const std::string& ns, const json& lease, Deadline deadline) {
  auto op = control_plane_->call_until("POST", lease_path(ns), "application/json", lease.dump(), deadline);
  auto reply = co_await std::move(op);
  co_return std::move(reply.body);
}

async::Task<k8s::Expected<json>> RestLeaseClient::update(const std::string& ns, const std::string& name,
                                                         const json& lease, Deadline deadline) {
  auto op = control_plane_->call_until("PUT", lease_path(ns) + "/" + kube::escape_path_segment(name),
                                       "application/json", lease.dump(), deadline);
  auto reply = co_await std::move(op);
  co_return std::move(reply.body);
}

}  // namespace fedmetrics::cli
