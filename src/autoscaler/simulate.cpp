#include "fedmetrics/autoscaler/simulate.hpp"

#include <algorithm>

#include "fedmetrics/cron/schedule.hpp"

#include <istream>
#include <iterator>
#include <map>
#include <optional>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "fedmetrics/autoscaler/autoscaler.hpp"
#include "fedmetrics/autoscaler/distributed_scenario.hpp"
#include "fedmetrics/autoscaler/distributor.hpp"
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

// What the simulation knows of one member between steps.
struct SimulatedMember {
  std::int32_t weight = 1;
  std::int32_t current_replicas = 0;
  std::int32_t desired_replicas = 0;
  std::optional<MemberShare> hpa;  // its HPA's min/max, once it exists
};

// The member HPA as the step gives it: min/max from the previous decision
// unless overridden, replicas carried over, lastScaleTime and
// ScalingLimited only when the step says so.
DistributionMember step_member(const std::string& name, const DistributedScenarioMember& given, SimulatedMember& state) {
  state.weight = given.weight.value_or(state.weight);
  state.current_replicas = given.current_replicas.value_or(state.current_replicas);
  state.desired_replicas = given.desired_replicas.value_or(state.desired_replicas);
  if (given.min_replicas || given.max_replicas) {
    MemberShare share = state.hpa.value_or(MemberShare{});
    share.min_replicas = given.min_replicas.value_or(share.min_replicas);
    share.max_replicas = given.max_replicas.value_or(share.max_replicas);
    state.hpa = share;
  }
  DistributionMember m;
  m.name = name;
  m.weight = state.weight;
  if (!state.hpa) return m;  // no HPA yet: to be created
  m.state = MemberHPAState::Read;
  m.hpa.min_replicas = state.hpa->min_replicas;
  m.hpa.max_replicas = state.hpa->max_replicas;
  m.hpa.current_replicas = state.current_replicas;
  m.hpa.desired_replicas = state.desired_replicas;
  m.hpa.last_scale_time = given.last_scale_time;
  if (given.scaling_limited) {
    m.hpa.conditions.push_back({"ScalingLimited", ConditionStatus::True, *given.scaling_limited, "", Timestamp{}});
  }
  return m;
}

ordered_json distribution_line(const nlohmann::json& at, const Distribution& d) {
  ordered_json line;
  line["at"] = at;
  ordered_json members = ordered_json::object();
  for (const auto& [name, m] : d.members) {
    ordered_json entry = ordered_json::object();
    if (m.action != MemberAction::Delete) {
      entry["minReplicas"] = m.share.min_replicas;
      entry["maxReplicas"] = m.share.max_replicas;
    }
    entry["action"] = std::string(to_string(m.action));
    members[name] = std::move(entry);
  }
  line["members"] = std::move(members);
  ordered_json moves = ordered_json::array();
  for (const auto& mv : d.moves) moves.push_back({{"from", mv.from}, {"to", mv.to}, {"maxReplicas", mv.max_replicas}});
  line["moves"] = std::move(moves);
  line["currentReplicas"] = d.status.current_replicas;
  line["desiredReplicas"] = d.status.desired_replicas;
  line["conditions"] = conditions_json(d.status.conditions);
  ordered_json events = ordered_json::array();
  for (const auto& e : d.events) {
    events.push_back({{"type", e.warning ? "Warning" : "Normal"}, {"reason", e.reason}, {"message", e.message}});
  }
  line["events"] = std::move(events);
  return line;
}

// cron.md, "fedmetrics simulate with a CronFederatedHPA": the firings in
// (from, to], in time order (ties in rule order), applied to the
// FederatedHPA's min/max or to the scale the next step starts from, each
// reported as applied or failed. nullopt when there are more than
// kMaxFirings (a schedule far too fine for the steps).
constexpr std::size_t kMaxFirings = 100'000;
std::optional<ordered_json> apply_cron(const CronFederatedHPA& cron, Timestamp from, Timestamp to, Timestamp origin,
                                       FederatedHPA& hpa, std::int32_t& scale_replicas) {
  struct Firing {
    Timestamp at;
    std::size_t rule;
  };
  std::vector<Firing> firings;
  for (std::size_t i = 0; i < cron.rules.size(); ++i) {
    const auto& rule = cron.rules[i];
    if (rule.suspend) continue;
    auto schedule = cron::Schedule::parse(rule.schedule, rule.time_zone.value_or("UTC"));
    if (!schedule) continue;  // decode_scenario refused it already
    for (auto t = schedule->next(from, origin); t && *t <= to; t = schedule->next(*t, origin)) {
      firings.push_back({*t, i});
      if (firings.size() > kMaxFirings) return std::nullopt;
    }
  }
  std::stable_sort(firings.begin(), firings.end(), [](const Firing& a, const Firing& b) { return a.at < b.at; });
  ordered_json out = ordered_json::array();
  for (const auto& f : firings) {
    const auto& rule = cron.rules[f.rule];
    ordered_json entry;
    entry["rule"] = rule.name;
    entry["scheduleTime"] = k8s::format_time(f.at);
    if (targets_federated_hpa(cron.scale_target_ref)) {
      auto applied = apply_to_federated_hpa(rule, hpa.spec);
      if (applied) {
        hpa.spec.min_replicas = applied->min_replicas;
        hpa.spec.max_replicas = *applied->max_replicas;
        entry["applied"] = {{"minReplicas", *applied->min_replicas}, {"maxReplicas", *applied->max_replicas}};
      } else {
        entry["failed"] = applied.error().message;
      }
    } else {
      scale_replicas = *rule.target_replicas;
      entry["applied"] = {{"replicas", scale_replicas}};
    }
    out.push_back(std::move(entry));
  }
  return out;
}

// "mode": "distributed": the distributor alone, step by step, with the
// members' own HPA decisions given (distributed.md, "fedmetrics simulate").
int run_distributed(const nlohmann::json& parsed, std::ostream& out, std::ostream& err) {
  auto scenario = decode_distributed_scenario(parsed);
  if (!scenario) {
    err << scenario.error().message << "\n";
    return kBadScenario;
  }
  FederatedHPA hpa = scenario->hpa;
  std::map<std::string, SimulatedMember, std::less<>> state;
  Shares shares;
  std::vector<HorizontalPodAutoscalerCondition> conditions;
  for (const auto& step : scenario->steps) {
    if (step.hpa) hpa = *step.hpa;
    DistributionInput input;
    input.spec = hpa.spec;
    input.previous = shares;
    input.rebalance_window = scenario->rebalance_window;
    input.now = step.at;
    input.previous_conditions = conditions;
    for (const auto& [name, given] : step.members) input.members.push_back(step_member(name, given, state[name]));

    const Distribution d = distribute(input);
    conditions = d.status.conditions;
    if (d.valid) {
      shares = d.shares;
      for (const auto& [name, m] : d.members) {
        if (m.action == MemberAction::Delete) {
          state.erase(name);
        } else {
          state[name].hpa = m.share;
        }
      }
    }
    // A member absent from the step whose HPA was never created is gone too.
    for (auto it = state.begin(); it != state.end();) {
      it = step.members.count(it->first) || shares.count(it->first) ? std::next(it) : state.erase(it);
    }
    out << distribution_line(step.at_written, d).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  }
  out.flush();
  return 0;
}

}  // namespace

int run_simulate(std::istream& scenario_stream, std::ostream& out, std::ostream& err) {
  const std::string text((std::istreambuf_iterator<char>(scenario_stream)), std::istreambuf_iterator<char>());
  const nlohmann::json parsed = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) {
    err << "scenario: not valid JSON\n";
    return kBadScenario;
  }
  if (parsed.is_object() && parsed.contains("mode") && !parsed["mode"].is_null()) {
    const auto& mode = parsed["mode"];
    if (mode == "distributed") {
      if (parsed.contains("cron")) {
        err << "cron: a CronFederatedHPA is replayed in a centralized scenario only (distributed mode gives no "
               "minReplicas to change over time)\n";
        return kBadScenario;
      }
      return run_distributed(parsed, out, err);
    }
    if (mode != "centralized") {
      err << "mode: must be \"centralized\" or \"distributed\" (got " << mode.dump() << ")\n";
      return kBadScenario;
    }
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
  FederatedHPA hpa = scenario->hpa;  // a CronFederatedHPA may change its min/max
  // The first interval includes the start itself: "@daily" from a midnight start fires then.
  Timestamp previous_at = scenario->start - std::chrono::nanoseconds(1);
  for (std::size_t i = 0; i < scenario->steps.size(); ++i) {
    const auto& step = scenario->steps[i];
    std::optional<ordered_json> cron;
    if (scenario->cron) {
      cron = apply_cron(*scenario->cron, previous_at, step.at, scenario->start, hpa, previous_decision);
      if (!cron) {
        err << "cron: more than " << kMaxFirings << " firings between steps[" << (i == 0 ? 0 : i - 1) << "] and steps["
            << i << "]: a schedule far finer than the steps\n";
        return kBadScenario;
      }
    }
    previous_at = step.at;
    SyncInput input;
    input.scale.spec_replicas = step.replicas.value_or(previous_decision);
    input.scale.status_replicas = step.status_replicas.value_or(input.scale.spec_replicas);
    input.pods = step.pods;
    input.metrics = step.metrics;
    input.placement = step.placement;
    input.now = step.at;

    SyncResult result = sync(hpa, status, std::move(history), input, scenario->config);
    status = result.status;
    history = std::move(result.history);
    previous_decision = result.desired_replicas;

    ordered_json line;
    line["at"] = step.at_written;
    if (cron) line["cron"] = std::move(*cron);
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
