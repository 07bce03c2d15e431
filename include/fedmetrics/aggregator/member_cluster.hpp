#pragma once
// The aggregator's port to one member cluster: a small typed interface, one
// call per metrics API, each a coroutine that ends with a value or a
// classified error, never later than the deadline it was given. The caller
// awaits it on its own executor; arguments passed by reference must live
// until it ends. src/clusterclient implements it over HTTPS; the tests use
// the one fake in test/support.
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fedmetrics/aggregator/query.hpp"
#include "fedmetrics/k8s/discovery.hpp"
#include "fedmetrics/k8s/expected.hpp"
#include "fedmetrics/k8s/metrics_list_items.hpp"
#include "fedmetrics/k8s/metrics_types.hpp"
#include "fedmetrics/k8s/pod.hpp"
#include "fedmetrics/k8s/status.hpp"
#include "fedmetrics/transport/task.hpp"

namespace fedmetrics::aggregator {

using Deadline = std::chrono::steady_clock::time_point;

// Why a call to a member failed: the wire library's one error type, whose
// kinds include every way a member call fails (k8s/expected.hpp). A
// member's NotFound for an object or metric is not a failure: the calls
// below turn it into an empty answer.
using MemberError = k8s::Error;
using k8s::to_string;

template <class T>
using MemberResult = k8s::Expected<T>;

// What a member serves, as its discovery documents say (refreshed in the
// background, never on the request path).
struct MemberCapabilities {
  bool resource_metrics = false;                            // metrics.k8s.io/v1beta1
  std::optional<k8s::CustomMetricsVersion> custom_metrics;  // preferred served version, if any
  bool external_metrics = false;                            // external.metrics.k8s.io/v1beta1
  std::vector<k8s::APIResource> custom_metric_resources;    // "pods/http_requests", ...
  std::vector<k8s::APIResource> external_metric_resources;  // "queue_depth", ...
};

// MemberCluster::pod_metrics_items' default: a member's pods, encoded as
// items once they come.
inline async::Task<MemberResult<k8s::EncodedItems>> encode_items(
    async::Task<MemberResult<std::vector<k8s::PodMetrics>>> asking,
    std::shared_ptr<const k8s::ItemPreparation> preparation) {
  auto result = co_await std::move(asking);
  if (!result.ok()) co_return result.error();
  co_return k8s::encode_pod_metrics_items(std::move(*result), *preparation);
}

class MemberCluster {
 public:
  virtual ~MemberCluster() = default;

  [[nodiscard]] virtual const std::string& name() const = 0;
  // Null until the first discovery succeeded.
  [[nodiscard]] virtual std::shared_ptr<const MemberCapabilities> capabilities() const = 0;

  // metrics.k8s.io pods: `namespace_name` empty = all namespaces. A get by
  // name is a list with a metadata.name field selector (0 or 1 items).
  virtual async::Task<MemberResult<std::vector<k8s::PodMetrics>>> pod_metrics(const std::string& namespace_name,
                                                                              const k8s::LabelSelector& labels,
                                                                              const k8s::FieldSelector& fields,
                                                                              Deadline deadline) = 0;
  virtual async::Task<MemberResult<std::vector<k8s::NodeMetrics>>> node_metrics(const k8s::LabelSelector& labels,
                                                                                const k8s::FieldSelector& fields,
                                                                                Deadline deadline) = 0;
  // The same pods as pod_metrics, for a merged JSON list: the items
  // `preparation` keeps, annotated and encoded (k8s::EncodedItems). By
  // default made from pod_metrics' values; the REST member turns the
  // member's text into them without making those values.
  virtual async::Task<MemberResult<k8s::EncodedItems>> pod_metrics_items(
      const std::string& namespace_name, const k8s::LabelSelector& labels, const k8s::FieldSelector& fields,
      std::shared_ptr<const k8s::ItemPreparation> preparation, Deadline deadline) {
    return encode_items(pod_metrics(namespace_name, labels, fields, deadline), std::move(preparation));
  }
  // custom.metrics.k8s.io in the version the member serves, converted to the
  // hub shape; a NotFound answer is an empty list. `query` carries selectors
  // without the reserved cluster key.
  virtual async::Task<MemberResult<std::vector<k8s::MetricValue>>> custom_metrics(const CustomMetricsQuery& query,
                                                                                  Deadline deadline) = 0;
  virtual async::Task<MemberResult<std::vector<k8s::ExternalMetricValue>>> external_metrics(
      const ExternalMetricsQuery& query, Deadline deadline) = 0;
  // core/v1 pods in `namespace_name` matching `labels` (the autoscaler's pod
  // lister). A member that cannot list pods answers with an error.
  virtual async::Task<MemberResult<std::vector<k8s::Pod>>> pods(const std::string& namespace_name,
                                                                const k8s::LabelSelector& labels,
                                                                Deadline deadline) = 0;
  // One cheap request whose only purpose is to learn whether the member
  // answers at all (the aggregator probes a member that stopped answering
  // before it asks it again): nothing, or the request's error, which says
  // whether the member answered (an error status is an answer).
  virtual async::Task<std::optional<MemberError>> probe(Deadline deadline) = 0;
};

using MemberList = std::vector<std::shared_ptr<MemberCluster>>;

// A member cluster the source knows of but offers no client for: its Karmada
// Cluster is not Ready, or it cannot be reached as its object or kubeconfig
// context says. Its data is missing from every answer that would have asked
// it, so the aggregator reports it as it reports a member that failed
// (`member2: left out: Cluster NotReady (ClusterNotReachable)`), never by
// silence (docs/design/missing-members.md).
//
// A member that stopped answering (the aggregator's fail-fast) is left out
// the same way, with its client kept in `member`: it is still probed, and
// its client's own metrics go on.
struct LeftOutMember {
  std::string name;
  std::string reason;                          // for people, after "left out: "
  std::shared_ptr<MemberCluster> member = {};  // its client, when it has one (not answering)
  friend bool operator==(const LeftOutMember&, const LeftOutMember&) = default;
};

// One consistent view of the member set: the members to ask and the ones
// left out (by name, none of them also a member).
struct MemberSnapshot {
  MemberList members;
  std::vector<LeftOutMember> left_out;
};

// The current member set: an immutable snapshot, swapped whole when it
// changes, so a reader never sees it half-updated.
class MemberSource {
 public:
  virtual ~MemberSource() = default;
  [[nodiscard]] virtual std::shared_ptr<const MemberList> members() const = 0;
  // The members with the ones left out, from the same snapshot. A source
  // that never leaves a member out need not override it.
  [[nodiscard]] virtual std::shared_ptr<const MemberSnapshot> snapshot() const {
    auto list = members();
    return std::make_shared<const MemberSnapshot>(MemberSnapshot{list ? *list : MemberList{}, {}});
  }
};

}  // namespace fedmetrics::aggregator
