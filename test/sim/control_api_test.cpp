#include <catch2/catch.hpp>

#include "fedmetrics/sim/control_api.hpp"
#include "fedmetrics/sim/kubeconfig.hpp"
#include "sim/sim_test_support.hpp"

using namespace fedmetrics::sim;
using nlohmann::json;

namespace {
fedmetrics::transport::HttpRequest req(std::string method, std::string target, std::string body = {}) {
  fedmetrics::transport::HttpRequest r;
  r.method = std::move(method);
  r.target = std::move(target);
  r.body = std::move(body);
  return r;
}
}  // namespace

TEST_CASE("Control: PUT load changes what the pods use", "[sim][control]") {
  auto f = sim_test::federation();
  auto out = handle_control_request(f, req("PUT", "/sim/v1/namespaces/shop/workloads/web/load", R"({"cpu":"2"})"),
                                    sim_test::t0());
  CHECK(out.response.status == 200);
  CHECK(json::parse(out.response.body) == json::parse(R"({"cpu":"2","requestsPerSecond":"8"})"));
  REQUIRE(out.updated);
  const auto& pod = out.updated->members[0].pods[0];
  CHECK(out.updated->usage(0, pod, sim_test::t0()).cpu_nanocores() == 500'000'000);  // 2/4 + 1m, capped at 500m
  auto rps = handle_control_request(
      *out.updated, req("PUT", "/sim/v1/namespaces/shop/workloads/web/load", R"({"requestsPerSecond":"40"})"),
      sim_test::t0());
  REQUIRE(rps.updated);
  CHECK(rps.updated->usage(0, pod, sim_test::t0()).requests_per_second == Approx(10.0));

  for (const char* body : {"", "[]", R"({"cpu":"lots"})", R"({"cpu":"-1"})", R"({"memory":"1Gi"})"}) {
    INFO(body);
    auto bad =
        handle_control_request(f, req("PUT", "/sim/v1/namespaces/shop/workloads/web/load", body), sim_test::t0());
    CHECK(bad.response.status == 400);
    CHECK_FALSE(bad.updated);
  }
  CHECK(handle_control_request(f, req("PUT", "/sim/v1/namespaces/shop/workloads/nope/load", "{}"), sim_test::t0())
            .response.status == 404);
}

TEST_CASE("Control: a member's own load is set, read and cleared", "[sim][control]") {
  auto f = sim_test::federation();
  const std::string path = "/sim/v1/namespaces/shop/workloads/web/members/member1/load";
  CHECK(handle_control_request(f, req("GET", path), sim_test::t0()).response.status == 404);  // shares the workload's
  auto put = handle_control_request(f, req("PUT", path, R"({"cpu":"3"})"), sim_test::t0());
  CHECK(put.response.status == 200);
  CHECK(json::parse(put.response.body) ==
        json::parse(R"({"cpu":"3","requestsPerSecond":"8"})"));  // rps from the workload's
  REQUIRE(put.updated);
  CHECK(put.updated->workloads[0].member_loads.at(0).cpu.to_string() == "3");
  CHECK(put.updated->workloads[0].load.cpu.to_string() == "1");  // the shared load is unchanged
  auto summary = world_summary(*put.updated, sim_test::t0());
  CHECK(summary["workloads"][0]["memberLoads"] == json::parse(R"({"member1":{"cpu":"3","requestsPerSecond":"8"}})"));
  CHECK(handle_control_request(*put.updated, req("GET", path), sim_test::t0()).response.status == 200);
  auto del = handle_control_request(*put.updated, req("DELETE", path), sim_test::t0());
  REQUIRE(del.updated);
  CHECK(del.updated->workloads[0].member_loads.empty());
  CHECK(handle_control_request(f, req("PUT", "/sim/v1/namespaces/shop/workloads/web/members/nope/load", "{}"),
                               sim_test::t0())
            .response.status == 404);
  CHECK(handle_control_request(f, req("PUT", path, R"({"memory":"1Gi"})"), sim_test::t0()).response.status == 400);
  CHECK(handle_control_request(f, req("POST", path, "{}"), sim_test::t0()).response.status == 405);
}

TEST_CASE("Control: PUT replicas re-divides over the propagation", "[sim][control]") {
  auto f = sim_test::federation();
  auto out = handle_control_request(
      f, req("PUT", "/sim/v1/namespaces/shop/workloads/web/replicas", R"({"replicas":5})"), sim_test::t0());
  REQUIRE(out.updated);
  CHECK(json::parse(out.response.body)["placement"] == json::parse(R"({"member1":3,"member2":2})"));
  CHECK(handle_control_request(f, req("PUT", "/sim/v1/namespaces/shop/workloads/web/replicas", R"({"replicas":-1})"),
                               sim_test::t0())
            .response.status == 400);
}

TEST_CASE("Control: faults are replaced by PUT, merged by PATCH, cleared by DELETE", "[sim][control]") {
  auto f = sim_test::federation();
  auto put = handle_control_request(
      f, req("PUT", "/sim/v1/members/member2/faults", R"({"latency":"200ms","errorRate":0.5})"), sim_test::t0());
  REQUIRE(put.updated);
  CHECK(put.updated->members[1].faults.latency == std::chrono::milliseconds(200));
  CHECK(put.updated->members[1].faults.error_rate == 0.5);
  auto patch = handle_control_request(
      *put.updated, req("PATCH", "/sim/v1/members/member2/faults", R"({"refuse":true})"), sim_test::t0());
  REQUIRE(patch.updated);
  CHECK(patch.updated->members[1].faults.refuse);
  CHECK(patch.updated->members[1].faults.error_rate == 0.5);
  auto replace = handle_control_request(
      *patch.updated, req("PUT", "/sim/v1/members/member2/faults", R"({"blackhole":true})"), sim_test::t0());
  REQUIRE(replace.updated);
  CHECK(replace.updated->members[1].faults.blackhole);
  CHECK_FALSE(replace.updated->members[1].faults.refuse);
  auto cleared =
      handle_control_request(*replace.updated, req("DELETE", "/sim/v1/members/member2/faults"), sim_test::t0());
  REQUIRE(cleared.updated);
  CHECK(cleared.updated->members[1].faults == Faults{});
  auto bad = handle_control_request(f, req("PUT", "/sim/v1/members/member2/faults", R"({"errorRate":"half"})"),
                                    sim_test::t0());
  CHECK(bad.response.status == 400);
  CHECK(json::parse(bad.response.body)["message"] == "errorRate: expected a number between 0 and 1");
  CHECK(handle_control_request(f, req("PUT", "/sim/v1/members/nope/faults", "{}"), sim_test::t0()).response.status ==
        404);
  CHECK(handle_control_request(f, req("GET", "/sim/v1/world%zz"), sim_test::t0()).response.status == 404);
}

TEST_CASE("Control: external metric values and the world summary", "[sim][control]") {
  auto f = sim_test::federation();
  auto out = handle_control_request(f, req("PUT", "/sim/v1/externalmetrics/queue_messages_ready", R"({"value":"100"})"),
                                    sim_test::t0());
  REQUIRE(out.updated);
  CHECK(out.updated->world.external_metrics[0].value == fedmetrics::k8s::Quantity::parse("100").value());
  auto summary = handle_control_request(f, req("GET", "/sim/v1/world"), sim_test::t0());
  CHECK_FALSE(summary.updated);
  auto body = json::parse(summary.response.body);
  CHECK(body["members"][0]["pods"] == 2);
  CHECK(body["workloads"][0]["placement"] == json::parse(R"({"member1":2,"member2":2})"));
  CHECK(body["workloads"][0]["readyReplicas"] == 4);
}

TEST_CASE("kubeconfig: one context per member in members.config shape", "[sim][control]") {
  auto w = sim_test::world();
  auto endpoints = member_endpoints(w, {6443, 6444, 6445});
  REQUIRE(endpoints.size() == 3);
  CHECK(endpoints[1].server == "https://127.0.0.1:6444");
  CHECK(endpoints[1].token == "good-token");
  auto text = members_kubeconfig(endpoints, "/tmp/ca.crt");
  CHECK(text == R"(apiVersion: v1
kind: Config
clusters:
  - cluster:
      certificate-authority: /tmp/ca.crt
      server: https://127.0.0.1:6443
    name: member1
  - cluster:
      certificate-authority: /tmp/ca.crt
      server: https://127.0.0.1:6444
    name: member2
  - cluster:
      certificate-authority: /tmp/ca.crt
      server: https://127.0.0.1:6445
    name: member3
contexts:
  - context:
      cluster: member1
      user: member1
    name: member1
  - context:
      cluster: member2
      user: member2
    name: member2
  - context:
      cluster: member3
      user: member3
    name: member3
current-context: member1
preferences: {}
users:
  - name: member1
    user:
      token: good-token
  - name: member2
    user:
      token: good-token
  - name: member3
    user:
      token: good-token
)");
}
