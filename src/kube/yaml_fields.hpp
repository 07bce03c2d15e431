#pragma once
// Small readers of kubeconfig YAML shared by kubeconfig.cpp (one file, as
// Karmada's members.config) and kubectl_config.cpp (kubectl's KUBECONFIG
// list, merged). Internal to src/clusterclient: yaml-cpp stays out of the
// public headers.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <yaml-cpp/yaml.h>

namespace fedmetrics::kube::yaml_fields {

// The scalar at `key` of a mapping; empty when absent, not a scalar, or when
// `node` is not a mapping (yaml-cpp's operator[] throws on a scalar).
inline std::string scalar(const YAML::Node& node, const char* key) {
  if (!node.IsMap()) return {};
  const YAML::Node v = node[key];
  if (!v || !v.IsScalar()) return {};
  return v.as<std::string>();
}

inline bool read_file(const std::string& path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  out = ss.str();
  return true;
}

// A file reference of a kubeconfig, relative to the file's own directory.
inline std::string resolve(const std::string& path, const std::string& base_dir) {
  if (path.empty() || std::filesystem::path(path).is_absolute()) return path;
  return (std::filesystem::path(base_dir) / path).string();
}

}  // namespace fedmetrics::kube::yaml_fields
