// The request-header (front proxy) and x509 authenticators against apiserver's
// headerrequest and x509 packages, and the extension-apiserver-authentication
// ConfigMap as a delegating apiserver reads it.
#include <chrono>
#include <string>

#include <catch2/catch.hpp>

#include "auth/test_certificates.hpp"
#include "fedmetrics/auth/authenticators.hpp"

using namespace fedmetrics::auth;
using fedmetrics::auth::testing::CertSpec;
using fedmetrics::auth::testing::TestCertificate;
using Kind = AuthenticationResult::Kind;

namespace {

struct FrontProxy {
  TestCertificate ca = TestCertificate::authority("front-proxy-ca");
  std::string client_pem = ca.issue(CertSpec{"front-proxy-client"}).pem();
  RequestHeaderConfig config = [this] {
    RequestHeaderConfig c;
    c.client_ca_pem = ca.pem();
    c.allowed_names = {"front-proxy-client"};
    return c;
  }();
  ClientCertificateVerifier verifier = *ClientCertificateVerifier::from_pem(config.client_ca_pem);

  AuthenticationResult authenticate(const Headers& headers, const std::string& chain) const {
    return authenticate_request_header(config, verifier, chain, headers, std::chrono::system_clock::now());
  }
  AuthenticationResult authenticate(const Headers& headers) const { return authenticate(headers, client_pem); }
};

}  // namespace

TEST_CASE("Auth: request-header trusts the headers of an allowed front-proxy certificate", "[auth][requestheader]") {
  FrontProxy proxy;
  auto result = proxy.authenticate({{"X-Remote-User", "system:serviceaccount:kube-system:horizontal-pod-autoscaler"},
                                    {"X-Remote-Uid", "u-1"},
                                    {"X-Remote-Group", "system:serviceaccounts"},
                                    {"Accept", "application/json"},
                                    {"X-Remote-Group", "system:serviceaccounts:kube-system"}});
  REQUIRE(result.kind == Kind::Authenticated);
  CHECK(result.user == UserInfo{"system:serviceaccount:kube-system:horizontal-pod-autoscaler",
                                "u-1",
                                {"system:serviceaccounts", "system:serviceaccounts:kube-system"},
                                {}});
}

TEST_CASE("Auth: request-header falls through without a certificate or a user", "[auth][requestheader]") {
  FrontProxy proxy;
  CHECK(proxy.authenticate({{"X-Remote-User", "mallory"}}, "").kind == Kind::NotApplicable);
  // The aggregator's probes carry the certificate but no user: not ours to answer.
  CHECK(proxy.authenticate({{"X-Remote-Group", "system:masters"}}).kind == Kind::NotApplicable);
  // http.Header.Get reads the first line only: an empty first X-Remote-User is no user.
  CHECK(proxy.authenticate({{"X-Remote-User", ""}, {"X-Remote-User", "late"}}).kind == Kind::NotApplicable);
}

TEST_CASE("Auth: request-header rejects certificates from another CA or with another CN", "[auth][requestheader]") {
  FrontProxy proxy;
  const Headers headers{{"X-Remote-User", "mallory"}, {"X-Remote-Group", "system:masters"}};

  const auto stranger = TestCertificate::authority("front-proxy-ca").issue(CertSpec{"front-proxy-client"});
  auto result = proxy.authenticate(headers, stranger.pem());
  CHECK(result.kind == Kind::Rejected);
  CHECK(result.error == "x509: certificate signed by unknown authority");

  const auto other_cn = proxy.ca.issue(CertSpec{"kubelet"}).pem();
  result = proxy.authenticate(headers, other_cn);
  CHECK(result.kind == Kind::Rejected);
  CHECK(result.error == "x509: subject with cn=kubelet is not in the allowed list");
  CHECK(result.user.name.empty());

  const auto expired = proxy.ca.issue(CertSpec{"front-proxy-client", {}, "clientAuth", false, -7200, -60}).pem();
  CHECK(proxy.authenticate(headers, expired).kind == Kind::Rejected);
  const auto server_cert = proxy.ca.issue(CertSpec{"front-proxy-client", {}, "serverAuth"}).pem();
  CHECK(proxy.authenticate(headers, server_cert).error == "x509: certificate specifies an incompatible key usage");

  // Empty allowed names: any certificate from that CA.
  proxy.config.allowed_names.clear();
  result = proxy.authenticate(headers, other_cn);
  REQUIRE(result.kind == Kind::Authenticated);
  CHECK(result.user.name == "mallory");
}

TEST_CASE("Auth: request-header groups are one per line, never comma-split", "[auth][requestheader]") {
  FrontProxy proxy;
  proxy.config.group_headers = {"X-Remote-Group", "X-Other-Group"};
  auto result = proxy.authenticate({{"x-other-group", "z"},
                                    {"X-Remote-User", "jane"},
                                    {"X-Remote-Group", "a,b"},
                                    {"X-Remote-Group", ""},
                                    {"x-remote-group", "c"}});
  REQUIRE(result.ok());
  // By configured header, then in arrival order; empty lines dropped.
  CHECK(result.user.groups == std::vector<std::string>{"a,b", "c", "z"});
}

TEST_CASE("Auth: request-header names are case-insensitive and the first configured user header wins",
          "[auth][requestheader]") {
  FrontProxy proxy;
  proxy.config.username_headers = {"X-Remote-User", "X-Fallback-User"};
  auto result = proxy.authenticate({{"x-fallback-user", "second"}, {"X-REMOTE-USER", "first"}, {"x-remote-uid", "7"}});
  REQUIRE(result.ok());
  CHECK(result.user.name == "first");
  CHECK(result.user.uid == "7");
  result = proxy.authenticate({{"X-Fallback-User", "second"}});
  REQUIRE(result.ok());
  CHECK(result.user.name == "second");
  CHECK(result.user.uid.empty());
}

TEST_CASE("Auth: request-header extras are lowercased, unescaped and keep every line", "[auth][requestheader]") {
  FrontProxy proxy;
  auto result = proxy.authenticate({{"X-Remote-User", "jane"},
                                    {"X-Remote-Extra-Authentication.Kubernetes.Io%2FPod-Name", "hpa-0"},
                                    {"x-remote-extra-scopes", "view"},
                                    {"X-REMOTE-EXTRA-Scopes", "edit"},
                                    {"X-Remote-Extra-Empty", ""},
                                    {"X-Remote-Extra-Bad%zz", "kept"}});
  REQUIRE(result.ok());
  CHECK(result.user.extra == std::map<std::string, std::vector<std::string>>{
                                 {"authentication.kubernetes.io/pod-name", {"hpa-0"}},
                                 {"scopes", {"view", "edit"}},
                                 {"empty", {""}},
                                 {"bad%zz", {"kept"}},  // url.PathUnescape fails: the raw key stays
                             });
}

TEST_CASE("Auth: x509 client certificates give user CN and groups O", "[auth][x509]") {
  const auto ca = TestCertificate::authority("kubernetes");
  const auto verifier = *ClientCertificateVerifier::from_pem(ca.pem());
  const auto now = std::chrono::system_clock::now();
  auto result = authenticate_client_certificate(verifier, ca.issue(CertSpec{"jane", {"devs", "ops"}}).pem(), now);
  REQUIRE(result.ok());
  CHECK(result.user.name == "jane");
  CHECK(result.user.groups == std::vector<std::string>{"devs", "ops"});
  REQUIRE(result.user.extra.count("authentication.kubernetes.io/credential-id") == 1);
  CHECK(result.user.extra.at("authentication.kubernetes.io/credential-id").at(0).rfind("X509SHA256=", 0) == 0);

  CHECK(authenticate_client_certificate(verifier, "", now).kind == Kind::NotApplicable);
  CHECK(authenticate_client_certificate(verifier, ca.issue(CertSpec{""}).pem(), now).kind == Kind::NotApplicable);
  const auto stranger = TestCertificate::authority("kubernetes").issue(CertSpec{"jane"});
  result = authenticate_client_certificate(verifier, stranger.pem(), now);
  CHECK(result.kind == Kind::Rejected);
  CHECK(result.error == "verifying certificate failed: x509: certificate signed by unknown authority");
}

TEST_CASE("Auth: every authenticated user gets system:authenticated, once", "[auth]") {
  CHECK(with_authenticated_group(UserInfo{"jane", "", {"devs"}, {}}).groups ==
        std::vector<std::string>{"devs", "system:authenticated"});
  CHECK(with_authenticated_group(UserInfo{"system:kube-aggregator", "", {}, {}}).groups ==
        std::vector<std::string>{"system:authenticated"});
  CHECK(with_authenticated_group(UserInfo{"jane", "", {"system:authenticated", "x"}, {}}).groups ==
        std::vector<std::string>{"system:authenticated", "x"});
  // AuthenticatedGroupAdder leaves the anonymous user and unauthenticated groups alone.
  CHECK(with_authenticated_group(anonymous_user()) == anonymous_user());
  CHECK(with_authenticated_group(UserInfo{"x", "", {"system:unauthenticated"}, {}}).groups ==
        std::vector<std::string>{"system:unauthenticated"});
}

TEST_CASE("Auth: the extension-apiserver-authentication ConfigMap", "[auth][configmap]") {
  std::map<std::string, std::string> data{
      {"client-ca-file", "CLIENT CA"},
      {"requestheader-client-ca-file", "PROXY CA"},
      {"requestheader-allowed-names", "[\"front-proxy-client\",\"aggregator\"]"},
      {"requestheader-username-headers", "[\"X-Remote-User\"]"},
      {"requestheader-uid-headers", "[\"X-Remote-Uid\"]"},
      {"requestheader-group-headers", "[\"X-Remote-Group\"]"},
      {"requestheader-extra-headers-prefix", "[\"X-Remote-Extra-\"]"},
  };
  auto parsed = parse_extension_apiserver_authentication(data);
  REQUIRE(parsed);
  CHECK(parsed->client_ca_pem == "CLIENT CA");
  REQUIRE(parsed->request_header);
  const auto& rh = *parsed->request_header;
  CHECK(rh.client_ca_pem == "PROXY CA");
  CHECK(rh.allowed_names == std::vector<std::string>{"front-proxy-client", "aggregator"});
  CHECK(rh.username_headers == std::vector<std::string>{"X-Remote-User"});
  CHECK(rh.uid_headers == std::vector<std::string>{"X-Remote-Uid"});
  CHECK(rh.group_headers == std::vector<std::string>{"X-Remote-Group"});
  CHECK(rh.extra_header_prefixes == std::vector<std::string>{"X-Remote-Extra-"});

  SECTION("older clusters have no uid headers; [] and null allow any name") {
    data.erase("requestheader-uid-headers");
    for (const char* any : {"[]", "null", ""}) {
      data["requestheader-allowed-names"] = any;
      parsed = parse_extension_apiserver_authentication(data);
      REQUIRE(parsed);
      CHECK(parsed->request_header->uid_headers.empty());
      CHECK(parsed->request_header->allowed_names.empty());
    }
  }
  SECTION("without the requestheader CA there is no request-header authenticator") {
    data.erase("requestheader-client-ca-file");
    parsed = parse_extension_apiserver_authentication(data);
    REQUIRE(parsed);
    CHECK_FALSE(parsed->request_header);
    CHECK(parsed->client_ca_pem == "CLIENT CA");
  }
  SECTION("values that are not JSON arrays of strings are errors naming the key") {
    data["requestheader-group-headers"] = "[\"X-Remote-Group\"";
    CHECK(parse_extension_apiserver_authentication(data).error().message ==
          "requestheader-group-headers: malformed JSON");
    data["requestheader-group-headers"] = "\"X-Remote-Group\"";
    CHECK(parse_extension_apiserver_authentication(data).error().message ==
          "requestheader-group-headers: expected a JSON array of strings, got string");
    data["requestheader-group-headers"] = "[\"X-Remote-Group\", 7]";
    CHECK(parse_extension_apiserver_authentication(data).error().message ==
          "requestheader-group-headers: expected a JSON array of strings, got an element of type number");
  }
}
