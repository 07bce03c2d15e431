#include "fedmetrics/transport/certificate_authority.hpp"

#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <utility>

#include <openssl/bio.h>
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
using BioPtr = std::unique_ptr<BIO, Deleter<BIO, BIO_free_all>>;

struct FileCloser {
  void operator()(FILE* f) const { std::fclose(f); }
};

[[noreturn]] void fail(const std::string& what) { throw std::runtime_error("certificate authority: " + what); }

void add_extension(X509* issuer, X509* cert, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  ExtPtr ext(X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str()));
  if (!ext || X509_add_ext(cert, ext.get(), -1) != 1) fail("cannot add extension " + value);
}

using Extensions = std::vector<std::pair<int, std::string>>;

std::string subject_alt_names(const std::vector<std::string>& dns_names, const std::vector<std::string>& ip_addresses) {
  std::string san;
  for (const auto& dns : dns_names) san += (san.empty() ? "" : ",") + std::string("DNS:") + dns;
  for (const auto& ip : ip_addresses) san += (san.empty() ? "" : ",") + std::string("IP:") + ip;
  return san;
}

// A certificate for `key`, valid `days`, with `extensions` (an empty value is
// left out), signed by `issuer_key` as `issuer`; a null `issuer` makes the
// certificate its own issuer (self-signed). `what` names it in errors.
CertPtr make_certificate(EVP_PKEY* key, const std::string& common_name, long days, const Extensions& extensions,
                         X509* issuer, EVP_PKEY* issuer_key, const std::string& what,
                         const std::vector<std::string>& organizations = {}) {
  CertPtr cert(X509_new());
  X509_set_version(cert.get(), 2);
  // A random 64-bit serial, as RFC 5280 asks for unpredictable serials.
  std::unique_ptr<BIGNUM, Deleter<BIGNUM, BN_free>> serial(BN_new());
  BN_rand(serial.get(), 64, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY);
  BN_to_ASN1_INTEGER(serial.get(), X509_get_serialNumber(cert.get()));
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);  // tolerate clock skew
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), days * 24 * 3600);
  X509_set_pubkey(cert.get(), key);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(common_name.c_str()), -1,
                             -1, 0);
  for (const auto& o : organizations)  // Kubernetes reads a client certificate's O values as groups
    X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(o.c_str()), -1, -1, 0);
  if (issuer == nullptr) issuer = cert.get();
  X509_set_issuer_name(cert.get(), X509_get_subject_name(issuer));
  for (const auto& [nid, value] : extensions)
    if (!value.empty()) add_extension(issuer, cert.get(), nid, value);
  if (X509_sign(cert.get(), issuer_key, EVP_sha256()) == 0) fail("cannot sign " + what);
  return cert;
}

KeyPtr new_key() {
  KeyPtr key(EVP_EC_gen("P-256"));
  if (!key) fail("cannot generate an EC key");
  return key;
}

void write_pem(const std::filesystem::path& path, EVP_PKEY* key, X509* cert) {
  std::unique_ptr<FILE, FileCloser> f(std::fopen(path.c_str(), "w"));
  if (!f) fail("cannot write " + path.string());
  if (key != nullptr) {
    std::filesystem::permissions(path, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    if (PEM_write_PrivateKey(f.get(), key, nullptr, nullptr, 0, nullptr, nullptr) != 1)
      fail("cannot write " + path.string());
  } else if (PEM_write_X509(f.get(), cert) != 1) {
    fail("cannot write " + path.string());
  }
}

// Writes the key first: a certificate file without its key is never left behind.
void write_key_and_certificate(const std::string& cert_file, const std::string& key_file, EVP_PKEY* key, X509* cert) {
  std::filesystem::path kp(key_file);
  if (kp.has_parent_path()) std::filesystem::create_directories(kp.parent_path());
  write_pem(key_file, key, nullptr);
  write_pem(cert_file, nullptr, cert);
}

}  // namespace

struct CertificateAuthority::Impl {
  KeyPtr key;
  CertPtr cert;
  std::string cert_file;
};

CertificateAuthority::CertificateAuthority(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CertificateAuthority::CertificateAuthority(CertificateAuthority&&) noexcept = default;
CertificateAuthority& CertificateAuthority::operator=(CertificateAuthority&&) noexcept = default;
CertificateAuthority::~CertificateAuthority() = default;

CertificateAuthority CertificateAuthority::create(const std::string& common_name) {
  auto impl = std::make_unique<Impl>();
  impl->key = new_key();
  impl->cert = make_certificate(impl->key.get(), common_name, 3650,
                                {{NID_basic_constraints, "critical,CA:TRUE"},
                                 {NID_key_usage, "critical,digitalSignature,keyCertSign,cRLSign"},
                                 {NID_subject_key_identifier, "hash"}},
                                nullptr, impl->key.get(), "the CA certificate");
  return CertificateAuthority(std::move(impl));
}

CertificateAuthority CertificateAuthority::load_or_create(const std::string& dir, const std::string& name,
                                                          const std::string& common_name) {
  namespace fs = std::filesystem;
  auto cert_path = fs::path(dir) / (name + ".crt");
  auto key_path = fs::path(dir) / (name + ".key");
  if (fs::exists(cert_path) && fs::exists(key_path)) {
    auto impl = std::make_unique<Impl>();
    std::unique_ptr<FILE, FileCloser> cf(std::fopen(cert_path.c_str(), "r"));
    if (cf) impl->cert.reset(PEM_read_X509(cf.get(), nullptr, nullptr, nullptr));
    if (!impl->cert) fail("cannot read the CA certificate " + cert_path.string());
    std::unique_ptr<FILE, FileCloser> kf(std::fopen(key_path.c_str(), "r"));
    if (kf) impl->key.reset(PEM_read_PrivateKey(kf.get(), nullptr, nullptr, nullptr));
    if (!impl->key) fail("cannot read the CA key " + key_path.string());
    if (X509_check_private_key(impl->cert.get(), impl->key.get()) != 1)
      fail(key_path.string() + " does not match " + cert_path.string());
    impl->cert_file = fs::absolute(cert_path).string();
    return CertificateAuthority(std::move(impl));
  }
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) fail("cannot create " + dir + ": " + ec.message());
  auto ca = create(common_name);
  write_key_and_certificate(cert_path.string(), key_path.string(), ca.impl_->key.get(), ca.impl_->cert.get());
  ca.impl_->cert_file = fs::absolute(cert_path).string();
  return ca;
}

const std::string& CertificateAuthority::certificate_file() const { return impl_->cert_file; }

std::string CertificateAuthority::certificate_pem() const {
  BioPtr bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_X509(bio.get(), impl_->cert.get());
  char* data = nullptr;
  long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<std::size_t>(n));
}

void CertificateAuthority::issue_serving_certificate(const std::string& cert_file, const std::string& key_file,
                                                     const std::string& common_name,
                                                     const std::vector<std::string>& dns_names,
                                                     const std::vector<std::string>& ip_addresses) const {
  auto key = new_key();
  auto cert = make_certificate(key.get(), common_name, 365,
                               {{NID_subject_alt_name, subject_alt_names(dns_names, ip_addresses)},
                                {NID_basic_constraints, "critical,CA:FALSE"},
                                {NID_key_usage, "critical,digitalSignature,keyEncipherment"},
                                {NID_ext_key_usage, "serverAuth"},
                                {NID_authority_key_identifier, "keyid:always"}},
                               impl_->cert.get(), impl_->key.get(), cert_file);
  write_key_and_certificate(cert_file, key_file, key.get(), cert.get());
}

void CertificateAuthority::issue_client_certificate(const std::string& cert_file, const std::string& key_file,
                                                    const std::string& common_name,
                                                    const std::vector<std::string>& organizations) const {
  auto key = new_key();
  auto cert = make_certificate(key.get(), common_name, 365,
                               {{NID_basic_constraints, "critical,CA:FALSE"},
                                {NID_key_usage, "critical,digitalSignature,keyEncipherment"},
                                {NID_ext_key_usage, "clientAuth"},
                                {NID_authority_key_identifier, "keyid:always"}},
                               impl_->cert.get(), impl_->key.get(), cert_file, organizations);
  write_key_and_certificate(cert_file, key_file, key.get(), cert.get());
}

void write_self_signed_certificate(const std::string& cert_file, const std::string& key_file,
                                   const std::string& common_name, const std::vector<std::string>& dns_names,
                                   const std::vector<std::string>& ip_addresses) {
  auto key = new_key();
  // CA:TRUE and keyCertSign: a client trusts this file itself as its root.
  auto cert = make_certificate(key.get(), common_name, 365,
                               {{NID_subject_alt_name, subject_alt_names(dns_names, ip_addresses)},
                                {NID_basic_constraints, "critical,CA:TRUE"},
                                {NID_key_usage, "critical,digitalSignature,keyCertSign"},
                                {NID_ext_key_usage, "serverAuth"}},
                               nullptr, key.get(), cert_file);
  write_key_and_certificate(cert_file, key_file, key.get(), cert.get());
}

}  // namespace fedmetrics::transport
