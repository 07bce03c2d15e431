#include "fedmetrics/autoscaler/overflow_placement.hpp"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <set>

namespace fedmetrics::autoscaler {

namespace {

using k8s::Error;
using k8s::ErrorKind;

// One cluster of a tier, as the division sees it.
struct Seat {
  std::string name;
  std::int64_t votes = 0;  // its weight
  std::int32_t seats = 0;  // replicas given so far
};

// Webster's method: each of `count` replicas goes to the cluster with the
// highest votes / (2 * seats + 1); ties to fewer seats, then the smaller
// name (karmada-io/karmada pkg/util/helper/webstermethod.go, with the tie
// breaker of a binding without a uid). Compared as products, not quotients,
// so that equal priorities are equal.
void webster(std::vector<Seat>& seats, std::int32_t count) {
  if (seats.empty()) return;
  auto before = [](const Seat& a, const Seat& b) {
    const __int128 left = static_cast<__int128>(a.votes) * (2 * static_cast<__int128>(b.seats) + 1);
    const __int128 right = static_cast<__int128>(b.votes) * (2 * static_cast<__int128>(a.seats) + 1);
    if (left != right) return left > right;
    if (a.seats != b.seats) return a.seats < b.seats;
    return a.name < b.name;
  };
  for (std::int32_t n = 0; n < count; ++n) ++std::min_element(seats.begin(), seats.end(), before)->seats;
}

// The steady division of `target` replicas over one tier (Karmada's
// dynamicScaleUp / dynamicScaleDown; an unchanged tier keeps its replicas).
void divide_tier(const std::vector<OverflowCluster>& tier, std::int32_t target, ClusterReplicas& out) {
  std::int64_t scheduled = 0;
  for (const auto& c : tier) scheduled += c.scheduled;
  std::vector<Seat> seats;
  if (scheduled > target) {
    // Scale down: what the tier keeps, in proportion to what each cluster ran.
    for (const auto& c : tier)
      if (c.scheduled > 0) seats.push_back({c.name, c.scheduled, 0});
    webster(seats, target);
  } else {
    // Scale up (or the same): the clusters keep theirs, the new replicas go
    // in proportion to what each cluster is free to run.
    for (const auto& c : tier) seats.push_back({c.name, c.free, c.scheduled});
    auto by_free = seats;
    for (auto& s : by_free) s.seats = 0;
    webster(by_free, target - static_cast<std::int32_t>(scheduled));
    for (std::size_t i = 0; i < seats.size(); ++i) seats[i].seats += by_free[i].seats;
  }
  for (const auto& s : seats)
    if (s.seats > 0) out[s.name] += s.seats;
}

}  // namespace

k8s::Expected<ClusterReplicas> place_overflow(std::int32_t replicas, const std::vector<OverflowGroup>& groups) {
  if (replicas < 0) return Error{"replicas: must not be negative"};
  // The tiers, a cluster in the first group that lists it.
  std::set<std::string, std::less<>> seen;
  std::vector<std::vector<OverflowCluster>> tiers;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    auto& tier = tiers.emplace_back();
    for (const auto& c : groups[g].clusters) {
      if (c.free < 0 || c.scheduled < 0)
        return Error{"groups[" + std::to_string(g) + "] (" + groups[g].name + "): cluster " + c.name +
                     ": replicas must not be negative"};
      if (seen.insert(c.name).second) tier.push_back(c);
    }
  }
  ClusterReplicas out;
  std::int64_t remaining = replicas;
  std::int64_t capacity = 0;
  for (const auto& tier : tiers) {
    std::int64_t available = 0;  // what the tier can hold: free plus its own
    for (const auto& c : tier) available += static_cast<std::int64_t>(c.free) + c.scheduled;
    capacity += available;
    const auto target = static_cast<std::int32_t>(std::min(remaining, available));
    divide_tier(tier, target, out);
    remaining -= target;
  }
  if (remaining > 0)
    return Error{ErrorKind::Conflict, "the clusters can hold " + std::to_string(capacity) + " of " +
                                          std::to_string(replicas) +
                                          " replicas: not enough available replicas to schedule"};
  return out;
}

}  // namespace fedmetrics::autoscaler
