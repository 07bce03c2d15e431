#pragma once
// A small certificate authority for tests and the simulator: an ECDSA P-256
// CA that issues serving certificates for loopback names, as kind and kwok
// make one per cluster; and the CA-less self-signed certificate that
// `fedmetrics serve` makes (self_signed.hpp).
#include <memory>
#include <string>
#include <vector>

namespace fedmetrics::transport {

class CertificateAuthority {
 public:
  // Reuses <dir>/<name>.crt and <dir>/<name>.key when both exist; otherwise
  // generates a CA valid ten years and writes them. Throws std::runtime_error
  // naming the file on failure.
  static CertificateAuthority load_or_create(const std::string& dir, const std::string& name,
                                             const std::string& common_name);
  // A fresh CA kept in memory only (for a "wrong certificate" fault).
  static CertificateAuthority create(const std::string& common_name);

  CertificateAuthority(CertificateAuthority&&) noexcept;
  CertificateAuthority& operator=(CertificateAuthority&&) noexcept;
  ~CertificateAuthority();

  // Path of the CA certificate (PEM), empty for an in-memory CA.
  [[nodiscard]] const std::string& certificate_file() const;
  [[nodiscard]] std::string certificate_pem() const;

  // Issues a serving certificate (ECDSA P-256, one year, extendedKeyUsage
  // serverAuth) for `dns_names` and `ip_addresses`, signed by this CA, and
  // writes it with its key. Throws std::runtime_error on failure.
  void issue_serving_certificate(const std::string& cert_file, const std::string& key_file,
                                 const std::string& common_name, const std::vector<std::string>& dns_names,
                                 const std::vector<std::string>& ip_addresses) const;
  // Issues a client certificate (extendedKeyUsage clientAuth) for user
  // `common_name` with `organizations` as its groups, as Kubernetes reads them.
  void issue_client_certificate(const std::string& cert_file, const std::string& key_file,
                                const std::string& common_name,
                                const std::vector<std::string>& organizations = {}) const;

 private:
  struct Impl;
  explicit CertificateAuthority(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Writes a serving certificate that is its own issuer (no CA), and its key:
// ECDSA P-256, one year, extendedKeyUsage serverAuth, for `dns_names` and
// `ip_addresses`, marked CA:TRUE so that a client can trust the certificate
// file itself. Throws std::runtime_error on failure.
void write_self_signed_certificate(const std::string& cert_file, const std::string& key_file,
                                   const std::string& common_name, const std::vector<std::string>& dns_names,
                                   const std::vector<std::string>& ip_addresses);

}  // namespace fedmetrics::transport
