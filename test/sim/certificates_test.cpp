// The simulator's certificates: members' serving certificates verify against
// the world's CA for 127.0.0.1 and localhost, and the "wrong certificate"
// fault's do not. Also `fedmetrics serve`'s self-signed certificate, made by
// the same code.
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <memory>

#include <openssl/pem.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>
#include <unistd.h>

#include "fedmetrics/transport/certificate_authority.hpp"
#include "fedmetrics/transport/self_signed.hpp"

using fedmetrics::transport::CertificateAuthority;
namespace fs = std::filesystem;

namespace {
struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
using Cert = std::unique_ptr<X509, X509Free>;

Cert read_cert(const fs::path& path) {
  FILE* f = std::fopen(path.c_str(), "r");
  REQUIRE(f != nullptr);
  Cert c(PEM_read_X509(f, nullptr, nullptr, nullptr));
  std::fclose(f);
  REQUIRE(c);
  return c;
}

// Verifies `leaf` against `ca` as a TLS client would for host `ip`.
bool verifies(X509* leaf, X509* ca, const char* ip) {
  std::unique_ptr<X509_STORE, decltype(&X509_STORE_free)> store(X509_STORE_new(), X509_STORE_free);
  X509_STORE_add_cert(store.get(), ca);
  std::unique_ptr<X509_STORE_CTX, decltype(&X509_STORE_CTX_free)> ctx(X509_STORE_CTX_new(), X509_STORE_CTX_free);
  X509_STORE_CTX_init(ctx.get(), store.get(), leaf, nullptr);
  X509_VERIFY_PARAM_set1_ip_asc(X509_STORE_CTX_get0_param(ctx.get()), ip);
  X509_STORE_CTX_set_purpose(ctx.get(), X509_PURPOSE_SSL_SERVER);
  return X509_verify_cert(ctx.get()) == 1;
}
}  // namespace

TEST_CASE("CertificateAuthority: issues serving certificates that verify against it only", "[sim][certificates]") {
  auto dir = fs::temp_directory_path() / ("fedmetrics-sim-ca-" + std::to_string(getpid()));
  fs::remove_all(dir);
  auto ca = CertificateAuthority::load_or_create(dir.string(), "ca", "test-ca");
  CHECK(fs::exists(dir / "ca.crt"));
  CHECK(fs::exists(dir / "ca.key"));
  CHECK(ca.certificate_file() == fs::absolute(dir / "ca.crt").string());
  // A second start reuses the CA, so kubeconfigs written before stay valid.
  auto again = CertificateAuthority::load_or_create(dir.string(), "ca", "test-ca");
  CHECK(again.certificate_pem() == ca.certificate_pem());

  ca.issue_serving_certificate((dir / "m1.crt").string(), (dir / "m1.key").string(), "member1",
                               {"localhost", "member1"}, {"127.0.0.1"});
  auto rogue = CertificateAuthority::create("rogue");
  rogue.issue_serving_certificate((dir / "bad.crt").string(), (dir / "bad.key").string(), "member1", {"localhost"},
                                  {"127.0.0.1"});
  auto ca_cert = read_cert(dir / "ca.crt");
  auto leaf = read_cert(dir / "m1.crt");
  auto bad = read_cert(dir / "bad.crt");
  CHECK(verifies(leaf.get(), ca_cert.get(), "127.0.0.1"));
  CHECK_FALSE(verifies(leaf.get(), ca_cert.get(), "10.0.0.1"));  // the SAN is loopback only
  CHECK_FALSE(verifies(bad.get(), ca_cert.get(), "127.0.0.1"));
  CHECK(X509_check_host(leaf.get(), "localhost", 0, 0, nullptr) == 1);
  CHECK((fs::status(dir / "m1.key").permissions() & fs::perms::others_read) == fs::perms::none);
  fs::remove_all(dir);
}

TEST_CASE("Self-signed serving certificate: trusted as its own root, reused", "[sim][certificates]") {
  auto dir = fs::temp_directory_path() / ("fedmetrics-self-signed-" + std::to_string(getpid()));
  fs::remove_all(dir);
  auto paths =
      fedmetrics::transport::ensure_self_signed_certificate((dir / "certs").string(), {"localhost"}, {"127.0.0.1"});
  CHECK(paths.generated);
  CHECK(paths.cert_file == (dir / "certs" / "apiserver.crt").string());
  CHECK(paths.key_file == (dir / "certs" / "apiserver.key").string());
  auto cert = read_cert(paths.cert_file);
  CHECK(verifies(cert.get(), cert.get(), "127.0.0.1"));  // clients pin the file itself (--cacert, caBundle)
  CHECK_FALSE(verifies(cert.get(), cert.get(), "10.0.0.1"));
  CHECK(X509_check_host(cert.get(), "localhost", 0, 0, nullptr) == 1);
  CHECK((fs::status(paths.key_file).permissions() & fs::perms::others_read) == fs::perms::none);

  auto again =
      fedmetrics::transport::ensure_self_signed_certificate((dir / "certs").string(), {"localhost"}, {"127.0.0.1"});
  CHECK_FALSE(again.generated);
  CHECK(X509_cmp(read_cert(again.cert_file).get(), cert.get()) == 0);
  fs::remove_all(dir);
}
