#include "fedmetrics/autoscaler/simulate.hpp"

#include <algorithm>
#include <chrono>

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
#include "fedmetrics/k8s/quantity.hpp"

namespace fedmetrics::autoscaler {

namespace {

using nlohmann::ordered_json;

constexpr int kBadScenario = 2;

// Conditions in a fixed order, whatever order they were first set in.
ordered_json conditions_json(const std::vector<HorizontalPodAutoscalerCondition>& conditions) {
  ordered_json out = ordered_json::array();
  for (std::string_view type : {"AbleToScale", "ScalingActive", "ScalingLimited", "ScaledToZero"}) {
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
DistributionMember step_member(const std::string& name, const DistributedScenarioMember& given,
                               SimulatedMember& state) {
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

// docs/simulate.md, "Scheduled scaling": the firings in
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

std::string metric_name(const MetricSpec& spec) {
  std::string name;
  switch (spec.type) {
    case MetricSourceType::Resource: return spec.resource_name;
    case MetricSourceType::ContainerResource: return spec.resource_name + "[" + spec.container + "]";
    case MetricSourceType::Pods:
    case MetricSourceType::Object:
    case MetricSourceType::External:
      name = spec.metric.name;
      if (!spec.metric.selector.empty()) name += "{" + spec.metric.selector.to_string() + "}";
      return name;
  }
  return name;
}

std::string quantity_text(std::int64_t milli) {
  return k8s::Quantity::from_milli(milli, k8s::QuantityFormat::DecimalSI).to_string();
}

ReplayMetric replay_metric(const MetricSpec& spec, const std::vector<MetricStatus>& statuses) {
  ReplayMetric m;
  m.name = metric_name(spec);
  m.target_type = spec.target.type;
  switch (spec.target.type) {
    case MetricTargetType::Utilization:
      m.target = spec.target.average_utilization.value_or(0);
      m.target_text = std::to_string(spec.target.average_utilization.value_or(0)) + "%";
      break;
    case MetricTargetType::AverageValue:
    case MetricTargetType::Value: {
      const auto& q = spec.target.type == MetricTargetType::Value ? spec.target.value : spec.target.average_value;
      m.target = q ? q->as_double() : 0;
      m.target_text = q ? q->to_string() : "?";
      break;
    }
  }
  m.current_text = "?";
  for (const auto& status : statuses) {
    if (!same_metric(spec, status)) continue;
    const auto& c = status.current;
    if (spec.target.type == MetricTargetType::Utilization && c.average_utilization) {
      m.current = *c.average_utilization;
      m.current_text = std::to_string(*c.average_utilization) + "%";
    } else if (spec.target.type == MetricTargetType::AverageValue && c.average_value) {
      m.current = static_cast<double>(*c.average_value) / 1000;
      m.current_text = quantity_text(*c.average_value);
    } else if (spec.target.type == MetricTargetType::Value && c.value) {
      m.current = static_cast<double>(*c.value) / 1000;
      m.current_text = quantity_text(*c.value);
    }
    break;
  }
  return m;
}

std::vector<ReplayMetric> replay_metrics(const FederatedHPASpec& spec, const std::vector<MetricStatus>& statuses) {
  std::vector<ReplayMetric> out;
  for (const auto& metric : with_defaults(spec).metrics) out.push_back(replay_metric(metric, statuses));
  return out;
}

std::string deciding_reason(const std::vector<HorizontalPodAutoscalerCondition>& conditions) {
  for (std::string_view type : {"AbleToScale", "ScalingActive"}) {
    const auto* c = find_condition(conditions, type);
    if (c && c->status == ConditionStatus::False) return c->reason;
  }
  const auto* limited = find_condition(conditions, "ScalingLimited");
  if (limited && limited->status == ConditionStatus::True) return limited->reason;
  for (std::string_view type : {"AbleToScale", "ScalingActive"}) {
    if (const auto* c = find_condition(conditions, type)) return c->reason;
  }
  return "";
}

std::string at_text(const nlohmann::json& at) { return at.is_string() ? at.get<std::string>() : at.dump(); }

double seconds_between(Timestamp from, Timestamp to) { return std::chrono::duration<double>(to - from).count(); }

// The cron firings of a step, in words: "cron scale-up: min 20 max 20".
std::vector<std::string> cron_events(const ordered_json& firings) {
  std::vector<std::string> out;
  for (const auto& f : firings) {
    std::string text = "cron " + f["rule"].get<std::string>();
    if (f.contains("failed")) {
      text += " failed: " + f["failed"].get<std::string>();
    } else if (f["applied"].contains("replicas")) {
      text += ": replicas " + f["applied"]["replicas"].dump();
    } else {
      text += ": min " + f["applied"]["minReplicas"].dump() + " max " + f["applied"]["maxReplicas"].dump();
    }
    out.push_back(std::move(text));
  }
  return out;
}

std::vector<std::string> distribution_events(const Distribution& d) {
  std::vector<std::string> out;
  std::string created;
  std::string deleted;
  for (const auto& [name, m] : d.members) {
    if (m.action == MemberAction::Create) created += (created.empty() ? "" : ",") + name;
    if (m.action == MemberAction::Delete) deleted += (deleted.empty() ? "" : ",") + name;
  }
  if (!created.empty()) out.push_back("create " + created);
  if (!deleted.empty()) out.push_back("delete " + deleted);
  for (const auto& mv : d.moves) {
    out.push_back("move max " + std::to_string(mv.max_replicas) + " " + mv.from + "->" + mv.to);
  }
  return out;
}

// "mode": "distributed": the distributor alone, step by step, with the
// members' own HPA decisions given (docs/simulate.md, "Distributed mode").
k8s::Expected<Replay> replay_distributed(const nlohmann::json& parsed) {
  auto scenario = decode_distributed_scenario(parsed);
  if (!scenario) return scenario.error();
  Replay replay;
  replay.mode = ReplayMode::Distributed;
  replay.start = scenario->start;
  replay.name = scenario->hpa.name;
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
    ReplayStep out;
    for (const auto& [name, given] : step.members) out.members[name].replicas = state[name].current_replicas;
    conditions = d.status.conditions;
    if (d.valid) {
      shares = d.shares;
      for (const auto& [name, m] : d.members) {
        if (m.action == MemberAction::Delete) {
          state.erase(name);
          out.members[name].left = true;
          out.members[name].replicas = 0;
        } else {
          state[name].hpa = m.share;
          out.members[name].share = m.share;
        }
      }
    }
    // A member absent from the step whose HPA was never created is gone too.
    for (auto it = state.begin(); it != state.end();) {
      it = step.members.count(it->first) || shares.count(it->first) ? std::next(it) : state.erase(it);
    }
    out.line = distribution_line(step.at_written, d);
    out.at = at_text(step.at_written);
    out.seconds = seconds_between(scenario->start, step.at);
    out.current_replicas = d.status.current_replicas;
    out.desired_replicas = d.status.desired_replicas;
    out.min_replicas = hpa.spec.min_replicas.value_or(1);
    out.max_replicas = hpa.spec.max_replicas;
    // No metrics: a scenario gives no member HPA currentMetrics to aggregate.
    out.reason = deciding_reason(d.status.conditions);
    out.events = distribution_events(d);
    out.moves = d.moves;
    replay.steps.push_back(std::move(out));
  }
  return replay;
}

// The replicas per member at a centralized step: the placement's when the
// step gives one, else the pods listed, with the replicas of the members
// that could not be read.
std::map<std::string, ReplayMember> centralized_members(const ScenarioStep& step, const MemberPlacement& placement) {
  std::map<std::string, ReplayMember> out;
  if (!placement.member_replicas.empty()) {
    for (const auto& [name, replicas] : placement.member_replicas) out[name].replicas = replicas;
    return out;
  }
  for (const auto& pod : step.pods) ++out[pod.key.cluster].replicas;
  for (const auto& [name, replicas] : placement.unread_members) out[name].replicas = replicas;
  return out;
}

// The step's line "placement": the replicas the scenario's placement
// scheduled per member, and why the step's replicas could not be.
ordered_json placement_json(const PlacementReplay::Outcome& outcome) {
  ordered_json out;
  out["clusters"] = ordered_json::object();
  for (const auto& [name, replicas] : outcome.clusters) out["clusters"][name] = replicas;
  if (outcome.unschedulable) out["unschedulable"] = *outcome.unschedulable;
  return out;
}

k8s::Expected<Replay> replay_centralized(const nlohmann::json& parsed, std::ostream& warnings) {
  auto scenario = decode_scenario(parsed);
  if (!scenario) return scenario.error();
  if (auto warning = warning_for(scenario->hpa.spec); !warning.empty()) warnings << warning << "\n";

  Replay replay;
  replay.start = scenario->start;
  replay.name = scenario->hpa.name;
  FederatedHPAStatus status;
  status.conditions = scenario->conditions;
  ScalingHistory history;
  std::int32_t previous_decision = 0;
  FederatedHPA hpa = scenario->hpa;  // a CronFederatedHPA may change its min/max
  // The first interval includes the start itself: "@daily" from a midnight start fires then.
  Timestamp previous_at = scenario->start - std::chrono::nanoseconds(1);
  std::optional<PlacementReplay> placement;
  if (scenario->placement) placement.emplace(*scenario->placement);
  for (std::size_t i = 0; i < scenario->steps.size(); ++i) {
    const auto& step = scenario->steps[i];
    std::optional<ordered_json> cron;
    if (scenario->cron) {
      cron = apply_cron(*scenario->cron, previous_at, step.at, scenario->start, hpa, previous_decision);
      if (!cron) {
        return k8s::Error{"cron: more than " + std::to_string(kMaxFirings) + " firings between steps[" +
                          std::to_string(i == 0 ? 0 : i - 1) + "] and steps[" + std::to_string(i) +
                          "]: a schedule far finer than the steps"};
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
    std::optional<PlacementReplay::Outcome> placed;
    if (placement) {
      placed = placement->place(step, input.scale.spec_replicas);
      input.placement.member_replicas = placed->clusters;
    }

    SyncResult result = sync(hpa, status, std::move(history), input, scenario->config);
    status = result.status;
    history = std::move(result.history);
    previous_decision = result.desired_replicas;

    ReplayStep out;
    out.line["at"] = step.at_written;
    if (cron) {
      out.events = cron_events(*cron);
      out.line["cron"] = std::move(*cron);
    }
    out.line["currentReplicas"] = result.current_replicas;
    out.line["desiredReplicas"] = result.desired_replicas;
    ordered_json metrics = ordered_json::array();
    for (const auto& m : result.status.current_metrics) metrics.push_back(to_json(m));
    out.line["currentMetrics"] = std::move(metrics);
    out.line["conditions"] = conditions_json(result.status.conditions);
    out.line["clusters"] = clusters_json(step.pods);
    if (placed) {
      out.line["placement"] = placement_json(*placed);
      if (placed->unschedulable) out.events.push_back("unschedulable: " + *placed->unschedulable);
    }

    out.at = at_text(step.at_written);
    out.seconds = seconds_between(scenario->start, step.at);
    out.current_replicas = result.current_replicas;
    out.desired_replicas = result.desired_replicas;
    out.min_replicas = hpa.spec.min_replicas.value_or(1);
    out.max_replicas = hpa.spec.max_replicas;
    out.members = centralized_members(step, input.placement);
    out.metrics = replay_metrics(hpa.spec, result.status.current_metrics);
    out.reason = deciding_reason(result.status.conditions);
    out.decision = std::move(result.decision);
    replay.steps.push_back(std::move(out));
  }
  replay.members_unknown =
      std::all_of(replay.steps.begin(), replay.steps.end(), [](const ReplayStep& s) { return s.members.empty(); });
  if (replay.members_unknown) {
    for (auto& s : replay.steps) s.members["replicas"].replicas = s.current_replicas;
  }
  return replay;
}

}  // namespace

k8s::Expected<Replay> replay_scenario(std::istream& scenario_stream, std::ostream& warnings) {
  const std::string text((std::istreambuf_iterator<char>(scenario_stream)), std::istreambuf_iterator<char>());
  const nlohmann::json parsed = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) return k8s::Error{"scenario: not valid JSON"};
  if (parsed.is_object() && parsed.contains("mode") && !parsed["mode"].is_null()) {
    const auto& mode = parsed["mode"];
    if (mode == "distributed") {
      if (parsed.contains("cron")) {
        return k8s::Error{
            "cron: a CronFederatedHPA is replayed in a centralized scenario only (distributed mode gives no "
            "minReplicas to change over time)"};
      }
      return replay_distributed(parsed);
    }
    if (mode != "centralized")
      return k8s::Error{"mode: must be \"centralized\" or \"distributed\" (got " + mode.dump() + ")"};
  }
  return replay_centralized(parsed, warnings);
}

void write_json_lines(const Replay& replay, std::ostream& out) {
  for (const auto& step : replay.steps) {
    out << step.line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  }
  out.flush();
}

int run_simulate(std::istream& scenario, std::ostream& out, std::ostream& err) {
  auto replay = replay_scenario(scenario, err);
  if (!replay) {
    err << replay.error().message << "\n";
    return kBadScenario;
  }
  write_json_lines(*replay, out);
  return 0;
}

}  // namespace fedmetrics::autoscaler
