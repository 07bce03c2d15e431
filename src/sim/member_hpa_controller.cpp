#include "fedmetrics/sim/member_hpa_controller.hpp"

#include <algorithm>
#include <set>

#include "fedmetrics/autoscaler/hpa_spec.hpp"

namespace fedmetrics::sim {

using nlohmann::json;
namespace as = autoscaler;

namespace {

// metrics-server's scrape resolution, as the member's metrics.k8s.io reports it.
constexpr auto kResourceWindow = std::chrono::seconds(15);

// The member's pods of `workload` as the HPA controller lists them by the
// target's selector, and their metrics.k8s.io and http_requests samples.
struct MemberView {
  std::vector<as::Pod> pods;
  std::vector<as::PodResourceSample> resource;
  std::vector<as::PodMetricSample> requests;  // the http_requests series of the pods
  std::int32_t existing = 0;                  // status.replicas of the member's Deployment
};

MemberView view_of(const Federation& f, std::size_t member, std::size_t workload, k8s::Timestamp now) {
  MemberView view;
  const auto& spec = f.world.workloads[workload];
  const auto& cluster = f.world.members[member].name;
  auto shares = f.load_shares(now);
  for (const auto& p : f.members[member].pods) {
    if (p.workload != workload || !f.exists(p, now)) continue;
    ++view.existing;
    as::Pod pod;
    pod.key = {cluster, spec.namespace_name, p.name};
    bool running = f.running(p, now);
    pod.phase = running ? as::PodPhase::Running : as::PodPhase::Pending;
    if (running) {
      pod.start_time = f.started_at(p);
      bool ready = f.ready(p, now);
      pod.ready = as::PodReadyCondition{ready ? as::ConditionStatus::True : as::ConditionStatus::False,
                                        ready ? f.ready_since(p) : f.started_at(p)};
    }
    pod.deleting = p.deleted.has_value();
    for (const auto& c : spec.containers) {
      as::Container container{c.name, {}};
      for (const auto& [name, q] : c.requests) container.requests.emplace(name, q);
      pod.containers.push_back(std::move(container));
    }
    for (const auto& [name, q] : spec.pod_requests) pod.requests.emplace(name, q);
    view.pods.push_back(pod);
    if (!running) continue;  // no metrics before the containers run
    auto usage = f.usage(member, p, now, shares);
    as::PodResourceSample sample{pod.key, now, kResourceWindow, {}};
    for (const auto& c : usage.containers)
      sample.containers.push_back(
          {c.name,
           {{"cpu", k8s::Quantity::from_nanos(c.cpu_nanocores)},
            {"memory", k8s::Quantity::from_value(c.memory_bytes, k8s::QuantityFormat::BinarySI)}}});
    view.resource.push_back(std::move(sample));
    view.requests.push_back({pod.key,
                             k8s::Quantity::from_milli(static_cast<std::int64_t>(usage.requests_per_second * 1000.0),
                                                       k8s::QuantityFormat::DecimalSI),
                             now});
  }
  return view;
}

std::int32_t placed_replicas(const Federation& f, std::size_t member, std::size_t workload) {
  for (const auto& t : f.workloads[workload].placement)
    if (t.name == f.world.members[member].name) return t.replicas;
  return 0;
}

// What the controller writes when the scale target cannot be read
// (upstream's FailedGetScale): AbleToScale False, the rest kept.
json failed_get_scale(as::FederatedHPAStatus status, const std::string& message, k8s::Timestamp now) {
  as::set_condition(status.conditions, "AbleToScale", as::ConditionStatus::False, "FailedGetScale", message, now);
  return json::parse(as::to_json(status).dump());
}

}  // namespace

std::vector<MemberHpaAction> MemberHpaController::sync(const Federation& f, std::size_t member, const json& hpas,
                                                       k8s::Timestamp now) {
  std::vector<MemberHpaAction> actions;
  std::set<std::string> seen;
  for (const auto& object : hpas.value("items", json::array())) {
    const auto& meta = object.value("metadata", json::object());
    const std::string uid = meta.value("uid", "");
    seen.insert(uid);
    auto& memory = memory_[uid];
    MemberHpaAction action{meta.value("namespace", ""), meta.value("name", ""), json(), std::nullopt, {}};
    auto hpa = as::decode_federated_hpa(object);
    if (!hpa) {
      action.status = failed_get_scale(memory.status, "invalid spec: " + hpa.error().message, now);
      actions.push_back(std::move(action));
      continue;
    }
    const auto& ref = hpa->spec.scale_target_ref;
    auto workload = ref.kind == "Deployment" ? f.world.workload_index(action.namespace_name, ref.name) : std::nullopt;
    if (!workload) {
      action.status = failed_get_scale(memory.status,
                                       "the HPA controller was unable to get the target's current scale: " + ref.kind +
                                           " \"" + ref.name + "\" not found",
                                       now);
      actions.push_back(std::move(action));
      continue;
    }
    auto view = view_of(f, member, *workload, now);
    as::SyncInput input;
    input.scale = {placed_replicas(f, member, *workload), view.existing};
    input.pods = std::move(view.pods);
    input.metrics.resource = std::move(view.resource);
    for (const auto& m : hpa->spec.metrics) {
      if (m.type != as::MetricSourceType::Pods) continue;
      // Only the series the member's pods expose; another name has no values, as prometheus-adapter answers.
      const auto& exposed = f.world.workloads[*workload].custom_metrics;
      bool known = std::find(exposed.begin(), exposed.end(), m.metric.name) != exposed.end();
      input.metrics.pods.insert_or_assign(as::pods_metric_key(m.metric.name, m.metric.selector.to_string()),
                                          known ? view.requests : std::vector<as::PodMetricSample>{});
    }
    input.now = now;
    auto result = as::sync(*hpa, memory.status, std::move(memory.history), input, config_);
    memory.status = result.status;
    memory.history = std::move(result.history);
    action.status = json::parse(as::to_json(result.status).dump());
    if (result.rescale) {
      action.scale = std::make_pair(*workload, result.desired_replicas);
      action.scale_reason = result.rescale_reason;
    }
    actions.push_back(std::move(action));
  }
  std::erase_if(memory_, [&](const auto& entry) { return !seen.contains(entry.first); });
  return actions;
}

}  // namespace fedmetrics::sim
