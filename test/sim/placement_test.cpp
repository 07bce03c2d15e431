#include <catch2/catch.hpp>

#include <set>

#include "fedmetrics/sim/placement.hpp"

using namespace fedmetrics::sim;

TEST_CASE("divide_replicas: Karmada's static-weight division", "[sim][placement]") {
  struct Row {
    std::int32_t replicas;
    std::vector<ClusterWeight> clusters;
    std::vector<std::int32_t> expected;
  };
  const Row rows[] = {
      // The FederatedHPA walkthrough: 1:1, one replica goes to the first name.
      {1, {{"member1", 1}, {"member2", 1}}, {1, 0}},
      {2, {{"member1", 1}, {"member2", 1}}, {1, 1}},
      {3, {{"member1", 1}, {"member2", 1}}, {2, 1}},
      // Karmada docs: 9 replicas at 1:2 is 3 and 6.
      {9, {{"member1", 1}, {"member2", 2}}, {3, 6}},
      // Left-over replicas go to the heaviest cluster first, not the largest remainder:
      // 2 at 1:2 gives floor 0 and 1, the rest to member2.
      {2, {{"member1", 1}, {"member2", 2}}, {0, 2}},
      {4, {{"a", 2}, {"b", 1}, {"c", 1}}, {2, 1, 1}},
      {5, {{"a", 2}, {"b", 1}, {"c", 1}}, {3, 1, 1}},
      {7, {{"a", 1}, {"b", 1}, {"c", 1}}, {3, 2, 2}},
      // Equal weights: names break the tie, whatever the input order.
      {1, {{"member2", 1}, {"member1", 1}}, {0, 1}},
      // ... unless one had more replicas last time (Karmada keeps them there).
      {1, {{"member1", 1, 0}, {"member2", 1, 3}}, {0, 1}},
      // Zero weight gets nothing; all zero means all equal.
      {3, {{"a", 0}, {"b", 1}}, {0, 3}},
      {3, {{"a", 0}, {"b", 0}}, {2, 1}},
      {0, {{"a", 1}, {"b", 1}}, {0, 0}},
      {10, {{"only", 5}}, {10}},
  };
  for (const auto& row : rows) {
    auto result = divide_replicas(row.replicas, row.clusters);
    REQUIRE(result.size() == row.clusters.size());
    std::vector<std::int32_t> got;
    for (std::size_t i = 0; i < result.size(); ++i) {
      CHECK(result[i].name == row.clusters[i].cluster);
      got.push_back(result[i].replicas);
    }
    INFO("replicas " << row.replicas);
    CHECK(got == row.expected);
  }
  CHECK(divide_replicas(3, {}).empty());
}

TEST_CASE("pod names: one hash per template, unique suffixes", "[sim][placement]") {
  const std::string nginx127 = R"({"spec":{"containers":[{"image":"nginx:1.27","name":"nginx"}]}})";
  auto h1 = pod_template_hash(nginx127);
  auto h2 = pod_template_hash(R"({"spec":{"containers":[{"image":"nginx:1.28","name":"nginx"}]}})");
  CHECK(h1 != h2);
  CHECK(h1 == pod_template_hash(nginx127));  // deterministic
  CHECK(h1.size() >= 8);
  CHECK(h1.find_first_not_of("bcdfghjklmnpqrstvwxz2456789") == std::string::npos);
  std::set<std::string> suffixes;
  for (std::uint64_t n = 0; n < 200; ++n) {
    auto s = pod_suffix(h1, n);
    CHECK(s.size() == 5);
    suffixes.insert(s);
  }
  CHECK(suffixes.size() >= 199);  // collisions are possible but rare; the federation re-draws them
  auto uid = object_uid("member1/default/nginx");
  CHECK(uid.size() == 36);
  CHECK(uid[14] == '4');
  CHECK(uid != object_uid("member2/default/nginx"));
}
