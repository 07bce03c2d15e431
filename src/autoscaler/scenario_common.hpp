#pragma once
// Internal to the autoscaler module: what both scenario formats (scenario.md
// and distributed.md's "mode": "distributed") read alike at the top level.
#include "fedmetrics/autoscaler/hpa_spec.hpp"
#include "fedmetrics/autoscaler/scenario.hpp"
#include "json_reader.hpp"

namespace fedmetrics::autoscaler::detail {

// `hpa`: required, a whole FederatedHPA or its spec.
inline FederatedHPA scenario_hpa(const Fields& top) {
  auto hpa = decode_federated_hpa(top.required("hpa"), "hpa");
  if (!hpa) throw DecodeFailure{hpa.error()};
  return std::move(*hpa);
}

// `start`: the origin of numeric times, an RFC 3339 string; default 2024-01-01T00:00:00Z.
inline k8s::Timestamp scenario_start(const Fields& top) {
  const auto* start = top.raw("start");
  if (start == nullptr) return default_scenario_start();
  if (!start->is_string()) fail("start", "not a time (an RFC 3339 string)");
  return time_value(*start, default_scenario_start(), "start");
}

}  // namespace fedmetrics::autoscaler::detail
