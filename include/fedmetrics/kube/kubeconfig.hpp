#pragma once
// Reading member clusters from a kubeconfig file (Karmada's members.config
// shape: one context per member, named after it).
#include <string>
#include <vector>

#include "fedmetrics/k8s/expected.hpp"

namespace fedmetrics::kube {

// How to reach one cluster's API server: everything from its context, with
// file references already read (certificates) or resolved (token files).
struct ClusterEndpoint {
  std::string name;    // the context name
  std::string server;  // "https://127.0.0.1:6443"
  std::string ca_pem;  // certificate-authority(-data); empty = system roots
  bool insecure_skip_tls_verify = false;
  std::string tls_server_name;       // overrides the name checked in the server certificate
  std::string token;                 // bearer token
  std::string token_file;            // re-read when it changes, and once after a 401
  std::string client_cert_pem;       // client-certificate(-data)
  std::string client_key_pem;        // client-key(-data)
  std::string proxy_url;             // an http:// proxy asked to CONNECT to the server (user info: Basic auth)
  bool disable_compression = false;  // disable-compression: do not ask for gzip responses
  friend bool operator==(const ClusterEndpoint&, const ClusterEndpoint&) = default;
};

// Parses kubeconfig text; relative file paths resolve against `base_dir`.
// `only_contexts` empty = every context. Errors name the context and field.
k8s::Expected<std::vector<ClusterEndpoint>> parse_kubeconfig(const std::string& text, const std::string& base_dir,
                                                             const std::vector<std::string>& only_contexts = {});
k8s::Expected<std::vector<ClusterEndpoint>> load_kubeconfig(const std::string& path,
                                                            const std::vector<std::string>& only_contexts = {});
// The endpoint of the file's current-context (how kubectl and client-go pick
// one: the control plane's --authentication-kubeconfig, --kubeconfig).
k8s::Expected<ClusterEndpoint> load_kubeconfig_current_context(const std::string& path);

}  // namespace fedmetrics::kube
