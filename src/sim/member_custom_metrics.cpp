// custom.metrics.k8s.io (as prometheus-adapter answers) and
// external.metrics.k8s.io on a simulated member.
#include <algorithm>

#include "fedmetrics/k8s/status.hpp"
#include "sim/http_util.hpp"
#include "sim/member_responder.hpp"

namespace fedmetrics::sim::detail {

using k8s::GroupResource;
using k8s::Status;
using nlohmann::json;
using transport::HttpResponse;

std::vector<MemberResponder::Series> MemberResponder::pod_series(std::string_view ns, const std::string& metric) const {
  std::vector<Series> out;
  for (const auto* p : pods(ns)) {
    const auto& w = f_.world.workloads[p->workload];
    if (std::find(w.custom_metrics.begin(), w.custom_metrics.end(), metric) == w.custom_metrics.end()) continue;
    Series s;
    s.object = {"Pod", w.namespace_name, p->name, "/v1", {}, {}, {}};
    s.object_labels = pod_labels(*p);
    s.labels = s.object_labels;
    s.labels["namespace"] = w.namespace_name;
    s.labels["pod"] = p->name;
    s.value = usage_of(*p).requests_per_second;
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<MemberResponder::Series> MemberResponder::deployment_series(std::string_view ns,
                                                                        const std::string& metric) const {
  std::vector<Series> out;
  for (std::size_t i = 0; i < f_.world.workloads.size(); ++i) {
    const auto& w = f_.world.workloads[i];
    if (!ns.empty() && w.namespace_name != ns) continue;
    if (std::find(w.custom_metrics.begin(), w.custom_metrics.end(), metric) == w.custom_metrics.end()) continue;
    if (std::find(w.propagation.clusters.begin(), w.propagation.clusters.end(), spec_.name) ==
        w.propagation.clusters.end())
      continue;
    Series s;
    s.object = {"Deployment", w.namespace_name, w.name, "apps/v1", {}, {}, {}};
    s.object_labels = w.labels;
    s.labels = w.labels;
    s.labels["namespace"] = w.namespace_name;
    s.labels["deployment"] = w.name;
    for (const auto* p : pods(w.namespace_name))
      if (p->workload == i) s.value += usage_of(*p).requests_per_second;
    out.push_back(std::move(s));
  }
  std::sort(out.begin(), out.end(), [](auto& a, auto& b) {
    return a.object.namespace_name != b.object.namespace_name ? a.object.namespace_name < b.object.namespace_name
                                                              : a.object.name < b.object.name;
  });
  return out;
}

std::vector<MemberResponder::Series> MemberResponder::namespace_series(std::string_view ns,
                                                                       const std::string& metric) const {
  std::vector<Series> out;
  auto names = f_.world.namespaces;
  std::sort(names.begin(), names.end());
  for (const auto& name : names) {
    if (ns != "*" && name != ns) continue;
    auto in_ns = pod_series(name, metric);
    if (in_ns.empty()) continue;
    Series s;
    s.object = {"Namespace", "", name, "/v1", {}, {}, {}};
    s.labels = {{"namespace", name}};
    for (const auto& p : in_ns) s.value += p.value;
    out.push_back(std::move(s));
  }
  return out;
}

HttpResponse MemberResponder::custom_metrics(const std::vector<std::string>& r,
                                             k8s::CustomMetricsVersion version) const {
  // custom-metrics-apiserver's routes (cmhandlers.go).
  std::string ns, resource, name, metric;
  bool namespace_metric = false;
  if (r.size() == 4 && r[0] == "namespaces" && r[2] == "metrics") {
    ns = r[1];
    resource = "namespaces";
    metric = r[3];
    namespace_metric = true;
  } else if (r.size() == 5 && r[0] == "namespaces") {
    ns = r[1];
    resource = r[2];
    name = r[3];
    metric = r[4];
  } else if (r.size() == 3 && r[0] != "namespaces") {
    resource = r[0];
    name = r[1];
    metric = r[2];
  } else {
    return status_response(Status::bad_request("invalid request path"));
  }
  auto gr_text = resource;
  auto dot = resource.find('.');
  GroupResource gr{dot == std::string::npos ? "" : resource.substr(dot + 1), resource.substr(0, dot)};

  auto msel_text = k8s::query_value(t_.query, "metricLabelSelector");
  auto msel = k8s::LabelSelector::parse(msel_text);
  if (!msel) return status_response(Status::bad_request(msel.error().message));
  bool wildcard = name == "*";
  k8s::LabelSelector objects;
  if (wildcard) {
    auto l = k8s::LabelSelector::parse(k8s::query_value(t_.query, "labelSelector"));
    if (!l) return status_response(Status::bad_request(l.error().message));
    objects = std::move(*l);
  }
  auto fsel = k8s::query_value(t_.query, "fieldSelector");
  if (!fsel.empty() && !wildcard && !namespace_metric) {
    auto fs = k8s::FieldSelector::parse(fsel);
    if (!fs) return status_response(Status::bad_request(fs.error().message));
    for (const auto& req : fs->requirements())
      if (req.field == "metadata.name" && !req.negated && req.value != name)
        return status_response(Status::bad_request("fieldSelector metadata.name doesn't match requested name"));
  }

  auto known = custom_metric_names();
  if (!known.contains(metric)) {
    if (namespace_metric) return status_response(Status::metric_not_found(metric, gr, ns == "*" ? "" : ns));
    return status_response(Status::metric_not_found(metric, gr, wildcard ? "" : name));
  }
  std::vector<Series> series;
  if (namespace_metric) series = namespace_series(ns, metric);
  else if (gr.resource == "pods" && gr.group.empty()) series = pod_series(ns, metric);
  else if (gr.resource == "deployments" && (gr.group == "apps" || gr.group.empty()))
    series = deployment_series(ns, metric);
  else return status_response(Status::metric_not_found(metric, gr, wildcard ? "" : name));

  std::vector<k8s::MetricValue> items;
  for (const auto& s : series) {
    if (!namespace_metric) {
      if (wildcard ? !objects.matches(s.object_labels) : s.object.name != name) continue;
    }
    if (!msel->matches(s.labels)) continue;
    k8s::MetricValue v;
    v.described_object = s.object;
    v.metric_name = metric;
    v.metric_selector = msel->empty() ? json(nullptr) : msel->to_object();
    v.timestamp = now_;
    v.window_seconds = kCustomWindowSeconds;
    // prometheus-adapter: resource.NewMilliQuantity(int64(value*1000.0), DecimalSI).
    v.value = k8s::Quantity::from_milli(static_cast<std::int64_t>(s.value * 1000.0), k8s::QuantityFormat::DecimalSI);
    items.push_back(std::move(v));
  }
  if (items.empty() && !wildcard && !(namespace_metric && ns == "*")) {
    auto who = namespace_metric ? ns : name;
    return status_response(Status::metric_not_found(metric, gr, who, msel->empty() ? "" : msel->to_string()));
  }
  return json_response(k8s::metric_value_list_to_json(items, version).dump());
}

HttpResponse MemberResponder::external_metrics(const std::vector<std::string>& r) const {
  if (r.size() != 3 || r[0] != "namespaces") return not_found();
  const auto& ns = r[1];
  const auto& metric = r[2];
  auto sel = k8s::LabelSelector::parse(k8s::query_value(t_.query, "labelSelector"));
  if (!sel) return status_response(Status::bad_request(sel.error().message));
  bool known = false;
  std::vector<k8s::ExternalMetricValue> items;
  for (const auto* e : external_series()) {
    if (e->name != metric) continue;
    known = true;
    if (!e->namespace_name.empty() && e->namespace_name != ns) continue;
    if (!sel->matches(e->labels)) continue;
    items.push_back({e->name, e->labels, now_, kCustomWindowSeconds, e->value});
  }
  if (!known) return status_response(Status::metric_not_found(metric, {std::string(kExternalGroup), "namespaces"}, ns));
  return json_response(k8s::external_metric_value_list_to_json(items).dump());
}
}  // namespace fedmetrics::sim::detail
