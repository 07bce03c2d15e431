#include "fedmetrics/kube/kubectl_config.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <map>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "kube/yaml_fields.hpp"

namespace fedmetrics::kube {

using k8s::Error;
using k8s::Expected;

namespace {

using yaml_fields::read_file;
using yaml_fields::scalar;

// Makes the file references of a cluster or user entry absolute, so that
// entries from files in different directories can share one document.
void resolve_paths(YAML::Node entry, const std::string& base_dir, std::initializer_list<const char*> fields) {
  if (!entry.IsMap()) return;
  for (const char* field : fields) {
    std::string path = scalar(entry, field);
    if (!path.empty()) entry[field] = yaml_fields::resolve(path, base_dir);
  }
}

}  // namespace

std::vector<std::string> split_kubeconfig_path_list(const std::string& value) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= value.size()) {
    auto end = value.find(':', start);
    if (end == std::string::npos) end = value.size();
    std::string part = value.substr(start, end - start);
    if (!part.empty() && std::find(out.begin(), out.end(), part) == out.end()) out.push_back(std::move(part));
    start = end + 1;
  }
  return out;
}

Expected<KubectlContext> load_kubectl_context(const std::vector<std::string>& paths, const std::string& context) {
  std::string current;
  std::map<std::string, YAML::Node> contexts, clusters, users;  // whole list entries, the first definition wins
  bool any = false;
  for (const auto& path : paths) {
    std::string text;
    if (!read_file(path, text)) continue;  // client-go skips the files of the list that do not exist
    any = true;
    YAML::Node root;
    try {
      root = YAML::Load(text);
    } catch (const YAML::Exception& e) {
      return Error{"error loading config file \"" + path + "\": " + e.what()};
    }
    if (root.IsNull()) continue;  // an empty file
    if (!root.IsMap()) return Error{"error loading config file \"" + path + "\": not a kubeconfig"};
    if (current.empty()) current = scalar(root, "current-context");
    const std::string base_dir = std::filesystem::path(path).parent_path().string();
    auto take = [&](const char* list, const char* inner, std::map<std::string, YAML::Node>& into,
                    std::initializer_list<const char*> path_fields) {
      const YAML::Node items = root[list];
      if (!items || !items.IsSequence()) return;
      for (const auto& item : items) {
        std::string name = scalar(item, "name");
        if (name.empty() || into.contains(name)) continue;
        YAML::Node copy = YAML::Clone(item);
        if (copy[inner]) resolve_paths(copy[inner], base_dir, path_fields);
        into.emplace(name, copy);
      }
    };
    take("contexts", "context", contexts, {});
    take("clusters", "cluster", clusters, {"certificate-authority"});
    take("users", "user", users, {"client-certificate", "client-key", "tokenFile"});
  }
  if (!any) {
    std::string list;
    for (const auto& path : paths) list += (list.empty() ? "" : ", ") + path;
    return Error{"no configuration has been provided: cannot read " + list};
  }
  const std::string wanted = context.empty() ? current : context;
  if (wanted.empty()) return Error{"current-context is not set"};
  auto chosen = contexts.find(wanted);
  if (chosen == contexts.end()) return Error{"context \"" + wanted + "\" does not exist"};
  // One document with that context and every cluster and user: parse_kubeconfig reads the endpoint.
  YAML::Node merged;
  merged["contexts"].push_back(chosen->second);
  for (auto& entry : clusters) merged["clusters"].push_back(entry.second);
  for (auto& entry : users) merged["users"].push_back(entry.second);
  YAML::Emitter emitter;
  emitter << merged;
  auto parsed = parse_kubeconfig(emitter.c_str(), "", {wanted});
  if (!parsed) return parsed.error();
  const YAML::Node& entry = chosen->second;
  const YAML::Node body = entry.IsMap() ? entry["context"] : YAML::Node();
  return KubectlContext{std::move(parsed->front()), body ? scalar(body, "namespace") : ""};
}

}  // namespace fedmetrics::kube
