#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "fedmetrics/kube/kubeconfig.hpp"

using namespace fedmetrics::kube;

namespace {
// base64 of "PEM-CA"
constexpr const char* kMembersConfig = R"(apiVersion: v1
kind: Config
clusters:
- name: member1
  cluster:
    server: https://127.0.0.1:9443
    certificate-authority-data: UEVNLUNB
- name: member2
  cluster:
    server: https://127.0.0.1:9444
    insecure-skip-tls-verify: true
    tls-server-name: member2.local
    disable-compression: true
contexts:
- name: member1
  context: {cluster: member1, user: member1}
- name: member2
  context: {cluster: member2, user: member2}
current-context: member1
users:
- name: member1
  user: {token: abc}
- name: member2
  user: {tokenFile: tokens/member2}
)";
}  // namespace

TEST_CASE("Kubeconfig: Karmada members.config, one member per context", "[clusterclient][kubeconfig]") {
  auto members = parse_kubeconfig(kMembersConfig, "/etc/karmada");
  REQUIRE(members.ok());
  REQUIRE(members->size() == 2);
  const auto& m1 = (*members)[0];
  CHECK(m1.name == "member1");
  CHECK(m1.server == "https://127.0.0.1:9443");
  CHECK(m1.ca_pem == "PEM-CA");
  CHECK(m1.token == "abc");
  CHECK_FALSE(m1.insecure_skip_tls_verify);
  CHECK_FALSE(m1.disable_compression);  // gzip asked for unless the cluster says otherwise
  const auto& m2 = (*members)[1];
  CHECK(m2.insecure_skip_tls_verify);
  CHECK(m2.disable_compression);
  CHECK(m2.tls_server_name == "member2.local");
  CHECK(m2.token_file == "/etc/karmada/tokens/member2");  // relative to the kubeconfig's folder
}

TEST_CASE("Kubeconfig: --member-contexts restricts, and names unknown contexts", "[clusterclient][kubeconfig]") {
  auto only = parse_kubeconfig(kMembersConfig, "/", {"member2"});
  REQUIRE(only.ok());
  REQUIRE(only->size() == 1);
  CHECK(only->front().name == "member2");
  auto unknown = parse_kubeconfig(kMembersConfig, "/", {"member9"});
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.error().message == "--member-contexts: context \"member9\" is not in the kubeconfig");
}

TEST_CASE("Kubeconfig: file references are read relative to the file", "[clusterclient][kubeconfig]") {
  auto dir = std::filesystem::temp_directory_path() / "fedmetrics-kubeconfig-test";
  std::filesystem::create_directories(dir / "pki");
  std::ofstream(dir / "pki" / "ca.crt") << "CA FROM FILE";
  std::ofstream(dir / "pki" / "client.crt") << "CLIENT CERT";
  std::ofstream(dir / "pki" / "client.key") << "CLIENT KEY";
  std::ofstream(dir / "config") << R"(clusters:
- name: c
  cluster: {server: "https://10.0.0.1:6443", certificate-authority: pki/ca.crt}
users:
- name: u
  user: {client-certificate: pki/client.crt, client-key: pki/client.key}
contexts:
- name: east
  context: {cluster: c, user: u}
)";
  auto members = load_kubeconfig((dir / "config").string());
  std::filesystem::remove_all(dir);
  REQUIRE(members.ok());
  CHECK(members->front().ca_pem == "CA FROM FILE");
  CHECK(members->front().client_cert_pem == "CLIENT CERT");
  CHECK(members->front().client_key_pem == "CLIENT KEY");
}

TEST_CASE("Kubeconfig: errors name the file, context and field", "[clusterclient][kubeconfig]") {
  struct Row {
    const char* text;
    const char* error;
  };
  const Row rows[] = {
      {"clusters: [", "not valid YAML"},
      {"- a\n- b\n", "not a kubeconfig"},
      {"clusters: []\n", "contexts: required list is missing"},
      {"contexts:\n- context: {cluster: c}\n", "contexts[0].name: required"},
      {"contexts:\n- name: x\n  context: {cluster: nope}\n",
       "context \"x\": cluster \"nope\" is not defined in clusters"},
      {"clusters:\n- name: c\n  cluster: {}\ncontexts:\n- name: x\n  context: {cluster: c}\n",
       "clusters[c].server: required"},
      {"clusters:\n- name: c\n  cluster: {server: https://a, certificate-authority-data: '!!!'}\ncontexts:\n- name: "
       "x\n  "
       "context: {cluster: c}\n",
       "clusters[c].certificate-authority-data: not valid base64"},
      {"clusters:\n- name: c\n  cluster: {server: https://a, certificate-authority: /nonexistent/ca.crt}\ncontexts:\n- "
       "name: x\n  context: {cluster: c}\n",
       "clusters[c].certificate-authority: cannot read /nonexistent/ca.crt"},
      {"clusters:\n- name: c\n  cluster: {server: https://a}\nusers:\n- name: u\n  user: {exec: {command: "
       "aws}}\ncontexts:\n- "
       "name: x\n  context: {cluster: c, user: u}\n",
       "users[u]: exec and auth-provider credentials are not supported"},
      {"clusters:\n- name: c\n  cluster: {server: https://a}\ncontexts:\n- name: x\n  context: {cluster: c, user: "
       "ghost}\n",
       "context \"x\": user \"ghost\" is not defined in users"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.text);
    auto parsed = parse_kubeconfig(row.text, "/");
    REQUIRE_FALSE(parsed.ok());
    CHECK_THAT(parsed.error().message, Catch::StartsWith(row.error));
  }
  auto missing = load_kubeconfig("/nonexistent/members.config");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().message == "cannot read kubeconfig /nonexistent/members.config");
}

// Found by fuzz/kubeconfig_fuzz.cpp: a clusters (or users) entry without its
// inner mapping threw YAML::InvalidNode out of parse_kubeconfig.
TEST_CASE("Kubeconfig: an entry without its cluster or user mapping is an error, not an exception",
          "[clusterclient][kubeconfig]") {
  const char* no_cluster = R"(clusters:
- name: c
  cltster: {server: "https://10.0.0.1:6443"}
contexts:
- name: east
  context: {cluster: c}
)";
  auto parsed = parse_kubeconfig(no_cluster, "/");
  REQUIRE_FALSE(parsed.ok());
  CHECK(parsed.error().message == "context \"east\": cluster \"c\" is not defined in clusters");

  const char* no_user = R"(clusters:
- name: c
  cluster: {server: "https://10.0.0.1:6443"}
users:
- name: u
contexts:
- name: east
  context: {cluster: c, user: u}
)";
  auto without_user = parse_kubeconfig(no_user, "/");
  REQUIRE(without_user.ok());
  CHECK(without_user->at(0).token.empty());

  const char* twice = R"(clusters:
- name: c
  cluster: {server: "https://first:6443"}
- name: c
  cluster: {server: "https://second:6443"}
contexts:
- name: east
  context: {cluster: c}
)";
  auto last_wins = parse_kubeconfig(twice, "/");
  REQUIRE(last_wins.ok());
  CHECK(last_wins->at(0).server == "https://second:6443");
}

// Found by fuzz/kubeconfig_fuzz.cpp: a context, cluster or user that is a
// scalar instead of a mapping threw YAML::BadSubscript out of parse_kubeconfig.
TEST_CASE("Kubeconfig: a scalar where a mapping belongs is an error, not an exception", "[clusterclient][kubeconfig]") {
  const char* scalar_context = R"(clusters:
- name: c
  cluster: {server: "https://10.0.0.1:6443"}
contexts:
- name: east
  context: "https://10.0.0.1:6443"
)";
  auto parsed = parse_kubeconfig(scalar_context, "/");
  REQUIRE_FALSE(parsed.ok());
  CHECK(parsed.error().message == "context \"east\": cluster \"\" is not defined in clusters");

  const char* scalar_cluster = R"(clusters:
- name: c
  cluster: https://10.0.0.1:6443
contexts:
- name: east
  context: {cluster: c}
)";
  auto cluster = parse_kubeconfig(scalar_cluster, "/");
  REQUIRE_FALSE(cluster.ok());
  CHECK(cluster.error().message == "clusters[c].server: required");
}
