// Karmada 1.18's overflow affinities as a table: a scale-up fills the
// primary group before it spills, a scale-down gives back the supplementary
// groups' replicas first, a group with no room is passed over, and what
// cannot be placed (or a negative count) is an error.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "fedmetrics/autoscaler/overflow_placement.hpp"

namespace fedmetrics::autoscaler {
namespace {

// Groups "primary" and "burst": each {name, free, scheduled}.
std::vector<OverflowGroup> two_groups(std::vector<OverflowCluster> primary, std::vector<OverflowCluster> burst) {
  return {{"primary", std::move(primary)}, {"burst", std::move(burst)}};
}

struct PlacementCase {
  std::string name;
  std::int32_t replicas;
  std::vector<OverflowGroup> groups;
  ClusterReplicas expected;
};

TEST_CASE("place_overflow: fill the primary group, spill, reclaim from the supplementary group first") {
  const std::vector<PlacementCase> cases = {
      {"first schedule within the primary group",
       3,
       two_groups({{"a", 4, 0}, {"b", 4, 0}}, {{"c", 10, 0}}),
       {{"a", 2}, {"b", 1}}},
      {"the primary group divides by what each member is free to run",
       6,
       two_groups({{"a", 6, 0}, {"b", 2, 0}}, {{"c", 10, 0}}),
       {{"a", 4}, {"b", 2}}},
      {"a scale-up fills the primary group, then spills the rest",
       12,
       two_groups({{"a", 2, 2}, {"b", 2, 2}}, {{"c", 10, 0}}),
       {{"a", 4}, {"b", 4}, {"c", 4}}},
      {"a scale-up spills over two supplementary groups in order",
       20,
       {{"primary", {{"a", 0, 4}}}, {"burst", {{"b", 3, 0}}}, {"last", {{"c", 50, 0}}}},
       {{"a", 4}, {"b", 3}, {"c", 13}}},
      {"a scale-down reclaims from the supplementary group first",
       10,
       two_groups({{"a", 0, 4}, {"b", 0, 4}}, {{"c", 6, 4}}),
       {{"a", 4}, {"b", 4}, {"c", 2}}},
      {"a scale-down below the primary group's share empties the supplementary group",
       6,
       two_groups({{"a", 0, 4}, {"b", 0, 4}}, {{"c", 6, 4}}),
       {{"a", 3}, {"b", 3}}},
      {"a primary group that shrinks keeps the proportion of what its members ran",
       3,
       two_groups({{"a", 0, 4}, {"b", 4, 2}}, {}),
       {{"a", 2}, {"b", 1}}},
      {"a group with no room is passed over",
       5,
       {{"primary", {{"a", 0, 0}, {"b", 0, 0}}}, {"burst", {{"c", 0, 0}}}, {"last", {{"d", 9, 0}}}},
       {{"d", 5}}},
      {"an empty group is passed over", 2, {{"primary", {}}, {"burst", {{"c", 5, 0}}}}, {{"c", 2}}},
      {"a member listed in two groups belongs to the first",
       6,
       two_groups({{"a", 4, 0}}, {{"a", 4, 0}, {"c", 10, 0}}),
       {{"a", 4}, {"c", 2}}},
      {"zero replicas place nothing", 0, two_groups({{"a", 0, 3}}, {{"c", 10, 2}}), {}},
      {"an unchanged count keeps the placement", 5, two_groups({{"a", 9, 2}, {"b", 9, 3}}, {}), {{"a", 2}, {"b", 3}}},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    auto placed = place_overflow(c.replicas, c.groups);
    REQUIRE(placed);
    CHECK(*placed == c.expected);
  }
}

TEST_CASE("place_overflow: what the groups cannot hold, and bad input, are errors") {
  auto full = place_overflow(9, two_groups({{"a", 2, 2}}, {{"c", 3, 0}}));
  REQUIRE_FALSE(full);
  CHECK(full.error().kind == k8s::ErrorKind::Conflict);
  CHECK(full.error().message == "the clusters can hold 7 of 9 replicas: not enough available replicas to schedule");

  auto no_groups = place_overflow(1, {});
  REQUIRE_FALSE(no_groups);
  CHECK(no_groups.error().kind == k8s::ErrorKind::Conflict);

  auto negative = place_overflow(-1, two_groups({{"a", 2, 0}}, {}));
  REQUIRE_FALSE(negative);
  CHECK(negative.error().kind == k8s::ErrorKind::Invalid);

  auto negative_free = place_overflow(1, two_groups({{"a", 2, 0}}, {{"c", -1, 0}}));
  REQUIRE_FALSE(negative_free);
  CHECK(negative_free.error().message == "groups[1] (burst): cluster c: replicas must not be negative");
}

}  // namespace
}  // namespace fedmetrics::autoscaler
