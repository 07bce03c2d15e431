#include <catch2/catch.hpp>

#include "fedmetrics/sim/load_model.hpp"

using namespace fedmetrics::sim;
using fedmetrics::k8s::Quantity;

namespace {
Quantity q(const char* text) { return Quantity::parse(text).value(); }

WorkloadSpec nginx() {
  WorkloadSpec w;
  w.name = "nginx";
  w.containers.push_back({"nginx", "nginx", {{"cpu", q("25m")}, {"memory", q("64Mi")}}, {{"cpu", q("25m")}}});
  w.baseline_cpu = q("1m");
  w.memory_usage = q("10Mi");
  return w;
}
}  // namespace

TEST_CASE("pod_usage: share of the load plus baseline, capped at the limit", "[sim][load]") {
  struct Row {
    const char* cpu_load;
    std::size_t serving;
    bool is_serving;
    std::int64_t nanocores;
  };
  const Row rows[] = {
      {"0", 1, true, 1'000'000},       // baseline only: 1m
      {"10m", 1, true, 11'000'000},    // 10m + 1m
      {"20m", 2, true, 11'000'000},    // half each
      {"300m", 1, true, 25'000'000},   // capped at the 25m limit
      {"300m", 20, true, 16'000'000},  // 15m + 1m
      {"300m", 2, false, 1'000'000},   // not serving: no share
      {"1", 3, true, 25'000'000},      // capped
  };
  for (const auto& row : rows) {
    INFO(row.cpu_load << " over " << row.serving);
    auto u = pod_usage(nginx(), Load{q(row.cpu_load), {}}, row.serving, row.is_serving);
    REQUIRE(u.containers.size() == 1);
    CHECK(u.containers[0].name == "nginx");
    CHECK(u.cpu_nanocores() == row.nanocores);
    CHECK(u.memory_bytes() == 10 * 1024 * 1024);
  }
}

TEST_CASE("pod_usage: no limit means no cap, requests per second are shared", "[sim][load]") {
  auto w = nginx();
  w.containers[0].limits.clear();
  auto u = pod_usage(w, Load{q("3"), q("5")}, 2, true);
  CHECK(u.cpu_nanocores() == 1'501'000'000);
  CHECK(u.requests_per_second == Approx(2.5));
  CHECK(pod_usage(w, Load{q("3"), q("5")}, 2, false).requests_per_second == 0.0);
}

TEST_CASE("pod_usage: several containers split by their requests", "[sim][load]") {
  WorkloadSpec w;
  w.containers.push_back({"app", "app", {{"cpu", q("300m")}, {"memory", q("96Mi")}}, {}});
  w.containers.push_back({"sidecar", "envoy", {{"cpu", q("100m")}, {"memory", q("32Mi")}}, {{"cpu", q("50m")}}});
  w.baseline_cpu = q("0");
  w.memory_usage = q("64Mi");
  auto u = pod_usage(w, Load{q("400m"), {}}, 1, true);
  REQUIRE(u.containers.size() == 2);
  CHECK(u.containers[0].cpu_nanocores == 300'000'000);
  CHECK(u.containers[1].cpu_nanocores == 50'000'000);  // its 100m share, capped at its 50m limit
  CHECK(u.containers[0].memory_bytes == 48 * 1024 * 1024);
  CHECK(u.containers[1].memory_bytes == 16 * 1024 * 1024);
  CHECK(u.containers[0].memory_bytes % 4096 == 0);
}
