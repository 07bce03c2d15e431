#pragma once
// `fedmetrics serve`: the aggregated metrics API server.
#include <cstdint>
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
  std::vector<std::string> member_kubeconfigs;
  std::vector<std::string> member_contexts;
  std::string member_timeout = "3s";
  std::string cache_ttl = "0s";
  std::size_t max_member_response_bytes = 64ULL << 20;
  std::size_t member_max_connections = 8;
  int verbosity = 0;
  unsigned threads = 0;
};

CLI::App* add_serve_command(CLI::App& app, ServeOptions& options);
int run_serve(const ServeOptions& options);

}  // namespace fedmetrics::cli
