// Client-certificate verification against Go's x509.Verify behaviour with
// KeyUsages = [ClientAuth]: unknown CA, validity, extendedKeyUsage,
// intermediates sent by the client, CA bundles with several certificates.
#include <chrono>
#include <string>

#include <catch2/catch.hpp>

#include "auth/test_certificates.hpp"
#include "fedmetrics/auth/client_certificate_verifier.hpp"

using namespace fedmetrics::auth;
using fedmetrics::auth::testing::CertSpec;
using fedmetrics::auth::testing::TestCertificate;
using namespace std::chrono_literals;

namespace {

ClientCertificateVerifier verifier_for(const std::string& bundle) {
  auto v = ClientCertificateVerifier::from_pem(bundle);
  REQUIRE(v);
  return *v;
}

std::string error_of(const fedmetrics::k8s::Expected<CertificateIdentity>& result) {
  REQUIRE_FALSE(result);
  return result.error().message;
}

}  // namespace

TEST_CASE("Auth: a CA bundle needs at least one certificate that parses", "[auth][x509]") {
  CHECK(ClientCertificateVerifier::from_pem("").error().message == "CA bundle: no certificate found");
  CHECK(ClientCertificateVerifier::from_pem("not PEM at all").error().message == "CA bundle: no certificate found");
  const std::string good = TestCertificate::authority("ca").pem();
  const std::string broken = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n";
  CHECK(ClientCertificateVerifier::from_pem(good + broken).error().message ==
        "CA bundle: certificate 1 does not parse");
  // Blocks of other types are skipped, as Go's cert.ParseCertsPEM does.
  const std::string key_block = "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n";
  CHECK(ClientCertificateVerifier::from_pem(key_block + good));
}

TEST_CASE("Auth: a client certificate from the CA yields its CN and every O", "[auth][x509]") {
  const auto ca = TestCertificate::authority("front-proxy-ca");
  const auto leaf = ca.issue(CertSpec{"jane", {"devs", "system:masters"}});
  auto id = verifier_for(ca.pem()).verify(leaf.pem(), std::chrono::system_clock::now());
  REQUIRE(id);
  CHECK(id->common_name == "jane");
  CHECK(id->organizations == std::vector<std::string>{"devs", "system:masters"});
  CHECK(id->sha256_hex.size() == 64);
  CHECK(id->sha256_hex.find_first_not_of("0123456789abcdef") == std::string::npos);
}

TEST_CASE("Auth: a certificate from another CA is signed by an unknown authority", "[auth][x509]") {
  const auto ca = TestCertificate::authority("front-proxy-ca");
  const auto other = TestCertificate::authority("front-proxy-ca");  // same name, other key
  const auto leaf = other.issue(CertSpec{"front-proxy-client"});
  const auto now = std::chrono::system_clock::now();
  CHECK(error_of(verifier_for(ca.pem()).verify(leaf.pem(), now)) == "x509: certificate signed by unknown authority");
  // A self-signed client certificate is not trusted either.
  CHECK(error_of(verifier_for(ca.pem()).verify(other.pem(), now)) == "x509: certificate signed by unknown authority");
  // A bundle of both CAs trusts either.
  CHECK(verifier_for(ca.pem() + other.pem()).verify(leaf.pem(), now));
}

TEST_CASE("Auth: validity is checked at the time passed in", "[auth][x509]") {
  const auto ca = TestCertificate::authority("ca");
  const auto verifier = verifier_for(ca.pem());
  const auto now = std::chrono::system_clock::now();
  const auto expired = ca.issue(CertSpec{"old", {}, "clientAuth", false, -7200, -3600});
  CHECK(error_of(verifier.verify(expired.pem(), now)) ==
        "x509: certificate has expired or is not yet valid: certificate has expired");
  const auto future = ca.issue(CertSpec{"new", {}, "clientAuth", false, 3600, 7200});
  CHECK(error_of(verifier.verify(future.pem(), now)) ==
        "x509: certificate has expired or is not yet valid: certificate is not yet valid");
  const auto current = ca.issue(CertSpec{"current"});  // valid one day from an hour ago
  CHECK(verifier.verify(current.pem(), now));
  CHECK_FALSE(verifier.verify(current.pem(), now + 48h));
  CHECK_FALSE(verifier.verify(current.pem(), now - 2h));
}

TEST_CASE("Auth: the leaf must be usable for client authentication", "[auth][x509]") {
  const auto ca = TestCertificate::authority("ca");
  const auto verifier = verifier_for(ca.pem());
  const auto now = std::chrono::system_clock::now();
  CHECK(error_of(verifier.verify(ca.issue(CertSpec{"server", {}, "serverAuth"}).pem(), now)) ==
        "x509: certificate specifies an incompatible key usage");
  CHECK(verifier.verify(ca.issue(CertSpec{"both", {}, "serverAuth,clientAuth"}).pem(), now));
  // No extendedKeyUsage at all means any usage, in Go as in OpenSSL.
  CHECK(verifier.verify(ca.issue(CertSpec{"any", {}, ""}).pem(), now));
}

TEST_CASE("Auth: intermediates come from the client, anchors from the bundle", "[auth][x509]") {
  const auto root = TestCertificate::authority("root");
  const auto intermediate = root.issue(CertSpec{"intermediate", {}, "", true});
  const auto leaf = intermediate.issue(CertSpec{"front-proxy-client"});
  const auto now = std::chrono::system_clock::now();
  auto id = verifier_for(root.pem()).verify(leaf.pem() + intermediate.pem(), now);
  REQUIRE(id);
  CHECK(id->common_name == "front-proxy-client");  // the leaf's, not the intermediate's
  CHECK(error_of(verifier_for(root.pem()).verify(leaf.pem(), now)) == "x509: certificate signed by unknown authority");
  // Go trusts any certificate of the pool as an anchor, not only self-signed ones.
  CHECK(verifier_for(intermediate.pem()).verify(leaf.pem(), now));
  // An intermediate whose extendedKeyUsage excludes clientAuth breaks the chain, as in Go.
  const auto server_only = root.issue(CertSpec{"server-intermediate", {}, "serverAuth", true});
  CHECK(error_of(verifier_for(root.pem()).verify(server_only.issue(CertSpec{"x"}).pem() + server_only.pem(), now)) ==
        "x509: certificate specifies an incompatible key usage");
}

TEST_CASE("Auth: an unreadable peer chain is an error, not a throw", "[auth][x509]") {
  const auto verifier = verifier_for(TestCertificate::authority("ca").pem());
  const auto now = std::chrono::system_clock::now();
  CHECK(error_of(verifier.verify("", now)) == "client certificate chain: no certificate found");
  CHECK(error_of(verifier.verify("-----BEGIN CERTIFICATE-----\n!!\n-----END CERTIFICATE-----\n", now)) ==
        "client certificate chain: certificate 0 does not parse");
}
