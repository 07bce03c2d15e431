// metrics.k8s.io on a simulated member, as metrics-server answers.
#include <algorithm>

#include "fedmetrics/k8s/status.hpp"
#include "fedmetrics/sim/load_model.hpp"
#include "sim/http_util.hpp"
#include "sim/member_responder.hpp"

namespace fedmetrics::sim::detail {

using k8s::GroupResource;
using k8s::Status;
using nlohmann::json;
using transport::HttpResponse;

k8s::PodMetrics MemberResponder::pod_metrics(const SimPod& p) const {
  k8s::PodMetrics out;
  out.metadata.name = p.name;
  out.metadata.namespace_name = f_.world.workloads[p.workload].namespace_name;
  out.metadata.labels = pod_labels(p);
  out.metadata.creation_timestamp = now_;
  out.timestamp = now_;
  out.window = kResourceWindow;
  auto usage = usage_of(p);
  for (const auto& c : usage.containers) {
    out.containers.push_back({c.name,
                              {{"cpu", k8s::Quantity::from_nanos(c.cpu_nanocores)},
                               {"memory", k8s::Quantity::from_value(c.memory_bytes, k8s::QuantityFormat::BinarySI)}}});
  }
  return out;
}

k8s::NodeMetrics MemberResponder::node_metrics(const NodeSpec& n) const {
  std::int64_t cpu = kNodeBaselineNanocores, memory = kNodeBaselineBytes;
  for (const auto* p : pods("")) {
    if (p->node != n.name) continue;
    auto u = usage_of(*p);
    cpu += u.cpu_nanocores();
    memory += u.memory_bytes();
  }
  k8s::NodeMetrics out;
  out.metadata.name = n.name;
  out.metadata.labels = n.labels;
  out.metadata.creation_timestamp = now_;
  out.timestamp = now_;
  out.window = kResourceWindow;
  out.usage = {{"cpu", k8s::Quantity::from_nanos(cpu)},
               {"memory", k8s::Quantity::from_value(memory, k8s::QuantityFormat::BinarySI)}};
  return out;
}

HttpResponse MemberResponder::resource_metrics(const std::vector<std::string>& r) const {
  if (r.size() == 1 && r[0] == "nodes") {
    k8s::LabelSelector labels;
    k8s::FieldSelector fields;
    if (auto error = selectors(labels, fields)) return *error;
    std::vector<k8s::NodeMetrics> items;
    for (const auto& n : spec_.nodes)
      if (labels.matches(n.labels) && fields.matches(n.name, "")) items.push_back(node_metrics(n));
    std::sort(items.begin(), items.end(), [](auto& a, auto& b) { return a.metadata.name < b.metadata.name; });
    return json_response(k8s::encode_node_metrics_list(items));
  }
  if (r.size() == 2 && r[0] == "nodes") {
    const auto* n = find_node(r[1]);
    // metrics-server looks the node up with the node lister, whose resource is "node".
    if (n == nullptr) return status_response(Status::not_found({"", "node"}, r[1]));
    return json_response(k8s::encode_node_metrics(node_metrics(*n)));
  }
  bool all = r.size() == 1 && r[0] == "pods";
  bool in_ns = r.size() == 3 && r[0] == "namespaces" && r[2] == "pods";
  if (all || in_ns) {
    k8s::LabelSelector labels;
    k8s::FieldSelector fields;
    if (auto error = selectors(labels, fields)) return *error;
    std::vector<k8s::PodMetrics> items;
    for (const auto* p : pods(in_ns ? r[1] : "")) {
      if (!f_.running(*p, now_)) continue;  // metrics-server reports pods whose containers run
      if (!labels.matches(pod_labels(*p))) continue;
      if (!fields.matches(p->name, f_.world.workloads[p->workload].namespace_name)) continue;
      items.push_back(pod_metrics(*p));
    }
    return json_response(k8s::encode_pod_metrics_list(items));
  }
  if (r.size() == 4 && r[0] == "namespaces" && r[2] == "pods") {
    const auto* p = find_pod(r[1], r[3]);
    if (p == nullptr) return status_response(Status::not_found({"", "pods"}, r[3]));
    // metrics-server: the pod exists but has no metrics yet.
    if (!f_.running(*p, now_)) return status_response(Status::not_found({"metrics.k8s.io", "pods"}, r[1] + "/" + r[3]));
    return json_response(k8s::encode_pod_metrics(pod_metrics(*p)));
  }
  return not_found();
}
}  // namespace fedmetrics::sim::detail
