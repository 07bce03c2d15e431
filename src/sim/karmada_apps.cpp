// apps/v1 on the simulated control plane: Deployments as read (status from
// the simulated pods), their scale subresource, edits that move the pods,
// and the ResourceBindings (work.karmada.io) that follow their placement.
#include <map>
#include <string>
#include <string_view>
#include <utility>

#include "fedmetrics/k8s/ascii.hpp"
#include "fedmetrics/k8s/karmada_cluster.hpp"
#include "fedmetrics/k8s/label_selector.hpp"
#include "fedmetrics/sim/deployment.hpp"
#include "sim/http_util.hpp"
#include "sim/karmada_call.hpp"
#include "sim/store_rest.hpp"

namespace fedmetrics::sim {

using detail::header;
using detail::json_response;
using detail::sync_bindings;
using k8s::Status;
using nlohmann::json;
using transport::HttpResponse;

namespace detail {

namespace {

std::string selector_string(const json& label_selector) {
  auto selector = k8s::LabelSelector::from_object(label_selector);
  return selector ? selector->to_string() : std::string();
}

json binding_clusters(const std::vector<TargetCluster>& placement) {
  json clusters = json::array();
  for (const auto& t : placement)
    if (t.replicas > 0) clusters.push_back({{"name", t.name}, {"replicas", t.replicas}});
  return clusters;
}

json binding_for(const WorkloadSpec& w, std::int32_t replicas, const std::vector<TargetCluster>& placement) {
  return {{"apiVersion", "work.karmada.io/v1alpha2"},
          {"kind", "ResourceBinding"},
          {"metadata", {{"name", k8s::resource_binding_name(w.name, "Deployment")}, {"namespace", w.namespace_name}}},
          {"spec",
           {{"resource",
             {{"apiVersion", "apps/v1"}, {"kind", "Deployment"}, {"namespace", w.namespace_name}, {"name", w.name}}},
            {"replicas", replicas},
            {"clusters", binding_clusters(placement)}}}};
}

// A Deployment as read: spec from the store, status from the simulated pods
// of workload `w` (`counts`: Federation::pod_counts_by_workload).
void deployment_as_read(json& d, std::optional<std::size_t> w, const std::vector<PodCounts>& counts) {
  json status = json::object();
  if (w) {
    const auto existing = static_cast<std::int64_t>(counts[*w].existing);
    const auto ready = static_cast<std::int64_t>(counts[*w].serving);
    status = {{"observedGeneration", d["metadata"].value("generation", 1)},
              {"replicas", existing},
              {"updatedReplicas", existing},
              {"readyReplicas", ready},
              {"availableReplicas", ready}};
  }
  d["status"] = status;
}

std::optional<std::size_t> workload_of_object(const json& d, const Federation& federation) {
  return federation.world.workload_index(d["metadata"].value("namespace", ""), d["metadata"].value("name", ""));
}

Status invalid(std::string_view kind, std::string_view name, std::string_view field, std::string_view why) {
  Status s;
  s.code = 422;
  s.reason = "Invalid";
  s.message = std::string(kind) + " \"" + std::string(name) + "\" is invalid: " + std::string(field) +
              ": Invalid value: " + why.data();
  s.details.name = std::string(name);
  s.details.kind = k8s::ascii_lowercase(kind);
  return s;
}

}  // namespace

json deployment_for(const WorkloadSpec& w, std::int32_t replicas) {
  json labels = json::object();
  for (const auto& [k, v] : w.labels) labels[k] = v;
  return {{"apiVersion", "apps/v1"},
          {"kind", "Deployment"},
          {"metadata", {{"name", w.name}, {"namespace", w.namespace_name}, {"labels", labels}}},
          {"spec", {{"replicas", replicas}, {"selector", {{"matchLabels", labels}}}, {"template", pod_template(w)}}}};
}

// Keeps every workload's ResourceBinding on its current placement (after a
// scale moved replicas between members), writing only what changed.
void sync_bindings(ObjectStore& store, const Federation& federation) {
  const auto* bindings = store.find_type("work.karmada.io", "v1alpha2", "resourcebindings");
  for (std::size_t w = 0; w < federation.world.workloads.size(); ++w) {
    const auto& spec = federation.world.workloads[w];
    const auto& state = federation.workloads[w];
    auto current = store.get(*bindings, spec.namespace_name, k8s::resource_binding_name(spec.name, "Deployment"));
    auto* object = std::get_if<json>(&current);
    if (object == nullptr) {
      store.create(*bindings, spec.namespace_name, binding_for(spec, state.replicas, state.placement));
      continue;
    }
    auto clusters = binding_clusters(state.placement);
    if ((*object)["spec"].value("clusters", json()) == clusters &&
        (*object)["spec"].value("replicas", -1) == state.replicas)
      continue;
    (*object)["spec"]["clusters"] = std::move(clusters);
    (*object)["spec"]["replicas"] = state.replicas;
    (*object)["metadata"].erase("resourceVersion");
    store.update(*bindings, spec.namespace_name, k8s::resource_binding_name(spec.name, "Deployment"),
                 std::move(*object));
  }
}

// An object or list of `type` as read (Deployments get their status). The
// pods are counted once per answer, and a list's items found by name in one
// index: per item, a list of every Deployment would cost Deployments x pods.
void as_read(json& doc, const ResourceType& type, const Federation& federation, k8s::Timestamp now) {
  if (type.resource != "deployments" || type.group != "apps") return;
  const auto counts = federation.pod_counts_by_workload(now);
  if (!doc.contains("items")) return deployment_as_read(doc, workload_of_object(doc, federation), counts);
  std::map<std::pair<std::string_view, std::string_view>, std::size_t> index;  // (namespace, name)
  const auto& workloads = federation.world.workloads;
  for (std::size_t w = 0; w < workloads.size(); ++w)
    index.emplace(std::pair<std::string_view, std::string_view>(workloads[w].namespace_name, workloads[w].name), w);
  for (auto& item : doc["items"]) {
    const auto& meta = item["metadata"];
    auto found = index.find({meta.value("namespace", ""), meta.value("name", "")});
    deployment_as_read(item, found == index.end() ? std::nullopt : std::optional(found->second), counts);
  }
}

void KarmadaCall::overlay_deployment(json& d) const {
  deployment_as_read(d, workload_of_object(d, *federation), federation->pod_counts_by_workload(hooks.clock()));
}

json KarmadaCall::scale_of(const json& deployment) const {
  json d = deployment;
  overlay_deployment(d);
  const auto& m = d["metadata"];
  return {{"kind", "Scale"},
          {"apiVersion", "autoscaling/v1"},
          {"metadata",
           {{"name", m["name"]},
            {"namespace", m["namespace"]},
            {"uid", m.value("uid", "")},
            {"resourceVersion", m.value("resourceVersion", "")},
            {"creationTimestamp", m.value("creationTimestamp", "")}}},
          {"spec", {{"replicas", d["spec"].value("replicas", 0)}}},
          {"status",
           {{"replicas", d["status"].value("replicas", 0)},
            {"selector", selector_string(d["spec"].value("selector", json::object()))}}}};
}

// GET, PUT and PATCH of deployments/{name}/scale (autoscaling/v1 Scale).
HttpResponse KarmadaCall::scale(const ResourceType& type) {
  auto current = store.get(type, info.namespace_name, name);
  if (auto* s = std::get_if<Status>(&current)) return fail(*s);
  auto& deployment = std::get<json>(current);
  if (request.method == "GET" || request.method == "HEAD") return json_response(scale_of(deployment).dump());
  json wanted;
  if (request.method == "PUT") {
    auto body = parse_object(request.body);
    if (!body) return fail(Status::bad_request(body.error().message));
    wanted = std::move(*body);
  } else if (request.method == "PATCH") {
    auto patch_type = patch_type_from_content_type(header(request, "Content-Type"));
    if (!patch_type) return fail(unsupported_media_type());
    auto patch = json::parse(request.body, nullptr, false);
    if (patch.is_discarded()) return fail(Status::bad_request("the patch is not valid JSON"));
    wanted = scale_of(deployment);
    wanted["metadata"].erase("resourceVersion");  // only a resourceVersion the patch sets is a precondition
    try {
      wanted = *patch_type == PatchType::Json ? wanted.patch(patch) : (wanted.merge_patch(patch), wanted);
    } catch (const std::exception& e) {
      return fail(Status::bad_request(std::string("the patch cannot be applied: ") + e.what()));
    }
  } else {
    return fail(Status::method_not_allowed(request.method, {"apps", "deployments/scale"}));
  }
  const auto& replicas = wanted.value("spec", json::object()).value("replicas", json());
  if (!replicas.is_number_integer() || replicas.get<std::int64_t>() < 0 || replicas.get<std::int64_t>() > INT32_MAX)
    return fail(invalid("Scale", name, "spec.replicas", "must be greater than or equal to 0"));
  auto name_in_body = wanted.value("metadata", json::object()).value("name", name);
  if (name_in_body != name)
    return fail(Status::bad_request("the name of the object (" + name_in_body +
                                    ") does not match the name on the URL (" + name + ")"));
  json updated = deployment;
  updated["spec"]["replicas"] = replicas;
  auto rv = wanted.value("metadata", json::object()).value("resourceVersion", "");
  updated["metadata"]["resourceVersion"] = rv.empty() ? deployment["metadata"].value("resourceVersion", "") : rv;
  auto result = store.update(type, info.namespace_name, name, std::move(updated));
  if (auto* s = std::get_if<Status>(&result)) return fail(*s);
  if (auto w = workload_of(info.namespace_name, name)) {
    hooks.set_replicas(*w, replicas.get<std::int32_t>());
    if (auto now = hooks.federation()) sync_bindings(store, *now);  // the scheduler's new placement
  }
  // The answer is the template as it is now: a template that retains its
  // members' replicas is back at their sum already (the syncer ran above),
  // and the answer says so rather than the count that did not take effect.
  auto now = store.get(type, info.namespace_name, name);
  return json_response(scale_of(std::get<json>(std::holds_alternative<json>(now) ? now : result)).dump());
}

// A Deployment edited directly (kubectl edit/patch of spec.replicas) moves the simulated pods too.
void KarmadaCall::after_deployment_change(const ResourceType& type, const StoreResult& result) const {
  if (type.resource != "deployments" || type.group != "apps" || !info.subresource.empty()) return;
  const auto* d = std::get_if<json>(&result);
  if (d == nullptr) return;
  auto w = workload_of(info.namespace_name, name);
  if (!w) return;
  // Karmada's retain label is read before the count: with it, the members keep theirs.
  const auto& labels = d->value("metadata", json::object()).value("labels", json::object());
  if (hooks.set_retain_replicas)
    hooks.set_retain_replicas(*w, labels.value(std::string(kRetainReplicasLabel), "") == "true");
  if ((*d)["spec"]["replicas"].is_number_integer())
    hooks.set_replicas(*w, (*d)["spec"]["replicas"].get<std::int32_t>());
}

}  // namespace detail

void KarmadaApi::sync_replicas(const Federation& federation) {
  const auto* deployments = store_->find_type("apps", "v1", "deployments");
  for (std::size_t w = 0; w < federation.world.workloads.size(); ++w) {
    const auto& spec = federation.world.workloads[w];
    auto current = store_->get(*deployments, spec.namespace_name, spec.name);
    auto* object = std::get_if<json>(&current);
    if (object == nullptr || (*object)["spec"].value("replicas", -1) == federation.workloads[w].replicas) continue;
    (*object)["spec"]["replicas"] = federation.workloads[w].replicas;
    (*object)["metadata"].erase("resourceVersion");
    store_->update(*deployments, spec.namespace_name, spec.name, std::move(*object));
  }
  sync_bindings(*store_, federation);
}

}  // namespace fedmetrics::sim
