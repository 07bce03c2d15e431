#pragma once
// The two certificate-based authenticators of a delegating apiserver:
// request-header (the aggregator's front proxy vouches for the user in
// X-Remote-* headers; apiserver pkg/authentication/request/headerrequest)
// and x509 client certificates (client-ca-file; user = CN, groups = O).
// Pure: the caller passes the peer chain, the
// headers and the time.
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fedmetrics/auth/client_certificate_verifier.hpp"
#include "fedmetrics/auth/user_info.hpp"
#include "fedmetrics/k8s/expected.hpp"

namespace fedmetrics::auth {

// Request headers as received: names in any case, repeated names possible.
using Headers = std::vector<std::pair<std::string, std::string>>;

struct RequestHeaderConfig {
  std::string client_ca_pem;               // requestheader-client-ca-file
  std::vector<std::string> allowed_names;  // accepted CNs; empty: any certificate from that CA
  std::vector<std::string> username_headers = {"X-Remote-User"};
  std::vector<std::string> uid_headers = {"X-Remote-Uid"};
  std::vector<std::string> group_headers = {"X-Remote-Group"};
  std::vector<std::string> extra_header_prefixes = {"X-Remote-Extra-"};
};

// Trusts the identity headers only when `peer_chain_pem` verifies with
// `verifier` (built from config.client_ca_pem) and its CN is allowed:
//   no certificate, or no username header            -> NotApplicable
//   chain does not verify, or CN not in allowed_names -> Rejected (Go's text)
//   otherwise -> Authenticated: user and uid are the first non-empty value
//   among the configured headers (first line of each); groups are every
//   non-empty line of every group header, never comma-split; extras are
//   every line of headers starting with a prefix, keyed by the lowercased,
//   percent-unescaped remainder.
// system:authenticated is not added here (with_authenticated_group).
[[nodiscard]] AuthenticationResult authenticate_request_header(const RequestHeaderConfig& config,
                                                               const ClientCertificateVerifier& verifier,
                                                               std::string_view peer_chain_pem, const Headers& headers,
                                                               std::chrono::system_clock::time_point now);

// x509 client certificates (client-ca-file): user = CN, groups = the O
// values, extra authentication.kubernetes.io/credential-id =
// "X509SHA256=<hex>" as newer apiservers set. NotApplicable without a
// certificate or with an empty CN; Rejected when the chain does not verify.
[[nodiscard]] AuthenticationResult authenticate_client_certificate(const ClientCertificateVerifier& verifier,
                                                                   std::string_view peer_chain_pem,
                                                                   std::chrono::system_clock::time_point now);

// The data of kube-system/extension-apiserver-authentication, as a
// delegating apiserver reads it (apiserver pkg/server/options
// authentication.go and authentication_dynamic_request_header.go).
struct ExtensionApiserverAuthentication {
  std::string client_ca_pem;                          // client-ca-file; empty: x509 users off
  std::optional<RequestHeaderConfig> request_header;  // absent without requestheader-client-ca-file
};

// The header lists are JSON arrays stored as strings. As in Go, a key that
// is absent (or empty, or null) yields an empty list, not the defaults:
// kube-apiserver writes every key whenever it writes the CA. An error naming
// the key when a value is not a JSON array of strings.
[[nodiscard]] k8s::Expected<ExtensionApiserverAuthentication> parse_extension_apiserver_authentication(
    const std::map<std::string, std::string>& configmap_data);

}  // namespace fedmetrics::auth
