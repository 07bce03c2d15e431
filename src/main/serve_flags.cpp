#include "main/serve_command.hpp"

#include <stdexcept>

#include <CLI/CLI.hpp>

#include "fedmetrics/k8s/time.hpp"
#include "main/serve_wiring.hpp"

namespace fedmetrics::cli {

namespace {

// A flag whose default --help shows, as Kubernetes components show theirs:
// all of serve's but the files, the selectors and the switches.
template <typename T>
CLI::Option* add_defaulted(CLI::App& app, const std::string& name, T& value, const std::string& help) {
  return app.add_option(name, value, help)->capture_default_str();
}

// A comma-separated list (the flag may also be repeated), its default shown.
CLI::Option* add_list(CLI::App& app, const std::string& name, std::vector<std::string>& value,
                      const std::string& help) {
  return add_defaulted(app, name, value, help)->delimiter(',');
}

// A file serve reads: CLI11 refuses a path that names none before serve starts.
template <typename T>
CLI::Option* add_existing_file(CLI::App& app, const std::string& name, T& value, const std::string& help) {
  return app.add_option(name, value, help)->check(CLI::ExistingFile);
}

// What NONNEGATIVE (zero allowed) or POSITIVE flags check. CLI11's own
// NonNegativeNumber and PositiveNumber are ranges up to the largest double,
// which their message prints with all its 309 digits; this one says what the
// flag needs, and keeps their names in --help.
CLI::Validator lower_bound(bool zero_allowed) {
  return CLI::Validator(
      [zero_allowed](std::string& text) -> std::string {
        double value = 0;
        if (!CLI::detail::lexical_cast(text, value)) return "not a number: " + text;
        if (zero_allowed && value < 0) return "must not be negative, not " + text;
        if (!zero_allowed && value <= 0) return "must be more than 0, not " + text;
        return {};
      },
      zero_allowed ? "NONNEGATIVE" : "POSITIVE");
}

}  // namespace

CLI::App* add_serve_command(CLI::App& app, ServeOptions& o) {
  CLI::App* serve = app.add_subcommand(
      "serve",
      "Serve the metrics APIs over TLS, as an extension API server behind the Karmada control plane's\n"
      "aggregation layer (deploy/base/apiservice.yaml registers it).");
  add_defaulted(*serve, "--secure-port", o.secure_port, "The port on which to serve HTTPS (0 picks a free port).");
  add_defaulted(*serve, "--bind-address", o.bind_address, "The IP address on which to listen for --secure-port.");
  add_defaulted(*serve, "--cert-dir", o.cert_dir,
                "The directory where the self-signed serving certificate is written when --tls-cert-file\n"
                "and --tls-private-key-file are not given (apiserver.crt, apiserver.key). A pair already\n"
                "there is used as it is, and reloaded when its files change, as --tls-cert-file is.");
  add_existing_file(*serve, "--tls-cert-file", o.tls_cert_file, "File containing the PEM serving certificate (chain).");
  add_existing_file(*serve, "--tls-private-key-file", o.tls_private_key_file,
                    "File containing the PEM private key matching --tls-cert-file.");
  add_defaulted(*serve, "--tls-min-version", o.tls_min_version, "Minimum TLS version: VersionTLS12 or VersionTLS13.")
      ->check(CLI::IsMember({"VersionTLS12", "VersionTLS13"}));
  add_defaulted(*serve, "--service-name", o.service_name,
                "Name of the Service in front of this server; the self-signed certificate covers\n"
                "<service-name>.<service-namespace>.svc.");
  add_defaulted(*serve, "--service-namespace", o.service_namespace, "Namespace of that Service.");
  serve->add_flag("--insecure-development-no-auth", o.insecure_no_auth,
                  "DEVELOPMENT ONLY: serve every request without authentication or authorization.");
  add_existing_file(*serve, "--authentication-kubeconfig", o.authentication_kubeconfig,
                    "Kubeconfig of the control plane (karmada-apiserver) that reviews bearer tokens\n"
                    "(TokenReview) and publishes kube-system/extension-apiserver-authentication (the\n"
                    "front-proxy CA and header names). Its current-context is used.");
  add_existing_file(*serve, "--authorization-kubeconfig", o.authorization_kubeconfig,
                    "Kubeconfig of the control plane that authorizes requests (SubjectAccessReview).");
  serve->add_flag("--authentication-skip-lookup", o.authentication_skip_lookup,
                  "Do not read kube-system/extension-apiserver-authentication; use only the --requestheader-*\n"
                  "and --client-ca-file flags.");
  add_existing_file(
      *serve, "--client-ca-file", o.client_ca_file,
      "Authenticate clients presenting a certificate signed by one of these CAs (user = CN, groups = O).");
  add_existing_file(*serve, "--requestheader-client-ca-file", o.requestheader_client_ca_file,
                    "CA bundle that must sign the front proxy's client certificate before the\n"
                    "--requestheader-username-headers are trusted (the aggregator's --proxy-client-cert-file).");
  serve
      ->add_option("--requestheader-allowed-names", o.requestheader_allowed_names,
                   "Common names allowed for the front proxy's certificate (comma-separated); empty: any\n"
                   "certificate from --requestheader-client-ca-file.")
      ->delimiter(',');
  add_list(*serve, "--requestheader-username-headers", o.requestheader_username_headers,
           "Headers holding the user name, first non-empty wins.");
  add_list(*serve, "--requestheader-uid-headers", o.requestheader_uid_headers, "Headers holding the user's UID.");
  add_list(*serve, "--requestheader-group-headers", o.requestheader_group_headers,
           "Headers holding the user's groups (one per header line).");
  add_list(*serve, "--requestheader-extra-headers-prefix", o.requestheader_extra_headers_prefix,
           "Prefixes of headers holding the user's extra attributes.");
  add_defaulted(*serve, "--authentication-token-webhook-cache-ttl", o.token_webhook_cache_ttl,
                "How long TokenReview answers are cached (Go duration).");
  add_defaulted(*serve, "--authorization-webhook-cache-authorized-ttl", o.authorized_cache_ttl,
                "How long SubjectAccessReview allows are cached (Go duration).");
  add_defaulted(*serve, "--authorization-webhook-cache-unauthorized-ttl", o.unauthorized_cache_ttl,
                "How long SubjectAccessReview denials are cached (Go duration).");
  add_list(*serve, "--authorization-always-allow-paths", o.always_allow_paths,
           "Paths served to anyone without authentication or authorization (comma-separated).");
  auto* member_kubeconfig =
      add_existing_file(*serve, "--member-kubeconfig", o.member_kubeconfigs,
                        "Kubeconfig whose contexts are the member clusters, one member per context named after it\n"
                        "(Karmada's members.config). Repeatable. Re-read when it changes.");
  auto* member_contexts = serve
                              ->add_option("--member-contexts", o.member_contexts,
                                           "Only these contexts of --member-kubeconfig are members (comma-separated).")
                              ->delimiter(',');
  auto* karmada_kubeconfig =
      add_existing_file(
          *serve, "--karmada-kubeconfig", o.karmada_kubeconfig,
          "Kubeconfig of the Karmada control plane (its current-context): the member clusters are its\n"
          "cluster.karmada.io Cluster objects whose Ready condition is True, followed as they appear,\n"
          "disappear, turn NotReady or change credentials (polled every 2s). Not with --member-kubeconfig.")
          ->excludes(member_kubeconfig)
          ->excludes(member_contexts);
  add_defaulted(*serve, "--member-access", o.member_access,
                "How to reach the clusters of --karmada-kubeconfig: direct (spec.apiEndpoint with the token and\n"
                "caBundle of the Secret in spec.secretRef) or proxy (the control plane's cluster proxy, with the\n"
                "control plane's credentials). Pull-mode clusters always go through the proxy.")
      ->check(CLI::IsMember({"direct", "proxy"}))
      ->needs(karmada_kubeconfig);
  add_defaulted(*serve, "--member-timeout", o.member_timeout,
                "Deadline of every request to a member cluster, a Go duration (500ms, 3s). A member that has\n"
                "not answered by then is reported in a Warning header and left out of the answer.");
  add_defaulted(*serve, "--member-failure-threshold", o.member_failure_threshold,
                "Requests in a row that a member leaves unanswered (timed out or could not connect) before it is\n"
                "left out of every answer at once, with a Warning, instead of costing each query\n"
                "--member-timeout; it is probed in the background (GET /readyz, backoff from 1s to 16s) and\n"
                "asked again once it answers. 0: never left out for this.")
      ->check(lower_bound(true));
  add_defaulted(*serve, "--cache-ttl", o.cache_ttl,
                "Serve repeated identical queries from a result cache for this long (Go duration; 0s: off).");
  add_defaulted(*serve, "--cache-max-entries", o.cache_max_entries,
                "At most this many answers in the result cache of --cache-ttl; when full, the oldest\n"
                "(the next to expire) makes room.")
      ->check(lower_bound(false));
  add_defaulted(*serve, "--max-member-response-bytes", o.max_member_response_bytes,
                "Largest response accepted from a member cluster; a larger one is an error for that member.");
  add_defaulted(*serve, "--member-qps", o.member_qps,
                "Requests per second to each member cluster, shared by every query and the autoscaler (a\n"
                "token bucket, as client-go's QPS); a request that cannot get a token before its deadline\n"
                "fails as throttled for that member. 0: unlimited.")
      ->check(lower_bound(true));
  add_defaulted(*serve, "--member-burst", o.member_burst,
                "Requests allowed at once above --member-qps (client-go's Burst).")
      ->check(CLI::Range(1, 100000));
  add_defaulted(*serve, "--member-max-connections", o.member_max_connections,
                "Keep-alive connections per member cluster (the pool bound).")
      ->check(CLI::Range(1, 1024));
  serve->add_flag("--enable-autoscaler", o.enable_autoscaler,
                  "Run the built-in FederatedHPA loop (autoscaling.karmada.io/v1alpha1) against the control plane\n"
                  "given by --kubeconfig, reading metrics from this server's aggregator in process. Switch Karmada's\n"
                  "own FederatedHPA controller off for the objects it manages (see README).");
  add_existing_file(*serve, "--kubeconfig", o.kubeconfig,
                    "Kubeconfig of the Karmada control plane whose FederatedHPAs the loop manages (its\n"
                    "current-context): FederatedHPA list and status, the targets' scale subresource, Events.");
  serve->add_option("--autoscaler-label-selector", o.autoscaler_label_selector,
                    "Only manage the FederatedHPAs whose labels match this selector (default: all).");
  add_defaulted(*serve, "--horizontal-pod-autoscaler-sync-period", o.hpa_sync_period,
                "How often every FederatedHPA is synced (Go duration).");
  add_defaulted(*serve, "--horizontal-pod-autoscaler-tolerance", o.hpa_tolerance,
                "The minimum change of the usage ratio (from 1.0) that causes a rescale.")
      ->check(CLI::Range(0.0, 1.0));
  add_defaulted(*serve, "--horizontal-pod-autoscaler-cpu-initialization-period", o.hpa_cpu_initialization_period,
                "After a pod starts, the period in which its cpu samples may be skipped (Go duration).");
  add_defaulted(*serve, "--horizontal-pod-autoscaler-initial-readiness-delay", o.hpa_initial_readiness_delay,
                "After a pod starts, the period in which readiness changes count as its first readiness.");
  add_defaulted(*serve, "--distributed-rebalance-window", o.distributed_rebalance_window,
                "Distributed mode (autoscaling.fedmetrics.io/mode: distributed): a member HPA that scaled more "
                "recently than this gives no maxReplicas away (Federation v1's forbidden window)");
  add_defaulted(*serve, "--cron-default-time-zone", o.cron_default_time_zone,
                "CronFederatedHPA: the IANA time zone of a rule without timeZone and a schedule without CRON_TZ=");
  add_defaulted(*serve, "--cron-missed-run-deadline", o.cron_missed_run_deadline,
                "CronFederatedHPA: a firing missed while no replica led (a restart, a failover) still runs when it "
                "is at most this old; older ones are skipped and logged (Go duration)");
  add_defaulted(*serve, "--distributed-orphan-sweep-period", o.distributed_orphan_sweep_period,
                "Distributed mode: how often member HPAs fedmetrics created are checked against their "
                "FederatedHPA and deleted when it is gone or gives their member no share (a member that could "
                "not be reached when that happened); one list per Ready member each time (Go duration)");
  add_defaulted(*serve, "--horizontal-pod-autoscaler-downscale-stabilization", o.hpa_downscale_stabilization,
                "The default scale-down stabilization window (Go duration).");
  add_defaulted(*serve, "--concurrent-horizontal-pod-autoscaler-syncs", o.concurrent_hpa_syncs,
                "How many FederatedHPAs are synced at the same time.")
      ->check(CLI::Range(1, 1000));
  add_defaulted(*serve, "--leader-elect", o.leader_elect,
                "With --enable-autoscaler: only the replica holding a coordination.k8s.io Lease in the control\n"
                "plane runs the loop (the metrics APIs are served by every replica).");
  add_defaulted(*serve, "--leader-elect-lease-duration", o.leader_elect_lease_duration,
                "How long a Lease that is not renewed keeps other replicas from taking it (Go duration).");
  add_defaulted(*serve, "--leader-elect-renew-deadline", o.leader_elect_renew_deadline,
                "How long the leader keeps acting without renewing its Lease (Go duration).");
  add_defaulted(*serve, "--leader-elect-retry-period", o.leader_elect_retry_period,
                "How often the Lease is renewed or tried (Go duration).");
  add_defaulted(*serve, "--leader-elect-resource-namespace", o.leader_elect_resource_namespace,
                "Namespace of the Lease.");
  add_defaulted(*serve, "--leader-elect-resource-name", o.leader_elect_resource_name, "Name of the Lease.");
  add_defaulted(*serve, "-v,--v", o.verbosity, "Log verbosity: 0 info, 1 debug, 2 trace.");
  add_defaulted(*serve, "--threads", o.threads, "Worker threads serving requests (0: one per core).");
  add_defaulted(*serve, "--shutdown-delay-duration", o.shutdown_delay,
                "On SIGTERM, /readyz fails at once and the server goes on serving for this long before it\n"
                "closes its listener, so that the endpoints in front of it stop sending requests first\n"
                "(kube-apiserver's flag). Requests in flight then have up to --member-timeout plus 10s to\n"
                "finish; a second SIGTERM exits at once with status 1.");
  add_prometheus_flags(serve, o);
  return serve;
}

std::chrono::milliseconds duration_flag(const std::string& flag, const std::string& value) {
  auto parsed = k8s::parse_duration(value);
  if (!parsed)
    throw std::runtime_error(flag + ": " + parsed.error().message + " (use a Go duration such as 500ms or 3s)");
  if (parsed->count() < 0) throw std::runtime_error(flag + ": must not be negative");
  return std::chrono::duration_cast<std::chrono::milliseconds>(*parsed);
}

}  // namespace fedmetrics::cli
