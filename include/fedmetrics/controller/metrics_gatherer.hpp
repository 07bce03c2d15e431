#pragma once
// What one FederatedHPA sync reads from the member clusters, in process: the
// target's pods in every member (core pod lists) and, per metric of the spec,
// the values from the aggregator (metrics.k8s.io, custom.metrics.k8s.io,
// external.metrics.k8s.io). Pods are identified by (cluster, namespace, name):
// the resource metrics carry their member in the query-from-cluster
// annotation, and Pods metrics are asked per member (with the reserved
// fedmetrics/cluster selector) so that same-named pods in two members stay
// two pods. A member that fails leaves its pods or values missing; the
// calculation treats them as upstream treats missing pods.
#include <chrono>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "fedmetrics/aggregator/member_cluster.hpp"
#include "fedmetrics/aggregator/metrics_service.hpp"
#include "fedmetrics/autoscaler/hpa_spec.hpp"
#include "fedmetrics/autoscaler/member_placement.hpp"
#include "fedmetrics/autoscaler/pod_state.hpp"
#include "fedmetrics/controller/member_pods.hpp"
#include "fedmetrics/controller/placement_reader.hpp"
#include "fedmetrics/transport/task.hpp"

namespace fedmetrics::controller {

// core/v1 Pod as the calculation sees it.
autoscaler::Pod to_autoscaler_pod(const std::string& cluster, const k8s::Pod& pod);

struct PodListing {
  std::vector<autoscaler::Pod> pods;
  std::vector<std::string> failed_members;  // "member2: connection refused"
  std::vector<std::string> unread_members;  // "member2", in name order
};

// What the calculation must know of the federation (member_placement.hpp):
// the replicas the ResourceBinding placed in each member (`hosts`; the
// calibration), and the members whose pod list failed, each with the
// replicas placed there. Without a binding those are not known: the
// replicas the scale reports that no listed pod accounts for are shared
// among the unread members (an estimate, said in the comment of the code).
autoscaler::MemberPlacement member_placement(const std::optional<std::vector<TargetCluster>>& hosts,
                                             const PodListing& listing, std::int32_t status_replicas);

// The members whose pods could not even be asked for: a host the
// ResourceBinding names that is not a member to ask (its Cluster is
// NotReady, or it is unknown), or, without a binding, every member the
// member source left out. Their pods are missing, not absent: added to
// `listing` as unread members (with the reason in failed_members), so that a
// NotReady member under load cannot cause a scale-down.
void add_members_not_asked(PodListing& listing, const aggregator::MemberSnapshot& members,
                           const std::optional<std::set<std::string>>& hosts);

// Lists the pods matching `selector` in `namespace_name` in every member, in
// parallel on the caller's executor: from the members' watches with
// `watched`, by a list of each member otherwise. The arguments must live
// until it ends.
async::Task<PodListing> list_pods(const aggregator::MemberList& members, const std::string& namespace_name,
                                  const k8s::LabelSelector& selector, aggregator::Deadline deadline,
                                  MemberPods* watched = nullptr);

// What gather_metrics fetched, and how long each metric of the spec waited
// for its values (the metrics are asked in parallel; two entries asked as
// one query, or every Resource entry, share that query's time).
struct GatheredMetrics {
  autoscaler::MetricsSnapshot snapshot;
  std::vector<std::chrono::nanoseconds> fetch_durations;  // one per spec.metrics entry
};

// Where a sync's resource metrics come from when it does not ask for them
// itself: the members' shared pod metrics (hpa_controller.hpp,
// ControllerOptions::member_pods), the samples of the target's pods.
using ResourceSamples = k8s::Expected<std::vector<autoscaler::PodResourceSample>>;
using ResourceFetch = std::function<async::Task<ResourceSamples>()>;

// Fetches every metric `spec` needs; `pods` tells which members run the
// target's pods. With `hosts` (the members its ResourceBinding names) the
// resource metrics are asked of those members only; with `resource` they
// come from it instead. The queries run in parallel on the caller's
// executor; the arguments but `spec` must live until it ends.
async::Task<GatheredMetrics> gather_metrics(aggregator::MetricsService& service, autoscaler::FederatedHPASpec spec,
                                            const std::string& namespace_name, const k8s::LabelSelector& selector,
                                            const std::vector<autoscaler::Pod>& pods,
                                            const std::optional<std::set<std::string>>& hosts,
                                            ResourceFetch resource = {});

// A member's pod metrics answer as the resource samples of the pods it
// keeps: with their labels, those `selector` matches (as the metrics API
// selects them); without (an older metrics-server sends none), those in
// `listed`. Appended to `out`.
void add_resource_samples(const std::string& cluster, const aggregator::PodMetricsAnswer& answer,
                          const k8s::LabelSelector& selector, const std::set<autoscaler::PodKey>& listed,
                          std::vector<autoscaler::PodResourceSample>& out);

}  // namespace fedmetrics::controller
