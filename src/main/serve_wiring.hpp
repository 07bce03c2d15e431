#pragma once
// The parts `fedmetrics serve` is assembled from; serve_command.cpp wires
// them. Flags to values, the request gate with its certificate trust, the
// autoscaler: each throws std::runtime_error naming the flag at fault.
#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "fedmetrics/controller/cron_controller.hpp"
#include "fedmetrics/controller/hpa_controller.hpp"
#include "fedmetrics/controller/leader_election.hpp"
#include "fedmetrics/transport/executor.hpp"
#include "fedmetrics/transport/task.hpp"
#include "main/serve_command.hpp"

namespace fedmetrics::aggregator {
class Aggregator;
}
namespace fedmetrics::kube {
class ClientRuntime;
struct ClusterEndpoint;
}  // namespace fedmetrics::kube
namespace fedmetrics::clusterclient {
class RefreshingMemberSource;
class RestMemberCluster;
class PrometheusRelister;
}  // namespace fedmetrics::clusterclient
namespace fedmetrics::aggregator {
class MemberCluster;
class MemberSource;
}  // namespace fedmetrics::aggregator
namespace fedmetrics::server {
class RequestGate;
}
namespace fedmetrics::telemetry {
class PrometheusServerMetrics;
}

namespace fedmetrics::kubeclient {
class RestReviewClient;
class WatchedMemberPods;
}  // namespace fedmetrics::kubeclient

namespace fedmetrics::cli {

// A Go duration flag (500ms, 3s), not negative.
std::chrono::milliseconds duration_flag(const std::string& flag, const std::string& value);

// Prometheus members (serve_prometheus.cpp): --prometheus-rules and where
// each member's Prometheus is.
void add_prometheus_flags(CLI::App* serve, ServeOptions& o);
struct PrometheusMembers {
  // MemberSetOptions::serve_as; null without --prometheus-rules.
  std::function<std::shared_ptr<aggregator::MemberCluster>(std::shared_ptr<clusterclient::RestMemberCluster>,
                                                           const kube::ClusterEndpoint*)>
      serve_as;
  std::chrono::milliseconds relist_interval{0};
};
// Reads and checks the rules file (errors name the file and the rule).
PrometheusMembers prometheus_members(const ServeOptions& o, kube::ClientRuntime& runtime);
// The background relist of the members' Prometheus series; null without Prometheus members.
std::shared_ptr<clusterclient::PrometheusRelister> start_prometheus_relist(
    const PrometheusMembers& prometheus, kube::ClientRuntime& runtime,
    std::shared_ptr<const aggregator::MemberSource> members);

// ---- Trust and gate (serve_trust.cpp)

// Authentication and authorization as a delegating apiserver sets them up
// (apiserver pkg/server/options/authentication.go, authorization.go).
struct Gate {
  std::shared_ptr<server::RequestGate> gate;
  std::shared_ptr<kubeclient::RestReviewClient> authentication;  // null without --authentication-kubeconfig
};
// The flags of authentication, authorization and the serving certificate
// agree (or --insecure-development-no-auth, with a warning); throws what to fix.
void check_auth_flags(const ServeOptions& o);

// The gate and its review clients, without certificate trust until load_trust().
Gate make_gate(const ServeOptions& o, kube::ClientRuntime& runtime,
               std::shared_ptr<telemetry::PrometheusServerMetrics> metrics);
// At start-up: reads the certificate trust (the ConfigMap the control plane
// publishes, awaited, and the flags on top) into the gate. Throws
// std::runtime_error saying what to do when it cannot.
async::Task<void> load_trust(const ServeOptions& o, const Gate& gate);

// Keeps the trust published in extension-apiserver-authentication fresh (re-read
// every minute, as Kubernetes' dynamic CA controllers); a failure keeps what
// was loaded and is logged once until it recovers.
class TrustRefresher {
 public:
  TrustRefresher(const ServeOptions& o, Gate gate);
  ~TrustRefresher();
  void start(const async::Executor& executor);
  void stop();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// ---- The autoscaler (serve_autoscaler.cpp)

// The built-in FederatedHPA loop, when --enable-autoscaler asks for it, and
// its leader election.
struct Autoscaler {
  std::shared_ptr<controller::LeaderElector> elector;   // shared: /metrics reads whether it leads
  std::shared_ptr<kubeclient::WatchedMemberPods> pods;  // the members' pods the loop reads; stopped after it
  std::unique_ptr<controller::HpaController> loop;
  std::shared_ptr<controller::CronController>
      cron;  // scheduled scaling, on the same leadership (/metrics reads it too)
  void start();
  // Idempotent. The loops stop first (they ask the elector whether it leads),
  // then the elector (whose callback pokes them) while all still exist.
  void stop();
  // Also on the error paths that leave run_serve early: never a member destroyed under a running thread.
  ~Autoscaler() { stop(); }
};

// Null without --enable-autoscaler. Made (its flags checked) before the server starts, started after it.
std::unique_ptr<Autoscaler> make_autoscaler(const ServeOptions& o, kube::ClientRuntime& runtime,
                                            std::shared_ptr<aggregator::Aggregator> metrics,
                                            std::shared_ptr<clusterclient::RefreshingMemberSource> members,
                                            std::shared_ptr<aggregator::MemberSource> member_view,
                                            std::chrono::milliseconds member_timeout,
                                            telemetry::PrometheusServerMetrics& self_metrics);

}  // namespace fedmetrics::cli
