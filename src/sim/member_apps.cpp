// apps/v1 on a simulated member: the Deployments propagated to it, read-only.
#include <algorithm>

#include "fedmetrics/k8s/status.hpp"
#include "fedmetrics/sim/deployment.hpp"
#include "fedmetrics/sim/placement.hpp"
#include "sim/http_util.hpp"
#include "sim/member_responder.hpp"

namespace fedmetrics::sim::detail {

using k8s::GroupResource;
using k8s::Status;
using nlohmann::json;
using transport::HttpResponse;

// This member's Deployment of workload `w`: the template as propagated,
// spec.replicas its share, the status from its pods. nullopt when the
// workload is not placed here.

std::optional<json> MemberResponder::deployment(const WorkloadSpec& w, std::size_t index) const {
  const auto& placement = f_.workloads[index].placement;
  const auto here =
      std::find_if(placement.begin(), placement.end(), [&](const TargetCluster& t) { return t.name == spec_.name; });
  if (here == placement.end()) return std::nullopt;
  std::int32_t existing = 0;
  std::int32_t ready = 0;
  for (const auto& p : state_.pods) {
    if (p.workload != index || !f_.exists(p, now_) || p.deleted) continue;
    ++existing;
    if (f_.ready(p, now_)) ++ready;
  }
  json labels = json::object();
  for (const auto& [k, v] : w.labels) labels[k] = v;
  return json{
      {"apiVersion", "apps/v1"},
      {"kind", "Deployment"},
      {"metadata",
       {{"name", w.name},
        {"namespace", w.namespace_name},
        {"uid", spec_.name + "-deployment-" + w.namespace_name + "-" + w.name},
        {"resourceVersion", rv()},
        {"generation", 1},
        {"creationTimestamp", k8s::format_time(f_.started)},
        {"labels", labels}}},
      {"spec", {{"replicas", here->replicas}, {"selector", {{"matchLabels", labels}}}, {"template", pod_template(w)}}},
      {"status",
       {{"observedGeneration", 1},
        {"replicas", existing},
        {"updatedReplicas", existing},
        {"readyReplicas", ready},
        {"availableReplicas", ready}}}};
}

// GET /apis/apps/v1/[namespaces/{ns}/]deployments[/{name}]: read-only.
HttpResponse MemberResponder::deployments(const std::vector<std::string>& rest) const {
  std::string ns;
  std::size_t i = 0;
  if (rest.size() >= 2 && rest[0] == "namespaces") {
    ns = rest[1];
    i = 2;
  }
  if (rest.size() <= i || rest[i] != "deployments" || rest.size() > i + 2) return not_found();
  const k8s::GroupResource gr{"apps", "deployments"};
  if (rest.size() == i + 2) {
    if (ns.empty()) return not_found();
    for (std::size_t w = 0; w < f_.world.workloads.size(); ++w) {
      const auto& spec = f_.world.workloads[w];
      if (spec.namespace_name != ns || spec.name != rest[i + 1]) continue;
      if (auto doc = deployment(spec, w)) return json_response(doc->dump());
    }
    return status_response(Status::not_found(gr, rest[i + 1]));
  }
  json items = json::array();
  for (std::size_t w = 0; w < f_.world.workloads.size(); ++w) {
    const auto& spec = f_.world.workloads[w];
    if (!ns.empty() && spec.namespace_name != ns) continue;
    if (auto doc = deployment(spec, w)) items.push_back(std::move(*doc));
  }
  return json_response(json{
      {"apiVersion", "apps/v1"},
      {"kind", "DeploymentList"},
      {"metadata", {{"resourceVersion", rv()}}},
      {"items", items}}.dump());
}
}  // namespace fedmetrics::sim::detail
