#include "main/serve_command.hpp"

#include <memory>
#include <stdexcept>

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include "fedmetrics/aggregator/aggregator.hpp"
#include "fedmetrics/clusterclient/kubeconfig_member_source.hpp"
#include "fedmetrics/k8s/time.hpp"
#include "fedmetrics/transport/self_signed.hpp"
#include "fedmetrics/transport/tls_server.hpp"
#include "main/member_metrics.hpp"
#include "server/aggregator_metrics.hpp"
#include "server/api_handler.hpp"

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
                    "and --tls-private-key-file are not given (apiserver.crt, apiserver.key).")
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
                  "DEVELOPMENT ONLY: serve every request without authentication or authorization.\n"
                  "Delegated authentication (front-proxy certificates, TokenReview) is not implemented yet,\n"
                  "so this flag is required for now.");
  serve->add_option("--member-kubeconfig", o.member_kubeconfigs,
                    "Kubeconfig whose contexts are the member clusters, one member per context named after it\n"
                    "(Karmada's members.config). Repeatable. Re-read when it changes.")
      ->check(CLI::ExistingFile);
  serve->add_option("--member-contexts", o.member_contexts,
                    "Only these contexts of --member-kubeconfig are members (comma-separated).")
      ->delimiter(',');
  serve->add_option("--member-timeout", o.member_timeout,
                    "Deadline of every request to a member cluster, a Go duration (500ms, 3s). A member that has\n"
                    "not answered by then is reported in a Warning header and left out of the answer.")
      ->capture_default_str();
  serve->add_option("--cache-ttl", o.cache_ttl,
                    "Serve repeated identical queries from a result cache for this long (Go duration; 0s: off).")
      ->capture_default_str();
  serve->add_option("--max-member-response-bytes", o.max_member_response_bytes,
                    "Largest response accepted from a member cluster; a larger one is an error for that member.")
      ->capture_default_str();
  serve->add_option("--member-max-connections", o.member_max_connections,
                    "Keep-alive connections per member cluster (the pool bound).")
      ->capture_default_str()
      ->check(CLI::Range(1, 1024));
  serve->add_option("-v,--v", o.verbosity, "Log verbosity: 0 info, 1 debug, 2 trace.")->capture_default_str();
  serve->add_option("--threads", o.threads, "Worker threads serving requests (0: one per core).")->capture_default_str();
  return serve;
}

namespace {

std::chrono::milliseconds duration_flag(const std::string& flag, const std::string& value) {
  auto parsed = k8s::parse_duration(value);
  if (!parsed) throw std::runtime_error(flag + ": " + parsed.error().message + " (use a Go duration such as 500ms or 3s)");
  if (parsed->count() < 0) throw std::runtime_error(flag + ": must not be negative");
  return std::chrono::duration_cast<std::chrono::milliseconds>(*parsed);
}

}  // namespace

int run_serve(const ServeOptions& o) {
  spdlog::set_level(o.verbosity >= 2 ? spdlog::level::trace : o.verbosity == 1 ? spdlog::level::debug : spdlog::level::info);
  if (!o.insecure_no_auth) {
    throw std::runtime_error(
        "delegated authentication and authorization are not implemented yet; refusing to serve the metrics of "
        "every member cluster to anyone who can connect. For local development, pass --insecure-development-no-auth.");
  }
  spdlog::warn("--insecure-development-no-auth: every request is served WITHOUT authentication or authorization");
  if (o.tls_cert_file.empty() != o.tls_private_key_file.empty())
    throw std::runtime_error("--tls-cert-file and --tls-private-key-file must be given together");

  transport::TlsServerOptions server_options;
  server_options.bind_address = o.bind_address;
  server_options.port = o.secure_port;
  server_options.tls_min_version = o.tls_min_version;
  server_options.threads = o.threads;
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

  // Member clusters: from kubeconfig files for now (the Karmada Cluster source is to come).
  // The client's I/O thread; it must stop before the server's executors go
  // away, because member answers complete server requests (see the end).
  auto client_runtime = std::make_unique<clusterclient::ClientRuntime>(1);
  std::shared_ptr<aggregator::MetricsService> service;
  std::shared_ptr<clusterclient::KubeconfigMemberSource> members;
  std::shared_ptr<aggregator::Aggregator> aggregator_impl;
  if (!o.member_kubeconfigs.empty()) {
    clusterclient::KubeconfigSourceOptions source_options;
    source_options.kubeconfig_files = o.member_kubeconfigs;
    source_options.only_contexts = o.member_contexts;
    source_options.client.max_response_bytes = o.max_member_response_bytes;
    source_options.client.max_connections = o.member_max_connections;
    members = std::make_shared<clusterclient::KubeconfigMemberSource>(*client_runtime, source_options);
    spdlog::info("{} member cluster(s) from --member-kubeconfig", members->members()->size());
    // Discovery first, briefly, so that the first queries already know what each member serves.
    members->wait_for_first_discovery(std::chrono::seconds(2));
    aggregator::AggregatorOptions aggregator_options;
    aggregator_options.member_timeout = member_timeout;
    aggregator_options.cache_ttl = cache_ttl;
    aggregator_options.on_member_error = [](std::string_view member, const aggregator::MemberError& e) {
      spdlog::warn("member {}: {}: {}", member, aggregator::to_string(e.kind), e.message);
    };
    aggregator_impl = std::make_shared<aggregator::Aggregator>(members, aggregator_options);
    service = aggregator_impl;
  } else {
    spdlog::warn("no --member-kubeconfig given: every metrics query answers 503 until member clusters are configured");
  }

  auto metrics = std::make_shared<server::ServerMetrics>();
  if (aggregator_impl) {
    metrics->add_collectable(std::make_shared<server::AggregatorMetrics>(
        [weak = std::weak_ptr<aggregator::Aggregator>(aggregator_impl)] {
          auto a = weak.lock();
          return a ? a->stats() : aggregator::AggregatorStats{};
        }));
    metrics->add_collectable(std::make_shared<MemberClientMetrics>(members));
  }
  auto handler = std::make_shared<server::ApiHandler>(service, metrics, server::BuildInfo{});
  handler->set_configured(true);

  transport::TlsServer tls_server(server_options, [handler](transport::HttpRequest request, auto respond) {
    handler->handle(request, std::move(respond));
  });
  spdlog::info("serving on https://{}:{}", o.bind_address, tls_server.port());
  tls_server.run();
  // Shutdown order: no new discovery, then the client's thread stops (member
  // requests still in flight are dropped), and only then the server goes.
  if (members) members->stop();
  client_runtime.reset();
  return 0;
}

}  // namespace fedmetrics::cli
