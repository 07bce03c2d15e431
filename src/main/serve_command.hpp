#pragma once
// `fedmetrics serve`: the aggregated metrics API server.
#include <cstdint>
#include <cstddef>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace fedmetrics::cli {

struct ServeOptions {
  std::uint16_t secure_port = 6443;
  std::string bind_address = "0.0.0.0";
  std::string cert_dir = "apiserver.local.config/certificates";
  std::string tls_cert_file;
  std::string tls_private_key_file;
  std::string tls_min_version = "VersionTLS12";
  std::string service_name = "fedmetrics";
  std::string service_namespace = "fedmetrics-system";
  bool insecure_no_auth = false;
  // Delegated authentication and authorization (Kubernetes' flag names).
  std::string authentication_kubeconfig;
  std::string authorization_kubeconfig;
  bool authentication_skip_lookup = false;
  std::string client_ca_file;
  std::string requestheader_client_ca_file;
  std::vector<std::string> requestheader_allowed_names;
  std::vector<std::string> requestheader_username_headers{"X-Remote-User"};
  std::vector<std::string> requestheader_uid_headers{"X-Remote-Uid"};
  std::vector<std::string> requestheader_group_headers{"X-Remote-Group"};
  std::vector<std::string> requestheader_extra_headers_prefix{"X-Remote-Extra-"};
  std::string token_webhook_cache_ttl = "10s";
  std::string authorized_cache_ttl = "10s";
  std::string unauthorized_cache_ttl = "10s";
  std::vector<std::string> always_allow_paths{"/healthz", "/readyz", "/livez"};
  std::vector<std::string> member_kubeconfigs;
  std::vector<std::string> member_contexts;
  std::string karmada_kubeconfig;
  std::string member_access = "direct";
  std::string member_timeout = "3s";
  int member_failure_threshold = 3;
  std::string cache_ttl = "0s";
  std::size_t cache_max_entries = 1024;
  std::size_t max_member_response_bytes = 64ULL << 20;
  std::size_t member_max_connections = 8;
  double member_qps = 0;
  int member_burst = 10;
  // The built-in FederatedHPA loop (upstream kube-controller-manager flag names).
  bool enable_autoscaler = false;
  std::string kubeconfig;  // the control plane the loop manages
  std::string autoscaler_label_selector;
  std::string hpa_sync_period = "15s";
  double hpa_tolerance = 0.1;
  std::string hpa_cpu_initialization_period = "5m";
  std::string hpa_initial_readiness_delay = "30s";
  std::string hpa_downscale_stabilization = "5m";
  std::string distributed_rebalance_window = "2m";
  std::string distributed_orphan_sweep_period = "1m";
  std::string cron_default_time_zone = "UTC";
  std::string cron_missed_run_deadline = "5m";
  std::size_t concurrent_hpa_syncs = 5;
  bool leader_elect = true;
  std::string leader_elect_lease_duration = "15s";
  std::string leader_elect_renew_deadline = "10s";
  std::string leader_elect_retry_period = "2s";
  std::string leader_elect_resource_namespace = "kube-system";
  std::string leader_elect_resource_name = "fedmetrics-autoscaler";
  int verbosity = 0;
  unsigned threads = 0;
  std::string shutdown_delay = "2s";  // --shutdown-delay-duration
  // Prometheus members (serve_prometheus.cpp).
  std::string prometheus_rules;
  std::string prometheus_service;              // NAMESPACE/NAME:PORT
  std::vector<std::string> member_prometheus;  // NAME=URL
  std::string metrics_relist_interval = "10m";
};

CLI::App* add_serve_command(CLI::App& app, ServeOptions& options);
int run_serve(const ServeOptions& options);

}  // namespace fedmetrics::cli
