#pragma once
// Internal to the autoscaler module: what both scenario formats (docs/simulate.md:
// the default one and "mode": "distributed") read alike at the top level.
#include <string>
#include <vector>

#include "fedmetrics/autoscaler/hpa_spec.hpp"
#include "fedmetrics/autoscaler/scenario.hpp"
#include "json_reader.hpp"

namespace fedmetrics::autoscaler::detail {

// `hpa`: required, a whole FederatedHPA or its spec, with no field it does not have.
inline FederatedHPA scenario_hpa(const Fields& top) {
  const auto& json = top.required("hpa");
  if (!top.ok()) return {};
  auto hpa = decode_federated_hpa(json, "hpa", UnknownFields::Refuse);
  if (!hpa) {
    top.reader().fail(hpa.error());
    return {};
  }
  return std::move(*hpa);
}

// `start`: the origin of numeric times, an RFC 3339 string; default 2024-01-01T00:00:00Z.
inline k8s::Timestamp scenario_start(const Fields& top) {
  const auto* start = top.raw("start");
  if (start == nullptr) return default_scenario_start();
  if (!start->is_string()) {
    top.fail("start", "not a time (an RFC 3339 string)");
    return default_scenario_start();
  }
  return time_value(top.reader(), *start, default_scenario_start(), "start");
}

// `steps`: required, at least one (a replay of nothing is a mistake).
inline const nlohmann::json& scenario_steps(const Fields& top) {
  if (!top.has("steps")) top.fail("steps", "is required");
  const auto& steps = top.array("steps");
  if (steps.empty()) top.fail("steps", "must have at least one step");
  return steps;
}

// The `at` of the last step decoded, at `path`: the steps are the
// controller's syncs, from `start` on, each later than the one before (the
// stabilization windows and the rate policies look back from each sync, and
// a step holds until the next one).
template <class Step>
void check_step_time(FieldReader& reader, const std::vector<Step>& steps, k8s::Timestamp start,
                     const std::string& path) {
  if (!reader.ok()) return;
  const Step& step = steps.back();
  if (step.at < start) {
    reader.fail(join(path, "at"), step.at_written.dump() + " is before start (" + k8s::format_time(start) +
                                      "); steps are syncs from start on, in time order");
    return;
  }
  if (steps.size() > 1 && step.at <= steps[steps.size() - 2].at) {
    reader.fail(join(path, "at"), step.at_written.dump() + " is not later than the step before it (" +
                                      steps[steps.size() - 2].at_written.dump() + "); steps are syncs in time order");
  }
}

}  // namespace fedmetrics::autoscaler::detail
