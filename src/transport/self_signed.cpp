#include "fedmetrics/transport/self_signed.hpp"

#include <filesystem>
#include <memory>
#include <stdexcept>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

namespace fedmetrics::transport {

namespace {

template <class T, void (*Free)(T*)>
struct Deleter {
  void operator()(T* p) const { Free(p); }
};
using KeyPtr = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY, EVP_PKEY_free>>;
using CertPtr = std::unique_ptr<X509, Deleter<X509, X509_free>>;
using ExtPtr = std::unique_ptr<X509_EXTENSION, Deleter<X509_EXTENSION, X509_EXTENSION_free>>;

struct FileCloser {
  void operator()(FILE* f) const { std::fclose(f); }
};

void fail(const std::string& what) { throw std::runtime_error("self-signed certificate: " + what); }

void add_extension(X509* cert, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, cert, cert, nullptr, nullptr, 0);
  ExtPtr ext(X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str()));
  if (!ext || X509_add_ext(cert, ext.get(), -1) != 1) fail("cannot add extension " + value);
}

void write_pem(const std::filesystem::path& path, bool private_key, EVP_PKEY* key, X509* cert) {
  std::unique_ptr<FILE, FileCloser> f(std::fopen(path.c_str(), "w"));
  if (!f) fail("cannot write " + path.string());
  if (private_key) {
    std::filesystem::permissions(path, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    if (PEM_write_PrivateKey(f.get(), key, nullptr, nullptr, 0, nullptr, nullptr) != 1) fail("cannot write key");
  } else if (PEM_write_X509(f.get(), cert) != 1) {
    fail("cannot write certificate");
  }
}

}  // namespace

CertificatePaths ensure_self_signed_certificate(const std::string& cert_dir, const std::vector<std::string>& dns_names,
                                                const std::vector<std::string>& ip_addresses) {
  namespace fs = std::filesystem;
  CertificatePaths paths{(fs::path(cert_dir) / "apiserver.crt").string(), (fs::path(cert_dir) / "apiserver.key").string(),
                         false};
  if (fs::exists(paths.cert_file) && fs::exists(paths.key_file)) return paths;

  std::error_code ec;
  fs::create_directories(cert_dir, ec);
  if (ec) fail("cannot create --cert-dir " + cert_dir + ": " + ec.message());

  KeyPtr key(EVP_EC_gen("P-256"));
  if (!key) fail("cannot generate an EC key");
  CertPtr cert(X509_new());
  X509_set_version(cert.get(), 2);
  // A random 64-bit serial, as RFC 5280 asks for unpredictable serials.
  std::unique_ptr<BIGNUM, Deleter<BIGNUM, BN_free>> serial(BN_new());
  BN_rand(serial.get(), 64, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY);
  BN_to_ASN1_INTEGER(serial.get(), X509_get_serialNumber(cert.get()));
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);  // tolerate clock skew
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 365L * 24 * 3600);
  X509_set_pubkey(cert.get(), key.get());
  X509_NAME* name = X509_get_subject_name(cert.get());
  std::string common_name = dns_names.empty() ? "fedmetrics" : dns_names.front();
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(common_name.c_str()), -1,
                             -1, 0);
  X509_set_issuer_name(cert.get(), name);

  std::string san;
  for (const auto& dns : dns_names) san += (san.empty() ? "" : ",") + std::string("DNS:") + dns;
  for (const auto& ip : ip_addresses) san += (san.empty() ? "" : ",") + std::string("IP:") + ip;
  if (!san.empty()) add_extension(cert.get(), NID_subject_alt_name, san);
  add_extension(cert.get(), NID_basic_constraints, "critical,CA:TRUE");
  add_extension(cert.get(), NID_key_usage, "critical,digitalSignature,keyCertSign");
  add_extension(cert.get(), NID_ext_key_usage, "serverAuth");
  if (X509_sign(cert.get(), key.get(), EVP_sha256()) == 0) fail("cannot sign the certificate");

  write_pem(paths.key_file, true, key.get(), nullptr);
  write_pem(paths.cert_file, false, nullptr, cert.get());
  paths.generated = true;
  return paths;
}

}  // namespace fedmetrics::transport
