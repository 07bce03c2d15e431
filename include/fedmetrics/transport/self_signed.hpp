#pragma once
// A self-signed serving certificate for when no --tls-cert-file is given, as
// generic Kubernetes API servers make one in --cert-dir (apiserver.crt/.key).
#include <string>
#include <vector>

namespace fedmetrics::transport {

struct CertificatePaths {
  std::string cert_file;
  std::string key_file;
  bool generated = false;  // false when existing files were reused
};

// Reuses <cert_dir>/apiserver.crt and apiserver.key when both exist;
// otherwise writes a new ECDSA P-256 certificate, valid one year, whose
// subject alternative names are `dns_names` and `ip_addresses`.
// Throws std::runtime_error naming the file on failure.
CertificatePaths ensure_self_signed_certificate(const std::string& cert_dir, const std::vector<std::string>& dns_names,
                                                const std::vector<std::string>& ip_addresses);

}  // namespace fedmetrics::transport
