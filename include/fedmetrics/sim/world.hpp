#pragma once
// The world file of `fedmetrics sim`: which member clusters exist, what they
// serve, their nodes, the workloads propagated to them (a Deployment template
// and Karmada's Divided/Weighted propagation, by static weights or over
// overflow cluster groups), the offered load,
// the users and their bearer tokens, and the faults to start with. Parsed from
// YAML into plain values; every error names the field it is about
// ("members[1].name: required").
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fedmetrics/k8s/expected.hpp"
#include "fedmetrics/k8s/label_selector.hpp"
#include "fedmetrics/k8s/metrics_types.hpp"
#include "fedmetrics/k8s/quantity.hpp"

namespace fedmetrics::sim {

// Which metrics APIs a member's aggregation layer serves.
struct MetricsApis {
  bool metrics = true;         // metrics.k8s.io/v1beta1 (metrics-server)
  bool custom_v1beta2 = true;  // custom.metrics.k8s.io/v1beta2 (prometheus-adapter)
  bool custom_v1beta1 = true;  // custom.metrics.k8s.io/v1beta1
  bool external = true;        // external.metrics.k8s.io/v1beta1
  [[nodiscard]] bool custom() const { return custom_v1beta2 || custom_v1beta1; }
  friend bool operator==(const MetricsApis&, const MetricsApis&) = default;
};

// Faults of one member. Latency, black hole, refusal and the wrong certificate
// are applied by the listener; the others are answers (MemberApi).
struct Faults {
  std::chrono::milliseconds latency{0};  // extra, on top of the member's latency
  double error_rate = 0.0;               // fraction of requests answered 500, in [0, 1]
  bool blackhole = false;                // accept, read, never answer
  bool refuse = false;                   // refuse TCP connections
  bool malformed_json = false;           // 200 with a truncated JSON body
  bool malformed_gzip = false;           // 200 "Content-Encoding: gzip" with a bad CRC-32, to gzip-accepting clients
  bool wrong_certificate = false;        // serve a certificate from another CA
  bool expired_token = false;            // every token is rejected with 401
  friend bool operator==(const Faults&, const Faults&) = default;
};

struct NodeSpec {
  std::string name;
  k8s::Labels labels;
  k8s::Quantity cpu;     // capacity and allocatable, cores
  k8s::Quantity memory;  // capacity and allocatable, bytes
};

struct MemberSpec {
  std::string name;
  std::uint16_t port = 0;  // 0 = any free port
  MetricsApis apis;
  std::chrono::milliseconds latency{0};  // added to every answer
  std::int64_t weight = 1;               // default static weight in propagations
  std::string kubernetes_version = "v1.31.0";
  std::vector<NodeSpec> nodes;
  Faults faults;
};

struct ContainerSpec {
  std::string name;
  std::string image;
  k8s::ResourceList requests;
  k8s::ResourceList limits;
};

// A cluster group of an overflow placement: its affinityName and members.
struct ClusterGroup {
  std::string name;
  std::vector<std::string> clusters;
};

// Karmada PropagationPolicy placement with replicaScheduling Divided/Weighted:
// a staticWeightList, or (Karmada 1.18) a cluster affinity with overflow
// affinities, divided by dynamic weight (autoscaler/overflow_placement.hpp).
struct Propagation {
  // Every member the workload propagates to, each once, in the order written
  // (with overflow affinities: the primary group's, then each overflow group's).
  std::vector<std::string> clusters;
  std::map<std::string, std::int64_t> weights;  // absent: the member's weight
  // With overflowAffinities: the primary group (`clusters` as written), then
  // each overflow group in order. Empty: static weights.
  std::vector<ClusterGroup> groups;
};

// The load offered to a whole workload, across all members.
struct Load {
  k8s::Quantity cpu;                  // cores
  k8s::Quantity requests_per_second;  // the http_requests metric
  friend bool operator==(const Load&, const Load&) = default;
};

// A change of a workload's load at a time after the world started.
struct LoadChange {
  std::chrono::milliseconds at{0};
  Load load;
};

struct WorkloadSpec {
  std::string name;
  std::string namespace_name = "default";
  std::int32_t replicas = 1;
  k8s::Labels labels;  // template labels, also the selector
  std::vector<ContainerSpec> containers;
  // Pod-level resources (the template's spec.resources): the autoscaler's
  // Utilization uses these requests in place of the containers' sum.
  k8s::ResourceList pod_requests;
  k8s::ResourceList pod_limits;
  Propagation propagation;
  Load load;
  std::vector<LoadChange> load_schedule;      // in time order
  std::vector<std::string> custom_metrics;    // series the pods expose, e.g. http_requests
  std::chrono::seconds startup_delay{0};      // Pending (scheduled, containers being created) until Running
  std::chrono::seconds readiness_delay{0};    // from Running to Ready
  std::chrono::seconds termination_grace{0};  // how long a deleted pod stays Terminating
  k8s::Quantity baseline_cpu;                 // per pod, cores, usage without load
  k8s::Quantity memory_usage;                 // per pod, bytes
};

// An RBAC PolicyRule: what a user may do, for the control plane's
// SubjectAccessReview answers. "*" matches anything in each list.
struct PolicyRule {
  std::vector<std::string> verbs;
  std::vector<std::string> api_groups;         // "" is the core group
  std::vector<std::string> resources;          // "pods", "pods/log", "*"
  std::vector<std::string> resource_names;     // empty: any
  std::vector<std::string> non_resource_urls;  // "/healthz", "/apis/*"
};

struct UserSpec {
  std::string name;
  std::string token;
  std::vector<std::string> members;  // empty: valid on every member
  std::vector<std::string> groups;   // system:authenticated is always added
  // Empty: the user may do everything (as a member of system:masters).
  std::vector<PolicyRule> rules;
};

// An external.metrics.k8s.io series.
struct ExternalMetricSpec {
  std::string name;
  k8s::Labels labels;
  k8s::Quantity value;
  std::string namespace_name;        // empty: answered in every namespace
  std::vector<std::string> members;  // empty: every member with the API
};

// The metrics server the control plane's aggregation layer forwards to, as
// the APIService objects and their ExternalName Service would say (seeded at
// start; `kubectl apply -f deploy/base/apiservice.yaml` does the same by hand).
struct AggregationSpec {
  std::string address = "127.0.0.1";  // the Service's externalName
  std::uint16_t port = 8443;          // APIService spec.service.port
  std::string service_namespace = "fedmetrics-system";
  std::string service_name = "fedmetrics";
  std::string ca_file;  // caBundle; relative to the world file
  bool insecure_skip_tls_verify = false;
};

struct World {
  std::vector<MemberSpec> members;
  std::vector<std::string> namespaces;  // always includes default and kube-system
  std::vector<WorkloadSpec> workloads;
  std::vector<UserSpec> users;
  std::vector<ExternalMetricSpec> external_metrics;
  std::optional<AggregationSpec> aggregation;

  [[nodiscard]] std::optional<std::size_t> member_index(std::string_view name) const;
  [[nodiscard]] std::optional<std::size_t> workload_index(std::string_view namespace_name, std::string_view name) const;
};

// The token of the user a world without `users` gets.
inline constexpr std::string_view kDefaultToken = "fedmetrics-sim-token";

k8s::Expected<World> parse_world(std::string_view yaml_text);

// The faults object of the world file and of PUT /sim/v1/members/{name}/faults,
// from a parsed JSON-compatible value: {"latency":"200ms","errorRate":0.5,...}.
// Absent fields keep the value in `base`.
k8s::Expected<Faults> faults_from_json(const nlohmann::json& in, Faults base = {});
nlohmann::json to_json(const Faults& faults);

}  // namespace fedmetrics::sim
