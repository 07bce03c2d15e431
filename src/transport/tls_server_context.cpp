// The server's TLS material: its OpenSSL context from the options, and the
// client's certificate chain as the handler receives it.
#include <stdexcept>

#include <openssl/pem.h>

#include "tls_server_impl.hpp"

namespace fedmetrics::transport::server_detail {

int min_protocol(const std::string& v) {
  if (v == "VersionTLS12") return TLS1_2_VERSION;
  if (v == "VersionTLS13") return TLS1_3_VERSION;
  return 0;
}

ssl::context make_tls_context(const TlsServerOptions& options) {
  ssl::context ctx(ssl::context::tls_server);
  ctx.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                  ssl::context::single_dh_use);
  int min = min_protocol(options.tls_min_version);
  if (min == 0)
    throw std::runtime_error("--tls-min-version: unsupported value \"" + options.tls_min_version +
                             "\" (use VersionTLS12 or VersionTLS13)");
  SSL_CTX_set_min_proto_version(ctx.native_handle(), min);
  // No renegotiation (Go's servers refuse it too); so a write never needs a read.
  SSL_CTX_set_options(ctx.native_handle(), SSL_OP_NO_RENEGOTIATION);
  // The server's order decides, as in Go's crypto/tls (every Kubernetes API
  // server): AES-128-GCM first, then ChaCha20, then AES-256-GCM. OpenSSL
  // would otherwise follow the client, and OpenSSL clients ask for AES-256
  // first, which costs them and us a third more per byte for no gain here.
  SSL_CTX_set_options(ctx.native_handle(), SSL_OP_CIPHER_SERVER_PREFERENCE);
  SSL_CTX_set_ciphersuites(ctx.native_handle(),
                           "TLS_AES_128_GCM_SHA256:TLS_CHACHA20_POLY1305_SHA256:TLS_AES_256_GCM_SHA384");
  // Read whole records, and what follows them, in one recv() instead of a
  // header read and a body read per record.
  SSL_CTX_set_read_ahead(ctx.native_handle(), 1);
  // TLS 1.2: forward-secret AEAD suites only (Go's default secure set); TLS 1.3 suites are all modern.
  SSL_CTX_set_cipher_list(ctx.native_handle(),
                          "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
                          "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
                          "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305");
  boost::system::error_code ec;
  ctx.use_certificate_chain_file(options.cert_file, ec);
  if (ec)
    throw std::runtime_error("--tls-cert-file " + options.cert_file + ": cannot load certificate: " + ec.message());
  ctx.use_private_key_file(options.key_file, ssl::context::pem, ec);
  if (ec) throw std::runtime_error("--tls-private-key-file " + options.key_file + ": cannot load key: " + ec.message());
  if (SSL_CTX_check_private_key(ctx.native_handle()) != 1)
    throw std::runtime_error("--tls-private-key-file " + options.key_file + " does not match --tls-cert-file " +
                             options.cert_file);
  if (options.request_client_certificates) {
    // Request, accept whatever comes; no CA list is sent, so that Go clients
    // present their first certificate (crypto/tls getClientCertificate).
    SSL_CTX_set_verify(ctx.native_handle(), SSL_VERIFY_PEER, [](int, X509_STORE_CTX*) { return 1; });
    // With SSL_VERIFY_PEER, OpenSSL refuses resumed TLS 1.2 sessions unless a session id context is set.
    static const unsigned char kSessionContext[] = "fedmetrics";
    SSL_CTX_set_session_id_context(ctx.native_handle(), kSessionContext, sizeof(kSessionContext) - 1);
  }
  return ctx;
}

// The client's chain as PEM, leaf first ("" when it sent none).
std::string peer_chain_pem(SSL* ssl) {
  std::string pem;
  auto append = [&pem](X509* cert) {
    BIO* bio = BIO_new(BIO_s_mem());
    if (bio == nullptr) return;
    if (PEM_write_bio_X509(bio, cert) == 1) {
      char* data = nullptr;
      long size = BIO_get_mem_data(bio, &data);
      if (size > 0) pem.append(data, static_cast<std::size_t>(size));
    }
    BIO_free(bio);
  };
  X509* leaf = SSL_get1_peer_certificate(ssl);
  if (leaf == nullptr) return pem;
  append(leaf);
  // On the server side the peer chain does not include the leaf.
  if (STACK_OF(X509)* chain = SSL_get_peer_cert_chain(ssl); chain != nullptr)
    for (int i = 0; i < sk_X509_num(chain); ++i)
      if (X509* cert = sk_X509_value(chain, i); X509_cmp(cert, leaf) != 0) append(cert);
  X509_free(leaf);
  return pem;
}

}  // namespace fedmetrics::transport::server_detail

namespace fedmetrics::transport {

bool valid_tls_min_version(const std::string& value) { return server_detail::min_protocol(value) != 0; }

}  // namespace fedmetrics::transport
