#include "fedmetrics/autoscaler/simulate.hpp"

#include <istream>
#include <iterator>
#include <map>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "fedmetrics/autoscaler/autoscaler.hpp"
#include "fedmetrics/autoscaler/scenario.hpp"

namespace fedmetrics::autoscaler {

namespace {

using nlohmann::ordered_json;

constexpr int kBadScenario = 2;

// Conditions in a fixed order, whatever order they were first set in.
ordered_json conditions_json(const std::vector<HorizontalPodAutoscalerCondition>& conditions) {
  ordered_json out = ordered_json::array();
  for (std::string_view type : {"AbleToScale", "ScalingActive", "ScalingLimited"}) {
    if (const auto* c = find_condition(conditions, type)) {
      out.push_back({{"type", c->type},
                     {"status", std::string(to_string(c->status))},
                     {"reason", c->reason},
                     {"message", c->message}});
    }
  }
  return out;
}

ordered_json clusters_json(const std::vector<Pod>& pods) {
  struct Counts {
    int pods = 0;
    int ready = 0;
  };
  std::map<std::string, Counts> clusters;
  for (const auto& pod : pods) {
    auto& c = clusters[pod.key.cluster];
    ++c.pods;
    if (is_running_and_ready(pod)) ++c.ready;
  }
  ordered_json out = ordered_json::object();
  for (const auto& [name, c] : clusters) out[name] = {{"pods", c.pods}, {"readyPods", c.ready}};
  return out;
}

std::string warning_for(const FederatedHPASpec& spec) {
  if (spec.min_replicas && *spec.min_replicas == 0 && !allows_scale_to_zero(spec)) {
    return "warning: hpa: minReplicas 0 needs every metric to be Object or External; the Kubernetes API would "
           "reject this FederatedHPA (evaluated as written)";
  }
  if (spec.min_replicas && *spec.min_replicas > spec.max_replicas) {
    return "warning: hpa: minReplicas is greater than maxReplicas; the Kubernetes API would reject this "
           "FederatedHPA (evaluated as written)";
  }
  return "";
}

}  // namespace

int run_simulate(std::istream& scenario_stream, std::ostream& out, std::ostream& err) {
  const std::string text((std::istreambuf_iterator<char>(scenario_stream)), std::istreambuf_iterator<char>());
  const nlohmann::json parsed = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) {
    err << "scenario: not valid JSON\n";
    return kBadScenario;
  }
  auto scenario = decode_scenario(parsed);
  if (!scenario) {
    err << scenario.error().message << "\n";
    return kBadScenario;
  }
  if (auto warning = warning_for(scenario->hpa.spec); !warning.empty()) err << warning << "\n";

  FederatedHPAStatus status;
  ScalingHistory history;
  std::int32_t previous_decision = 0;
  for (const auto& step : scenario->steps) {
    SyncInput input;
    input.scale.spec_replicas = step.replicas.value_or(previous_decision);
    input.scale.status_replicas = step.status_replicas.value_or(input.scale.spec_replicas);
    input.pods = step.pods;
    input.metrics = step.metrics;
    input.placement = step.placement;
    input.now = step.at;

    SyncResult result = sync(scenario->hpa, status, std::move(history), input, scenario->config);
    status = result.status;
    history = std::move(result.history);
    previous_decision = result.desired_replicas;

    ordered_json line;
    line["at"] = step.at_written;
    line["currentReplicas"] = result.current_replicas;
    line["desiredReplicas"] = result.desired_replicas;
    ordered_json metrics = ordered_json::array();
    for (const auto& m : result.status.current_metrics) metrics.push_back(to_json(m));
    line["currentMetrics"] = std::move(metrics);
    line["conditions"] = conditions_json(result.status.conditions);
    line["clusters"] = clusters_json(step.pods);
    out << line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  }
  out.flush();
  return 0;
}

}  // namespace fedmetrics::autoscaler
