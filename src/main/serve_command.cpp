#include "main/serve_command.hpp"

#include <utility>  // before Asio's awaitable.hpp (transport/async.hpp)

#include <signal.h>

#include <memory>
#include <optional>
#include <stdexcept>
#include <thread>

#include <spdlog/spdlog.h>

#include "fedmetrics/aggregator/aggregator.hpp"
#include "fedmetrics/clusterclient/karmada_cluster_source.hpp"
#include "fedmetrics/clusterclient/kubeconfig_member_source.hpp"
#include "fedmetrics/clusterclient/prometheus_relister.hpp"
#include "fedmetrics/telemetry/aggregator_metrics.hpp"
#include "fedmetrics/telemetry/cron_metrics.hpp"
#include "fedmetrics/telemetry/failure_logs.hpp"
#include "fedmetrics/telemetry/member_client_metrics.hpp"
#include "fedmetrics/telemetry/process_metrics.hpp"
#include "fedmetrics/telemetry/prometheus_server_metrics.hpp"
#include "fedmetrics/transport/async.hpp"
#include "fedmetrics/transport/certificate_reloader.hpp"
#include "fedmetrics/transport/memory_release.hpp"
#include "fedmetrics/transport/runtime.hpp"
#include "fedmetrics/transport/self_signed.hpp"
#include "fedmetrics/transport/tls_server.hpp"
#include "main/build_identity.hpp"  // generated (CMakeLists.txt)
#include "main/serve_wiring.hpp"
#include "server/api_handler.hpp"
#include "server/gated_handler.hpp"
#include "server/request_gate.hpp"

namespace fedmetrics::cli {

namespace {

// The member source the flags choose, or null when none is configured.
std::shared_ptr<clusterclient::RefreshingMemberSource> make_member_source(const ServeOptions& o,
                                                                          kube::ClientRuntime& runtime,
                                                                          const PrometheusMembers& prometheus) {
  if (!o.karmada_kubeconfig.empty() && !o.member_kubeconfigs.empty())
    throw std::runtime_error(
        "--karmada-kubeconfig and --member-kubeconfig cannot be used together: the member clusters "
        "come either from the control plane's Cluster objects or from kubeconfig contexts");
  if (o.member_access != "direct" && o.member_access != "proxy")
    throw std::runtime_error("--member-access: must be direct or proxy, not \"" + o.member_access + "\"");
  clusterclient::MemberSetOptions set_options;
  set_options.client.max_response_bytes = o.max_member_response_bytes;
  set_options.client.max_connections = o.member_max_connections;
  set_options.client.qps = o.member_qps;
  set_options.client.burst = o.member_burst;
  set_options.serve_as = prometheus.serve_as;
  if (!o.karmada_kubeconfig.empty()) {
    clusterclient::KarmadaSourceOptions source_options;
    source_options.kubeconfig_file = o.karmada_kubeconfig;
    source_options.access =
        o.member_access == "proxy" ? clusterclient::MemberAccess::Proxy : clusterclient::MemberAccess::Direct;
    source_options.members = set_options;
    return std::make_shared<clusterclient::KarmadaClusterSource>(runtime, source_options);
  }
  if (o.member_kubeconfigs.empty()) return nullptr;
  clusterclient::KubeconfigSourceOptions source_options;
  source_options.kubeconfig_files = o.member_kubeconfigs;
  source_options.only_contexts = o.member_contexts;
  source_options.client = set_options.client;
  source_options.serve_as = set_options.serve_as;
  auto source = std::make_shared<clusterclient::KubeconfigMemberSource>(runtime, source_options);
  spdlog::info("{} member cluster(s) from --member-kubeconfig", source->members()->size());
  return source;
}

// What start-up waits for before the server listens, awaited on the
// runtime instead of blocking a thread: the members' first discovery
// (briefly, so that the first queries already know what each member
// serves), then the certificate trust. Then `ready` starts serving.
struct Startup {
  const ServeOptions& options;
  std::shared_ptr<clusterclient::RefreshingMemberSource> members;  // null: none configured
  const Gate* gate = nullptr;                                      // null: --insecure-development-no-auth
  transport::Runtime& runtime;                                     // told to stop when start-up fails
  std::function<void()> ready;
};

async::Task<void> start_up(Startup& s) {
  if (s.members) {
    auto discovered = s.members->member_set().first_discovery(std::chrono::seconds(2));
    co_await std::move(discovered);
    co_await async::throw_if_cancelled();
  }
  try {
    if (s.gate) co_await load_trust(s.options, *s.gate);
    co_await async::throw_if_cancelled();
    s.ready();
  } catch (const std::exception& e) {
    if (async::is_cancellation(e)) throw;
    s.runtime.request_stop(e.what());  // run_serve throws it
  }
}

}  // namespace

int run_serve(const ServeOptions& o) {
  // The process's threads, signals and start/stop order
  // (transport/runtime.hpp). First, before any thread starts (the signals
  // are blocked in every thread but the runtime's own), so that it goes last.
  transport::Runtime runtime(transport::RuntimeOptions{1, true});
  spdlog::set_level(o.verbosity >= 2   ? spdlog::level::trace
                    : o.verbosity == 1 ? spdlog::level::debug
                                       : spdlog::level::info);
  check_auth_flags(o);

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
    spdlog::warn(
        "no --tls-cert-file given: serving with the self-signed certificate {} ({}); clients must trust it "
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

  auto termination_began = std::make_shared<std::chrono::steady_clock::time_point>();
  // The member clients, on the runtime's thread. Member answers complete
  // server requests, the autoscaler's syncs and the member source's polls:
  // held until everything else has stopped.
  auto client_runtime = std::make_shared<kube::ClientRuntime>(runtime);
  runtime.start(transport::Stage::clients, "member clients", {}, [client_runtime] {});
  const auto executor = runtime.executor();

  // Member clusters: from kubeconfig files or from the Karmada control plane.
  std::shared_ptr<aggregator::MetricsService> service;
  const auto prometheus = prometheus_members(o, *client_runtime);
  auto members = make_member_source(o, *client_runtime, prometheus);
  std::shared_ptr<aggregator::Aggregator> aggregator_impl;
  if (members) {
    runtime.start(transport::Stage::discovery, "member source", {}, [members] { members->stop(); });
    if (auto relist = start_prometheus_relist(prometheus, *client_runtime, members))
      runtime.start(transport::Stage::discovery, "Prometheus relist", {}, [relist] { relist->stop(); });
    aggregator::AggregatorOptions aggregator_options;
    aggregator_options.member_timeout = member_timeout;
    aggregator_options.cache_ttl = cache_ttl;
    aggregator_options.cache_max_entries = o.cache_max_entries;
    aggregator_options.on_member_error = [log = std::make_shared<telemetry::MemberFailureLog>()](
                                             std::string_view member, const aggregator::MemberError& e) {
      (*log)(member, e);
    };
    aggregator_options.fail_fast_threshold = o.member_failure_threshold;
    aggregator_options.schedule = [executor](std::chrono::steady_clock::duration delay,
                                             std::function<async::Task<void>()> task) {
      auto timer = std::make_shared<boost::asio::steady_timer>(executor.impl()->executor, delay);
      timer->async_wait([timer, executor, task = std::move(task)](const boost::system::error_code& e) {
        // A probe ends by its deadline; it throws nothing a caller could act on.
        if (!e) boost::asio::co_spawn(executor.impl()->executor, task(), [](const std::exception_ptr&) {});
      });
    };
    aggregator_options.on_member_answering = [](std::string_view member, std::string_view reason) {
      if (reason.empty()) spdlog::info("member {}: answers again; asked again", member);
      else spdlog::warn("member {}: left out of every answer: {}; probing it in the background", member, reason);
    };
    aggregator_impl = std::make_shared<aggregator::Aggregator>(members, aggregator_options);
    service = aggregator_impl;
  } else {
    spdlog::warn(
        "neither --member-kubeconfig nor --karmada-kubeconfig given: every metrics query answers 503 until "
        "member clusters are configured");
  }

  auto metrics = std::make_shared<telemetry::PrometheusServerMetrics>();
  const server::BuildInfo build{FEDMETRICS_GIT_VERSION, FEDMETRICS_GIT_COMMIT, "unknown", FEDMETRICS_COMPILER};
  metrics->add_collectable(std::make_shared<telemetry::ProcessMetrics>());
  metrics->add_collectable(std::make_shared<telemetry::BuildInfoMetric>(
      telemetry::BuildLabels{build.git_version, build.git_commit, build.compiler}));
  if (aggregator_impl) {
    metrics->add_collectable(
        std::make_shared<telemetry::AggregatorMetrics>([weak = std::weak_ptr<aggregator::Aggregator>(aggregator_impl)] {
          auto a = weak.lock();
          return a ? a->stats() : aggregator::AggregatorStats{};
        }));
    metrics->add_collectable(std::make_shared<telemetry::MemberClientMetrics>(members, aggregator_impl->members()));
  }
  auto handler = std::make_shared<server::ApiHandler>(service, metrics, build);
  std::optional<Gate> gate;
  if (!o.insecure_no_auth) gate = make_gate(o, *client_runtime, metrics);
  // The loop sees the members as the answers do: one that stopped answering is left out.
  std::shared_ptr<Autoscaler> autoscaler =
      make_autoscaler(o, *client_runtime, aggregator_impl, members,
                      aggregator_impl ? aggregator_impl->members() : nullptr, member_timeout, *metrics);
  if (autoscaler)
    metrics->add_collectable(std::make_shared<telemetry::CronControllerMetrics>(
        [weak = std::weak_ptr<controller::CronController>(autoscaler->cron)] {
          auto cron = weak.lock();
          return cron ? cron->stats() : controller::CronControllerStats{};
        }));
  server_options.request_client_certificates = !o.insecure_no_auth;
  auto memory_release = std::make_shared<transport::MemoryRelease>(executor, std::chrono::seconds(10));

  // What serves, started once start-up has what it waits for, on the
  // runtime's thread while this one waits; stopped by this one, first.
  Startup startup{o, members, gate ? &*gate : nullptr, runtime, {}};
  startup.ready = [&] {
    handler->set_configured(true);
    auto tls_server = std::make_shared<transport::TlsServer>(
        server_options, [handler, gate = gate ? gate->gate : nullptr](transport::HttpRequest request) {
          return server::handle_gated(handler, gate, std::move(request));
        });
    // Graceful termination as kube-apiserver's: /readyz has failed since the
    // signal; the listener closes --shutdown-delay-duration after it; the
    // requests in flight finish (bounded); then the threads stop.
    runtime.start(
        transport::Stage::server, "server", [tls_server] { tls_server->start(); },
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
    auto certificates = std::make_shared<transport::CertificateReloader>(
        server_options.cert_file, server_options.key_file,
        [tls_server](const std::string& cert, const std::string& key) { tls_server->set_certificate(cert, key); });
    runtime.start(
        transport::Stage::loops, "certificate reloader",
        [certificates, executor] { certificates->start(executor, std::chrono::seconds(10)); },
        [certificates] { certificates->stop(); });
    if (gate) {
      auto trust = std::make_shared<TrustRefresher>(o, *gate);
      runtime.start(
          transport::Stage::loops, "trust refresher", [trust, executor] { trust->start(executor); },
          [trust] { trust->stop(); });
    }
    runtime.start(
        transport::Stage::loops, "memory release", [memory_release] { memory_release->start(); },
        [memory_release] { memory_release->stop(); });
    // Started last, stopped first: the Lease is released at once, so that another replica
    // takes over while this one drains.
    if (autoscaler)
      runtime.start(
          transport::Stage::loops, "autoscaler", [autoscaler] { autoscaler->start(); },
          [autoscaler] { autoscaler->stop(); });
  };
  async::Job start;  // last: it ends before what it uses goes
  start.start(async::make_strand(executor), "start-up", [&startup] { return start_up(startup); });

  const transport::StopCause cause = runtime.wait();
  start.stop();  // cancels start-up if it still waits; returns once it has ended
  if (!cause.failure.empty()) {
    runtime.stop();
    throw std::runtime_error(cause.failure);
  }
  *termination_began = std::chrono::steady_clock::now();
  handler->set_shutting_down();
  spdlog::info("received {}, shutting down: /readyz fails from now on; the listener closes in {} ms",
               cause.signal == SIGTERM ? "SIGTERM" : "SIGINT", shutdown_delay.count());
  runtime.stop();
  spdlog::info("shutdown complete");
  return 0;
}

}  // namespace fedmetrics::cli
