#pragma once
// The aggregator's pure core: which members to ask, what to forward to them,
// and how their answers become one answer. Plain functions over values: no
// clock, no threads, no logging (STYLE.md "Pure core, thin shell"). The
// fan-out in aggregator.cpp only gathers MemberAnswers and calls these.
#include <cstddef>
#include <memory>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "fedmetrics/aggregator/member_cluster.hpp"
#include "fedmetrics/aggregator/metrics_service.hpp"
#include "fedmetrics/aggregator/query.hpp"
#include "fedmetrics/k8s/discovery.hpp"
#include "fedmetrics/k8s/label_selector.hpp"
#include "fedmetrics/k8s/metrics_types.hpp"
#include "fedmetrics/k8s/status.hpp"

namespace fedmetrics::aggregator {

// One member's reply to one fan-out call.
template <class T>
struct MemberAnswer {
  std::string cluster;
  MemberResult<T> result;
};

// ---------------------------------------------------------------------------
// Member selection by the reserved label key fedmetrics/cluster.

// The requirements of `selector` on fedmetrics/cluster (they choose members)
// and the others (they are forwarded to the members). LabelSelector::partition.
struct ClusterSplit {
  k8s::LabelSelector clusters;   // requirements on kClusterLabel only
  k8s::LabelSelector forwarded;  // everything else
};
[[nodiscard]] ClusterSplit split_cluster_selector(const k8s::LabelSelector& selector);

// Whether a member is chosen: its name is matched as the label
// `fedmetrics/cluster=<member>`, so `=`, `!=`, `in`, `notin`, exists and
// `!fedmetrics/cluster` (chooses none) all mean what they say. An empty
// selector chooses every member.
[[nodiscard]] bool cluster_selected(const k8s::LabelSelector& clusters, std::string_view member);

// Where a query goes: the members to ask (indices into the snapshot) and what
// to send them, or an answer decided without asking anyone.
template <class Q>
struct Plan {
  std::vector<std::size_t> members;
  Q forwarded;                             // selectors without fedmetrics/cluster
  std::optional<k8s::Status> early;        // set: answer this, ask no one
  // Chosen members not asked because their metrics discovery has not
  // succeeded yet (custom and external metrics, which only the capability
  // list can route): each counts as a failed member of the answer
  // (undiscovered_error), so that its absence shows as a Warning.
  std::vector<std::size_t> undiscovered;
  // Warnings for the answer whatever the members say: a fedmetrics/cluster
  // requirement naming a member that does not exist (unknown_member_warnings).
  std::vector<std::string> warnings;
};

// One warning per member name that a `=`, `==` or `in` requirement of the
// cluster selectors asks for and that no member has (a typo would otherwise
// look like an empty cluster): `fedmetrics/cluster: no member cluster is
// named 'membr1'`, each name once.
[[nodiscard]] std::vector<std::string> unknown_member_warnings(
    std::initializer_list<const k8s::LabelSelector*> selectors, const MemberList& members);

// What an undiscovered member of Plan::undiscovered failed with.
[[nodiscard]] MemberError undiscovered_error();

// metrics.k8s.io: members whose capabilities say resource_metrics, or whose
// capabilities are not known yet (see the .cpp for why); then the cluster
// selector. No member serving the API at all -> 503. A get by name is
// forwarded as a list with a metadata.name field selector and no label
// selector (a Kubernetes get ignores selectors).
[[nodiscard]] Plan<ResourceMetricsQuery> plan_resource_metrics(const MemberList& members,
                                                               const ResourceMetricsQuery& query);
// custom.metrics.k8s.io: members listing `<groupresource>/<metric>`; none ->
// 404 with the custom-metrics wording, or 503 when a chosen member's
// discovery has not succeeded yet (it may well have the metric). Cluster
// requirements may sit in labelSelector or metricLabelSelector; a member must
// satisfy both.
[[nodiscard]] Plan<CustomMetricsQuery> plan_custom_metrics(const MemberList& members, const CustomMetricsQuery& query);
// external.metrics.k8s.io: members listing the metric; none -> 404
// `the server could not find the metric {metric} for externalmetrics`, or
// 503 as above.
[[nodiscard]] Plan<ExternalMetricsQuery> plan_external_metrics(const MemberList& members,
                                                               const ExternalMetricsQuery& query);

// ---------------------------------------------------------------------------
// Merging. Each takes every asked member's answer (any order) and the query
// as the client sent it. When some members failed and others answered, the
// answer holds what the others returned plus one warning per failed member;
// when every asked member failed, the answer is 503 ServiceUnavailable naming
// them. Answers are deterministic: members are taken in name order.

// Union of pods (never de-duplicated: the same namespace/name in two members
// is two objects), each annotated with its member, sorted by namespace, name,
// member. A get by name: the one item, 404 as metrics-server words it when no
// member has it, 409 Conflict naming the members when several do.
[[nodiscard]] PodMetricsAnswer merge_pod_metrics(std::vector<MemberAnswer<std::vector<k8s::PodMetrics>>> answers,
                                                 const ResourceMetricsQuery& query);
[[nodiscard]] NodeMetricsAnswer merge_node_metrics(std::vector<MemberAnswer<std::vector<k8s::NodeMetrics>>> answers,
                                                   const ResourceMetricsQuery& query);

// The same merge in two steps, so that the fan-out does most of the work as
// each member answers: after the last one, only that member's own items are
// prepared, then everything sorted and joined. prepare_* keeps a member's
// items that the query wants, annotated with the member, and encodes each
// (k8s::encode_*_item) for a list query with encode_list; merge_prepared_*
// sorts them and then fills the answer's EncodingMemo::kListJson from those
// encodings. merge_pod_metrics is prepare + merge_prepared.
template <class Item>
struct PreparedItems {
  std::vector<Item> items;
  std::vector<std::string> encoded;  // items[i]'s list-item JSON; empty for a get by name
};
[[nodiscard]] PreparedItems<k8s::PodMetrics> prepare_pod_metrics(std::string_view cluster,
                                                                 std::vector<k8s::PodMetrics> items,
                                                                 const ResourceMetricsQuery& query);
[[nodiscard]] PreparedItems<k8s::NodeMetrics> prepare_node_metrics(std::string_view cluster,
                                                                   std::vector<k8s::NodeMetrics> items,
                                                                   const ResourceMetricsQuery& query);
[[nodiscard]] PodMetricsAnswer merge_prepared_pod_metrics(
    std::vector<MemberAnswer<PreparedItems<k8s::PodMetrics>>> answers, const ResourceMetricsQuery& query);
[[nodiscard]] NodeMetricsAnswer merge_prepared_node_metrics(
    std::vector<MemberAnswer<PreparedItems<k8s::NodeMetrics>>> answers, const ResourceMetricsQuery& query);

// Pods (`pods/*` metrics, or any item describing a Pod): items stay per pod
// and per member, never summed. Other described objects present in several
// members are summed into one item keyed by (kind, namespace, name), with the
// newest timestamp and the largest window (Karmada's semantics, but keyed by
// more than the name: reference-lessons #1). A named object no member
// returned -> 404 with its name; a named pod returned by several members ->
// 409 Conflict naming them.
[[nodiscard]] CustomMetricsAnswer merge_custom_metrics(std::vector<MemberAnswer<std::vector<k8s::MetricValue>>> answers,
                                                       const CustomMetricsQuery& query);

// Every series of every member, each tagged metricLabels[fedmetrics/cluster] =
// member, in member-name order (each member's own order kept).
[[nodiscard]] ExternalMetricsAnswer merge_external_metrics(
    std::vector<MemberAnswer<std::vector<k8s::ExternalMetricValue>>> answers, const ExternalMetricsQuery& query);

// `member2: timeout: no answer within 3s`: member name, error kind, message.
// Safe inside a quoted header value: `"` becomes `'`, `\` becomes `/`,
// control characters become spaces, and it is cut to a bounded length.
[[nodiscard]] std::string member_warning(std::string_view cluster, const MemberError& error);

// ---------------------------------------------------------------------------
// Discovery from the members' capabilities (null entries are skipped).

// custom.metrics.k8s.io/<version>: union on name, sorted by name, kind
// MetricValueList, verbs ["get"], singularName "", and one `namespaced` value
// per parent resource (the aggregator rejects a group-version whose
// subresources disagree with their parent, wire contract 1.4): false for
// namespaces, nodes and persistentvolumes (prometheus-adapter's rule), else
// true when any member says true for any metric of that parent.
[[nodiscard]] k8s::APIResourceList merge_custom_metric_resources(
    const std::vector<std::shared_ptr<const MemberCapabilities>>& members, k8s::CustomMetricsVersion version);
// external.metrics.k8s.io/v1beta1: union on name, sorted, kind
// ExternalMetricValueList, namespaced true, verbs ["get"].
[[nodiscard]] k8s::APIResourceList merge_external_metric_resources(
    const std::vector<std::shared_ptr<const MemberCapabilities>>& members);

// ---------------------------------------------------------------------------
// The canonical text of a query, the key for coalescing and the result
// cache: equal for queries that must get the same answer. The custom-metrics
// version is left out (answers are held in the hub shape, the server encodes
// the version).
[[nodiscard]] std::string query_key(const ResourceMetricsQuery& query);
[[nodiscard]] std::string query_key(const CustomMetricsQuery& query);
[[nodiscard]] std::string query_key(const ExternalMetricsQuery& query);

}  // namespace fedmetrics::aggregator
