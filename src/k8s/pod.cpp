#include "fedmetrics/k8s/pod.hpp"

#include "k8s/json_decode.hpp"

namespace fedmetrics::k8s {

using nlohmann::json;

Expected<Pod> pod_from_json(const json& in, std::string_view path) {
  ObjectReader r(in, std::string(path));
  if (!r.ok()) return r.error();
  Pod pod;
  auto metadata = r.object("metadata", Need::Required);
  if (!metadata) return metadata.error();
  auto meta = object_meta_from_json(*r.raw("metadata"), r.path_of("metadata"));
  if (!meta) return meta.error();
  pod.metadata = std::move(*meta);
  if (metadata->raw("deletionTimestamp") != nullptr) {
    auto t = metadata->time("deletionTimestamp", Need::Required);
    if (!t) return t.error();
    pod.deletion_timestamp = *t;
  }
  auto spec = r.object("spec", Need::Optional);
  if (!spec) return spec.error();
  for (auto [field, into] :
       {std::pair{"containers", &pod.containers}, std::pair{"initContainers", &pod.init_containers}}) {
    auto containers = spec->array(field, Need::Optional);
    if (!containers) return containers.error();
    for (std::size_t i = 0; i < (*containers)->size(); ++i) {
      ObjectReader c((**containers)[i], index_path(spec->path_of(field), i));
      if (!c.ok()) return c.error();
      auto name = c.string("name", Need::Optional);
      if (!name) return name.error();
      auto resources = c.object("resources", Need::Optional);
      if (!resources) return resources.error();
      auto requests = resources->resource_list("requests");
      if (!requests) return requests.error();
      auto restart_policy = c.string("restartPolicy", Need::Optional);
      if (!restart_policy) return restart_policy.error();
      into->push_back({std::move(*name), std::move(*requests), std::move(*restart_policy)});
    }
  }
  // Pod-level resources (KEP-2837): requests for the pod as a whole.
  auto pod_resources = spec->object("resources", Need::Optional);
  if (!pod_resources) return pod_resources.error();
  auto pod_requests = pod_resources->resource_list("requests");
  if (!pod_requests) return pod_requests.error();
  pod.requests = std::move(*pod_requests);
  auto overhead = spec->resource_list("overhead");
  if (!overhead) return overhead.error();
  pod.overhead = std::move(*overhead);
  auto status = r.object("status", Need::Optional);
  if (!status) return status.error();
  auto phase = status->string("phase", Need::Optional);
  if (!phase) return phase.error();
  pod.phase = std::move(*phase);
  if (status->raw("startTime") != nullptr) {
    auto t = status->time("startTime", Need::Required);
    if (!t) return t.error();
    pod.start_time = *t;
  }
  auto conditions = status->array("conditions", Need::Optional);
  if (!conditions) return conditions.error();
  for (std::size_t i = 0; i < (*conditions)->size(); ++i) {
    ObjectReader c((**conditions)[i], index_path(status->path_of("conditions"), i));
    if (!c.ok()) return c.error();
    PodCondition condition;
    auto type = c.string("type", Need::Required);
    if (!type) return type.error();
    auto value = c.string("status", Need::Optional);
    if (!value) return value.error();
    condition.type = std::move(*type);
    condition.status = std::move(*value);
    if (c.raw("lastTransitionTime") != nullptr) {
      auto t = c.time("lastTransitionTime", Need::Required);
      if (!t) return t.error();
      condition.last_transition_time = *t;
    }
    pod.conditions.push_back(std::move(condition));
  }
  return pod;
}

Expected<std::vector<Pod>> pod_list_from_json(const json& in) {
  ObjectReader r(in, "");
  if (!r.ok()) return r.error();
  auto items = r.array("items", Need::Required);
  if (!items) return items.error();
  std::vector<Pod> out;
  out.reserve((*items)->size());
  for (std::size_t i = 0; i < (*items)->size(); ++i) {
    auto pod = pod_from_json((**items)[i], index_path("items", i));
    if (!pod) return pod.error();
    out.push_back(std::move(*pod));
  }
  return out;
}

}  // namespace fedmetrics::k8s
