#pragma once
// The queries the server hands to the aggregator: plain values, decoded from
// an HTTP request by the server and answered by fanning out to the members.
// Designed around the query, not around objects (custom-metrics-apiserver's
// provider interface).
#include <string>
#include <variant>

#include "fedmetrics/k8s/field_selector.hpp"
#include "fedmetrics/k8s/label_selector.hpp"
#include "fedmetrics/k8s/metrics_types.hpp"
#include "fedmetrics/k8s/status.hpp"

namespace fedmetrics::aggregator {

// The reserved label key that chooses member clusters instead of objects.
inline constexpr std::string_view kClusterLabel = "fedmetrics/cluster";

// metrics.k8s.io/v1beta1 pods or nodes: a list, or one object by name.
struct ResourceMetricsQuery {
  enum class Kind { Pods, Nodes };
  Kind kind = Kind::Pods;
  std::string namespace_name;  // pods only; empty = all namespaces
  std::string name;            // empty = list
  k8s::LabelSelector label_selector;
  k8s::FieldSelector field_selector;
  // The caller writes a list answer as JSON (the API server does, the
  // in-process autoscaler does not): the aggregator then encodes each
  // member's items as that member answers. A pods list so asked is answered
  // as JSON only (Answer::json_list, no items), so it is part of the query's
  // identity there (query_key); a nodes list comes with its items and
  // EncodingMemo::kListJson, and one shared with a caller that did not ask
  // is encoded on demand.
  bool encode_list = false;
};

// custom.metrics.k8s.io: one object's metric, or every object matching the
// label selector when `name` is "*".
struct CustomMetricsQuery {
  k8s::CustomMetricsVersion version = k8s::CustomMetricsVersion::V1beta2;
  k8s::GroupResource resource;  // "pods", "deployments.apps", "namespaces"
  std::string namespace_name;   // empty for root-scoped objects
  std::string name;             // "*" = wildcard
  std::string metric;
  k8s::LabelSelector label_selector;   // selects objects (wildcard only)
  k8s::LabelSelector metric_selector;  // selects series (metricLabelSelector)
  [[nodiscard]] bool wildcard() const { return name == "*"; }
  friend bool operator==(const CustomMetricsQuery& a, const CustomMetricsQuery& b) {
    return a.version == b.version && a.resource.group == b.resource.group &&
           a.resource.resource == b.resource.resource && a.namespace_name == b.namespace_name && a.name == b.name &&
           a.metric == b.metric && a.label_selector == b.label_selector && a.metric_selector == b.metric_selector;
  }
};

// external.metrics.k8s.io: every series of a metric in a namespace.
struct ExternalMetricsQuery {
  std::string namespace_name;
  std::string metric;
  k8s::LabelSelector metric_selector;
  friend bool operator==(const ExternalMetricsQuery&, const ExternalMetricsQuery&) = default;
};

}  // namespace fedmetrics::aggregator
