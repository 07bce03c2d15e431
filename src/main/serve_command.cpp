#include "main/serve_command.hpp"

#include <utility>  // before Asio's awaitable.hpp (transport/async.hpp)

#include <signal.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include "fedmetrics/aggregator/aggregator.hpp"
#include "fedmetrics/aggregator/log_rate_limiter.hpp"
#include "fedmetrics/clusterclient/karmada_cluster_source.hpp"
#include "fedmetrics/clusterclient/kubeconfig_member_source.hpp"
#include "fedmetrics/clusterclient/rest_member_cluster.hpp"
#include "fedmetrics/k8s/time.hpp"
#include "fedmetrics/transport/async.hpp"
#include "fedmetrics/transport/self_signed.hpp"
#include "fedmetrics/transport/tls_server.hpp"
#include "fedmetrics/controller/cron_controller.hpp"
#include "fedmetrics/controller/hpa_controller.hpp"
#include "fedmetrics/cron/schedule.hpp"
#include "fedmetrics/controller/leader_election.hpp"
#include "main/autoscaler_metrics.hpp"
#include "main/build_identity.hpp"  // generated (CMakeLists.txt)
#include "main/control_plane_rest.hpp"
#include "main/delegated_auth.hpp"
#include "main/member_hpas_rest.hpp"
#include "main/cron_metrics.hpp"
#include "main/member_metrics.hpp"
#include "main/memory_release.hpp"
#include "main/termination_signals.hpp"
#include "server/aggregator_metrics.hpp"
#include "server/api_handler.hpp"
#include "server/lifecycle.hpp"
#include "server/process_metrics.hpp"

namespace fedmetrics::cli {

CLI::App* add_serve_command(CLI::App& app, ServeOptions& o) {
  CLI::App* serve = app.add_subcommand(
      "serve",
      "Serve the metrics APIs over TLS, as an extension API server behind the Karmada control plane's\n"
      "aggregation layer (deploy/apiservice.yaml registers it).");
  serve->add_option("--secure-port", o.secure_port, "The port on which to serve HTTPS (0 picks a free port).")
      ->capture_default_str();
  serve->add_option("--bind-address", o.bind_address, "The IP address on which to listen for --secure-port.")
      ->capture_default_str();
  serve->add_option("--cert-dir", o.cert_dir,
                    "The directory where the self-signed serving certificate is written when --tls-cert-file\n"
                    "and --tls-private-key-file are not given (apiserver.crt, apiserver.key). A pair already\n"
                    "there is used as it is, and reloaded when its files change, as --tls-cert-file is.")
      ->capture_default_str();
  serve->add_option("--tls-cert-file", o.tls_cert_file, "File containing the PEM serving certificate (chain).")
      ->check(CLI::ExistingFile);
  serve->add_option("--tls-private-key-file", o.tls_private_key_file,
                    "File containing the PEM private key matching --tls-cert-file.")
      ->check(CLI::ExistingFile);
  serve->add_option("--tls-min-version", o.tls_min_version, "Minimum TLS version: VersionTLS12 or VersionTLS13.")
      ->capture_default_str()
      ->check(CLI::IsMember({"VersionTLS12", "VersionTLS13"}));
  serve->add_option("--service-name", o.service_name,
                    "Name of the Service in front of this server; the self-signed certificate covers\n"
                    "<service-name>.<service-namespace>.svc.")
      ->capture_default_str();
  serve->add_option("--service-namespace", o.service_namespace, "Namespace of that Service.")->capture_default_str();
  serve->add_flag("--insecure-development-no-auth", o.insecure_no_auth,
                  "DEVELOPMENT ONLY: serve every request without authentication or authorization.");
  serve->add_option("--authentication-kubeconfig", o.authentication_kubeconfig,
                    "Kubeconfig of the control plane (karmada-apiserver) that reviews bearer tokens\n"
                    "(TokenReview) and publishes kube-system/extension-apiserver-authentication (the\n"
                    "front-proxy CA and header names). Its current-context is used.")
      ->check(CLI::ExistingFile);
  serve->add_option("--authorization-kubeconfig", o.authorization_kubeconfig,
                    "Kubeconfig of the control plane that authorizes requests (SubjectAccessReview).")
      ->check(CLI::ExistingFile);
  serve->add_flag("--authentication-skip-lookup", o.authentication_skip_lookup,
                  "Do not read kube-system/extension-apiserver-authentication; use only the --requestheader-*\n"
                  "and --client-ca-file flags.");
  serve->add_option("--client-ca-file", o.client_ca_file,
                    "Authenticate clients presenting a certificate signed by one of these CAs (user = CN, groups = O).")
      ->check(CLI::ExistingFile);
  serve->add_option("--requestheader-client-ca-file", o.requestheader_client_ca_file,
                    "CA bundle that must sign the front proxy's client certificate before the\n"
                    "--requestheader-username-headers are trusted (the aggregator's --proxy-client-cert-file).")
      ->check(CLI::ExistingFile);
  serve->add_option("--requestheader-allowed-names", o.requestheader_allowed_names,
                    "Common names allowed for the front proxy's certificate (comma-separated); empty: any\n"
                    "certificate from --requestheader-client-ca-file.")
      ->delimiter(',');
  serve->add_option("--requestheader-username-headers", o.requestheader_username_headers,
                    "Headers holding the user name, first non-empty wins.")
      ->delimiter(',')
      ->capture_default_str();
  serve->add_option("--requestheader-uid-headers", o.requestheader_uid_headers, "Headers holding the user's UID.")
      ->delimiter(',')
      ->capture_default_str();
  serve->add_option("--requestheader-group-headers", o.requestheader_group_headers,
                    "Headers holding the user's groups (one per header line).")
      ->delimiter(',')
      ->capture_default_str();
  serve->add_option("--requestheader-extra-headers-prefix", o.requestheader_extra_headers_prefix,
                    "Prefixes of headers holding the user's extra attributes.")
      ->delimiter(',')
      ->capture_default_str();
  serve->add_option("--authentication-token-webhook-cache-ttl", o.token_webhook_cache_ttl,
                    "How long TokenReview answers are cached (Go duration).")
      ->capture_default_str();
  serve->add_option("--authorization-webhook-cache-authorized-ttl", o.authorized_cache_ttl,
                    "How long SubjectAccessReview allows are cached (Go duration).")
      ->capture_default_str();
  serve->add_option("--authorization-webhook-cache-unauthorized-ttl", o.unauthorized_cache_ttl,
                    "How long SubjectAccessReview denials are cached (Go duration).")
      ->capture_default_str();
  serve->add_option("--authorization-always-allow-paths", o.always_allow_paths,
                    "Paths served to anyone without authentication or authorization (comma-separated).")
      ->delimiter(',')
      ->capture_default_str();
  auto* member_kubeconfig =
      serve->add_option("--member-kubeconfig", o.member_kubeconfigs,
                        "Kubeconfig whose contexts are the member clusters, one member per context named after it\n"
                        "(Karmada's members.config). Repeatable. Re-read when it changes.")
          ->check(CLI::ExistingFile);
  auto* member_contexts = serve->add_option("--member-contexts", o.member_contexts,
                                            "Only these contexts of --member-kubeconfig are members (comma-separated).")
                              ->delimiter(',');
  auto* karmada_kubeconfig =
      serve->add_option("--karmada-kubeconfig", o.karmada_kubeconfig,
                        "Kubeconfig of the Karmada control plane (its current-context): the member clusters are its\n"
                        "cluster.karmada.io Cluster objects whose Ready condition is True, followed as they appear,\n"
                        "disappear, turn NotReady or change credentials (polled every 2s). Not with --member-kubeconfig.")
          ->check(CLI::ExistingFile)
          ->excludes(member_kubeconfig)
          ->excludes(member_contexts);
  serve->add_option("--member-access", o.member_access,
                    "How to reach the clusters of --karmada-kubeconfig: direct (spec.apiEndpoint with the token and\n"
                    "caBundle of the Secret in spec.secretRef) or proxy (the control plane's cluster proxy, with the\n"
                    "control plane's credentials). Pull-mode clusters always go through the proxy.")
      ->capture_default_str()
      ->check(CLI::IsMember({"direct", "proxy"}))
      ->needs(karmada_kubeconfig);
  serve->add_option("--member-timeout", o.member_timeout,
                    "Deadline of every request to a member cluster, a Go duration (500ms, 3s). A member that has\n"
                    "not answered by then is reported in a Warning header and left out of the answer.")
      ->capture_default_str();
  serve->add_option("--cache-ttl", o.cache_ttl,
                    "Serve repeated identical queries from a result cache for this long (Go duration; 0s: off).")
      ->capture_default_str();
  serve->add_option("--cache-max-entries", o.cache_max_entries,
                    "At most this many answers in the result cache of --cache-ttl; when full, the oldest\n"
                    "(the next to expire) makes room.")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  serve->add_option("--max-member-response-bytes", o.max_member_response_bytes,
                    "Largest response accepted from a member cluster; a larger one is an error for that member.")
      ->capture_default_str();
  serve->add_option("--member-qps", o.member_qps,
                    "Requests per second to each member cluster, shared by every query and the autoscaler (a\n"
                    "token bucket, as client-go's QPS); a request that cannot get a token before its deadline\n"
                    "fails as throttled for that member. 0: unlimited.")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  serve->add_option("--member-burst", o.member_burst, "Requests allowed at once above --member-qps (client-go's Burst).")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  serve->add_option("--member-max-connections", o.member_max_connections,
                    "Keep-alive connections per member cluster (the pool bound).")
      ->capture_default_str()
      ->check(CLI::Range(1, 1024));
  serve->add_flag("--enable-autoscaler", o.enable_autoscaler,
                  "Run the built-in FederatedHPA loop (autoscaling.karmada.io/v1alpha1) against the control plane\n"
                  "given by --kubeconfig, reading metrics from this server's aggregator in process. Switch Karmada's\n"
                  "own FederatedHPA controller off for the objects it manages (see README).");
  serve->add_option("--kubeconfig", o.kubeconfig,
                    "Kubeconfig of the Karmada control plane whose FederatedHPAs the loop manages (its\n"
                    "current-context): FederatedHPA list and status, the targets' scale subresource, Events.")
      ->check(CLI::ExistingFile);
  serve->add_option("--autoscaler-label-selector", o.autoscaler_label_selector,
                    "Only manage the FederatedHPAs whose labels match this selector (default: all).");
  serve->add_option("--horizontal-pod-autoscaler-sync-period", o.hpa_sync_period,
                    "How often every FederatedHPA is synced (Go duration).")
      ->capture_default_str();
  serve->add_option("--horizontal-pod-autoscaler-tolerance", o.hpa_tolerance,
                    "The minimum change of the usage ratio (from 1.0) that causes a rescale.")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  serve->add_option("--horizontal-pod-autoscaler-cpu-initialization-period", o.hpa_cpu_initialization_period,
                    "After a pod starts, the period in which its cpu samples may be skipped (Go duration).")
      ->capture_default_str();
  serve->add_option("--horizontal-pod-autoscaler-initial-readiness-delay", o.hpa_initial_readiness_delay,
                    "After a pod starts, the period in which readiness changes count as its first readiness.")
      ->capture_default_str();
  serve->add_option("--distributed-rebalance-window", o.distributed_rebalance_window,
                    "Distributed mode (autoscaling.fedmetrics.io/mode: distributed): a member HPA that scaled more "
                    "recently than this gives no maxReplicas away (Federation v1's forbidden window)")
      ->capture_default_str();
  serve->add_option("--cron-default-time-zone", o.cron_default_time_zone,
                    "CronFederatedHPA: the IANA time zone of a rule without timeZone and a schedule without CRON_TZ=")
      ->capture_default_str();
  serve->add_option("--cron-missed-run-deadline", o.cron_missed_run_deadline,
                    "CronFederatedHPA: a firing missed while no replica led (a restart, a failover) still runs when it "
                    "is at most this old; older ones are skipped and logged (Go duration)")
      ->capture_default_str();
  serve->add_option("--distributed-orphan-sweep-period", o.distributed_orphan_sweep_period,
                    "Distributed mode: how often member HPAs fedmetrics created are checked against their "
                    "FederatedHPA and deleted when it is gone or gives their member no share (a member that could "
                    "not be reached when that happened); one list per Ready member each time (Go duration)")
      ->capture_default_str();
  serve->add_option("--horizontal-pod-autoscaler-downscale-stabilization", o.hpa_downscale_stabilization,
                    "The default scale-down stabilization window (Go duration).")
      ->capture_default_str();
  serve->add_option("--concurrent-horizontal-pod-autoscaler-syncs", o.concurrent_hpa_syncs,
                    "How many FederatedHPAs are synced at the same time.")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  serve->add_option("--leader-elect", o.leader_elect,
                    "With --enable-autoscaler: only the replica holding a coordination.k8s.io Lease in the control\n"
                    "plane runs the loop (the metrics APIs are served by every replica).")
      ->capture_default_str();
  serve->add_option("--leader-elect-lease-duration", o.leader_elect_lease_duration,
                    "How long a Lease that is not renewed keeps other replicas from taking it (Go duration).")
      ->capture_default_str();
  serve->add_option("--leader-elect-renew-deadline", o.leader_elect_renew_deadline,
                    "How long the leader keeps acting without renewing its Lease (Go duration).")
      ->capture_default_str();
  serve->add_option("--leader-elect-retry-period", o.leader_elect_retry_period,
                    "How often the Lease is renewed or tried (Go duration).")
      ->capture_default_str();
  serve->add_option("--leader-elect-resource-namespace", o.leader_elect_resource_namespace,
                    "Namespace of the Lease.")
      ->capture_default_str();
  serve->add_option("--leader-elect-resource-name", o.leader_elect_resource_name, "Name of the Lease.")
      ->capture_default_str();
  serve->add_option("-v,--v", o.verbosity, "Log verbosity: 0 info, 1 debug, 2 trace.")->capture_default_str();
  serve->add_option("--threads", o.threads, "Worker threads serving requests (0: one per core).")->capture_default_str();
  serve->add_option("--shutdown-delay-duration", o.shutdown_delay,
                    "On SIGTERM, /readyz fails at once and the server goes on serving for this long before it\n"
                    "closes its listener, so that the endpoints in front of it stop sending requests first\n"
                    "(kube-apiserver's flag). Requests in flight then have up to --member-timeout plus 10s to\n"
                    "finish; a second SIGTERM exits at once with status 1.")
      ->capture_default_str();
  return serve;
}

namespace {

std::chrono::milliseconds duration_flag(const std::string& flag, const std::string& value) {
  auto parsed = k8s::parse_duration(value);
  if (!parsed) throw std::runtime_error(flag + ": " + parsed.error().message + " (use a Go duration such as 500ms or 3s)");
  if (parsed->count() < 0) throw std::runtime_error(flag + ": must not be negative");
  return std::chrono::duration_cast<std::chrono::milliseconds>(*parsed);
}

std::string read_text_file(const std::string& flag, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  if (!in || !(text << in.rdbuf())) throw std::runtime_error(flag + " " + path + ": cannot read the file");
  return text.str();
}

// The certificate trust: what the control plane publishes in
// extension-apiserver-authentication, then the explicit flags on top. As
// k8s.io/apiserver's lookupMissingConfigInCluster, the ConfigMap is read
// only when a flag leaves the client CA or the front-proxy CA out, and a
// ConfigMap that does not exist (404) just contributes nothing.
bool looks_up_published_trust(const ServeOptions& o, const HttpsReviewClient* authentication) {
  const bool flags_cover_both = !o.client_ca_file.empty() && !o.requestheader_client_ca_file.empty();
  return authentication != nullptr && !o.authentication_skip_lookup && !flags_cover_both;
}

// The published trust (nullopt when not looked up or missing) with the flags on top.
k8s::Expected<server::CertificateTrust> combine_trust(const ServeOptions& o, std::optional<server::CertificateTrust> published) {
  server::CertificateTrust trust;
  if (published) trust = std::move(*published);
  try {
    if (!o.requestheader_client_ca_file.empty()) {
      auth::RequestHeaderConfig config;
      config.client_ca_pem = read_text_file("--requestheader-client-ca-file", o.requestheader_client_ca_file);
      config.allowed_names = o.requestheader_allowed_names;
      config.username_headers = o.requestheader_username_headers;
      config.uid_headers = o.requestheader_uid_headers;
      config.group_headers = o.requestheader_group_headers;
      config.extra_header_prefixes = o.requestheader_extra_headers_prefix;
      trust.request_header = std::move(config);
    }
    if (!o.client_ca_file.empty()) trust.client_ca_pem = read_text_file("--client-ca-file", o.client_ca_file);
  } catch (const std::exception& e) {
    return k8s::Error{e.what()};
  }
  return trust;
}

// At start-up, on the main thread; `*configmap_missing` says whether the ConfigMap was absent.
k8s::Expected<server::CertificateTrust> load_trust(const ServeOptions& o, HttpsReviewClient* authentication,
                                                   bool* configmap_missing = nullptr) {
  std::optional<server::CertificateTrust> published;
  if (looks_up_published_trust(o, authentication)) {
    auto fetched = fetch_extension_apiserver_authentication(*authentication, std::chrono::seconds(10));
    if (!fetched) return fetched.error();
    published = std::move(*fetched);
    if (configmap_missing != nullptr) *configmap_missing = !published;
  }
  return combine_trust(o, std::move(published));
}

// Authentication and authorization as a delegating apiserver sets them up
// (apiserver pkg/server/options/authentication.go, authorization.go).
// A review that could not be made refuses a request; a control plane that
// is down refuses them all, so the log says it once per review kind, then
// at most every 10 s with how many more failed meanwhile (the metric counts
// each).
class ReviewFailureLog {
 public:
  void operator()(std::string_view review, const std::string& error) {
    aggregator::LogRateLimiter::Decision decision;
    {
      std::lock_guard lock(mutex_);
      decision = limiter_.admit(review, std::chrono::steady_clock::now());
    }
    if (!decision.write) return;
    if (decision.suppressed == 0) spdlog::warn("{} failed, the request was refused: {}", review, error);
    else spdlog::warn("{} failed, the request was refused: {} ({} more since the last such line)", review, error,
                      decision.suppressed);
  }

 private:
  std::mutex mutex_;
  aggregator::LogRateLimiter limiter_{std::chrono::seconds(10)};  // guarded by mutex_
};

std::shared_ptr<server::RequestGate> make_gate(const ServeOptions& o, kube::ClientRuntime& runtime,
                                               const std::shared_ptr<server::ServerMetrics>& metrics,
                                               std::shared_ptr<HttpsReviewClient>& authentication_out) {
  server::GateOptions gate_options;
  gate_options.on_review_failure = [metrics, log = std::make_shared<ReviewFailureLog>()](std::string_view review,
                                                                                         const std::string& error) {
    metrics->review_failed(review);
    (*log)(review, error);
  };
  gate_options.always_allow_paths = o.always_allow_paths;
  gate_options.token_cache_ttl = std::chrono::duration_cast<std::chrono::seconds>(
      duration_flag("--authentication-token-webhook-cache-ttl", o.token_webhook_cache_ttl));
  gate_options.authorized_cache_ttl = std::chrono::duration_cast<std::chrono::seconds>(
      duration_flag("--authorization-webhook-cache-authorized-ttl", o.authorized_cache_ttl));
  gate_options.unauthorized_cache_ttl = std::chrono::duration_cast<std::chrono::seconds>(
      duration_flag("--authorization-webhook-cache-unauthorized-ttl", o.unauthorized_cache_ttl));
  std::shared_ptr<HttpsReviewClient> authentication;
  if (!o.authentication_kubeconfig.empty()) {
    authentication = std::make_shared<HttpsReviewClient>(runtime, o.authentication_kubeconfig, "--authentication-kubeconfig");
    gate_options.authentication = authentication;
  }
  gate_options.authorization =
      std::make_shared<HttpsReviewClient>(runtime, o.authorization_kubeconfig, "--authorization-kubeconfig");

  bool configmap_missing = false;
  auto trust = load_trust(o, authentication.get(), &configmap_missing);
  if (!trust)
    throw std::runtime_error("--authentication-kubeconfig: " + trust.error().message +
                             " (pass --authentication-skip-lookup with --requestheader-client-ca-file to do without it)");
  if (configmap_missing)
    spdlog::warn("authentication: kube-system/extension-apiserver-authentication does not exist: no {} from it "
                 "(give --client-ca-file / --requestheader-client-ca-file, or publish it; it is read again every minute)",
                 o.client_ca_file.empty() && o.requestheader_client_ca_file.empty() ? "client CA or front-proxy CA"
                 : o.client_ca_file.empty()                                         ? "client CA"
                                                                                    : "front-proxy CA");
  spdlog::info("authentication: front proxy: {}, client certificates: {}, tokens: {}",
               trust->request_header ? "yes" : "no", trust->client_ca_pem.empty() ? "no" : "yes",
               authentication ? "TokenReview" : "no");
  auto gate = std::make_shared<server::RequestGate>(std::move(gate_options));
  try {
    gate->set_trust(*trust);
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("authentication: ") + e.what());
  }
  authentication_out = std::move(authentication);
  return gate;
}

// Keeps what can change under a running server fresh, as Kubernetes'
// dynamic certificate controllers do: the serving certificate files (checked
// every 10 s, swapped without a restart; --tls-cert-file or the pair in
// --cert-dir alike, as k8s.io/apiserver serves both from files) and the
// trust published in extension-apiserver-authentication (re-read every
// minute). A failure keeps what was loaded and is logged once until it
// recovers.
class Reloader {
 public:
  // `cert_file`, `key_file`: the pair being served.
  Reloader(const ServeOptions& o, std::string cert_file, std::string key_file, async::Executor executor,
           transport::TlsServer& server, std::shared_ptr<server::RequestGate> gate,
           std::shared_ptr<HttpsReviewClient> authentication)
      : options_(o),
        cert_file_(std::move(cert_file)),
        key_file_(std::move(key_file)),
        executor_(std::move(executor)),
        server_(server),
        gate_(std::move(gate)),
        authentication_(std::move(authentication)) {
    cert_times_ = file_times();
  }
  void start();
  void stop();

 private:
  static async::Task<void> run(Reloader& self);
  static async::Task<void> reload_trust(Reloader& self);
  std::pair<std::filesystem::file_time_type, std::filesystem::file_time_type> file_times() const {
    std::error_code a, b;
    return {std::filesystem::last_write_time(cert_file_, a), std::filesystem::last_write_time(key_file_, b)};
  }
  void reload_certificate_if_changed() {
    auto now = file_times();
    if (now == cert_times_) return;
    try {
      server_.set_certificate(cert_file_, key_file_);
      spdlog::info("serving certificate reloaded from {}", cert_file_);
      cert_times_ = now;
      cert_failing_ = false;
    } catch (const std::exception& e) {
      // Often the certificate is written before its key: retried at the next tick.
      if (!cert_failing_) spdlog::warn("serving certificate not reloaded (keeping the current one): {}", e.what());
      cert_failing_ = true;
    }
  }
  void apply_trust(k8s::Expected<server::CertificateTrust> trust) {
    try {
      if (!trust) throw std::runtime_error(trust.error().message);
      gate_->set_trust(*trust);
      if (trust_failing_) spdlog::info("authentication: the trust configuration could be read again");
      trust_failing_ = false;
    } catch (const std::exception& e) {
      if (!trust_failing_) spdlog::warn("authentication: keeping the current trust configuration: {}", e.what());
      trust_failing_ = true;
    }
  }

  const ServeOptions& options_;
  std::string cert_file_;
  std::string key_file_;
  async::Executor executor_;
  transport::TlsServer& server_;
  std::shared_ptr<server::RequestGate> gate_;
  std::shared_ptr<HttpsReviewClient> authentication_;
  std::pair<std::filesystem::file_time_type, std::filesystem::file_time_type> cert_times_;
  bool cert_failing_ = false;
  bool trust_failing_ = false;
  async::Job job_;
};

// Every 10 s the certificate files, every minute the trust (its ConfigMap
// read awaited on this coroutine, never blocking a client thread).
async::Task<void> Reloader::run(Reloader& self) {
  for (std::uint64_t tick = 1;; ++tick) {
    co_await async::sleep_for(std::chrono::seconds(10));
    co_await async::throw_if_cancelled();  // stop()
    self.reload_certificate_if_changed();
    if (self.gate_ && tick % 6 == 0) co_await reload_trust(self);
  }
}

async::Task<void> Reloader::reload_trust(Reloader& self) {
  std::optional<server::CertificateTrust> published;
  if (looks_up_published_trust(self.options_, self.authentication_.get())) {
    PublishedTrust stopping = k8s::Error{"stopping"};  // a named local (transport/async.hpp, GCC 12)
    auto fetched = co_await async::await_callback_or<PublishedTrust>(
        [&self](auto done) { fetch_extension_apiserver_authentication(*self.authentication_, std::move(done)); },
        std::move(stopping));
    co_await async::throw_if_cancelled();
    if (!fetched) {
      self.apply_trust(fetched.error());
      co_return;
    }
    published = std::move(*fetched);
  }
  self.apply_trust(combine_trust(self.options_, std::move(published)));
}

void Reloader::start() {
  job_.start(async::make_strand(executor_), "certificate reloader", [this] { return run(*this); });
}

void Reloader::stop() { job_.stop(); }

// The member source the flags choose, or null when none is configured.
std::shared_ptr<clusterclient::RefreshingMemberSource> make_member_source(const ServeOptions& o,
                                                                          kube::ClientRuntime& runtime) {
  if (!o.karmada_kubeconfig.empty() && !o.member_kubeconfigs.empty())
    throw std::runtime_error("--karmada-kubeconfig and --member-kubeconfig cannot be used together: the member clusters "
                             "come either from the control plane's Cluster objects or from kubeconfig contexts");
  if (o.member_access != "direct" && o.member_access != "proxy")
    throw std::runtime_error("--member-access: must be direct or proxy, not \"" + o.member_access + "\"");
  clusterclient::MemberSetOptions set_options;
  set_options.client.max_response_bytes = o.max_member_response_bytes;
  set_options.client.max_connections = o.member_max_connections;
  set_options.client.qps = o.member_qps;
  set_options.client.burst = o.member_burst;
  if (!o.karmada_kubeconfig.empty()) {
    clusterclient::KarmadaSourceOptions source_options;
    source_options.kubeconfig_file = o.karmada_kubeconfig;
    source_options.access = o.member_access == "proxy" ? clusterclient::MemberAccess::Proxy : clusterclient::MemberAccess::Direct;
    source_options.members = set_options;
    return std::make_shared<clusterclient::KarmadaClusterSource>(runtime, source_options);
  }
  if (o.member_kubeconfigs.empty()) return nullptr;
  clusterclient::KubeconfigSourceOptions source_options;
  source_options.kubeconfig_files = o.member_kubeconfigs;
  source_options.only_contexts = o.member_contexts;
  source_options.client = set_options.client;
  auto source = std::make_shared<clusterclient::KubeconfigMemberSource>(runtime, source_options);
  spdlog::info("{} member cluster(s) from --member-kubeconfig", source->members()->size());
  return source;
}

// The built-in FederatedHPA loop, when --enable-autoscaler asks for it, and
// its leader election.
struct Autoscaler {
  std::shared_ptr<controller::LeaderElector> elector;  // shared: /metrics reads whether it leads
  std::unique_ptr<controller::HpaController> loop;
  std::shared_ptr<controller::CronController> cron;  // scheduled scaling, on the same leadership (/metrics reads it too)
  void start() {
    if (elector) elector->start();
    loop->start();
    cron->start();
  }
  // Idempotent. The loops stop first (they ask the elector whether it leads),
  // then the elector (whose callback pokes them) while all still exist.
  void stop() {
    if (cron) cron->stop();
    if (loop) loop->stop();
    if (elector) elector->stop();  // releases the Lease
  }
  // Also on the error paths that leave run_serve early: never a member destroyed under a running thread.
  ~Autoscaler() { stop(); }
};

std::string election_identity() {
  std::array<char, 256> host{};
  if (gethostname(host.data(), host.size() - 1) != 0) std::snprintf(host.data(), host.size(), "fedmetrics");
  std::random_device random;
  return std::string(host.data()) + "_" + std::to_string(random()) + std::to_string(random());
}

// Distributed mode's member HPA clients, one per member and endpoint, made
// when first needed and replaced when the member's endpoint changes (a
// rotated token): the member reached as the metrics reads reach it.
controller::MemberHPAsFactory member_hpas_factory(kube::ClientRuntime& runtime, std::chrono::milliseconds timeout) {
  struct Client {
    kube::ClusterEndpoint endpoint;
    std::shared_ptr<controller::MemberHPAs> hpas;
    std::chrono::steady_clock::time_point used;
  };
  struct Cache {
    std::mutex mutex;
    std::map<std::string, Client> clients;
  };
  // A client (and its connections) per member, rebuilt when the member's
  // endpoint changes; one that no sync or sweep asked for in 10 minutes (its
  // member left the member set: every Ready member is asked at least once a
  // sweep) is dropped, so that member churn does not keep clients forever.
  constexpr auto kUnusedFor = std::chrono::minutes(10);
  auto cache = std::make_shared<Cache>();
  return [&runtime, timeout, cache, kUnusedFor](const aggregator::MemberCluster& member) -> std::shared_ptr<controller::MemberHPAs> {
    const auto* rest = dynamic_cast<const clusterclient::RestMemberCluster*>(&member);
    if (rest == nullptr) return nullptr;
    const auto now = std::chrono::steady_clock::now();
    std::lock_guard lock(cache->mutex);
    std::erase_if(cache->clients, [&](const auto& entry) { return now - entry.second.used > kUnusedFor; });
    auto& entry = cache->clients[member.name()];
    if (!entry.hpas || !(entry.endpoint == rest->endpoint())) {
      try {
        entry = {rest->endpoint(), make_member_hpas(runtime, rest->endpoint(), timeout), now};
      } catch (const std::exception& e) {
        spdlog::warn("autoscaler: member {}: its HPAs cannot be written: {}", member.name(), e.what());
        cache->clients.erase(member.name());
        return nullptr;
      }
    }
    entry.used = now;
    return entry.hpas;
  };
}

std::unique_ptr<Autoscaler> make_autoscaler(const ServeOptions& o, kube::ClientRuntime& runtime,
                                                           std::shared_ptr<aggregator::Aggregator> metrics,
                                                           std::shared_ptr<aggregator::MemberSource> members,
                                                           std::chrono::milliseconds member_timeout,
                                                           server::ServerMetrics& self_metrics) {
  if (!o.enable_autoscaler) return nullptr;
  if (o.kubeconfig.empty())
    throw std::runtime_error("--enable-autoscaler needs --kubeconfig, the Karmada control plane whose FederatedHPAs "
                             "it manages");
  if (!metrics)
    throw std::runtime_error("--enable-autoscaler needs member clusters: give --member-kubeconfig or "
                             "--karmada-kubeconfig");
  controller::ControllerOptions options;
  options.sync_period = duration_flag("--horizontal-pod-autoscaler-sync-period", o.hpa_sync_period);
  if (options.sync_period.count() == 0) throw std::runtime_error("--horizontal-pod-autoscaler-sync-period: must be more than 0s");
  options.concurrent_syncs = o.concurrent_hpa_syncs;
  options.member_timeout = member_timeout;
  if (!o.autoscaler_label_selector.empty()) {
    auto selector = k8s::LabelSelector::parse(o.autoscaler_label_selector);
    if (!selector) throw std::runtime_error("--autoscaler-label-selector: " + selector.error().message);
    options.selector = std::move(*selector);
  }
  options.algorithm.tolerance = o.hpa_tolerance;
  options.algorithm.calculator.cpu_initialization_period =
      duration_flag("--horizontal-pod-autoscaler-cpu-initialization-period", o.hpa_cpu_initialization_period);
  options.algorithm.calculator.initial_readiness_delay =
      duration_flag("--horizontal-pod-autoscaler-initial-readiness-delay", o.hpa_initial_readiness_delay);
  options.algorithm.downscale_stabilization =
      duration_flag("--horizontal-pod-autoscaler-downscale-stabilization", o.hpa_downscale_stabilization);
  options.rebalance_window = duration_flag("--distributed-rebalance-window", o.distributed_rebalance_window);
  options.orphan_sweep_period =
      duration_flag("--distributed-orphan-sweep-period", o.distributed_orphan_sweep_period);
  options.member_hpas = member_hpas_factory(runtime, member_timeout);
  options.monitor = std::make_shared<PrometheusAutoscalerMetrics>(*self_metrics.registry());
  auto control_plane = std::make_shared<RestControlPlane>(runtime, o.kubeconfig, std::chrono::seconds(10));
  auto out = std::make_unique<Autoscaler>();
  if (o.leader_elect) {
    controller::ElectionOptions election;
    election.namespace_name = o.leader_elect_resource_namespace;
    election.name = o.leader_elect_resource_name;
    election.identity = election_identity();
    election.lease_duration = duration_flag("--leader-elect-lease-duration", o.leader_elect_lease_duration);
    election.renew_deadline = duration_flag("--leader-elect-renew-deadline", o.leader_elect_renew_deadline);
    election.retry_period = duration_flag("--leader-elect-retry-period", o.leader_elect_retry_period);
    // The new leader's first pass at once, not up to a sync period later
    // (also after a failover). The loop outlives the elector's thread.
    election.on_started_leading = [autoscaler = out.get()] {
      if (autoscaler->loop) autoscaler->loop->sync_soon();
      if (autoscaler->cron) autoscaler->cron->sync_soon();  // a run missed during the failover, at once
    };
    // Losing the Lease cancels the syncs in flight before their next write.
    election.on_stopped_leading = [autoscaler = out.get()] {
      if (autoscaler->loop) autoscaler->loop->cancel_in_flight();
      if (autoscaler->cron) autoscaler->cron->cancel_in_flight();
    };
    if (election.lease_duration <= election.renew_deadline || election.renew_deadline <= election.retry_period ||
        election.retry_period.count() == 0)
      throw std::runtime_error("--leader-elect-*: need lease duration > renew deadline > retry period > 0 (as client-go)");
    spdlog::info("autoscaler: leader election on Lease {}/{} as {}", election.namespace_name, election.name,
                 election.identity);
    out->elector = std::make_shared<controller::LeaderElector>(runtime.executor(), std::make_shared<RestLeaseClient>(control_plane),
                                                               election);
    options.active = [elector = out->elector.get()] { return elector->leading(); };
    self_metrics.add_collectable(std::make_shared<LeaderElectionMetrics>(
        election.name, [weak = std::weak_ptr<controller::LeaderElector>(out->elector)] {
          auto elector = weak.lock();
          return elector && elector->leading();
        }));
  }
  spdlog::info("autoscaler: managing FederatedHPAs{} every {}", options.selector.empty() ? "" : " matching " + options.selector.to_string(),
               o.hpa_sync_period);
  controller::CronControllerOptions cron;
  cron.selector = options.selector;
  cron.resync_period = options.sync_period;
  cron.default_time_zone = o.cron_default_time_zone;
  if (auto zone = cron::Schedule::parse("@daily", cron.default_time_zone); !zone)
    throw std::runtime_error("--cron-default-time-zone: " + zone.error().message);
  cron.missed_run_deadline = duration_flag("--cron-missed-run-deadline", o.cron_missed_run_deadline);
  cron.active = options.active;
  out->cron = std::make_shared<controller::CronController>(runtime.executor(), control_plane, std::move(cron));
  out->loop = std::make_unique<controller::HpaController>(runtime.executor(), std::move(control_plane), std::move(metrics),
                                                          std::move(members), std::move(options));
  return out;
}

}  // namespace

int run_serve(const ServeOptions& o) {
  // Before any thread starts: SIGTERM and SIGINT are received below, by the
  // thread that owns the shutdown.
  TerminationSignals termination;
  spdlog::set_level(o.verbosity >= 2 ? spdlog::level::trace : o.verbosity == 1 ? spdlog::level::debug : spdlog::level::info);
  if (o.insecure_no_auth) {
    spdlog::warn("--insecure-development-no-auth: every request is served WITHOUT authentication or authorization");
  } else {
    if (o.authentication_kubeconfig.empty() && o.requestheader_client_ca_file.empty() && o.client_ca_file.empty())
      throw std::runtime_error(
          "no authentication configured: give --authentication-kubeconfig (the control plane that reviews tokens and "
          "publishes the front-proxy CA), or --requestheader-client-ca-file / --client-ca-file; for local development "
          "only, --insecure-development-no-auth");
    if (o.authorization_kubeconfig.empty())
      throw std::runtime_error(
          "no authorization configured: give --authorization-kubeconfig (the control plane that answers "
          "SubjectAccessReviews); for local development only, --insecure-development-no-auth");
  }
  if (o.tls_cert_file.empty() != o.tls_private_key_file.empty())
    throw std::runtime_error("--tls-cert-file and --tls-private-key-file must be given together");

  transport::TlsServerOptions server_options;
  server_options.bind_address = o.bind_address;
  server_options.port = o.secure_port;
  server_options.tls_min_version = o.tls_min_version;
  server_options.threads = o.threads;
  // Every route serves GET and HEAD only, so no body is ever read: a request
  // with one is refused before authentication (413, or 400 on GET/HEAD) and
  // a connection holds at most its head (max_header_bytes) and TLS buffers.
  server_options.max_body_bytes = 0;
  if (o.tls_cert_file.empty()) {
    std::string service = o.service_name + "." + o.service_namespace;
    auto paths = transport::ensure_self_signed_certificate(
        o.cert_dir, {o.service_name, service, service + ".svc", service + ".svc.cluster.local", "localhost"},
        {"127.0.0.1", "::1"});
    spdlog::warn("no --tls-cert-file given: serving with the self-signed certificate {} ({}); clients must trust it "
                 "explicitly (APIService caBundle or insecureSkipTLSVerify)",
                 paths.cert_file, paths.generated ? "generated now" : "generated earlier");
    server_options.cert_file = paths.cert_file;
    server_options.key_file = paths.key_file;
  } else {
    server_options.cert_file = o.tls_cert_file;
    server_options.key_file = o.tls_private_key_file;
  }

  auto member_timeout = duration_flag("--member-timeout", o.member_timeout);
  if (member_timeout.count() == 0) throw std::runtime_error("--member-timeout: must be more than 0s");
  auto cache_ttl = duration_flag("--cache-ttl", o.cache_ttl);
  const auto shutdown_delay = duration_flag("--shutdown-delay-duration", o.shutdown_delay);
  // Every request in flight is bounded by the member deadline, a review by
  // the control plane's 10 s: the drain waits no longer.
  const auto drain_grace = member_timeout + std::chrono::seconds(10);

  // One owner for start-up and shutdown: each component starts once what it
  // uses runs, and they stop in reverse (server/lifecycle.hpp), also when
  // start-up fails half-way. Declared first, so that it goes last.
  auto termination_began = std::make_shared<std::chrono::steady_clock::time_point>();
  server::Lifecycle lifecycle;

  // The member clients' I/O thread. Member answers complete server requests,
  // the autoscaler's syncs and the member source's polls: it stops last.
  auto client_runtime = std::make_shared<kube::ClientRuntime>(1);
  lifecycle.start("member clients", {}, [client_runtime] { client_runtime->stop(); });

  // Member clusters: from kubeconfig files or from the Karmada control plane.
  std::shared_ptr<aggregator::MetricsService> service;
  auto members = make_member_source(o, *client_runtime);
  std::shared_ptr<aggregator::Aggregator> aggregator_impl;
  if (members) {
    lifecycle.start("member source", {}, [members] { members->stop(); });
    // Discovery first, briefly, so that the first queries already know what each member serves.
    members->wait_for_first_discovery(std::chrono::seconds(2));
    aggregator::AggregatorOptions aggregator_options;
    aggregator_options.member_timeout = member_timeout;
    aggregator_options.cache_ttl = cache_ttl;
    aggregator_options.cache_max_entries = o.cache_max_entries;
    aggregator_options.on_member_error = [log = std::make_shared<MemberFailureLog>()](
                                             std::string_view member, const aggregator::MemberError& e) { (*log)(member, e); };
    aggregator_impl = std::make_shared<aggregator::Aggregator>(members, aggregator_options);
    service = aggregator_impl;
  } else {
    spdlog::warn("neither --member-kubeconfig nor --karmada-kubeconfig given: every metrics query answers 503 until "
                 "member clusters are configured");
  }

  auto metrics = std::make_shared<server::ServerMetrics>();
  const server::BuildInfo build{FEDMETRICS_GIT_VERSION, FEDMETRICS_GIT_COMMIT, "unknown", FEDMETRICS_COMPILER};
  metrics->add_collectable(std::make_shared<server::ProcessMetrics>());
  metrics->add_collectable(std::make_shared<server::BuildInfoMetric>(build));
  if (aggregator_impl) {
    metrics->add_collectable(std::make_shared<server::AggregatorMetrics>(
        [weak = std::weak_ptr<aggregator::Aggregator>(aggregator_impl)] {
          auto a = weak.lock();
          return a ? a->stats() : aggregator::AggregatorStats{};
        }));
    metrics->add_collectable(std::make_shared<MemberClientMetrics>(members));
  }
  auto handler = std::make_shared<server::ApiHandler>(service, metrics, build);
  std::shared_ptr<server::RequestGate> gate;
  std::shared_ptr<HttpsReviewClient> authentication;
  if (!o.insecure_no_auth) gate = make_gate(o, *client_runtime, metrics, authentication);
  handler->set_configured(true);
  // Made (its flags checked) before the server starts, started after it.
  auto autoscaler_loop = make_autoscaler(o, *client_runtime, aggregator_impl, members, member_timeout, *metrics);
  if (autoscaler_loop)
    metrics->add_collectable(std::make_shared<CronControllerMetrics>(
        [weak = std::weak_ptr<controller::CronController>(autoscaler_loop->cron)] {
          auto cron = weak.lock();
          return cron ? cron->stats() : controller::CronControllerStats{};
        }));

  server_options.request_client_certificates = !o.insecure_no_auth;
  auto tls_server = std::make_shared<transport::TlsServer>(server_options, [handler, gate](transport::HttpRequest request,
                                                                                         auto respond) {
    if (!gate) return handler->handle(request, std::move(respond));
    // What the gate answers itself (401, 403, a failed review's 500) is
    // counted here; what it passes on, by the handler.
    auto passed = std::make_shared<std::atomic<bool>>(false);
    auto refused = [handler, passed, started = std::chrono::steady_clock::now(), method = request.method,
                    target = request.target, respond = std::move(respond)](transport::HttpResponse r) {
      if (!passed->load()) {
        transport::HttpRequest what;
        what.method = method;
        what.target = target;
        handler->count_unhandled(what, r.status,
                                 std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
      }
      respond(std::move(r));
    };
    gate->handle(std::move(request), std::move(refused),
                 [&handler = *handler, passed](const transport::HttpRequest& r,
                                               std::function<void(transport::HttpResponse)> done) {
                   passed->store(true);
                   handler.handle(r, std::move(done));
                 });
  });
  // Graceful termination as kube-apiserver's: /readyz has failed since the
  // signal; the listener closes --shutdown-delay-duration after it; the
  // requests in flight finish (bounded); then the threads stop.
  lifecycle.start("server", [tls_server] { tls_server->start(); },
                  [tls_server, termination_began, shutdown_delay, drain_grace] {
                    std::this_thread::sleep_until(*termination_began + shutdown_delay);
                    spdlog::info("shutdown: no longer accepting connections; waiting up to {} ms for requests in flight",
                                 drain_grace.count());
                    if (auto left = tls_server->shutdown(drain_grace); left > 0)
                      spdlog::warn("shutdown: {} connection(s) still open after {} ms, closed", left, drain_grace.count());
                    tls_server->stop();
                    tls_server->join();
                  });
  spdlog::info("serving on https://{}:{}", o.bind_address, tls_server->port());

  if (autoscaler_loop) {
    std::shared_ptr<Autoscaler> loop = std::move(autoscaler_loop);
    // Stopped first: the Lease is released at once, so that another replica
    // takes over while this one drains.
    lifecycle.start("autoscaler", [loop] { loop->start(); }, [loop] { loop->stop(); });
  }
  auto reloader = std::make_shared<Reloader>(o, server_options.cert_file, server_options.key_file,
                                             client_runtime->executor(), *tls_server, gate, authentication);
  lifecycle.start("certificate reloader", [reloader] { reloader->start(); }, [reloader] { reloader->stop(); });
  auto memory_release = std::make_shared<MemoryRelease>(client_runtime->executor(), std::chrono::seconds(10));
  lifecycle.start("memory release", [memory_release] { memory_release->start(); }, [memory_release] { memory_release->stop(); });

  const int signal = termination.wait();
  *termination_began = std::chrono::steady_clock::now();
  handler->set_shutting_down();
  spdlog::info("received {}, shutting down: /readyz fails from now on; the listener closes in {} ms",
               signal == SIGTERM ? "SIGTERM" : "SIGINT", shutdown_delay.count());
  lifecycle.stop_all();
  spdlog::info("shutdown complete");
  return 0;
}

}  // namespace fedmetrics::cli
