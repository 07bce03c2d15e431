#include "fedmetrics/autoscaler/distributed_scenario.hpp"

#include <cmath>
#include <limits>
#include <string_view>

#include "json_reader.hpp"
#include "scenario_common.hpp"

namespace fedmetrics::autoscaler {

using detail::FieldReader;
using detail::Fields;
using nlohmann::json;

namespace {

// A replica count or weight: an integer of at least `least` that fits in 32 bits.
std::optional<std::int32_t> count(const Fields& f, std::string_view key, double least, const char* words) {
  const auto* v = f.raw(key);
  if (v == nullptr) return std::nullopt;
  const double d = v->is_number() ? v->get<double>() : std::nan("");
  if (!std::isfinite(d) || d != std::floor(d) || d < least || d > std::numeric_limits<std::int32_t>::max()) {
    f.fail(key, words);
    return std::nullopt;
  }
  return static_cast<std::int32_t>(d);
}

DistributedScenarioMember decode_member(const Fields& f, Timestamp start) {
  f.allow({"weight", "minReplicas", "maxReplicas", "currentReplicas", "desiredReplicas", "lastScaleTime",
           "scalingLimited"});
  DistributedScenarioMember m;
  m.weight = count(f, "weight", 0, "must be a non-negative integer");
  m.min_replicas = count(f, "minReplicas", 1, "must be a positive integer");
  m.max_replicas = count(f, "maxReplicas", 1, "must be a positive integer");
  m.current_replicas = count(f, "currentReplicas", 0, "must be a non-negative integer");
  m.desired_replicas = count(f, "desiredReplicas", 0, "must be a non-negative integer");
  if (const auto* t = f.raw("lastScaleTime"))
    m.last_scale_time = detail::time_value(f.reader(), *t, start, f.path_of("lastScaleTime"));
  // The ScalingLimited reasons the HPA controller sets with status True.
  if (auto reason = f.one_of<std::string_view>("scalingLimited", {{"TooManyReplicas", "TooManyReplicas"},
                                                                  {"TooFewReplicas", "TooFewReplicas"},
                                                                  {"ScaleUpLimit", "ScaleUpLimit"},
                                                                  {"ScaleDownLimit", "ScaleDownLimit"}}))
    m.scaling_limited = std::string(*reason);
  return m;
}

DistributedScenarioStep decode_step(const Fields& f, Timestamp start) {
  f.allow({"at", "hpa", "members"});
  DistributedScenarioStep step;
  step.at_written = f.required("at");
  step.at = detail::time_value(f.reader(), step.at_written, start, f.path_of("at"));
  if (const auto* hpa = f.raw("hpa")) {
    auto decoded = decode_federated_hpa(*hpa, f.path_of("hpa"), UnknownFields::Refuse);
    if (decoded) step.hpa = std::move(*decoded);
    else f.reader().fail(decoded.error());
  }
  const Fields members = f.required_object("members");
  for (const auto& [name, value] : members.raw_object().items()) {
    if (name.empty()) members.fail_here("a member name must not be empty");
    step.members.emplace(name, decode_member(members.child(value, members.path_of(name)), start));
  }
  return step;
}

DistributedScenario decode(FieldReader& reader, const json& json) {
  if (!json.is_object()) {
    reader.fail("scenario", "not a JSON object");
    return {};
  }
  const Fields top(reader, json, "", k8s::UnknownFields::Refuse);
  top.allow({"description", "mode", "hpa", "config", "start", "steps"});
  DistributedScenario scenario;
  scenario.hpa = detail::scenario_hpa(top);
  if (auto config = top.object("config")) {
    config->allow({"rebalanceWindowSeconds"});
    if (const auto* w = config->raw("rebalanceWindowSeconds")) {
      scenario.rebalance_window = detail::seconds_value(reader, *w, config->path_of("rebalanceWindowSeconds"));
      if (scenario.rebalance_window.count() < 0) config->fail("rebalanceWindowSeconds", "must not be negative");
    }
  }
  scenario.start = detail::scenario_start(top);
  const auto& steps = detail::scenario_steps(top);
  for (std::size_t i = 0; i < steps.size() && reader.ok(); ++i) {
    const std::string path = detail::index("steps", i);
    scenario.steps.push_back(decode_step(top.child(steps[i], path), scenario.start));
    detail::check_step_time(reader, scenario.steps, scenario.start, path);
  }
  return scenario;
}

}  // namespace

k8s::Expected<DistributedScenario> decode_distributed_scenario(const json& json) {
  FieldReader reader;
  DistributedScenario scenario = decode(reader, json);
  return reader.finish(std::move(scenario));
}

}  // namespace fedmetrics::autoscaler
