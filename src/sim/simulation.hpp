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
#include <optional>
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
#include "fedmetrics/transport/async.hpp"
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
  // An APIService or Service changed: check them all at once.
  std::atomic<bool> probe_requested{false};
  // The probe loop, its strand on the client runtime and what wakes it.
  std::optional<async::Strand> probe_strand;
  std::unique_ptr<async::Wakeup> probe_wakeup;
  async::Job probe_job;
  std::mutex write_mutex;
  // Each member's own stored objects (HorizontalPodAutoscalers); declared
  // before the listeners, whose watches leave these stores as they end.
  std::vector<std::unique_ptr<MemberObjects>> member_objects;
  // Each member's pod request counters, scraped by a Prometheus at /metrics/pods.
  std::vector<std::unique_ptr<PodCounters>> pod_counters;
  std::vector<std::unique_ptr<TlsServer>> members;
  // Each member's HPA controller; used on that member's listener thread only.
  std::vector<MemberHpaController> hpa_controllers;
  std::vector<MemberCertificates> certificates;
  std::vector<std::mt19937_64> rngs;  // per member, for the error-rate fault
  std::vector<std::unique_ptr<std::mutex>> rng_mutexes;

  double draw(std::size_t member);

  // The faults a listener applies: refusal and the wrong certificate.
  void apply_listener_faults(std::size_t i, const Faults& before, const Faults& after);

  // A member's answer, after the member's latency and its faults: a black
  // hole holds the request until the client goes (the listener then
  // cancels this) or for 10 minutes, and closes the connection unanswered.
  async::Task<HttpResponse> handle_member(std::size_t i, HttpRequest request);

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

  // kube-aggregator's availability checks (remote_available_controller.go),
  // on the client runtime: every APIService at once when one of them or a
  // Service changes (request_probe()), those whose last check failed every
  // second, and all of them every 30 s (the aggregator's resync). Runs until
  // cancelled (the runtime's loops stage stops it).
  async::Task<void> probe_apiservices_loop();
  // From any thread: probe every APIService soon.
  void request_probe();
  // One round: every APIService checked at once.
  async::Task<void> probe_apiservices();
  // GET /apis/{group}/{version} as system:kube-aggregator (system:masters)
  // with the front-proxy certificate, 5 s; any 2xx makes it Available.
  async::Task<void> probe_apiservice(KarmadaApi::AvailabilityTarget target);

  // kube-aggregator's proxy: the request as it came (headers already
  // rewritten by KarmadaApi), the answer relayed with its headers (Warning),
  // or a 503 Status when the upstream cannot be reached.
  async::Task<HttpResponse> forward(Upstream up, HttpRequest request,
                                    std::chrono::seconds timeout = std::chrono::seconds(60));

  static HttpResponse detail_status(int code, const std::string& message);

  HttpResponse handle_control(const HttpRequest& request);
};

}  // namespace fedmetrics::sim::detail
