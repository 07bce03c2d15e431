#include "fedmetrics/transport/self_signed.hpp"

#include <filesystem>
#include <stdexcept>

#include "fedmetrics/transport/certificate_authority.hpp"

namespace fedmetrics::transport {

CertificatePaths ensure_self_signed_certificate(const std::string& cert_dir, const std::vector<std::string>& dns_names,
                                                const std::vector<std::string>& ip_addresses) {
  namespace fs = std::filesystem;
  CertificatePaths paths{(fs::path(cert_dir) / "apiserver.crt").string(),
                         (fs::path(cert_dir) / "apiserver.key").string(), false};
  if (fs::exists(paths.cert_file) && fs::exists(paths.key_file)) return paths;

  std::error_code ec;
  fs::create_directories(cert_dir, ec);
  if (ec)
    throw std::runtime_error("self-signed certificate: cannot create --cert-dir " + cert_dir + ": " + ec.message());

  write_self_signed_certificate(paths.cert_file, paths.key_file, dns_names.empty() ? "fedmetrics" : dns_names.front(),
                                dns_names, ip_addresses);
  paths.generated = true;
  return paths;
}

}  // namespace fedmetrics::transport
