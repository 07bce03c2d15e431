#pragma once
// Prometheus HTTP API answers
// (https://github.com/prometheus/prometheus/blob/main/docs/querying/api.md)
// read from untrusted text, and turned into the metrics APIs' values as
// prometheus-adapter writes them (pkg/custom-provider/provider.go metricFor,
// pkg/external-provider/metric_converter.go, pkg/resourceprovider/provider.go).
// Every reader returns an error value for garbage, a Prometheus error
// (naming its errorType and message) or an answer above the limits; none
// throws.
#include <chrono>
#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "fedmetrics/k8s/expected.hpp"
#include "fedmetrics/k8s/label_selector.hpp"
#include "fedmetrics/k8s/metrics_types.hpp"
#include "fedmetrics/promsource/metric_namer.hpp"
#include "fedmetrics/promsource/resource_catalog.hpp"

namespace fedmetrics::promsource {

struct AnswerLimits {
  std::size_t max_bytes = 16u << 20;  // bytes of one answer
  std::size_t max_samples = 100000;   // samples (or series) in one answer
};

struct Sample {
  k8s::Labels metric;
  k8s::Timestamp timestamp{};
  double value = 0;  // may be NaN or infinite
};

// An instant query's result: "vector" (samples) or "scalar" (one sample, no labels).
struct QueryResult {
  std::string result_type;
  std::vector<Sample> samples;
};

// /api/v1/query's answer.
k8s::Expected<QueryResult> parse_query_answer(std::string_view body, const AnswerLimits& limits = {});
// /api/v1/series' answer: the label sets, named by __name__.
k8s::Expected<std::vector<Series>> parse_series_answer(std::string_view body, const AnswerLimits& limits = {});

// NewMilliQuantity(int64(v*1000), format); NaN is 0. An infinite value or
// one beyond int64 milli-units is an error here (Go's conversion gives an
// arbitrary number).
k8s::Expected<k8s::Quantity> sample_quantity(double value, k8s::QuantityFormat format = k8s::QuantityFormat::DecimalSI);

// The custom metric values of `names` (in that order; a name without a
// sample is left out) from a vector answer: describedObject from `info`,
// the name from the sample's `resource_label`, timestamp `now`, no window,
// metric.selector the selector's object form when not empty (= as
// matchLabels, in/notin/exists/!exists as matchExpressions; a != cannot be
// written there and is an error, as in the adapter). The adapter
// answers the values of the objects it listed; callers pass those names.
k8s::Expected<std::vector<k8s::MetricValue>> custom_metric_values(
    const QueryResult& result, const ResourceInfo& info, std::string_view resource_label,
    std::string_view namespace_name, const std::vector<std::string>& names, std::string_view metric,
    const k8s::LabelSelector& metric_selector, k8s::Timestamp now);

// The external metric values: one per sample, its labels as metricLabels and
// its own timestamp; a scalar answer is one value without labels.
k8s::Expected<std::vector<k8s::ExternalMetricValue>> external_metric_values(const QueryResult& result,
                                                                            std::string_view metric);

// The resource rules' answers as metrics.k8s.io values
// (prometheus-adapter pkg/resourceprovider/provider.go): samples go to the
// object their resource label names; NaN and negative values count as 0;
// cpu is written in cores (DecimalSI), memory in bytes (BinarySI).
//
// PodMetrics of `pods` (of one namespace, the containerQuery answers for
// them) in that order: a pod needs cpu and memory samples, else it is left
// out; a container with only one of them gets 0 for the other; containers
// sorted by name (the adapter's order is a Go map's); timestamp the oldest
// sample of the pod; creationTimestamp `now`, as the adapter writes it.
// Labels are the caller's (the adapter copies the pod's own).
k8s::Expected<std::vector<k8s::PodMetrics>> pod_metrics(
    const QueryResult& cpu, const QueryResult& memory, std::string_view namespace_name,
    const std::vector<std::string>& pods, std::string_view pod_label, std::string_view cpu_container_label,
    std::string_view memory_container_label, std::chrono::nanoseconds window, k8s::Timestamp now);
// NodeMetrics of `nodes` in that order, from the first cpu and memory sample
// of each (a node without both is left out); timestamp the older of the two.
k8s::Expected<std::vector<k8s::NodeMetrics>> node_metrics(const QueryResult& cpu, const QueryResult& memory,
                                                          const std::vector<std::string>& nodes,
                                                          std::string_view node_label, std::chrono::nanoseconds window,
                                                          k8s::Timestamp now);

}  // namespace fedmetrics::promsource
