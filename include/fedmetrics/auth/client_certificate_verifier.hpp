#pragma once
// Verifies a TLS client's certificate chain against a CA bundle after the
// handshake, as Go's x509.Certificate.Verify with
// KeyUsages = [ExtKeyUsageClientAuth] (apiserver
// pkg/authentication/request/x509/x509.go). Our TLS server only requests a
// client certificate; which CA it must chain to depends on the authenticator
// (requestheader-client-ca-file or client-ca-file).
#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fedmetrics/k8s/expected.hpp"

namespace fedmetrics::auth {

// The verified leaf's subject, read as Go's pkix.Name does (the last CN wins;
// every O, in order).
struct CertificateIdentity {
  std::string common_name;
  std::vector<std::string> organizations;
  std::string sha256_hex;  // of the leaf's DER, lowercase hex (Go's credential id)
};

// Immutable and cheap to copy; verify() may run on many threads at once.
class ClientCertificateVerifier {
 public:
  // Every CERTIFICATE block of `ca_bundle_pem` becomes a trust anchor (other
  // PEM blocks are skipped, as Go's cert.ParseCertsPEM does). An error when a
  // certificate block does not parse or when there is none.
  static k8s::Expected<ClientCertificateVerifier> from_pem(std::string_view ca_bundle_pem);

  // Verifies `peer_chain_pem` (the leaf first, then intermediates the client
  // sent) at time `now`. The leaf must be usable for client authentication:
  // an extendedKeyUsage without clientAuth fails, one that is absent passes,
  // as in Go. Errors carry Go's texts, e.g. "x509: certificate signed by
  // unknown authority".
  [[nodiscard]] k8s::Expected<CertificateIdentity> verify(std::string_view peer_chain_pem,
                                                          std::chrono::system_clock::time_point now) const;

 private:
  struct Store;
  explicit ClientCertificateVerifier(std::shared_ptr<const Store> store) : store_(std::move(store)) {}
  std::shared_ptr<const Store> store_;
};

}  // namespace fedmetrics::auth
