#include "fedmetrics/sim/deployment.hpp"

#include "fedmetrics/k8s/label_selector.hpp"
#include "fedmetrics/sim/placement.hpp"
#include "sim/http_util.hpp"

namespace fedmetrics::sim {

using nlohmann::json;

json pod_template(const WorkloadSpec& w) {
  json containers = json::array();
  for (const auto& c : w.containers) {
    json requests = json::object(), limits = json::object();
    for (const auto& [k, q] : c.requests) requests[k] = q.to_string();
    for (const auto& [k, q] : c.limits) limits[k] = q.to_string();
    containers.push_back(
        {{"name", c.name}, {"image", c.image}, {"resources", {{"requests", requests}, {"limits", limits}}}});
  }
  json labels = json::object();
  for (const auto& [k, v] : w.labels) labels[k] = v;
  json spec = {{"containers", containers}};
  // Only when set, so that the templates (and their hashes) of worlds without
  // pod-level resources stay as they were.
  if (!w.pod_requests.empty() || !w.pod_limits.empty()) {
    json resources = json::object();
    for (auto [key, list] : {std::pair{"requests", &w.pod_requests}, std::pair{"limits", &w.pod_limits}}) {
      if (list->empty()) continue;
      json values = json::object();
      for (const auto& [k, q] : *list) values[k] = q.to_string();
      resources[key] = std::move(values);
    }
    spec["resources"] = std::move(resources);
  }
  return {{"metadata", {{"labels", labels}}}, {"spec", std::move(spec)}};
}

// nlohmann::json keeps object keys sorted, so equal templates dump to equal text.
std::string pod_template_hash(const WorkloadSpec& w) { return pod_template_hash(pod_template(w).dump()); }

std::vector<json> deployment_columns() {
  using detail::column;
  return {column("Ready", "string", 0), column("Up-to-date", "string", 0), column("Available", "string", 0)};
}

std::vector<json> deployment_wide_columns() {
  using detail::column;
  return {column("Containers", "string", 1), column("Images", "string", 1), column("Selector", "string", 1)};
}

std::vector<json> deployment_cells(const json& d) {
  const auto& status = d.value("status", json::object());
  const auto& spec = d.value("spec", json::object());
  return {std::to_string(status.value("readyReplicas", 0)) + "/" + std::to_string(spec.value("replicas", 0)),
          status.value("updatedReplicas", 0), status.value("availableReplicas", 0)};
}

std::vector<json> deployment_wide_cells(const json& d) {
  const auto& spec = d.value("spec", json::object());
  std::string names, images;
  for (const auto& c :
       spec.value("template", json::object()).value("spec", json::object()).value("containers", json::array())) {
    names += (names.empty() ? "" : ",") + c.value("name", "");
    images += (images.empty() ? "" : ",") + c.value("image", "");
  }
  auto selector = k8s::LabelSelector::from_object(spec.value("selector", json::object()));
  return {names, images, selector ? selector->to_string() : std::string()};
}

}  // namespace fedmetrics::sim
