#include "fedmetrics/kube/kubeconfig.hpp"

#include "fedmetrics/k8s/base64.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include <openssl/evp.h>
#include <yaml-cpp/yaml.h>

#include "kube/yaml_fields.hpp"

namespace fedmetrics::kube {

using k8s::Error;
using k8s::Expected;

namespace {

using yaml_fields::read_file;
using yaml_fields::resolve;
using yaml_fields::scalar;

// Reads `<field>-data` (base64) or `<field>` (a file path) into `out`.
std::optional<Error> read_pem(const YAML::Node& node, const std::string& field, const std::string& base_dir,
                              const std::string& where, std::string& out) {
  std::string data = scalar(node, (field + "-data").c_str());
  if (!data.empty()) {
    auto decoded = k8s::base64_decode(data);
    if (!decoded) return Error{where + "." + field + "-data: not valid base64"};
    out = std::move(*decoded);
    return std::nullopt;
  }
  std::string path = scalar(node, field.c_str());
  if (path.empty()) return std::nullopt;
  if (!read_file(resolve(path, base_dir), out))
    return Error{where + "." + field + ": cannot read " + resolve(path, base_dir)};
  return std::nullopt;
}

std::map<std::string, YAML::Node> named(const YAML::Node& list, const char* inner) {
  std::map<std::string, YAML::Node> out;
  if (!list || !list.IsSequence()) return out;
  for (const auto& item : list) {
    if (!item.IsMap()) continue;
    std::string name = scalar(item, "name");
    // Copy-constructed, never assigned: assigning a key the item lacks (an
    // invalid node) throws YAML::InvalidNode, and assigning over an earlier
    // entry of the same name would rebind that entry's node in the document.
    // An absent key stays an invalid node, which reads as "not defined". The
    // last entry of a name wins.
    if (!name.empty()) {
      out.erase(name);
      out.emplace(name, item[inner]);
    }
  }
  return out;
}

}  // namespace

Expected<std::vector<ClusterEndpoint>> parse_kubeconfig(const std::string& text, const std::string& base_dir,
                                                        const std::vector<std::string>& only_contexts) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return Error{"not valid YAML: " + std::string(e.what())};
  }
  if (!root.IsMap()) return Error{"not a kubeconfig: expected a mapping with clusters, users and contexts"};
  auto clusters = named(root["clusters"], "cluster");
  auto users = named(root["users"], "user");
  const YAML::Node contexts = root["contexts"];
  if (!contexts || !contexts.IsSequence()) return Error{"contexts: required list is missing"};

  std::vector<ClusterEndpoint> out;
  for (std::size_t i = 0; i < contexts.size(); ++i) {
    const YAML::Node item = contexts[i];
    std::string where = "contexts[" + std::to_string(i) + "]";
    if (!item.IsMap()) return Error{where + ": expected a mapping"};
    ClusterEndpoint e;
    e.name = scalar(item, "name");
    if (e.name.empty()) return Error{where + ".name: required"};
    if (!only_contexts.empty() && std::find(only_contexts.begin(), only_contexts.end(), e.name) == only_contexts.end())
      continue;
    const YAML::Node context = item["context"];
    std::string cluster_name = context ? scalar(context, "cluster") : "";
    std::string user_name = context ? scalar(context, "user") : "";
    auto cluster_it = clusters.find(cluster_name);
    if (cluster_it == clusters.end() || !cluster_it->second)
      return Error{"context \"" + e.name + "\": cluster \"" + cluster_name + "\" is not defined in clusters"};
    const YAML::Node& cluster = cluster_it->second;
    std::string cwhere = "clusters[" + cluster_name + "]";
    e.server = scalar(cluster, "server");
    if (e.server.empty()) return Error{cwhere + ".server: required"};
    e.insecure_skip_tls_verify = scalar(cluster, "insecure-skip-tls-verify") == "true";
    e.tls_server_name = scalar(cluster, "tls-server-name");
    e.proxy_url = scalar(cluster, "proxy-url");
    e.disable_compression = scalar(cluster, "disable-compression") == "true";
    if (auto err = read_pem(cluster, "certificate-authority", base_dir, cwhere, e.ca_pem)) return *err;

    if (!user_name.empty()) {
      auto user_it = users.find(user_name);
      if (user_it == users.end())
        return Error{"context \"" + e.name + "\": user \"" + user_name + "\" is not defined in users"};
      const YAML::Node& user = user_it->second;
      std::string uwhere = "users[" + user_name + "]";
      if (user && user.IsMap()) {
        e.token = scalar(user, "token");
        e.token_file = resolve(scalar(user, "tokenFile"), base_dir);
        if (auto err = read_pem(user, "client-certificate", base_dir, uwhere, e.client_cert_pem)) return *err;
        if (auto err = read_pem(user, "client-key", base_dir, uwhere, e.client_key_pem)) return *err;
        if (e.client_cert_pem.empty() != e.client_key_pem.empty())
          return Error{uwhere + ": client-certificate and client-key must be given together"};
        if (user["exec"] || user["auth-provider"])
          return Error{uwhere +
                       ": exec and auth-provider credentials are not supported; use a token or a client certificate"};
      }
    }
    out.push_back(std::move(e));
  }
  for (const auto& wanted : only_contexts) {
    if (std::none_of(out.begin(), out.end(), [&](const ClusterEndpoint& e) { return e.name == wanted; }))
      return Error{"--member-contexts: context \"" + wanted + "\" is not in the kubeconfig"};
  }
  return out;
}

Expected<std::vector<ClusterEndpoint>> load_kubeconfig(const std::string& path,
                                                       const std::vector<std::string>& only_contexts) {
  std::string text;
  if (!read_file(path, text)) return Error{"cannot read kubeconfig " + path};
  auto parsed = parse_kubeconfig(text, std::filesystem::path(path).parent_path().string(), only_contexts);
  if (!parsed) return Error{path + ": " + parsed.error().message};
  return parsed;
}

Expected<ClusterEndpoint> load_kubeconfig_current_context(const std::string& path) {
  std::string text;
  if (!read_file(path, text)) return Error{"cannot read kubeconfig " + path};
  std::string current;
  try {
    auto root = YAML::Load(text);
    if (root.IsMap() && root["current-context"] && root["current-context"].IsScalar())
      current = root["current-context"].as<std::string>();
  } catch (const YAML::Exception& e) {
    return Error{path + ": not valid YAML: " + e.what()};
  }
  if (current.empty()) return Error{path + ": current-context is not set"};
  auto parsed = parse_kubeconfig(text, std::filesystem::path(path).parent_path().string(), {current});
  if (!parsed) return Error{path + ": " + parsed.error().message};
  for (auto& e : *parsed)
    if (e.name == current) return std::move(e);
  return Error{path + ": context \"" + current + "\" is not defined"};
}

}  // namespace fedmetrics::kube
