#pragma once
// What the distributed mode's parts share while one sync decides the
// members' shares (distributor.cpp), aggregates their HPAs' status
// (distributor_status.cpp) and reports the members it cannot reach
// (member_reachability.cpp). Private to the autoscaler module.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fedmetrics/autoscaler/distributor.hpp"

namespace fedmetrics::autoscaler::detail {

inline constexpr std::string_view kAbleToScale = "AbleToScale";
inline constexpr std::string_view kScalingActive = "ScalingActive";
inline constexpr std::string_view kScalingLimited = "ScalingLimited";

// The member shares being decided, in name order.
struct Member {
  std::string name;
  std::int64_t weight = 1;
  std::int64_t min = 1;
  std::int64_t max = 1;
  const DistributionMember* input = nullptr;  // null for a member that left
  const MemberHPA* hpa = nullptr;             // what its HPA reported, when read
  bool joined = false;
};

// The FederatedHPA's status from its members' HPAs: replicas summed, the
// spec's metrics aggregated, AbleToScale and ScalingActive from theirs, on
// the conditions of the previous sync.
FederatedHPAStatus aggregate_status(const DistributionInput& input, const std::vector<Member>& members);

// "a, b, c", or with another separator.
std::string join_names(const std::vector<std::string>& names, std::string_view separator = ", ");

// A member the target is placed on that this sync cannot reach: NotReady, or
// Ready but its HPA could not be read. Held: its share is kept (within the
// rebalance window; for as long as only its HPA cannot be read), and its
// replicas are not counted. Left out: NotReady past the window (or NotReady
// without a share), its share given to the others until it is Ready again.
enum class Reach { Held, LeftOut };

struct Unreached {
  Reach reach = Reach::Held;
  std::optional<Timestamp> not_ready_since;  // absent: Ready, but its HPA cannot be read
};
using UnreachedMembers = std::map<std::string, Unreached, std::less<>>;

// The MembersReachable condition and the MemberHeld, MemberLeftOut and
// MemberRejoined Events of this sync (member_reachability.cpp), given the
// shares decided (in `out`) and those of the members left out (`left`).
void note_reachability(Distribution& out, const DistributionInput& input, const UnreachedMembers& unreached,
                       const std::map<std::string, MemberShare, std::less<>>& left, const std::vector<Member>& members);

}  // namespace fedmetrics::autoscaler::detail
