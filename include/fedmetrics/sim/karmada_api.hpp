#pragma once
// What the simulated Karmada control plane (karmada-apiserver plus the parts
// of karmada-controller-manager and kube-aggregator the metrics path needs)
// answers:
//   - generic REST over the ObjectStore for the registered types (list with
//     selectors, watch, get, create, update, patch, delete, status): clusters,
//     secrets, deployments, federatedhpas, leases, events, apiservices, ...;
//   - deployments/scale (autoscaling/v1 Scale) tied to the simulated
//     workloads: a new spec.replicas is divided over the member clusters;
//   - authentication by the world's users' tokens and by ServiceAccount tokens
//     from TokenRequest (serviceaccounts/{name}/token, `kubectl create token`);
//     authorization by the world's rules and the stored RBAC bindings;
//     TokenReview, SubjectAccessReview, SelfSubjectAccessReview (`kubectl auth
//     can-i`) and SelfSubjectReview (`kubectl auth whoami`);
//   - the cluster proxy .../clusters/{name}/proxy/... forwarded to the member;
//   - the aggregation layer: a group-version with an APIService that names a
//     Service is forwarded to it over TLS with the front-proxy client
//     certificate and X-Remote-User/X-Remote-Group, as kube-aggregator's proxy does;
//   - discovery, /version, health.
// The network hops (proxy, aggregation) are done by the shell through
// `Hooks::forward`; everything else is computed here.
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "fedmetrics/k8s/time.hpp"
#include "fedmetrics/k8s/url.hpp"
#include "fedmetrics/sim/federation.hpp"
#include "fedmetrics/sim/object_store.hpp"
#include "fedmetrics/transport/http_message.hpp"
#include "fedmetrics/transport/task.hpp"

namespace fedmetrics::sim {

namespace detail {
class ServiceAccountTokens;
}

// Where the shell must send a forwarded request, and how to verify it.
struct Upstream {
  std::string server;  // "https://127.0.0.1:8443"
  std::string ca_pem;  // empty with insecure
  bool insecure = false;
  std::string server_name;   // TLS name to verify ("fedmetrics.fedmetrics.svc")
  std::string token;         // bearer token to present (cluster proxy)
  bool front_proxy = false;  // present the front-proxy client certificate (aggregation)
  [[nodiscard]] std::string key() const {
    return server + "|" + server_name + "|" + (insecure ? "i" : ca_pem) + "|" + token;
  }
};

struct KarmadaHooks {
  std::function<k8s::Timestamp()> clock;
  std::function<std::shared_ptr<const Federation>()> federation;
  // Sets a workload's replicas (the scale of its Deployment).
  std::function<void(std::size_t workload, std::int32_t replicas)> set_replicas;
  // Whether a workload's template retains its members' replicas (its
  // resourcetemplate.karmada.io/retain-replicas label), after every write of it.
  std::function<void(std::size_t workload, bool retain)> set_retain_replicas;
  // Sends `request` (target already rewritten) upstream: the answer, or a 503
  // Status when it cannot be reached.
  std::function<async::Task<transport::HttpResponse>(Upstream, transport::HttpRequest)> forward;
};

// A request the control plane does not answer itself: the shell forwards it
// (the cluster proxy, the aggregation layer).
struct ForwardedRequest {
  Upstream upstream;
  transport::HttpRequest request;
};

// A member as the control plane knows it: its Cluster object and Secret.
struct ClusterRegistration {
  std::string name;
  std::string api_endpoint;  // https://127.0.0.1:PORT
  std::string token;
  std::string ca_pem;
};

// The authentication material the control plane publishes in
// kube-system/extension-apiserver-authentication.
struct AuthenticationTrust {
  std::string client_ca_pem;
  std::string requestheader_client_ca_pem;
  std::vector<std::string> requestheader_allowed_names{"front-proxy-client"};
};

class KarmadaApi {
 public:
  KarmadaApi(std::shared_ptr<ObjectStore> store, KarmadaHooks hooks);

  // Registers the types and creates the objects a fresh Karmada control plane
  // with these members has: namespaces, Cluster objects (Push mode, Ready),
  // their Secrets in karmada-cluster, one Deployment per workload, the
  // extension-apiserver-authentication ConfigMap.
  // With `aggregation_ca_pem` the world's aggregation section (if any) is
  // registered too: its namespace, ExternalName Service and the four APIServices.
  void seed(const Federation& federation, const std::vector<ClusterRegistration>& clusters,
            const AuthenticationTrust& trust, const std::string& aggregation_ca_pem = {});

  // Keeps the Deployments' spec.replicas equal to the workloads' (after the
  // simulator's own control endpoint changed them).
  void sync_replicas(const Federation& federation);
  // Sets a Cluster's Ready condition (a member that refuses or black-holes is not Ready).
  void set_cluster_ready(const std::string& name, bool ready, const std::string& message);

  // The answer to `request`; a proxied one is awaited through Hooks::forward.
  async::Task<transport::HttpResponse> handle(transport::HttpRequest request);

  // kube-aggregator's availability controller (remote_available_controller.go): every
  // APIService that names a Service, with where to probe it or why it cannot
  // be reached. The shell probes GET /apis/{group}/{version} and reports
  // back; until a probe passed, proxied requests get 503.
  struct AvailabilityTarget {
    std::string name;  // "v1beta1.metrics.k8s.io"
    std::string path;  // "/apis/metrics.k8s.io/v1beta1"
    std::optional<Upstream> upstream;
    std::string unreachable;  // why not, when no upstream
  };
  [[nodiscard]] std::vector<AvailabilityTarget> availability_targets() const;
  // Writes the Available condition when it changed (Passed / FailedDiscoveryCheck / ServiceNotFound).
  void set_available(const std::string& name, bool available, const std::string& reason, const std::string& message);
  // kube-aggregator's discovery manager: the APIResourceList an APIService's
  // server answered to the same GET, or nullopt when it could not be asked
  // (aggregated discovery then lists that group-version as Stale).
  void set_discovered(const std::string& name, std::optional<nlohmann::json> resource_list);

  [[nodiscard]] ObjectStore& store() { return *store_; }

 private:
  // The answer computed here, or the request to forward. Throws nlohmann's
  // exceptions on a client's document of an unexpected shape.
  std::variant<transport::HttpResponse, ForwardedRequest> answer(transport::HttpRequest request);
  // The discovery documents; nullopt when the request asks for something else.
  [[nodiscard]] std::optional<transport::HttpResponse> discovery(const transport::HttpRequest& request,
                                                                 const k8s::RequestTarget& target) const;
  std::shared_ptr<ObjectStore> store_;
  KarmadaHooks hooks_;
  std::shared_ptr<detail::ServiceAccountTokens> tokens_;
  [[nodiscard]] std::optional<nlohmann::json> discovered(const std::string& name) const;
  mutable std::mutex discovered_mutex_;
  std::map<std::string, nlohmann::json> discovered_;  // by APIService name
};

// The SubjectAccessReview decision for a world user (pure; exposed for tests).
struct AccessDecision {
  bool allowed = false;
  std::string reason;
};
AccessDecision authorize(const UserSpec& user, const nlohmann::json& sar_spec);

}  // namespace fedmetrics::sim
