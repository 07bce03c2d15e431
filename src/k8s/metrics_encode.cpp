// The metrics.k8s.io encoders of the hot path, written straight to text
// (k8s/json_writer.hpp). Same bytes as dumping the to_json() documents; the
// keys below are in the order dump() writes them (sorted).
#include "fedmetrics/k8s/metrics_types.hpp"
#include "k8s/json_writer.hpp"

namespace fedmetrics::k8s {
namespace {

void write_string_map(JsonWriter& w, const Labels& map) {
  w.begin_object();
  for (const auto& [k, v] : map) {
    w.key(k);
    w.string(v);
  }
  w.end_object();
}

void write_resource_list(JsonWriter& w, const ResourceList& list) {
  w.begin_object();
  for (const auto& [name, q] : list) {
    w.key(name);
    w.string(q.to_string());
  }
  w.end_object();
}

void write_meta(JsonWriter& w, const ObjectMeta& meta) {
  w.begin_object();
  if (!meta.annotations.empty()) {
    w.key("annotations");
    write_string_map(w, meta.annotations);
  }
  w.key("creationTimestamp");
  if (meta.creation_timestamp) w.string(format_time(*meta.creation_timestamp));
  else w.null();
  if (!meta.labels.empty()) {
    w.key("labels");
    write_string_map(w, meta.labels);
  }
  w.key("name");
  w.string(meta.name);
  if (!meta.namespace_name.empty()) {
    w.key("namespace");
    w.string(meta.namespace_name);
  }
  w.end_object();
}

void write_pod(JsonWriter& w, const PodMetrics& pod, bool as_list_item) {
  w.begin_object();
  if (!as_list_item) {
    w.key("apiVersion");
    w.string(kMetricsGroupVersion);
  }
  w.key("containers");
  w.begin_array();
  for (const auto& c : pod.containers) {
    w.begin_object();
    w.key("name");
    w.string(c.name);
    w.key("usage");
    write_resource_list(w, c.usage);
    w.end_object();
  }
  w.end_array();
  if (!as_list_item) {
    w.key("kind");
    w.string("PodMetrics");
  }
  w.key("metadata");
  write_meta(w, pod.metadata);
  w.key("timestamp");
  w.string(format_time(pod.timestamp));
  w.key("window");
  w.string(format_duration(pod.window));
  w.end_object();
}

void write_node(JsonWriter& w, const NodeMetrics& node, bool as_list_item) {
  w.begin_object();
  if (!as_list_item) {
    w.key("apiVersion");
    w.string(kMetricsGroupVersion);
    w.key("kind");
    w.string("NodeMetrics");
  }
  w.key("metadata");
  write_meta(w, node.metadata);
  w.key("timestamp");
  w.string(format_time(node.timestamp));
  w.key("usage");
  write_resource_list(w, node.usage);
  w.key("window");
  w.string(format_duration(node.window));
  w.end_object();
}

// The list around its items; `write_items` writes them into the array.
template <class WriteItems>
std::string write_list(std::size_t reserve, std::string_view kind, WriteItems write_items) {
  std::string out;
  out.reserve(256 + reserve);
  JsonWriter w(out);
  w.begin_object();
  w.key("apiVersion");
  w.string(kMetricsGroupVersion);
  w.key("items");
  w.begin_array();
  write_items(w);
  w.end_array();
  w.key("kind");
  w.string(kind);
  w.key("metadata");
  w.begin_object();
  w.end_object();
  w.end_object();
  return out;
}

template <class T, class WriteItem>
std::string encode_list(const std::vector<T>& items, std::string_view kind, WriteItem write_item) {
  return write_list(items.size() * 384, kind, [&](JsonWriter& w) {
    for (const auto& item : items) write_item(w, item, true);
  });
}

std::string assemble_list(const std::vector<const std::string*>& encoded_items, std::string_view kind) {
  std::size_t bytes = 0;
  for (const std::string* item : encoded_items) bytes += item->size() + 1;
  return write_list(bytes, kind, [&](JsonWriter& w) {
    for (const std::string* item : encoded_items) w.raw(*item);
  });
}

}  // namespace

std::string encode_pod_metrics(const PodMetrics& pod) {
  std::string out;
  JsonWriter w(out);
  write_pod(w, pod, false);
  return out;
}

std::string encode_node_metrics(const NodeMetrics& node) {
  std::string out;
  JsonWriter w(out);
  write_node(w, node, false);
  return out;
}

std::string encode_pod_metrics_list(const std::vector<PodMetrics>& items) {
  return encode_list(items, "PodMetricsList", write_pod);
}

std::string encode_node_metrics_list(const std::vector<NodeMetrics>& items) {
  return encode_list(items, "NodeMetricsList", write_node);
}

std::string encode_pod_metrics_item(const PodMetrics& pod) {
  std::string out;
  JsonWriter w(out);
  write_pod(w, pod, true);
  return out;
}

std::string encode_node_metrics_item(const NodeMetrics& node) {
  std::string out;
  JsonWriter w(out);
  write_node(w, node, true);
  return out;
}

std::string assemble_pod_metrics_list(const std::vector<const std::string*>& encoded_items) {
  return assemble_list(encoded_items, "PodMetricsList");
}

std::string assemble_node_metrics_list(const std::vector<const std::string*>& encoded_items) {
  return assemble_list(encoded_items, "NodeMetricsList");
}

}  // namespace fedmetrics::k8s
