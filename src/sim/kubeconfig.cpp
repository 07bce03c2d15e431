#include "fedmetrics/sim/kubeconfig.hpp"

#include <algorithm>

#include <yaml-cpp/yaml.h>

namespace fedmetrics::sim {

std::vector<MemberEndpoint> member_endpoints(const World& world, const std::vector<std::uint16_t>& ports) {
  std::vector<MemberEndpoint> out;
  for (std::size_t i = 0; i < world.members.size(); ++i) {
    const auto& name = world.members[i].name;
    MemberEndpoint e{name, "https://127.0.0.1:" + std::to_string(i < ports.size() ? ports[i] : 0), {}};
    for (const auto& u : world.users) {
      if (u.members.empty() || std::find(u.members.begin(), u.members.end(), name) != u.members.end()) {
        e.token = u.token;
        break;
      }
    }
    out.push_back(std::move(e));
  }
  return out;
}

std::string members_kubeconfig(const std::vector<MemberEndpoint>& members, const std::string& ca_file) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "apiVersion" << YAML::Value << "v1";
  out << YAML::Key << "kind" << YAML::Value << "Config";
  out << YAML::Key << "clusters" << YAML::Value << YAML::BeginSeq;
  for (const auto& m : members) {
    out << YAML::BeginMap << YAML::Key << "cluster" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "certificate-authority" << YAML::Value << ca_file;
    out << YAML::Key << "server" << YAML::Value << m.server;
    out << YAML::EndMap << YAML::Key << "name" << YAML::Value << m.name << YAML::EndMap;
  }
  out << YAML::EndSeq;
  out << YAML::Key << "contexts" << YAML::Value << YAML::BeginSeq;
  for (const auto& m : members) {
    out << YAML::BeginMap << YAML::Key << "context" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "cluster" << YAML::Value << m.name;
    out << YAML::Key << "user" << YAML::Value << m.name;
    out << YAML::EndMap << YAML::Key << "name" << YAML::Value << m.name << YAML::EndMap;
  }
  out << YAML::EndSeq;
  out << YAML::Key << "current-context" << YAML::Value << (members.empty() ? std::string() : members.front().name);
  out << YAML::Key << "preferences" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::EndMap;
  out << YAML::Key << "users" << YAML::Value << YAML::BeginSeq;
  for (const auto& m : members) {
    out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << m.name;
    out << YAML::Key << "user" << YAML::Value << YAML::BeginMap << YAML::Key << "token" << YAML::Value << m.token
        << YAML::EndMap << YAML::EndMap;
  }
  out << YAML::EndSeq << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace fedmetrics::sim
