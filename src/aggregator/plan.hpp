#pragma once
// Where a query goes, decided before any member is asked: which members (the
// fedmetrics/cluster selector, their capabilities, the members left out) and
// what they are asked; and the canonical text of a query, the key of
// coalescing and of the result cache. Plain functions over values, as the
// merges in merge.hpp (docs/architecture.md, the aggregator).
#include <cstddef>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fedmetrics/aggregator/member_cluster.hpp"
#include "fedmetrics/aggregator/query.hpp"
#include "fedmetrics/k8s/label_selector.hpp"
#include "fedmetrics/k8s/status.hpp"

namespace fedmetrics::aggregator {

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
  Q forwarded;                       // selectors without fedmetrics/cluster
  std::optional<k8s::Status> early;  // set: answer this, ask no one
  // Chosen members not asked, with why: left out by the member source (a
  // Karmada Cluster not Ready, an endpoint that cannot be used), or, for
  // custom and external metrics, whose discovery has not succeeded yet (only
  // the capability list can route those). Each counts as a failed member of
  // the answer (left_out_error): its absence shows as a Warning, and an
  // answer whose only possible sources were these is 503, never a 404 that
  // tells an HPA the object or metric does not exist. A member that a
  // fedmetrics/cluster selector excludes on purpose is not chosen, so not here.
  std::vector<LeftOutMember> unasked;
  // Warnings for the answer whatever the members say: a fedmetrics/cluster
  // requirement naming a member that does not exist (unknown_member_warnings).
  std::vector<std::string> warnings;
};

// One warning per member name that a `=`, `==` or `in` requirement of the
// cluster selectors asks for and that no member has, asked or left out (a
// typo would otherwise look like an empty cluster): `fedmetrics/cluster: no
// member cluster is named 'membr1'`, each name once.
[[nodiscard]] std::vector<std::string> unknown_member_warnings(
    std::initializer_list<const k8s::LabelSelector*> selectors, const MemberList& members,
    const std::vector<LeftOutMember>& left_out = {});

// What a member of Plan::unasked failed with: Kind::LeftOut and the reason.
[[nodiscard]] MemberError left_out_error(std::string_view reason);

// The reason a chosen member whose metrics discovery has not succeeded is
// not asked for custom or external metrics.
inline constexpr std::string_view kUndiscoveredReason =
    "its metrics discovery has not succeeded yet, so which metrics it has is unknown";

// metrics.k8s.io: members whose capabilities say resource_metrics, or whose
// capabilities are not known yet (see the .cpp for why); then the cluster
// selector. No member serving the API at all -> 503. A get by name is
// forwarded as a list with a metadata.name field selector and no label
// selector (a Kubernetes get ignores selectors).
[[nodiscard]] Plan<ResourceMetricsQuery> plan_resource_metrics(const MemberList& members,
                                                               const ResourceMetricsQuery& query,
                                                               const std::vector<LeftOutMember>& left_out = {});
// custom.metrics.k8s.io: members listing `<groupresource>/<metric>`; none ->
// 404 with the custom-metrics wording, or 503 naming them when a chosen
// member was not asked (left out, or its discovery has not succeeded yet: it
// may well have the metric). Cluster requirements may sit in labelSelector or
// metricLabelSelector; a member must satisfy both.
[[nodiscard]] Plan<CustomMetricsQuery> plan_custom_metrics(const MemberList& members, const CustomMetricsQuery& query,
                                                           const std::vector<LeftOutMember>& left_out = {});
// external.metrics.k8s.io: members listing the metric; none -> 404
// `the server could not find the metric {metric} for externalmetrics`, or
// 503 as above.
[[nodiscard]] Plan<ExternalMetricsQuery> plan_external_metrics(const MemberList& members,
                                                               const ExternalMetricsQuery& query,
                                                               const std::vector<LeftOutMember>& left_out = {});

// The canonical text of a query, the key for coalescing and the result
// cache: equal for queries that must get the same answer. The custom-metrics
// version is left out (answers are held in the hub shape, the server encodes
// the version).
[[nodiscard]] std::string query_key(const ResourceMetricsQuery& query);
[[nodiscard]] std::string query_key(const CustomMetricsQuery& query);
[[nodiscard]] std::string query_key(const ExternalMetricsQuery& query);

}  // namespace fedmetrics::aggregator
