#pragma once
// What the calculation knows about the pods of a scale target and their
// metrics, as plain values. The live loop fills these from the member
// clusters, `fedmetrics simulate` from a scenario file.
//
// Pods are identified by (cluster, namespace, name): two StatefulSet pods
// "web-0" in member1 and member2 are two pods (the
// Karmada controller keys by name only and loses one of them; docs/design/member-identity.md).
#include <chrono>
#include <compare>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "fedmetrics/k8s/expected.hpp"
#include "fedmetrics/k8s/quantity.hpp"
#include "fedmetrics/k8s/time.hpp"

namespace fedmetrics::autoscaler {

using k8s::Timestamp;

struct PodKey {
  std::string cluster;
  std::string namespace_name;
  std::string name;
  friend auto operator<=>(const PodKey&, const PodKey&) = default;
  friend bool operator==(const PodKey&, const PodKey&) = default;
};

// "member1/default/web-0", for messages.
std::string to_string(const PodKey& key);

enum class PodPhase { Pending, Running, Succeeded, Failed, Unknown };
enum class ConditionStatus { True, False, Unknown };

std::string_view to_string(ConditionStatus status);

// The pod's Ready condition.
struct PodReadyCondition {
  ConditionStatus status = ConditionStatus::True;
  Timestamp last_transition_time{};
};

using ResourceList = std::map<std::string, k8s::Quantity, std::less<>>;

// A container whose requests count: the regular containers and the sidecars
// (init containers with restartPolicy Always), as upstream's
// calculateRequests counts them. Other init containers are left out.
struct Container {
  std::string name;
  ResourceList requests;
};

struct Pod {
  PodKey key;
  PodPhase phase = PodPhase::Running;
  std::optional<PodReadyCondition> ready;  // absent: the pod has no Ready condition
  std::optional<Timestamp> start_time;     // absent: not started
  bool deleting = false;                   // metadata.deletionTimestamp is set
  std::vector<Container> containers;
  // Pod-level resources (spec.resources.requests, KEP-2837): when they name
  // cpu, memory or a hugepages-* resource, a Resource metric without a
  // container uses them instead of the containers' sum.
  ResourceList requests{};
  ResourceList overhead{};  // spec.overhead, added to the pod-level requests as upstream's PodRequests adds it
};

// Running and Ready, as upstream's getReadyPodsCount counts.
bool is_running_and_ready(const Pod& pod);

// One metrics.k8s.io PodMetrics item.
struct ContainerUsage {
  std::string name;
  ResourceList usage;
};
struct PodResourceSample {
  PodKey key;
  Timestamp timestamp{};
  std::chrono::nanoseconds window{std::chrono::seconds(60)};
  std::vector<ContainerUsage> containers;
};

// One custom.metrics.k8s.io value for a pod (a Pods metric).
struct PodMetricSample {
  PodKey key;
  k8s::Quantity value;
  Timestamp timestamp{};
};

// custom.metrics.k8s.io for a single object (an Object metric).
struct ObjectMetricValue {
  std::string kind;
  std::string name;
  std::string metric_name;
  k8s::Expected<k8s::Quantity> value = k8s::Quantity();
  // The metric selector (canonical LabelSelector::to_string), part of the
  // key: two Object metrics of one name with different selectors are two values.
  std::string selector{};
  // Members whose part of the (summed) value is missing: the value is
  // incomplete, and may justify a scale-up but never a scale-down.
  std::vector<std::string> missing_members{};
};

// external.metrics.k8s.io: every series matching the selector.
struct ExternalMetricValues {
  std::string metric_name;
  std::string selector;  // canonical label selector string (LabelSelector::to_string)
  k8s::Expected<std::vector<k8s::Quantity>> values = std::vector<k8s::Quantity>{};
  // Members whose series are missing from `values` (see ObjectMetricValue).
  std::vector<std::string> missing_members{};
};

// The key of a Pods metric in MetricsSnapshot::pods: the metric name, and its
// metric selector when it has one, so that two Pods metrics of one name with
// different selectors do not share values ("qps", "qps{verb=GET}").
std::string pods_metric_key(std::string_view metric_name, std::string_view selector);

// Everything the metrics APIs answered for one sync. A fetch that failed is
// an Error in place of its values; the calculation turns it into the
// FailedGet...Metric condition.
struct MetricsSnapshot {
  k8s::Expected<std::vector<PodResourceSample>> resource = std::vector<PodResourceSample>{};
  // Keyed by pods_metric_key(name, selector).
  std::map<std::string, k8s::Expected<std::vector<PodMetricSample>>, std::less<>> pods;
  std::vector<ObjectMetricValue> objects;
  std::vector<ExternalMetricValues> externals;
};

}  // namespace fedmetrics::autoscaler
