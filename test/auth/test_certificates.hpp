#pragma once
// Certificates for the auth tests, made with OpenSSL's C API: transport's
// CertificateAuthority issues only serving certificates written to files,
// and these tests need client certificates with O values, chosen
// extendedKeyUsages, intermediates and expired validity, in memory.
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

namespace fedmetrics::auth::testing {

struct CertSpec {
  std::string common_name;
  std::vector<std::string> organizations = {};
  std::string extended_key_usage = "clientAuth";  // empty: no extension
  bool is_ca = false;
  long valid_from_seconds = -3600;  // relative to now
  long valid_until_seconds = 86400;
};

class TestCertificate {
 public:
  // A self-signed CA.
  static TestCertificate authority(const std::string& common_name) {
    return make(CertSpec{common_name, {}, "", true}, nullptr);
  }
  // A certificate signed by this one.
  [[nodiscard]] TestCertificate issue(const CertSpec& spec) const { return make(spec, this); }

  [[nodiscard]] std::string pem() const {
    std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new(BIO_s_mem()), BIO_free);
    PEM_write_bio_X509(bio.get(), cert_.get());
    char* data = nullptr;
    const long n = BIO_get_mem_data(bio.get(), &data);
    return std::string(data, static_cast<std::size_t>(n));
  }

 private:
  using KeyPtr = std::shared_ptr<EVP_PKEY>;
  using CertPtr = std::shared_ptr<X509>;
  TestCertificate(KeyPtr key, CertPtr cert) : key_(std::move(key)), cert_(std::move(cert)) {}

  static void add_extension(X509* issuer, X509* cert, int nid, const std::string& value) {
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
    X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
    if (ext == nullptr || X509_add_ext(cert, ext, -1) != 1) throw std::runtime_error("extension " + value);
    X509_EXTENSION_free(ext);
  }

  static TestCertificate make(const CertSpec& spec, const TestCertificate* issuer) {
    KeyPtr key(EVP_EC_gen("P-256"), EVP_PKEY_free);
    CertPtr cert(X509_new(), X509_free);
    X509_set_version(cert.get(), 2);
    static long serial = 1;
    ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), serial++);
    X509_gmtime_adj(X509_getm_notBefore(cert.get()), spec.valid_from_seconds);
    X509_gmtime_adj(X509_getm_notAfter(cert.get()), spec.valid_until_seconds);
    X509_set_pubkey(cert.get(), key.get());
    X509_NAME* name = X509_get_subject_name(cert.get());
    auto add = [&](const char* field, const std::string& value) {
      X509_NAME_add_entry_by_txt(name, field, MBSTRING_UTF8, reinterpret_cast<const unsigned char*>(value.c_str()), -1,
                                 -1, 0);
    };
    for (const auto& o : spec.organizations) add("O", o);
    if (!spec.common_name.empty()) add("CN", spec.common_name);
    X509* issuer_cert = issuer != nullptr ? issuer->cert_.get() : cert.get();
    X509_set_issuer_name(cert.get(), X509_get_subject_name(issuer_cert));
    // Key identifiers as Go and kubeadm write them: they let a verifier pick
    // the right one of two CAs with the same name (a CA rotation bundle).
    add_extension(issuer_cert, cert.get(), NID_subject_key_identifier, "hash");
    if (issuer != nullptr) add_extension(issuer_cert, cert.get(), NID_authority_key_identifier, "keyid:always");
    if (spec.is_ca) {
      add_extension(issuer_cert, cert.get(), NID_basic_constraints, "critical,CA:TRUE");
      add_extension(issuer_cert, cert.get(), NID_key_usage, "critical,keyCertSign,cRLSign");
    } else {
      add_extension(issuer_cert, cert.get(), NID_key_usage, "critical,digitalSignature");
    }
    if (!spec.extended_key_usage.empty()) {
      add_extension(issuer_cert, cert.get(), NID_ext_key_usage, spec.extended_key_usage);
    }
    EVP_PKEY* signing_key = issuer != nullptr ? issuer->key_.get() : key.get();
    if (X509_sign(cert.get(), signing_key, EVP_sha256()) == 0) throw std::runtime_error("cannot sign");
    return TestCertificate(std::move(key), std::move(cert));
  }

  KeyPtr key_;
  CertPtr cert_;
};

}  // namespace fedmetrics::auth::testing
