// Trust and gate: who may ask `fedmetrics serve`, and the certificates it
// trusts, read at start-up and kept fresh.
#include <utility>  // before Asio's awaitable.hpp (transport/async.hpp)

#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>

#include <spdlog/spdlog.h>

#include "fedmetrics/telemetry/failure_logs.hpp"
#include "fedmetrics/transport/async.hpp"
#include "fedmetrics/kubeclient/rest_review_client.hpp"
#include "main/serve_wiring.hpp"
#include "server/request_gate.hpp"

namespace fedmetrics::cli {

namespace {

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
bool looks_up_published_trust(const ServeOptions& o, const kubeclient::RestReviewClient* authentication) {
  const bool flags_cover_both = !o.client_ca_file.empty() && !o.requestheader_client_ca_file.empty();
  return authentication != nullptr && !o.authentication_skip_lookup && !flags_cover_both;
}

// The published trust (nullopt when not looked up or missing) with the flags on top.
k8s::Expected<server::CertificateTrust> combine_trust(const ServeOptions& o,
                                                      std::optional<server::CertificateTrust> published) {
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

// The ConfigMap, awaited (the client's deadline bounds it), as the gate's trust.
using PublishedTrust = k8s::Expected<std::optional<server::CertificateTrust>>;
async::Task<PublishedTrust> fetch_published_trust(kubeclient::RestReviewClient& client) {
  auto read = client.published_trust();
  auto published = co_await std::move(read);
  if (!published) co_return published.error();
  if (!*published) co_return std::optional<server::CertificateTrust>();
  co_return std::optional<server::CertificateTrust>(
      server::CertificateTrust{(*published)->request_header, (*published)->client_ca_pem});
}

}  // namespace

Gate make_gate(const ServeOptions& o, kube::ClientRuntime& runtime,
               std::shared_ptr<telemetry::PrometheusServerMetrics> metrics) {
  server::GateOptions gate_options;
  gate_options.on_review_failure = [log = std::make_shared<telemetry::ReviewFailureLog>(std::move(metrics))](
                                       std::string_view review, const std::string& error) { (*log)(review, error); };
  gate_options.always_allow_paths = o.always_allow_paths;
  gate_options.token_cache_ttl = std::chrono::duration_cast<std::chrono::seconds>(
      duration_flag("--authentication-token-webhook-cache-ttl", o.token_webhook_cache_ttl));
  gate_options.authorized_cache_ttl = std::chrono::duration_cast<std::chrono::seconds>(
      duration_flag("--authorization-webhook-cache-authorized-ttl", o.authorized_cache_ttl));
  gate_options.unauthorized_cache_ttl = std::chrono::duration_cast<std::chrono::seconds>(
      duration_flag("--authorization-webhook-cache-unauthorized-ttl", o.unauthorized_cache_ttl));
  Gate out;
  if (!o.authentication_kubeconfig.empty()) {
    out.authentication = std::make_shared<kubeclient::RestReviewClient>(runtime, o.authentication_kubeconfig,
                                                                        "--authentication-kubeconfig");
    gate_options.authentication = out.authentication;
  }
  gate_options.authorization =
      std::make_shared<kubeclient::RestReviewClient>(runtime, o.authorization_kubeconfig, "--authorization-kubeconfig");
  out.gate = std::make_shared<server::RequestGate>(std::move(gate_options));
  return out;
}

async::Task<void> load_trust(const ServeOptions& o, const Gate& gate) {
  std::optional<server::CertificateTrust> published;
  bool configmap_missing = false;
  if (looks_up_published_trust(o, gate.authentication.get())) {
    // The client's deadline bounds it; cancelled with start-up.
    auto fetch = fetch_published_trust(*gate.authentication);
    auto fetched = co_await std::move(fetch);
    co_await async::throw_if_cancelled();
    if (!fetched)
      throw std::runtime_error(
          "--authentication-kubeconfig: " + fetched.error().message +
          " (pass --authentication-skip-lookup with --requestheader-client-ca-file to do without it)");
    published = std::move(*fetched);
    configmap_missing = !published;
  }
  auto trust = combine_trust(o, std::move(published));
  if (!trust)
    throw std::runtime_error(
        "--authentication-kubeconfig: " + trust.error().message +
        " (pass --authentication-skip-lookup with --requestheader-client-ca-file to do without it)");
  if (configmap_missing)
    spdlog::warn(
        "authentication: kube-system/extension-apiserver-authentication does not exist: no {} from it "
        "(give --client-ca-file / --requestheader-client-ca-file, or publish it; it is read again every minute)",
        o.client_ca_file.empty() && o.requestheader_client_ca_file.empty() ? "client CA or front-proxy CA"
        : o.client_ca_file.empty()                                         ? "client CA"
                                                                           : "front-proxy CA");
  spdlog::info("authentication: front proxy: {}, client certificates: {}, tokens: {}",
               trust->request_header ? "yes" : "no", trust->client_ca_pem.empty() ? "no" : "yes",
               gate.authentication ? "TokenReview" : "no");
  try {
    gate.gate->set_trust(*trust);
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("authentication: ") + e.what());
  }
}

struct TrustRefresher::State {
  State(const ServeOptions& o, Gate g) : options(o), gate(std::move(g)) {}
  const ServeOptions& options;
  Gate gate;
  bool failing = false;  // on the job's strand only
  async::Job job;

  void apply(k8s::Expected<server::CertificateTrust> trust) {
    try {
      if (!trust) throw std::runtime_error(trust.error().message);
      gate.gate->set_trust(*trust);
      if (failing) spdlog::info("authentication: the trust configuration could be read again");
      failing = false;
    } catch (const std::exception& e) {
      if (!failing) spdlog::warn("authentication: keeping the current trust configuration: {}", e.what());
      failing = true;
    }
  }

  // Every minute; the ConfigMap's read awaited on this coroutine, never blocking a client thread.
  static async::Task<void> run(State& self) {
    for (;;) {
      co_await async::sleep_for(std::chrono::minutes(1));
      co_await async::throw_if_cancelled();  // stop()
      std::optional<server::CertificateTrust> published;
      if (looks_up_published_trust(self.options, self.gate.authentication.get())) {
        auto fetch = fetch_published_trust(*self.gate.authentication);
        auto fetched = co_await std::move(fetch);
        co_await async::throw_if_cancelled();
        if (!fetched) {
          self.apply(fetched.error());
          continue;
        }
        published = std::move(*fetched);
      }
      self.apply(combine_trust(self.options, std::move(published)));
    }
  }
};

TrustRefresher::TrustRefresher(const ServeOptions& o, Gate gate)
    : state_(std::make_unique<State>(o, std::move(gate))) {}
TrustRefresher::~TrustRefresher() { stop(); }

void TrustRefresher::start(const async::Executor& executor) {
  state_->job.start(async::make_strand(executor), "trust refresher",
                    [state = state_.get()] { return State::run(*state); });
}

void TrustRefresher::stop() { state_->job.stop(); }

void check_auth_flags(const ServeOptions& o) {
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
}

}  // namespace fedmetrics::cli
