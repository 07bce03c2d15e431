#pragma once
// The kubeconfig the simulator writes for its members, in the shape of
// Karmada's members.config: one cluster, user and context per member, all
// named after the member; current-context is the first member. Pure.
#include <cstdint>
#include <string>
#include <vector>

#include "fedmetrics/sim/world.hpp"

namespace fedmetrics::sim {

struct MemberEndpoint {
  std::string name;
  std::string server;  // "https://127.0.0.1:PORT"
  std::string token;   // a token valid on this member
};

// The endpoints of the world's members on the given ports (World order); the
// token is the first user's that is valid on the member.
std::vector<MemberEndpoint> member_endpoints(const World& world, const std::vector<std::uint16_t>& ports);

std::string members_kubeconfig(const std::vector<MemberEndpoint>& members, const std::string& ca_file);

}  // namespace fedmetrics::sim
