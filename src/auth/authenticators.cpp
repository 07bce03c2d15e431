#include "fedmetrics/auth/authenticators.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "fedmetrics/k8s/ascii.hpp"
#include "fedmetrics/k8s/url.hpp"

namespace fedmetrics::auth {
namespace {

using k8s::ascii_lowercase;
using k8s::iequals;
using k8s::istarts_with;

bool no_certificate(std::string_view pem) { return pem.find_first_not_of(" \t\r\n") == std::string_view::npos; }

// Go's headerValue: http.Header.Get (the first line of that name) of each
// configured name in turn; the first non-empty one wins.
std::string first_value(const Headers& headers, const std::vector<std::string>& names) {
  for (const auto& name : names) {
    auto it = std::find_if(headers.begin(), headers.end(), [&](const auto& h) { return iequals(h.first, name); });
    if (it != headers.end() && !it->second.empty()) return it->second;
  }
  return {};
}

// Go's allHeaderValues: every non-empty line, by configured name, then in
// arrival order.
std::vector<std::string> all_values(const Headers& headers, const std::vector<std::string>& names) {
  std::vector<std::string> out;
  for (const auto& name : names) {
    for (const auto& [key, value] : headers) {
      if (iequals(key, name) && !value.empty()) out.push_back(value);
    }
  }
  return out;
}

// Go's newExtra: prefixes first so that values keep the prefix order; empty
// values are kept; a key that does not unescape is kept raw.
std::map<std::string, std::vector<std::string>> extras(const Headers& headers,
                                                       const std::vector<std::string>& prefixes) {
  std::map<std::string, std::vector<std::string>> out;
  for (const auto& prefix : prefixes) {
    for (const auto& [key, value] : headers) {
      if (!istarts_with(key, prefix)) continue;
      std::string encoded = ascii_lowercase(std::string_view(key).substr(prefix.size()));
      std::string decoded;
      out[k8s::percent_decode_path(encoded, decoded) ? decoded : encoded].push_back(value);
    }
  }
  return out;
}

k8s::Expected<std::vector<std::string>> string_list(const std::map<std::string, std::string>& data,
                                                    const std::string& key) {
  auto it = data.find(key);
  if (it == data.end() || it->second.empty()) return std::vector<std::string>{};
  auto json = nlohmann::json::parse(it->second, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return k8s::Error{key + ": malformed JSON"};
  if (json.is_null()) return std::vector<std::string>{};
  if (!json.is_array()) return k8s::Error{key + ": expected a JSON array of strings, got " + json.type_name()};
  std::vector<std::string> out;
  for (const auto& item : json) {
    if (!item.is_string())
      return k8s::Error{key + ": expected a JSON array of strings, got an element of type " +
                        std::string(item.type_name())};
    out.push_back(item.get<std::string>());
  }
  return out;
}

}  // namespace

AuthenticationResult authenticate_request_header(const RequestHeaderConfig& config,
                                                 const ClientCertificateVerifier& verifier,
                                                 std::string_view peer_chain_pem, const Headers& headers,
                                                 std::chrono::system_clock::time_point now) {
  if (no_certificate(peer_chain_pem)) return AuthenticationResult::not_applicable();
  auto identity = verifier.verify(peer_chain_pem, now);
  if (!identity) return AuthenticationResult::rejected(identity.error().message);
  const auto& allowed = config.allowed_names;
  if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), identity->common_name) == allowed.end()) {
    return AuthenticationResult::rejected("x509: subject with cn=" + identity->common_name +
                                          " is not in the allowed list");
  }
  UserInfo user;
  user.name = first_value(headers, config.username_headers);
  if (user.name.empty()) return AuthenticationResult::not_applicable();
  user.uid = first_value(headers, config.uid_headers);
  user.groups = all_values(headers, config.group_headers);
  user.extra = extras(headers, config.extra_header_prefixes);
  return AuthenticationResult::authenticated(std::move(user));
}

AuthenticationResult authenticate_client_certificate(const ClientCertificateVerifier& verifier,
                                                     std::string_view peer_chain_pem,
                                                     std::chrono::system_clock::time_point now) {
  if (no_certificate(peer_chain_pem)) return AuthenticationResult::not_applicable();
  auto identity = verifier.verify(peer_chain_pem, now);
  if (!identity) return AuthenticationResult::rejected("verifying certificate failed: " + identity.error().message);
  if (identity->common_name.empty()) return AuthenticationResult::not_applicable();
  UserInfo user{identity->common_name, {}, identity->organizations, {}};
  user.extra["authentication.kubernetes.io/credential-id"] = {"X509SHA256=" + identity->sha256_hex};
  return AuthenticationResult::authenticated(std::move(user));
}

k8s::Expected<ExtensionApiserverAuthentication> parse_extension_apiserver_authentication(
    const std::map<std::string, std::string>& data) {
  ExtensionApiserverAuthentication out;
  if (auto it = data.find("client-ca-file"); it != data.end()) out.client_ca_pem = it->second;
  auto ca = data.find("requestheader-client-ca-file");
  if (ca == data.end() || ca->second.empty()) return out;
  RequestHeaderConfig config;
  config.client_ca_pem = ca->second;
  const std::pair<const char*, std::vector<std::string>*> lists[] = {
      {"requestheader-allowed-names", &config.allowed_names},
      {"requestheader-username-headers", &config.username_headers},
      {"requestheader-uid-headers", &config.uid_headers},
      {"requestheader-group-headers", &config.group_headers},
      {"requestheader-extra-headers-prefix", &config.extra_header_prefixes},
  };
  for (const auto& [key, field] : lists) {
    auto values = string_list(data, key);
    if (!values) return values.error();
    *field = std::move(*values);
  }
  out.request_header = std::move(config);
  return out;
}

}  // namespace fedmetrics::auth
