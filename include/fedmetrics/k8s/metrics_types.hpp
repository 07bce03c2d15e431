#pragma once
// The metrics APIs' wire types with JSON in both directions: metrics.k8s.io
// PodMetrics/NodeMetrics, custom.metrics.k8s.io MetricValue (v1beta1 and
// v1beta2), external.metrics.k8s.io ExternalMetricValue (k8s.io/metrics pkg/apis).
// Encoders produce exactly the upstream shapes; decoders accept what upstream
// servers send and return an error naming the field for anything else.
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "fedmetrics/k8s/expected.hpp"
#include "fedmetrics/k8s/label_selector.hpp"
#include "fedmetrics/k8s/quantity.hpp"
#include "fedmetrics/k8s/time.hpp"

namespace fedmetrics::k8s {

inline constexpr std::string_view kMetricsGroupVersion = "metrics.k8s.io/v1beta1";
inline constexpr std::string_view kCustomMetricsV1beta1 = "custom.metrics.k8s.io/v1beta1";
inline constexpr std::string_view kCustomMetricsV1beta2 = "custom.metrics.k8s.io/v1beta2";
inline constexpr std::string_view kExternalMetricsGroupVersion = "external.metrics.k8s.io/v1beta1";

// The ObjectMeta subset we carry.
struct ObjectMeta {
  std::string name;
  std::string namespace_name;
  Labels labels;
  Labels annotations;
  std::optional<Timestamp> creation_timestamp;
  friend bool operator==(const ObjectMeta&, const ObjectMeta&) = default;
};
nlohmann::json to_json(const ObjectMeta& meta);
Expected<ObjectMeta> object_meta_from_json(const nlohmann::json& in, std::string_view path = "metadata");

// corev1.ResourceList: resource name -> quantity ("cpu", "memory").
using ResourceList = std::map<std::string, Quantity, std::less<>>;

struct ContainerMetrics {
  std::string name;
  ResourceList usage;
  friend bool operator==(const ContainerMetrics&, const ContainerMetrics&) = default;
};

struct PodMetrics {
  ObjectMeta metadata;
  Timestamp timestamp{};
  std::chrono::nanoseconds window{0};
  std::vector<ContainerMetrics> containers;
  friend bool operator==(const PodMetrics&, const PodMetrics&) = default;
};

struct NodeMetrics {
  ObjectMeta metadata;
  Timestamp timestamp{};
  std::chrono::nanoseconds window{0};
  ResourceList usage;
  friend bool operator==(const NodeMetrics&, const NodeMetrics&) = default;
};

// Single objects carry kind/apiVersion; list items do not (as Go servers write them).
nlohmann::json to_json(const PodMetrics& pod, bool as_list_item = false);
nlohmann::json to_json(const NodeMetrics& node, bool as_list_item = false);
nlohmann::json pod_metrics_list_to_json(const std::vector<PodMetrics>& items);
nlohmann::json node_metrics_list_to_json(const std::vector<NodeMetrics>& items);
// The same documents written straight to text (the server's hot path); byte
// for byte what dumping the to_json() forms gives.
std::string encode_pod_metrics(const PodMetrics& pod);
std::string encode_node_metrics(const NodeMetrics& node);
std::string encode_pod_metrics_list(const std::vector<PodMetrics>& items);
std::string encode_node_metrics_list(const std::vector<NodeMetrics>& items);
// A list written one item at a time: each item encoded on its own (the list
// form, without kind/apiVersion), then the list assembled from those bytes in
// list order. The same bytes as encode_*_list over the same items; the
// aggregator encodes each member's items as that member answers, so that
// little is left once the last one has.
std::string encode_pod_metrics_item(const PodMetrics& pod);
std::string encode_node_metrics_item(const NodeMetrics& node);
std::string assemble_pod_metrics_list(const std::vector<const std::string*>& encoded_items);
std::string assemble_node_metrics_list(const std::vector<const std::string*>& encoded_items);
Expected<PodMetrics> pod_metrics_from_json(const nlohmann::json& in, std::string_view path = "");
Expected<NodeMetrics> node_metrics_from_json(const nlohmann::json& in, std::string_view path = "");
Expected<std::vector<PodMetrics>> pod_metrics_list_from_json(const nlohmann::json& in);
// The member answer's common shape read straight from the text, without a
// document tree (the client's hot path). nullopt for any other document,
// valid or not: decode it with pod_metrics_list_from_json, which names the
// error. Where both read a document they give the same items.
std::optional<std::vector<PodMetrics>> try_decode_pod_metrics_list(std::string_view body);
Expected<std::vector<NodeMetrics>> node_metrics_list_from_json(const nlohmann::json& in);

// corev1.ObjectReference, as describedObject.
struct ObjectReference {
  std::string kind;
  std::string namespace_name;
  std::string name;
  std::string api_version;
  std::string uid;
  std::string resource_version;
  std::string field_path;
  friend bool operator==(const ObjectReference&, const ObjectReference&) = default;
};

enum class CustomMetricsVersion { V1beta1, V1beta2 };
std::string_view group_version(CustomMetricsVersion version);

// One custom metric value, held in the v1beta2 shape (the hub); the v1beta1
// shape differs only in its JSON keys (metricName, selector, window).
struct MetricValue {
  ObjectReference described_object;
  std::string metric_name;
  // metav1.LabelSelector of the metric, passed through as sent; null when none.
  nlohmann::json metric_selector;
  Timestamp timestamp{};
  std::optional<std::int64_t> window_seconds;  // seconds; absent means the HPA assumes 60
  Quantity value;
  friend bool operator==(const MetricValue&, const MetricValue&) = default;
};

nlohmann::json to_json(const MetricValue& value, CustomMetricsVersion version);
nlohmann::json metric_value_list_to_json(const std::vector<MetricValue>& items, CustomMetricsVersion version);
Expected<MetricValue> metric_value_from_json(const nlohmann::json& in, CustomMetricsVersion version,
                                             std::string_view path = "");
// Reads the list in the version its apiVersion names (v1beta1 or v1beta2) and
// returns the items in the hub shape; that is the conversion between versions.
Expected<std::vector<MetricValue>> metric_value_list_from_json(const nlohmann::json& in);

struct ExternalMetricValue {
  std::string metric_name;
  Labels metric_labels;
  Timestamp timestamp{};
  std::optional<std::int64_t> window_seconds;  // seconds
  Quantity value;
  friend bool operator==(const ExternalMetricValue&, const ExternalMetricValue&) = default;
};

nlohmann::json to_json(const ExternalMetricValue& value);
nlohmann::json external_metric_value_list_to_json(const std::vector<ExternalMetricValue>& items);
Expected<ExternalMetricValue> external_metric_value_from_json(const nlohmann::json& in, std::string_view path = "");
Expected<std::vector<ExternalMetricValue>> external_metric_value_list_from_json(const nlohmann::json& in);

// Parses a response body from a member and checks kind/apiVersion before decoding.
Expected<nlohmann::json> parse_document(std::string_view body);

}  // namespace fedmetrics::k8s
