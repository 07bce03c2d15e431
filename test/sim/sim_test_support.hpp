#pragma once
// A small world shared by the sim tests, and helpers to call MemberApi.
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "fedmetrics/k8s/time.hpp"
#include "fedmetrics/sim/federation.hpp"
#include "fedmetrics/sim/member_api.hpp"
#include "fedmetrics/sim/world.hpp"

namespace sim_test {

// member1: every API; member2: metrics + custom v1beta1 only; member3: metrics only.
inline const char* const kWorld = R"(
members:
  - name: member1
    nodes:
      - name: m1-node-a
        cpu: "4"
        memory: 16Gi
        labels: {zone: a}
      - name: m1-node-b
        labels: {zone: b}
  - name: member2
    metricsApis: [metrics.k8s.io/v1beta1, custom.metrics.k8s.io/v1beta1]
  - name: member3
    metricsApis: [metrics.k8s.io/v1beta1]
namespaces: [shop]
workloads:
  - name: web
    namespace: shop
    replicas: 4
    labels: {app: web}
    containers:
      - name: web
        image: nginx
        resources:
          requests: {cpu: 100m, memory: 64Mi}
          limits: {cpu: 500m, memory: 64Mi}
    metrics: [http_requests]
    propagation:
      clusters: [member1, member2]
      weights: {member1: 1, member2: 1}
    load: {cpu: "1", requestsPerSecond: "8"}
    baseline: {cpu: 1m, memory: 16Mi}
  - name: batch
    namespace: default
    replicas: 1
    labels: {app: batch}
    containers:
      - name: batch
        requests: {cpu: 25m}
    propagation:
      clusters: [member3]
externalMetrics:
  - name: queue_messages_ready
    namespace: shop
    labels: {queue: orders}
    value: "42"
  - name: queue_messages_ready
    labels: {queue: returns}
    value: "7"
    members: [member1]
users:
  - name: admin
    token: good-token
  - name: m2
    token: member2-token
    members: [member2]
)";

inline fedmetrics::k8s::Timestamp t0() { return fedmetrics::k8s::parse_time("2026-08-22T10:00:00Z").value(); }

inline fedmetrics::sim::World world() {
  auto w = fedmetrics::sim::parse_world(kWorld);
  if (!w) FAIL(w.error().message);
  return *w;
}

inline fedmetrics::sim::Federation federation() { return fedmetrics::sim::Federation::create(world(), t0()); }

inline fedmetrics::transport::HttpRequest get(std::string target, std::string token = "good-token") {
  fedmetrics::transport::HttpRequest r;
  r.method = "GET";
  r.target = std::move(target);
  if (!token.empty()) r.headers.emplace_back("Authorization", "Bearer " + token);
  return r;
}

struct Answer {
  int status;
  nlohmann::json body;
  std::string raw;
  std::string content_type;
};

inline Answer call(const fedmetrics::sim::Federation& f, std::size_t member,
                   const fedmetrics::transport::HttpRequest& r, fedmetrics::k8s::Timestamp now = t0(),
                   double draw = 1.0) {
  auto response = fedmetrics::sim::MemberApi(f, member).handle(r, now, draw);
  auto body = nlohmann::json::parse(response.body, nullptr, false);
  return {response.status, body, response.body, response.content_type};
}

inline Answer call(const fedmetrics::sim::Federation& f, std::size_t member, const std::string& target) {
  return call(f, member, get(target));
}

}  // namespace sim_test
