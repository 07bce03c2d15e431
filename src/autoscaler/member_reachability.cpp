// The members of a distributed FederatedHPA that a sync cannot reach: the
// MembersReachable condition, and the Events when one is held, left out or
// rejoins.
#include "autoscaler/distributor_parts.hpp"

#include <algorithm>
#include <utility>

#include "fedmetrics/k8s/time.hpp"

namespace fedmetrics::autoscaler::detail {
namespace {

constexpr std::string_view kMembersReachable = "MembersReachable";

std::string share_text(const MemberShare& s) {
  return "min " + std::to_string(s.min_replicas) + ", max " + std::to_string(s.max_replicas);
}

// What the condition (after "<member> held: ") and the Events (after
// "<member>: ") say of one unreached member. Never "; ": it separates the
// members in the condition's message, which the next sync reads back.
std::string unreached_detail(const Unreached& u, const DistributionInput& input,
                             const std::optional<MemberShare>& share) {
  const std::string why =
      u.not_ready_since ? "NotReady since " + k8s::format_time(*u.not_ready_since) : "its HPA cannot be read";
  if (u.reach == Reach::LeftOut) {
    if (!share) return why + ": left out until it is Ready again";
    return why + ", longer than the rebalance window (" + k8s::format_duration(input.rebalance_window) +
           "): left out, its share (" + share_text(*share) + ") went to the other members";
  }
  std::string kept = "its share (" + share_text(share.value_or(MemberShare{})) + ") is kept";
  if (u.not_ready_since) kept += " until " + k8s::format_time(*u.not_ready_since + input.rebalance_window);
  return why + ": " + kept + ", its replicas are not counted meanwhile";
}

// The unreached members the previous sync named in the condition ("member2
// held: ...; member3 left out: ..."), as this code writes it.
std::map<std::string, Reach, std::less<>> previously_unreached(const DistributionInput& input) {
  std::map<std::string, Reach, std::less<>> out;
  const auto* c = find_condition(input.previous_conditions, kMembersReachable);
  if (c == nullptr || c->status != ConditionStatus::False) return out;
  std::string_view rest = c->message;
  while (!rest.empty()) {
    const auto end = rest.find("; ");
    const std::string_view item = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 2);
    const auto space = item.find(' ');
    if (space == std::string_view::npos) continue;
    const std::string_view what = item.substr(space + 1);
    if (what.starts_with("held: ")) out[std::string(item.substr(0, space))] = Reach::Held;
    else if (what.starts_with("left out: ")) out[std::string(item.substr(0, space))] = Reach::LeftOut;
  }
  return out;
}

// The MembersReachable condition, and an Event for each change since the
// previous sync: MemberHeld and MemberLeftOut (Warning) when a member becomes
// so, MemberRejoined (Normal) when one named before takes part again. Only
// changes: the same state at the next sync says nothing more. Without an
// unreached member now or before, no condition (a federation that never lost
// a member reads as before).
}  // namespace

void note_reachability(Distribution& out, const DistributionInput& input, const UnreachedMembers& unreached,
                       const std::map<std::string, MemberShare, std::less<>>& left,
                       const std::vector<Member>& members) {
  const auto before = previously_unreached(input);
  auto share_of = [&](const std::string& name) -> std::optional<MemberShare> {
    if (auto it = out.shares.find(name); it != out.shares.end()) return it->second;
    if (auto it = left.find(name); it != left.end()) return it->second;
    return std::nullopt;
  };
  std::vector<std::string> items;
  bool any_left_out = false;
  for (const auto& [name, u] : unreached) {
    const std::string detail = unreached_detail(u, input, share_of(name));
    items.push_back(name + (u.reach == Reach::Held ? " held: " : " left out: ") + detail);
    any_left_out = any_left_out || u.reach == Reach::LeftOut;
    const auto was = before.find(name);
    if (was != before.end() && was->second == u.reach) continue;
    out.events.push_back({true, u.reach == Reach::Held ? "MemberHeld" : "MemberLeftOut", name + ": " + detail});
  }
  for (const auto& [name, was] : before) {
    if (unreached.count(name)) continue;
    const auto m = std::find_if(members.begin(), members.end(),
                                [&member_name = name](const Member& x) { return x.name == member_name; });
    if (m == members.end()) continue;  // no longer placed there: nothing to rejoin
    std::string message = name + " answers again";
    if (was == Reach::LeftOut) message += " after it was left out";
    if (auto share = share_of(name)) message += ": it takes part with " + share_text(*share);
    if (m->hpa != nullptr) message += ", its HPA runs " + std::to_string(m->hpa->current_replicas) + " replicas";
    out.events.push_back({false, "MemberRejoined", std::move(message)});
  }
  if (!items.empty()) {
    std::string message;
    for (const auto& item : items) message += (message.empty() ? "" : "; ") + item;
    set_condition(out.status.conditions, kMembersReachable, ConditionStatus::False,
                  any_left_out ? "MembersLeftOut" : "MembersHeld", std::move(message), input.now);
  } else if (find_condition(out.status.conditions, kMembersReachable) != nullptr) {
    set_condition(out.status.conditions, kMembersReachable, ConditionStatus::True, "MembersReachable",
                  "every member the target is placed on answers", input.now);
  }
}

}  // namespace fedmetrics::autoscaler::detail
