#include "fedmetrics/k8s/metrics_types.hpp"

#include "k8s/json_decode.hpp"

namespace fedmetrics::k8s {

using nlohmann::json;

namespace {

json labels_to_json(const Labels& labels) {
  json out = json::object();
  for (const auto& [k, v] : labels) out[k] = v;
  return out;
}

json resource_list_to_json(const ResourceList& list) {
  json out = json::object();
  for (const auto& [name, q] : list) out[name] = q.to_string();
  return out;
}

Expected<std::chrono::nanoseconds> window_from_json(const ObjectReader& r) {
  auto text = r.string("window", Need::Optional);
  if (!text) return text.error();
  if (text->empty()) return std::chrono::nanoseconds{0};
  auto d = parse_duration(*text);
  if (!d) return d.error().at(r.path_of("window"));
  return d;
}

// Checks the top-level kind/apiVersion of a document when they are present.
std::optional<Error> check_type(const ObjectReader& r, std::string_view kind, std::string_view api_version) {
  auto k = r.string("kind", Need::Optional);
  if (!k) return k.error();
  if (!k->empty() && *k != kind) return Error{"expected \"" + std::string(kind) + "\", got \"" + *k + "\""}.at("kind");
  auto v = r.string("apiVersion", Need::Optional);
  if (!v) return v.error();
  if (!v->empty() && *v != api_version)
    return Error{"expected \"" + std::string(api_version) + "\", got \"" + *v + "\""}.at("apiVersion");
  return std::nullopt;
}

json list_envelope(std::string_view kind, std::string_view api_version) {
  return json{{"kind", kind}, {"apiVersion", api_version}, {"metadata", json::object()}, {"items", json::array()}};
}

// Decodes `items` of a list document with `decode_item(json, path)`.
template <class T, class DecodeItem>
Expected<std::vector<T>> decode_list(const json& in, std::string_view kind, std::string_view api_version,
                                     DecodeItem decode_item) {
  ObjectReader r(in, "");
  if (!r.ok()) return r.error();
  if (!r.present()) return Error{"expected an object, got null"};
  if (auto e = check_type(r, kind, api_version)) return *e;
  auto items = r.array("items", Need::Optional);
  if (!items) return items.error();
  std::vector<T> out;
  out.reserve((*items)->size());
  for (std::size_t i = 0; i < (*items)->size(); ++i) {
    auto item = decode_item((**items)[i], index_path("items", i));
    if (!item) return item.error();
    out.push_back(std::move(*item));
  }
  return out;
}

}  // namespace

json to_json(const ObjectMeta& meta) {
  json out = json::object();
  out["name"] = meta.name;
  if (!meta.namespace_name.empty()) out["namespace"] = meta.namespace_name;
  if (!meta.labels.empty()) out["labels"] = labels_to_json(meta.labels);
  if (!meta.annotations.empty()) out["annotations"] = labels_to_json(meta.annotations);
  // metav1.Time is a struct: Go writes a zero creationTimestamp as null.
  out["creationTimestamp"] = meta.creation_timestamp ? json(format_time(*meta.creation_timestamp)) : json(nullptr);
  return out;
}

Expected<ObjectMeta> object_meta_from_json(const json& in, std::string_view path) {
  ObjectReader r(in, std::string(path));
  if (!r.ok()) return r.error();
  ObjectMeta meta;
  auto name = r.string("name", Need::Optional);
  if (!name) return name.error();
  meta.name = std::move(*name);
  auto ns = r.string("namespace", Need::Optional);
  if (!ns) return ns.error();
  meta.namespace_name = std::move(*ns);
  auto labels = r.string_map("labels", Need::Optional);
  if (!labels) return labels.error();
  meta.labels = std::move(*labels);
  auto annotations = r.string_map("annotations", Need::Optional);
  if (!annotations) return annotations.error();
  meta.annotations = std::move(*annotations);
  if (r.raw("creationTimestamp") != nullptr) {
    auto t = r.time("creationTimestamp", Need::Required);
    if (!t) return t.error();
    meta.creation_timestamp = *t;
  }
  return meta;
}

json to_json(const PodMetrics& pod, bool as_list_item) {
  json out = json::object();
  if (!as_list_item) {
    out["kind"] = "PodMetrics";
    out["apiVersion"] = kMetricsGroupVersion;
  }
  out["metadata"] = to_json(pod.metadata);
  out["timestamp"] = format_time(pod.timestamp);
  out["window"] = format_duration(pod.window);
  json containers = json::array();
  for (const auto& c : pod.containers)
    containers.push_back({{"name", c.name}, {"usage", resource_list_to_json(c.usage)}});
  out["containers"] = std::move(containers);
  return out;
}

json to_json(const NodeMetrics& node, bool as_list_item) {
  json out = json::object();
  if (!as_list_item) {
    out["kind"] = "NodeMetrics";
    out["apiVersion"] = kMetricsGroupVersion;
  }
  out["metadata"] = to_json(node.metadata);
  out["timestamp"] = format_time(node.timestamp);
  out["window"] = format_duration(node.window);
  out["usage"] = resource_list_to_json(node.usage);
  return out;
}

json pod_metrics_list_to_json(const std::vector<PodMetrics>& items) {
  json out = list_envelope("PodMetricsList", kMetricsGroupVersion);
  for (const auto& pod : items) out["items"].push_back(to_json(pod, true));
  return out;
}

json node_metrics_list_to_json(const std::vector<NodeMetrics>& items) {
  json out = list_envelope("NodeMetricsList", kMetricsGroupVersion);
  for (const auto& node : items) out["items"].push_back(to_json(node, true));
  return out;
}

Expected<PodMetrics> pod_metrics_from_json(const json& in, std::string_view path) {
  ObjectReader r(in, std::string(path));
  if (!r.ok()) return r.error();
  PodMetrics pod;
  auto meta = r.object("metadata", Need::Required);
  if (!meta) return meta.error();
  auto m = object_meta_from_json(*r.raw("metadata"), r.path_of("metadata"));
  if (!m) return m.error();
  pod.metadata = std::move(*m);
  auto ts = r.time("timestamp", Need::Optional);
  if (!ts) return ts.error();
  pod.timestamp = *ts;
  auto window = window_from_json(r);
  if (!window) return window.error();
  pod.window = *window;
  auto containers = r.array("containers", Need::Optional);
  if (!containers) return containers.error();
  for (std::size_t i = 0; i < (*containers)->size(); ++i) {
    ObjectReader c((**containers)[i], index_path(r.path_of("containers"), i));
    if (!c.ok()) return c.error();
    auto name = c.string("name", Need::Optional);
    if (!name) return name.error();
    auto usage = c.resource_list("usage");
    if (!usage) return usage.error();
    pod.containers.push_back(ContainerMetrics{std::move(*name), std::move(*usage)});
  }
  return pod;
}

Expected<NodeMetrics> node_metrics_from_json(const json& in, std::string_view path) {
  ObjectReader r(in, std::string(path));
  if (!r.ok()) return r.error();
  NodeMetrics node;
  auto meta = r.object("metadata", Need::Required);
  if (!meta) return meta.error();
  auto m = object_meta_from_json(*r.raw("metadata"), r.path_of("metadata"));
  if (!m) return m.error();
  node.metadata = std::move(*m);
  auto ts = r.time("timestamp", Need::Optional);
  if (!ts) return ts.error();
  node.timestamp = *ts;
  auto window = window_from_json(r);
  if (!window) return window.error();
  node.window = *window;
  auto usage = r.resource_list("usage");
  if (!usage) return usage.error();
  node.usage = std::move(*usage);
  return node;
}

Expected<std::vector<PodMetrics>> pod_metrics_list_from_json(const json& in) {
  return decode_list<PodMetrics>(in, "PodMetricsList", kMetricsGroupVersion,
                                 [](const json& j, const std::string& p) { return pod_metrics_from_json(j, p); });
}

Expected<std::vector<NodeMetrics>> node_metrics_list_from_json(const json& in) {
  return decode_list<NodeMetrics>(in, "NodeMetricsList", kMetricsGroupVersion,
                                  [](const json& j, const std::string& p) { return node_metrics_from_json(j, p); });
}

std::string_view group_version(CustomMetricsVersion version) {
  return version == CustomMetricsVersion::V1beta1 ? kCustomMetricsV1beta1 : kCustomMetricsV1beta2;
}

namespace {

json to_json(const ObjectReference& ref) {
  json out = json::object();
  // Every field of corev1.ObjectReference is omitempty.
  for (auto [key, value] :
       {std::pair{"kind", &ref.kind}, std::pair{"namespace", &ref.namespace_name}, std::pair{"name", &ref.name},
        std::pair{"uid", &ref.uid}, std::pair{"apiVersion", &ref.api_version},
        std::pair{"resourceVersion", &ref.resource_version}, std::pair{"fieldPath", &ref.field_path}}) {
    if (!value->empty()) out[key] = *value;
  }
  return out;
}

Expected<ObjectReference> object_reference_from_json(const ObjectReader& r) {
  ObjectReference ref;
  for (auto [key, target] :
       {std::pair{"kind", &ref.kind}, std::pair{"namespace", &ref.namespace_name}, std::pair{"name", &ref.name},
        std::pair{"uid", &ref.uid}, std::pair{"apiVersion", &ref.api_version},
        std::pair{"resourceVersion", &ref.resource_version}, std::pair{"fieldPath", &ref.field_path}}) {
    auto v = r.string(key, Need::Optional);
    if (!v) return v.error();
    *target = std::move(*v);
  }
  return ref;
}

Expected<json> selector_from_json(const ObjectReader& r, std::string_view key) {
  const auto* v = r.raw(key);
  if (v == nullptr) return json(nullptr);
  // Validate the shape, keep the document as sent (it is passed through).
  auto parsed = LabelSelector::from_object(*v);
  if (!parsed) return parsed.error().at(r.path_of(key));
  return *v;
}

}  // namespace

json to_json(const MetricValue& value, CustomMetricsVersion version) {
  json out = json::object();
  out["describedObject"] = to_json(value.described_object);
  if (version == CustomMetricsVersion::V1beta1) {
    out["metricName"] = value.metric_name;
    out["timestamp"] = format_time(value.timestamp);
    if (value.window_seconds) out["window"] = *value.window_seconds;
    out["value"] = value.value.to_string();
    out["selector"] = value.metric_selector;
  } else {
    out["metric"] = {{"name", value.metric_name}, {"selector", value.metric_selector}};
    out["timestamp"] = format_time(value.timestamp);
    if (value.window_seconds) out["windowSeconds"] = *value.window_seconds;
    out["value"] = value.value.to_string();
  }
  return out;
}

json metric_value_list_to_json(const std::vector<MetricValue>& items, CustomMetricsVersion version) {
  json out = list_envelope("MetricValueList", group_version(version));
  for (const auto& item : items) out["items"].push_back(to_json(item, version));
  return out;
}

Expected<MetricValue> metric_value_from_json(const json& in, CustomMetricsVersion version, std::string_view path) {
  ObjectReader r(in, std::string(path));
  if (!r.ok()) return r.error();
  MetricValue out;
  auto described = r.object("describedObject", Need::Required);
  if (!described) return described.error();
  auto ref = object_reference_from_json(*described);
  if (!ref) return ref.error();
  out.described_object = std::move(*ref);

  const char* window_key = "window";
  if (version == CustomMetricsVersion::V1beta1) {
    auto name = r.string("metricName", Need::Required);
    if (!name) return name.error();
    out.metric_name = std::move(*name);
    auto selector = selector_from_json(r, "selector");
    if (!selector) return selector.error();
    out.metric_selector = std::move(*selector);
  } else {
    auto metric = r.object("metric", Need::Required);
    if (!metric) return metric.error();
    auto name = metric->string("name", Need::Required);
    if (!name) return name.error();
    out.metric_name = std::move(*name);
    auto selector = selector_from_json(*metric, "selector");
    if (!selector) return selector.error();
    out.metric_selector = std::move(*selector);
    window_key = "windowSeconds";
  }
  auto ts = r.time("timestamp", Need::Optional);
  if (!ts) return ts.error();
  out.timestamp = *ts;
  if (r.raw(window_key) != nullptr) {
    auto window = r.integer(window_key, Need::Required);
    if (!window) return window.error();
    out.window_seconds = *window;
  }
  auto value = r.quantity("value", Need::Required);
  if (!value) return value.error();
  out.value = *value;
  return out;
}

Expected<std::vector<MetricValue>> metric_value_list_from_json(const json& in) {
  ObjectReader r(in, "");
  if (!r.ok()) return r.error();
  auto api_version = r.string("apiVersion", Need::Required);
  if (!api_version) return api_version.error();
  CustomMetricsVersion version{};
  if (*api_version == kCustomMetricsV1beta1) version = CustomMetricsVersion::V1beta1;
  else if (*api_version == kCustomMetricsV1beta2) version = CustomMetricsVersion::V1beta2;
  else return Error{"expected a custom.metrics.k8s.io version, got \"" + *api_version + "\""}.at("apiVersion");
  return decode_list<MetricValue>(in, "MetricValueList", *api_version, [version](const json& j, const std::string& p) {
    return metric_value_from_json(j, version, p);
  });
}

json to_json(const ExternalMetricValue& value) {
  json out = json::object();
  out["metricName"] = value.metric_name;
  out["metricLabels"] = labels_to_json(value.metric_labels);  // no omitempty upstream
  out["timestamp"] = format_time(value.timestamp);
  if (value.window_seconds) out["window"] = *value.window_seconds;
  out["value"] = value.value.to_string();
  return out;
}

json external_metric_value_list_to_json(const std::vector<ExternalMetricValue>& items) {
  json out = list_envelope("ExternalMetricValueList", kExternalMetricsGroupVersion);
  for (const auto& item : items) out["items"].push_back(to_json(item));
  return out;
}

Expected<ExternalMetricValue> external_metric_value_from_json(const json& in, std::string_view path) {
  ObjectReader r(in, std::string(path));
  if (!r.ok()) return r.error();
  ExternalMetricValue out;
  auto name = r.string("metricName", Need::Required);
  if (!name) return name.error();
  out.metric_name = std::move(*name);
  auto labels = r.string_map("metricLabels", Need::Optional);
  if (!labels) return labels.error();
  out.metric_labels = std::move(*labels);
  auto ts = r.time("timestamp", Need::Optional);
  if (!ts) return ts.error();
  out.timestamp = *ts;
  if (r.raw("window") != nullptr) {
    auto window = r.integer("window", Need::Required);
    if (!window) return window.error();
    out.window_seconds = *window;
  }
  auto value = r.quantity("value", Need::Required);
  if (!value) return value.error();
  out.value = *value;
  return out;
}

Expected<std::vector<ExternalMetricValue>> external_metric_value_list_from_json(const json& in) {
  return decode_list<ExternalMetricValue>(
      in, "ExternalMetricValueList", kExternalMetricsGroupVersion,
      [](const json& j, const std::string& p) { return external_metric_value_from_json(j, p); });
}

Expected<json> parse_document(std::string_view body) { return parse_json_document(body); }

}  // namespace fedmetrics::k8s
