#include "fedmetrics/auth/client_certificate_verifier.hpp"

#include <array>
#include <memory>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

namespace fedmetrics::auth {
namespace {

template <class T, void (*Free)(T*)>
struct Deleter {
  void operator()(T* p) const { Free(p); }
};
using BioPtr = std::unique_ptr<BIO, Deleter<BIO, BIO_free_all>>;
using CertPtr = std::unique_ptr<X509, Deleter<X509, X509_free>>;
using StorePtr = std::unique_ptr<X509_STORE, Deleter<X509_STORE, X509_STORE_free>>;
using StoreCtxPtr = std::unique_ptr<X509_STORE_CTX, Deleter<X509_STORE_CTX, X509_STORE_CTX_free>>;
void free_cert_stack(STACK_OF(X509) * s) { sk_X509_pop_free(s, X509_free); }
using CertStackPtr = std::unique_ptr<STACK_OF(X509), Deleter<STACK_OF(X509), free_cert_stack>>;

// OpenSSL's error queue is per thread and outlives the call: a failure left in
// it would be reported by the next, unrelated TLS call on this thread.
struct ClearErrorsOnExit {
  ~ClearErrorsOnExit() { ERR_clear_error(); }
};

// Every CERTIFICATE block of `pem`, in order. PEM_read_bio_X509 skips blocks
// of other types; it ends with PEM_R_NO_START_LINE when none is left, any
// other failure is a certificate that does not parse.
k8s::Expected<std::vector<CertPtr>> read_certificates(std::string_view pem) {
  ClearErrorsOnExit clear;
  std::vector<CertPtr> certs;
  if (pem.empty()) return certs;
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  if (!bio) return k8s::Error{"out of memory"};
  for (;;) {
    CertPtr cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
    if (cert) {
      certs.push_back(std::move(cert));
      continue;
    }
    const unsigned long err = ERR_peek_last_error();
    if (ERR_GET_LIB(err) == ERR_LIB_PEM && ERR_GET_REASON(err) == PEM_R_NO_START_LINE) return certs;
    return k8s::Error{"certificate " + std::to_string(certs.size()) + " does not parse"};
  }
}

std::string utf8(const ASN1_STRING* in) {
  unsigned char* out = nullptr;
  const int n = ASN1_STRING_to_UTF8(&out, in);
  if (n < 0) return {};
  std::string s(reinterpret_cast<const char*>(out), static_cast<std::size_t>(n));
  OPENSSL_free(out);
  return s;
}

CertificateIdentity identity_of(X509* leaf) {
  CertificateIdentity id;
  const X509_NAME* subject = X509_get_subject_name(leaf);
  for (int i = 0; i < X509_NAME_entry_count(subject); ++i) {
    const X509_NAME_ENTRY* entry = X509_NAME_get_entry(subject, i);
    const int nid = OBJ_obj2nid(X509_NAME_ENTRY_get_object(entry));
    if (nid == NID_commonName) id.common_name = utf8(X509_NAME_ENTRY_get_data(entry));
    if (nid == NID_organizationName) id.organizations.push_back(utf8(X509_NAME_ENTRY_get_data(entry)));
  }
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int length = 0;
  if (X509_digest(leaf, EVP_sha256(), digest.data(), &length) == 1) {
    static constexpr char kHex[] = "0123456789abcdef";
    for (unsigned int i = 0; i < length; ++i) {
      id.sha256_hex += kHex[digest[i] >> 4];
      id.sha256_hex += kHex[digest[i] & 0xF];
    }
  }
  return id;
}

// Go's wording for the failures a client can cause; OpenSSL's otherwise.
std::string go_error_text(int error) {
  switch (error) {
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
    case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
    case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
    case X509_V_ERR_CERT_SIGNATURE_FAILURE: return "x509: certificate signed by unknown authority";
    case X509_V_ERR_CERT_HAS_EXPIRED:
    case X509_V_ERR_CERT_NOT_YET_VALID:
      return std::string("x509: certificate has expired or is not yet valid: ") + X509_verify_cert_error_string(error);
    case X509_V_ERR_INVALID_PURPOSE: return "x509: certificate specifies an incompatible key usage";
    default: return std::string("x509: ") + X509_verify_cert_error_string(error);
  }
}

}  // namespace

struct ClientCertificateVerifier::Store {
  StorePtr store;
};

k8s::Expected<ClientCertificateVerifier> ClientCertificateVerifier::from_pem(std::string_view ca_bundle_pem) {
  auto certs = read_certificates(ca_bundle_pem);
  if (!certs) return certs.error().at("CA bundle");
  if (certs->empty()) return k8s::Error{"CA bundle: no certificate found"};
  auto store = std::make_shared<Store>();
  store->store.reset(X509_STORE_new());
  if (!store->store) return k8s::Error{"out of memory"};
  ClearErrorsOnExit clear;
  for (const auto& cert : *certs) {
    // The same certificate twice is harmless (and common in rotated bundles).
    X509_STORE_add_cert(store->store.get(), cert.get());
  }
  // Go trusts every certificate of the pool as an anchor, self-signed or not.
  X509_STORE_set_flags(store->store.get(), X509_V_FLAG_PARTIAL_CHAIN);
  return ClientCertificateVerifier(std::move(store));
}

k8s::Expected<CertificateIdentity> ClientCertificateVerifier::verify(std::string_view peer_chain_pem,
                                                                     std::chrono::system_clock::time_point now) const {
  auto chain = read_certificates(peer_chain_pem);
  if (!chain) return chain.error().at("client certificate chain");
  if (chain->empty()) return k8s::Error{"client certificate chain: no certificate found"};
  CertStackPtr intermediates(sk_X509_new_null());
  StoreCtxPtr ctx(X509_STORE_CTX_new());
  if (!intermediates || !ctx) return k8s::Error{"out of memory"};
  for (std::size_t i = 1; i < chain->size(); ++i) {
    // The stack takes its own reference.
    if (X509_up_ref((*chain)[i].get()) != 1 || sk_X509_push(intermediates.get(), (*chain)[i].get()) <= 0) {
      return k8s::Error{"out of memory"};
    }
  }
  ClearErrorsOnExit clear;
  X509* leaf = chain->front().get();
  if (X509_STORE_CTX_init(ctx.get(), store_->store.get(), leaf, intermediates.get()) != 1) {
    return k8s::Error{"out of memory"};
  }
  // The SSL-client purpose checks extendedKeyUsage clientAuth on the leaf and
  // on the intermediates (when they carry an EKU), as Go's chain-wide check.
  X509_STORE_CTX_set_purpose(ctx.get(), X509_PURPOSE_SSL_CLIENT);
  X509_VERIFY_PARAM_set_time(X509_STORE_CTX_get0_param(ctx.get()), std::chrono::system_clock::to_time_t(now));
  if (X509_verify_cert(ctx.get()) != 1) return k8s::Error{go_error_text(X509_STORE_CTX_get_error(ctx.get()))};
  return identity_of(leaf);
}

}  // namespace fedmetrics::auth
