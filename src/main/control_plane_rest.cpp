#include "main/control_plane_rest.hpp"

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

// The target template itself (a Deployment in the control plane).
std::string target_path(const std::string& ns, const autoscaler::CrossVersionObjectReference& target) {
  auto r = controller::target_resource(target);
  std::string base = r.group.empty() ? "/api/" + r.version : "/apis/" + r.group + "/" + r.version;
  return base + "/namespaces/" + kube::escape_path_segment(ns) + "/" + r.resource + "/" +
         kube::escape_path_segment(target.name);
}

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
class RestEventSink : public controller::EventSink {
 public:
  RestEventSink(std::shared_ptr<kube::HttpsClient> client, std::chrono::milliseconds timeout)
      : client_(std::move(client)), timeout_(timeout) {}

  void create_event(const controller::Event& e, controller::Done<bool> done) override {
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
              std::chrono::steady_clock::now() + timeout_, [done = std::move(done)](int, k8s::Expected<json> doc) {
                if (!doc) return done(doc.error());
                done(true);
              });
  }

  void patch_event(const controller::Event& e, controller::Done<bool> done) override {
    json patch = {{"count", e.count}, {"lastTimestamp", k8s::format_time(e.last_timestamp)}, {"message", e.message}};
    send_json(*client_, "PATCH", events_path(e.subject.namespace_name) + "/" + kube::escape_path_segment(e.name),
              "application/merge-patch+json", patch.dump(), std::chrono::steady_clock::now() + timeout_,
              [done = std::move(done)](int status, k8s::Expected<json> doc) {
                if (status == 404) return done(false);
                if (!doc) return done(doc.error());
                done(true);
              });
  }

 private:
  static std::string events_path(const std::string& ns) {
    return "/api/v1/namespaces/" + kube::escape_path_segment(ns) + "/events";
  }
  std::shared_ptr<kube::HttpsClient> client_;
  std::chrono::milliseconds timeout_;
};

}  // namespace

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
  events_ = std::make_unique<controller::EventRecorder>(std::make_shared<RestEventSink>(client_, timeout_), [] {
    return std::chrono::time_point_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now());
  });
}

void RestControlPlane::call(std::string method, std::string path, std::string content_type, std::string body,
                            controller::Done<json> done) {
  call_with_status(std::move(method), std::move(path), std::move(content_type), std::move(body),
                   [done = std::move(done)](int, k8s::Expected<json> doc) { done(std::move(doc)); });
}

void RestControlPlane::call_with_status(std::string method, std::string path, std::string content_type,
                                        std::string body, std::function<void(int, k8s::Expected<json>)> done) {
  call_until(std::move(method), std::move(path), std::move(content_type), std::move(body),
             std::chrono::steady_clock::now() + timeout_, std::move(done));
}

void RestControlPlane::call_until(std::string method, std::string path, std::string content_type, std::string body,
                                  std::chrono::steady_clock::time_point deadline,
                                  std::function<void(int, k8s::Expected<json>)> done) {
  send_json(*client_, std::move(method), std::move(path), std::move(content_type), std::move(body), deadline,
            std::move(done));
}

RestControlPlane::~RestControlPlane() { stop_watching(); }

void RestControlPlane::stop_watching() {
  if (federated_hpas_) federated_hpas_->stop();
  if (cron_federated_hpas_) cron_federated_hpas_->stop();
}

void RestControlPlane::watch(std::unique_ptr<kube::Reflector>& reflector, std::string* watched_selector,
                             const std::string& resource, const char* what, const k8s::LabelSelector& selector,
                             std::function<void(const kube::ReflectorChange&)> on_change) {
  if (reflector) reflector->stop();
  kube::ReflectorOptions options;
  options.what = what;
  options.collection =
      kube::ResourcePath::in_group("autoscaling.karmada.io", "v1alpha1", resource).with("labelSelector", selector.to_string());
  options.request_timeout = timeout_;
  if (watched_selector != nullptr) *watched_selector = selector.to_string();
  reflector = std::make_unique<kube::Reflector>(client_, options, std::move(on_change));
  reflector->start();
}

void RestControlPlane::watch_cron_federated_hpas(const k8s::LabelSelector& selector, std::function<void()> on_change) {
  watch(cron_federated_hpas_, nullptr, "cronfederatedhpas", "cron: CronFederatedHPAs", selector,
        [on_change = std::move(on_change)](const kube::ReflectorChange&) {
          if (on_change) on_change();
        });
}

void RestControlPlane::watch_federated_hpas(const k8s::LabelSelector& selector,
                                            std::function<void(nlohmann::json)> on_added) {
  watch(federated_hpas_, &watched_selector_, "federatedhpas", "autoscaler: FederatedHPAs", selector,
        [on_added = std::move(on_added)](const kube::ReflectorChange& change) {
          if (on_added)
            for (const auto& object : change.added) on_added(object);
        });
}

void RestControlPlane::list_federated_hpas(const k8s::LabelSelector& selector,
                                           controller::Done<std::vector<json>> done) {
  // From the watch once it has listed; until then (or for another selector) a list.
  if (federated_hpas_ && federated_hpas_->synced() && selector.to_string() == watched_selector_)
    return done(federated_hpas_->items());
  list_items("federatedhpas", "FederatedHPA", selector, std::move(done));
}

void RestControlPlane::list_cron_federated_hpas(const k8s::LabelSelector& selector,
                                                controller::Done<std::vector<json>> done) {
  // Never from the watch's cache: the status it holds may lag a change of leader.
  list_items("cronfederatedhpas", "CronFederatedHPA", selector, std::move(done));
}

void RestControlPlane::list_federated_hpas_from_server(const k8s::LabelSelector& selector,
                                                       controller::Done<std::vector<json>> done) {
  list_items("federatedhpas", "FederatedHPA", selector, std::move(done));
}

void RestControlPlane::list_items(const std::string& resource, const std::string& kind,
                                  const k8s::LabelSelector& selector, controller::Done<std::vector<json>> done) {
  std::string path = std::string(kFederatedHpas) + "/" + resource;
  if (!selector.empty()) path += "?labelSelector=" + kube::escape_query_value(selector.to_string());
  call("GET", path, "", "", [done = std::move(done), kind](k8s::Expected<json> doc) {
    if (!doc) return done(doc.error());
    if (!doc->contains("items") || !(*doc)["items"].is_array()) return done(k8s::Error{kind + " list without items"});
    std::vector<json> items((*doc)["items"].begin(), (*doc)["items"].end());
    done(std::move(items));
  });
}

std::string RestControlPlane::object_path(const std::string& resource, const std::string& namespace_name,
                                          const std::string& name) {
  return std::string(kFederatedHpas) + "/namespaces/" + kube::escape_path_segment(namespace_name) + "/" +
         resource + "/" + kube::escape_path_segment(name);
}

void RestControlPlane::get_federated_hpa(const std::string& namespace_name, const std::string& name,
                                         controller::Done<json> done) {
  call("GET", object_path("federatedhpas", namespace_name, name), "", "", std::move(done));
}

void RestControlPlane::update_federated_hpa_replicas(const std::string& namespace_name, const std::string& name,
                                                     std::int32_t min_replicas, std::int32_t max_replicas,
                                                     const std::string& resource_version, controller::Done<bool> done) {
  // A merge patch carrying metadata.resourceVersion is conditional on it
  // (409 Conflict when the object changed since it was read).
  json patch = {{"metadata", {{"resourceVersion", resource_version}}},
                {"spec", {{"minReplicas", min_replicas}, {"maxReplicas", max_replicas}}}};
  call("PATCH", object_path("federatedhpas", namespace_name, name), "application/merge-patch+json", patch.dump(),
       [done = std::move(done)](k8s::Expected<json> doc) {
         if (!doc) return done(doc.error());
         done(true);
       });
}

void RestControlPlane::update_cron_status(const std::string& namespace_name, const std::string& name, json status,
                                          controller::Done<bool> done) {
  call("PATCH", object_path("cronfederatedhpas", namespace_name, name) + "/status", "application/merge-patch+json",
       json{{"status", std::move(status)}}.dump(), [done = std::move(done)](k8s::Expected<json> doc) {
         if (!doc) return done(doc.error());
         done(true);
       });
}

void RestControlPlane::get_scale(const std::string& namespace_name, const autoscaler::CrossVersionObjectReference& target,
                                 controller::Done<controller::Scale> done) {
  call("GET", scale_path(namespace_name, target), "", "", [done = std::move(done)](k8s::Expected<json> doc) {
    if (!doc) return done(doc.error());
    done(scale_from(*doc));
  });
}

void RestControlPlane::update_scale(const std::string& namespace_name,
                                    const autoscaler::CrossVersionObjectReference& target, std::int32_t replicas,
                                    const std::string& resource_version, controller::Done<controller::Scale> done) {
  json scale = {{"apiVersion", "autoscaling/v1"},
                {"kind", "Scale"},
                {"metadata", {{"name", target.name}, {"namespace", namespace_name}, {"resourceVersion", resource_version}}},
                {"spec", {{"replicas", replicas}}}};
  call("PUT", scale_path(namespace_name, target), "application/json", scale.dump(),
       [done = std::move(done)](k8s::Expected<json> doc) {
         if (!doc) return done(doc.error());
         done(scale_from(*doc));
       });
}

void RestControlPlane::get_target_clusters(const std::string& namespace_name,
                                           const autoscaler::CrossVersionObjectReference& target,
                                           controller::Done<std::optional<std::vector<controller::TargetCluster>>> done) {
  const std::string binding = k8s::resource_binding_name(target.name, target.kind);
  const std::string path = "/apis/work.karmada.io/v1alpha2/namespaces/" + kube::escape_path_segment(namespace_name) +
                           "/resourcebindings/" + kube::escape_path_segment(binding);
  call_with_status("GET", path, "", "", [done = std::move(done), path](int status, k8s::Expected<json> doc) {
    using Clusters = std::optional<std::vector<controller::TargetCluster>>;
    // No binding (not propagated by Karmada, or no Karmada at all): every member.
    if (status == 404) return done(Clusters());
    if (!doc) return done(doc.error());
    try {
      std::vector<controller::TargetCluster> clusters;
      for (const auto& c : doc->value("spec", json::object()).value("clusters", json::array()))
        clusters.push_back({c.at("name").get<std::string>(), c.value("replicas", std::int32_t{0})});
      done(Clusters(std::move(clusters)));
    } catch (const json::exception& e) {
      done(k8s::Error{"GET " + path + ": a malformed ResourceBinding: " + e.what()});
    }
  });
}

void RestControlPlane::update_status(const std::string& namespace_name, const std::string& name, json status,
                                     controller::Done<bool> done) {
  // A merge patch keeps fields the new status leaves out: clear them explicitly.
  for (const char* field : {"observedGeneration", "lastScaleTime", "currentMetrics", "conditions"})
    if (!status.contains(field)) status[field] = nullptr;
  call("PATCH",
       std::string(kFederatedHpas) + "/namespaces/" + kube::escape_path_segment(namespace_name) +
           "/federatedhpas/" + kube::escape_path_segment(name) + "/status",
       "application/merge-patch+json", json{{"status", std::move(status)}}.dump(),
       [done = std::move(done)](k8s::Expected<json> doc) {
         if (!doc) return done(doc.error());
         done(true);
       });
}

void RestControlPlane::set_retain_replicas(const std::string& namespace_name,
                                           const autoscaler::CrossVersionObjectReference& target, bool retain,
                                           controller::Done<bool> done) {
  // A merge patch of the one label: the template's other labels and its spec stay as they are.
  json value = retain ? json("true") : json(nullptr);
  json patch = {{"metadata", {{"labels", {{std::string(autoscaler::kRetainReplicasLabel), value}}}}}};
  call_with_status("PATCH", target_path(namespace_name, target), "application/merge-patch+json", patch.dump(),
                   [done = std::move(done), retain](int status, k8s::Expected<json> doc) {
                     // A target that is gone has no label left to remove.
                     if (status == 404 && !retain) return done(false);
                     if (!doc) return done(doc.error());
                     done(true);
                   });
}

void RestControlPlane::get_retain_replicas(const std::string& namespace_name,
                                           const autoscaler::CrossVersionObjectReference& target,
                                           controller::Done<bool> done) {
  call("GET", target_path(namespace_name, target), "", "", [done = std::move(done)](k8s::Expected<json> doc) {
    if (!doc) return done(doc.error());
    const auto meta = doc->value("metadata", json::object());
    const auto labels = meta.is_object() ? meta.value("labels", json::object()) : json::object();
    const auto it = labels.is_object() ? labels.find(std::string(autoscaler::kRetainReplicasLabel)) : labels.end();
    done(it != labels.end() && it->is_string() && it->get<std::string>() == "true");
  });
}

void RestControlPlane::set_federated_hpa_finalizers(const std::string& namespace_name, const std::string& name,
                                                    std::vector<std::string> finalizers,
                                                    const std::string& resource_version, controller::Done<bool> done) {
  // A merge patch replaces the whole list: conditional on the resourceVersion
  // it was read at, so that a finalizer another controller added meanwhile is
  // not lost (409 Conflict instead).
  json patch = {{"metadata", {{"resourceVersion", resource_version}, {"finalizers", std::move(finalizers)}}}};
  call("PATCH", object_path("federatedhpas", namespace_name, name), "application/merge-patch+json", patch.dump(),
       [done = std::move(done)](k8s::Expected<json> doc) {
         if (!doc) return done(doc.error());
         done(true);
       });
}

void RestControlPlane::set_distribution_annotation(const std::string& namespace_name, const std::string& name,
                                                   std::optional<std::string> value, controller::Done<bool> done) {
  json annotation = value ? json(std::move(*value)) : json(nullptr);
  json patch = {{"metadata", {{"annotations", {{std::string(autoscaler::kDistributionAnnotation), annotation}}}}}};
  call("PATCH",
       std::string(kFederatedHpas) + "/namespaces/" + kube::escape_path_segment(namespace_name) +
           "/federatedhpas/" + kube::escape_path_segment(name),
       "application/merge-patch+json", patch.dump(), [done = std::move(done)](k8s::Expected<json> doc) {
         if (!doc) return done(doc.error());
         done(true);
       });
}

void RestControlPlane::record_event(const controller::EventSubject& subject, const std::string& type,
                                    const std::string& reason, const std::string& message) {
  events_->record({subject, type, reason, message});
}

// The HTTPS client answers every request by its deadline (https_client.hpp).
void RestLeaseClient::get(const std::string& ns, const std::string& name, Deadline deadline,
                          controller::Done<std::optional<json>> done) {
  control_plane_->call_until("GET", "/apis/coordination.k8s.io/v1/namespaces/" + ns + "/leases/" + name, "", "",
                             deadline, [done = std::move(done)](int status, k8s::Expected<json> doc) {
                               if (doc) return done(std::optional<json>(std::move(*doc)));
                               if (status == 404) return done(std::optional<json>());
                               done(doc.error());
                             });
}

void RestLeaseClient::create(const std::string& ns, const json& lease, Deadline deadline,
                             controller::Done<json> done) {
  control_plane_->call_until("POST", "/apis/coordination.k8s.io/v1/namespaces/" + ns + "/leases", "application/json",
                             lease.dump(), deadline,
                             [done = std::move(done)](int, k8s::Expected<json> doc) { done(std::move(doc)); });
}

void RestLeaseClient::update(const std::string& ns, const std::string& name, const json& lease, Deadline deadline,
                             controller::Done<json> done) {
  control_plane_->call_until("PUT", "/apis/coordination.k8s.io/v1/namespaces/" + ns + "/leases/" + name,
                             "application/json", lease.dump(), deadline,
                             [done = std::move(done)](int, k8s::Expected<json> doc) { done(std::move(doc)); });
}

}  // namespace fedmetrics::cli
