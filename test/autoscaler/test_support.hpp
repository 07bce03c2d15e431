#pragma once
// Builders shared by the autoscaler tests: pods, samples and times.
#include <chrono>
#include <stdexcept>
#include <cstdint>
#include <string>
#include <vector>

#include "fedmetrics/autoscaler/autoscaler.hpp"
#include "fedmetrics/autoscaler/pod_state.hpp"
#include "fedmetrics/k8s/quantity.hpp"
#include "fedmetrics/k8s/time.hpp"

namespace fedmetrics::autoscaler::testing {

using namespace std::chrono_literals;

// 2024-01-01T00:10:00Z
inline Timestamp t0() { return Timestamp(std::chrono::seconds(1704067800)); }

inline k8s::Quantity q(const std::string& text) {
  auto parsed = k8s::Quantity::parse(text);
  if (!parsed) throw std::runtime_error("bad quantity in test: " + text);
  return *parsed;
}

inline k8s::Quantity milli(std::int64_t m) { return k8s::Quantity::from_milli(m, k8s::QuantityFormat::DecimalSI); }

inline PodKey key(const std::string& name, const std::string& cluster = "member1", const std::string& ns = "default") {
  return PodKey{cluster, ns, name};
}

// A running, Ready pod started long ago, with one container "app" requesting `cpu`.
inline Pod ready_pod(const std::string& name, const std::string& cluster = "member1",
                     const std::string& cpu_request = "100m") {
  Pod pod;
  pod.key = key(name, cluster);
  pod.phase = PodPhase::Running;
  pod.ready = PodReadyCondition{ConditionStatus::True, t0() - 1h};
  pod.start_time = t0() - 1h;
  Container c;
  c.name = "app";
  if (!cpu_request.empty()) c.requests["cpu"] = q(cpu_request);
  pod.containers.push_back(c);
  return pod;
}

// A fresh metrics.k8s.io sample for the container "app".
inline PodResourceSample cpu_sample(const PodKey& k, const std::string& cpu) {
  PodResourceSample s;
  s.key = k;
  s.timestamp = t0();
  s.window = 60s;
  s.containers.push_back(ContainerUsage{"app", {{"cpu", q(cpu)}}});
  return s;
}

inline PodMetricSample pod_value(const PodKey& k, const std::string& value) {
  return PodMetricSample{k, q(value), t0()};
}

// FederatedHPA default/web of Deployment web with `metrics`.
inline FederatedHPA hpa_of(std::vector<MetricSpec> metrics, std::int32_t min, std::int32_t max) {
  FederatedHPA hpa;
  hpa.name = "web";
  hpa.namespace_name = "default";
  hpa.spec.scale_target_ref = {"Deployment", "web", "apps/v1"};
  hpa.spec.min_replicas = min;
  hpa.spec.max_replicas = max;
  hpa.spec.metrics = std::move(metrics);
  return hpa;
}

// `per_member` ready pods in each member, each at `cpu` of a 100m request.
inline SyncInput cpu_pods(std::int32_t replicas, const std::vector<std::string>& members, int per_member,
                          const std::string& cpu) {
  SyncInput in;
  in.scale = {replicas, replicas};
  in.now = t0();
  std::vector<PodResourceSample> samples;
  for (const auto& member : members) {
    for (int i = 0; i < per_member; ++i) {
      in.pods.push_back(ready_pod("web-" + std::to_string(i), member));
      samples.push_back(cpu_sample(in.pods.back().key, cpu));
    }
  }
  in.metrics.resource = samples;
  return in;
}

}  // namespace fedmetrics::autoscaler::testing
