#pragma once
// Which member clusters a Karmada control plane's Cluster objects name, and
// how to reach each one: the pure decision behind KarmadaClusterSource,
// from decoded objects to ClusterEndpoints, with no I/O.
//
// Only clusters whose Ready condition is True are members (Karmada's
// metrics adapter does the same, pkg/metricsadapter/controller.go); the
// others, and those that cannot be reached as their object says, are left
// out with the reason, so that every answer missing their data says so
// (aggregator::LeftOutMember) instead of silently shrinking. A member
// is reached either directly, as Karmada's BuildClusterConfig does
// (pkg/util/membercluster_client.go: spec.apiEndpoint, the token and caBundle
// of the Secret spec.secretRef names, spec.insecureSkipTLSVerification), or
// through the control plane's cluster proxy with the control plane's own
// credentials: always with --member-access=proxy, and for Pull clusters,
// which the control plane may have no route to.
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "fedmetrics/aggregator/member_cluster.hpp"
#include "fedmetrics/kube/kubeconfig.hpp"
#include "fedmetrics/k8s/karmada_cluster.hpp"

namespace fedmetrics::clusterclient {

enum class MemberAccess {
  Direct,  // spec.apiEndpoint with the cluster's Secret (Push clusters)
  Proxy,   // /apis/cluster.karmada.io/v1alpha1/clusters/{name}/proxy on the control plane
};

using ClusterObjects = std::vector<k8s::Expected<k8s::KarmadaCluster>>;
// The Secrets read for the plan, by reference; a Secret that could not be
// read (404, 403, not a Secret) is an error here, which leaves out its cluster.
using SecretLookup = std::map<k8s::SecretReference, k8s::Expected<k8s::Secret>>;

// A Cluster's own Prometheus (docs/prometheus.md): a URL reached directly,
// and the companion Secret ("NAMESPACE/NAME") whose data.ca.crt and
// data.token verify it and authenticate to it, if it needs them.
inline constexpr std::string_view kPrometheusUrlAnnotation = "metrics.fedmetrics.io/prometheus-url";
inline constexpr std::string_view kPrometheusSecretAnnotation = "metrics.fedmetrics.io/prometheus-secret";

struct MemberPlan {
  std::vector<kube::ClusterEndpoint> members;  // Ready clusters that can be reached
  // The Prometheus of the members whose Cluster names one, by member name:
  // the annotation's URL with the companion Secret's CA and token.
  std::map<std::string, kube::ClusterEndpoint> prometheus;
  // Every named cluster that is not a member, in the objects' order, with the
  // reason the answers' Warnings give: `Cluster NotReady (ClusterNotReachable)`.
  std::vector<aggregator::LeftOutMember> left_out;
  // For the log, in more words:
  std::map<std::string, std::string> not_ready;  // cluster -> its Ready condition in words
  std::vector<std::string> unusable;             // why an object cannot be used, naming it
};

// The Warning's reason for a cluster that is not Ready: its Ready
// condition's status and reason, as `kubectl get clusters` shows the one
// and Karmada's cluster status controller sets the other:
// `Cluster NotReady (ClusterNotReachable)`, `Cluster Ready=Unknown (...)`,
// `Cluster has no Ready condition yet`.
[[nodiscard]] std::string not_ready_reason(const k8s::KarmadaCluster& cluster);

[[nodiscard]] bool through_proxy(const k8s::KarmadaCluster& cluster, MemberAccess access);

// The Secrets plan_members() needs: those of Ready clusters reached
// directly, and the companion Secrets of their Prometheus.
[[nodiscard]] std::vector<k8s::SecretReference> secrets_to_read(const ClusterObjects& clusters, MemberAccess access);

[[nodiscard]] MemberPlan plan_members(const ClusterObjects& clusters, const SecretLookup& secrets,
                                      const kube::ClusterEndpoint& control_plane, MemberAccess access);

// The server URL of a cluster's proxy on the control plane; HttpsClient puts
// its path in front of every request.
[[nodiscard]] std::string cluster_proxy_server(std::string_view control_plane_server, std::string_view cluster);

}  // namespace fedmetrics::clusterclient
