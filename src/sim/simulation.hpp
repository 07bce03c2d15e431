#pragma once
// The running simulation behind `fedmetrics sim` (sim_command.cpp starts it):
// the federation's state, the member listeners' handling of requests with
// their faults, the members' HPA resyncs, the control endpoint's changes and
// the Karmada control plane's aggregation layer (its availability checks and
// proxy). Internal to the sim module.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "fedmetrics/k8s/time.hpp"
#include "fedmetrics/kube/https_client.hpp"
#include "fedmetrics/sim/federation.hpp"
#include "fedmetrics/sim/karmada_api.hpp"
#include "fedmetrics/sim/member_hpa_controller.hpp"
#include "fedmetrics/sim/member_objects.hpp"
#include "sim/pod_counters.hpp"
#include "fedmetrics/transport/tls_server.hpp"

namespace fedmetrics::sim::detail {

using transport::HttpRequest;
using transport::HttpResponse;
using transport::TlsServer;

k8s::Timestamp wall_now();

struct MemberCertificates {
  std::string cert_file, key_file;              // signed by the simulator's CA
  std::string wrong_cert_file, wrong_key_file;  // signed by another CA
};

// Everything the handlers share. The federation is an immutable snapshot
// swapped whole; writers (the control endpoint) serialise on `write_mutex`.
struct Simulation {
  std::atomic<std::shared_ptr<const Federation>> state;
  std::unique_ptr<KarmadaApi> karmada;
  std::unique_ptr<TlsServer> karmada_server;
  // The control plane's client side (cluster proxy, aggregation layer):
  // declared before the clients so that it outlives them.
  std::unique_ptr<kube::ClientRuntime> runtime;
  std::mutex upstreams_mutex;
  std::map<std::string, std::unique_ptr<kube::HttpsClient>> upstreams;
  std::string front_proxy_cert_pem, front_proxy_key_pem;
  // Some APIService failed its last check: re-check soon (the aggregator backs off from 5 ms to 30 s).
  std::atomic<bool> any_unavailable{false};
  std::mutex write_mutex;
  std::vector<std::unique_ptr<TlsServer>> members;
  // Each member's own stored objects (HorizontalPodAutoscalers).
  std::vector<std::unique_ptr<MemberObjects>> member_objects;
  // Each member's pod request counters, scraped by a Prometheus at /metrics/pods.
  std::vector<std::unique_ptr<PodCounters>> pod_counters;
  // Each member's HPA controller; used on that member's listener thread only.
  std::vector<MemberHpaController> hpa_controllers;
  std::vector<MemberCertificates> certificates;
  std::vector<std::mt19937_64> rngs;  // per member, for the error-rate fault
  std::vector<std::unique_ptr<std::mutex>> rng_mutexes;

  double draw(std::size_t member);

  // The faults a listener applies: refusal and the wrong certificate.
  void apply_listener_faults(std::size_t i, const Faults& before, const Faults& after);

  void handle_member(std::size_t i, HttpRequest request, std::function<void(HttpResponse)> respond);

  // A member's HPA controller scaled its Deployment; a retaining template
  // follows the members' sum on the control plane (Karmada's replicas syncer).
  void set_member_replicas(std::size_t workload, std::size_t member, std::int32_t replicas, const std::string& reason);

  // One resync of member i's HPAs: scale, then write each status.
  void resync_member_hpas(std::size_t i);

  void schedule_member_hpa_resync(std::size_t i, std::chrono::nanoseconds period);

  // A load change from the world file's schedule (the control endpoint may have changed it meanwhile).
  void apply_scheduled_load(std::size_t workload, const Load& load);

  void set_replicas(std::size_t workload, std::int32_t replicas);

  void set_retain_replicas(std::size_t workload, bool retain);

  // The Ready condition Karmada's cluster status controller would report.
  void update_cluster_conditions(const Federation& f);

  kube::HttpsClient& upstream(const Upstream& up);

  // kube-aggregator's availability check (remote_available_controller.go):
  // GET /apis/{group}/{version} as system:kube-aggregator (system:masters)
  // with the front-proxy certificate, 5 s; any 2xx makes it Available.
  void probe_apiservices();

  // kube-aggregator's proxy: the request as it came (headers already
  // rewritten by KarmadaApi), the answer relayed with its headers (Warning).
  void forward(const Upstream& up, HttpRequest request, std::function<void(HttpResponse)> respond,
               std::chrono::seconds timeout = std::chrono::seconds(60));

  static HttpResponse detail_status(int code, const std::string& message);

  HttpResponse handle_control(const HttpRequest& request);
};

}  // namespace fedmetrics::sim::detail
