#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "fedmetrics/kube/kubectl_config.hpp"

using namespace fedmetrics::kube;

TEST_CASE("kubectl config: the context's namespace, kubectl's default -n", "[clusterclient][kubeconfig]") {
  auto dir = std::filesystem::temp_directory_path() / "fedmetrics-kubectl-config-test";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "config") << R"(current-context: without
clusters:
- name: c
  cluster: {server: "https://10.0.0.1:6443"}
contexts:
- name: with
  context: {cluster: c, namespace: team-a}
- name: without
  context: {cluster: c}
)";
  std::vector<std::string> paths{(dir / "config").string()};
  auto with = load_kubectl_context(paths, "with");
  auto without = load_kubectl_context(paths);
  std::ofstream(dir / "config") << "clusters: []\ncontexts: []\n";
  auto unset = load_kubectl_context(paths);
  std::filesystem::remove_all(dir);
  REQUIRE(with.ok());
  CHECK(with->endpoint.name == "with");
  CHECK(with->endpoint.server == "https://10.0.0.1:6443");
  CHECK(with->namespace_name == "team-a");
  REQUIRE(without.ok());
  CHECK(without->endpoint.name == "without");
  CHECK(without->namespace_name.empty());
  REQUIRE_FALSE(unset.ok());
  CHECK(unset.error().message == "current-context is not set");
}

TEST_CASE("kubectl config: a KUBECONFIG list is merged as client-go merges it", "[clusterclient][kubeconfig]") {
  CHECK(split_kubeconfig_path_list("/a:/b::/a:") == std::vector<std::string>{"/a", "/b"});
  CHECK(split_kubeconfig_path_list("").empty());

  auto dir = std::filesystem::temp_directory_path() / "fedmetrics-kubeconfig-merge-test";
  std::filesystem::create_directories(dir / "one");
  std::filesystem::create_directories(dir / "two");
  std::ofstream(dir / "two" / "ca.crt") << "CA OF TWO";
  // The first file sets current-context and defines "shared" first; the
  // second defines "shared" and c1 again (ignored) and the cluster and user
  // that "far", of the first file, uses: entries combine across files.
  std::ofstream(dir / "one" / "config") << R"(current-context: far
contexts:
- name: shared
  context: {cluster: c1, user: u1, namespace: from-one}
- name: far
  context: {cluster: c2, user: u2, namespace: ns-far}
clusters:
- name: c1
  cluster: {server: "https://one:6443"}
users:
- name: u1
  user: {token: one}
)";
  std::ofstream(dir / "two" / "config") << R"(current-context: shared
contexts:
- name: shared
  context: {cluster: c2, user: u2, namespace: from-two}
clusters:
- name: c1
  cluster: {server: "https://ignored:6443"}
- name: c2
  cluster: {server: "https://two:6443", certificate-authority: ca.crt}
users:
- name: u2
  user: {token: two}
)";
  std::vector<std::string> paths{(dir / "missing").string(), (dir / "one" / "config").string(),
                                 (dir / "two" / "config").string()};
  auto current = load_kubectl_context(paths);
  auto shared = load_kubectl_context(paths, "shared");
  auto unknown = load_kubectl_context(paths, "nope");
  auto none = load_kubectl_context({(dir / "missing").string()});
  std::filesystem::remove_all(dir);

  REQUIRE(current.ok());  // the first file's current-context, its cluster and user from the second file
  CHECK(current->endpoint.name == "far");
  CHECK(current->endpoint.server == "https://two:6443");
  CHECK(current->endpoint.ca_pem == "CA OF TWO");  // resolved against the second file's folder
  CHECK(current->endpoint.token == "two");
  CHECK(current->namespace_name == "ns-far");
  REQUIRE(shared.ok());  // the first definition of a name wins, for contexts and clusters
  CHECK(shared->endpoint.server == "https://one:6443");
  CHECK(shared->namespace_name == "from-one");
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.error().message == "context \"nope\" does not exist");
  CHECK_FALSE(none.ok());
}
