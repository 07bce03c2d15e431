#pragma once
// The aggregator's pure core, how the members' answers become one answer
// (which members to ask is plan.hpp's). Plain functions over values: no
// clock, no threads, no logging (docs/architecture.md, the aggregator). The
// fan-out in aggregator.cpp only gathers MemberAnswers and calls these.
#include <algorithm>
#include <cstddef>
#include <memory>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
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

inline constexpr std::string_view kMetricsGroup = "metrics.k8s.io";
inline constexpr std::string_view kCustomGroup = "custom.metrics.k8s.io";
inline constexpr std::string_view kExternalGroup = "external.metrics.k8s.io";

// ---------------------------------------------------------------------------
// A client error is not a member outage. A member's 4xx that is about the
// request itself (400 BadRequest, 413, 414, 422 Invalid, 431 ...: an
// oversized or malformed selector) would be answered alike by every member:
// when every asked member refused the forwarded request with the same one,
// the client gets that error (the member's own Status when it sent one, as
// kube-apiserver words it), and no member is counted or logged as failed.
// 401, 403, 404, 408 and 429 are not client errors here: they are about our
// credentials in the member, its objects, or its load.
[[nodiscard]] bool is_client_error(const MemberError& error);
// The common client error of `asked` (every asked member's error), if there is one.
[[nodiscard]] std::optional<k8s::Status> common_client_error(const std::vector<const MemberError*>& asked);
// The same over a fan-out's answers: nullopt as soon as one member answered;
// members of Plan::unasked (Kind::LeftOut) were not asked and do not count.
template <class T>
[[nodiscard]] std::optional<k8s::Status> common_client_error(const std::vector<MemberAnswer<T>>& answers) {
  std::vector<const MemberError*> asked;
  for (const MemberAnswer<T>& a : answers) {
    if (a.result.ok()) return std::nullopt;
    const MemberError* error = &a.result.error();
    if (error->kind != MemberError::Kind::LeftOut) asked.push_back(error);
  }
  return common_client_error(asked);
}

// ---------------------------------------------------------------------------
// Merging. Each takes every asked member's answer (any order), the unasked
// ones as Kind::LeftOut errors, and the query as the client sent it. When
// some members failed and others answered, the answer holds what the others
// returned plus one warning per failed member; when every member failed, the
// answer is 503 ServiceUnavailable naming them, or the client error every
// asked member gave (common_client_error). Answers are deterministic: members
// are taken in name order.

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

// The pods list as the API server writes it, in one pass per member and
// without PodMetrics values: each member's answer is turned into encoded
// items as it arrives (MemberCluster::pod_metrics_items, kept and annotated
// by item_preparation as prepare_pod_metrics does), and the merge orders
// those items as merge_pod_metrics orders pods (each member's sorted, then
// the members' runs merged), into Answer::json_list. The bytes are
// merge_pod_metrics' list JSON for the same member answers. A list query only.
[[nodiscard]] std::shared_ptr<const k8s::ItemPreparation> item_preparation(
    std::string_view cluster, std::shared_ptr<const ResourceMetricsQuery> query);
[[nodiscard]] PodMetricsAnswer merge_encoded_pod_metrics(std::vector<MemberAnswer<k8s::EncodedItems>> answers,
                                                         const ResourceMetricsQuery& query);

// Pods (`pods/*` metrics, or any item describing a Pod): items stay per pod
// and per member, never summed. Other described objects present in several
// members are summed into one item keyed by (kind, namespace, name), with the
// newest timestamp and the largest window (Karmada's semantics, but keyed by
// more than the name: Karmada's adapter keys by name alone and so sums two
// members' same-named pods into one). A named object no member returned ->
// 404 with its name; a named pod returned by several members -> 409 Conflict
// naming them (docs/design/member-identity.md).
[[nodiscard]] CustomMetricsAnswer merge_custom_metrics(std::vector<MemberAnswer<std::vector<k8s::MetricValue>>> answers,
                                                       const CustomMetricsQuery& query);

// Every series of every member, each tagged metricLabels[fedmetrics/cluster] =
// member, in member-name order (each member's own order kept).
[[nodiscard]] ExternalMetricsAnswer merge_external_metrics(
    std::vector<MemberAnswer<std::vector<k8s::ExternalMetricValue>>> answers, const ExternalMetricsQuery& query);

// `member2: timeout: no answer within 3s`: member name, error kind, message;
// an error status as `member2: HTTP 500: <the member's message>` (the code
// once); for a member not asked, `member2: left out: <reason>`.
// Safe inside a quoted header value: `"` becomes `'`, `\` becomes `/`,
// control characters become spaces, and it is cut to a bounded length.
[[nodiscard]] std::string member_warning(std::string_view cluster, const MemberError& error);

// ---------------------------------------------------------------------------
// What the merges share (merge.cpp, merge_encoded.cpp).

// Whether a member's list keeps an item of this namespace and name: the
// members were asked with these selectors already, and this keeps a member
// that ignores them from leaking objects into the answer.
[[nodiscard]] bool wanted(const ResourceMetricsQuery& query, std::string_view namespace_name, std::string_view name);

// The members that answered, in name order, and the failures turned into
// warnings (or into a 503 when nobody answered).
template <class T>
struct Gathered {
  std::vector<std::pair<std::string, T>> answered;
  std::vector<std::string> warnings;
  std::optional<k8s::Status> all_failed;
};

template <class T>
Gathered<T> gather(std::vector<MemberAnswer<T>> answers, std::string_view group) {
  std::stable_sort(answers.begin(), answers.end(),
                   [](const MemberAnswer<T>& a, const MemberAnswer<T>& b) { return a.cluster < b.cluster; });
  Gathered<T> out;
  if (auto refused = common_client_error(answers)) {
    out.all_failed = std::move(*refused);
    return out;
  }
  std::vector<std::string> failures;
  for (MemberAnswer<T>& a : answers) {
    if (a.result.ok()) {
      out.answered.emplace_back(std::move(a.cluster), std::move(*a.result));
    } else {
      failures.push_back(member_warning(a.cluster, a.result.error()));
    }
  }
  if (out.answered.empty() && !failures.empty()) {
    std::string message = "no member cluster could serve " + std::string(group) + ": ";
    for (std::size_t i = 0; i < failures.size(); ++i) message += (i ? "; " : "") + failures[i];
    out.all_failed = k8s::Status::service_unavailable(message);
  } else {
    out.warnings = std::move(failures);
  }
  return out;
}

// ---------------------------------------------------------------------------
// Discovery from the members' capabilities (null entries are skipped).

// custom.metrics.k8s.io/<version>: union on name, sorted by name, kind
// MetricValueList, verbs ["get"], singularName "", and one `namespaced` value
// per parent resource (the aggregator rejects a group-version whose
// subresources disagree with their parent): false for
// namespaces, nodes and persistentvolumes (prometheus-adapter's rule), else
// true when any member says true for any metric of that parent.
[[nodiscard]] k8s::APIResourceList merge_custom_metric_resources(
    const std::vector<std::shared_ptr<const MemberCapabilities>>& members, k8s::CustomMetricsVersion version);
// external.metrics.k8s.io/v1beta1: union on name, sorted, kind
// ExternalMetricValueList, namespaced true, verbs ["get"].
[[nodiscard]] k8s::APIResourceList merge_external_metric_resources(
    const std::vector<std::shared_ptr<const MemberCapabilities>>& members);

}  // namespace fedmetrics::aggregator
