#include "fedmetrics/autoscaler/scenario.hpp"

#include "fedmetrics/cron/schedule.hpp"

#include <chrono>
#include <cmath>
#include <limits>
#include <set>
#include <tuple>
#include <utility>

#include "json_reader.hpp"
#include "scenario_common.hpp"

namespace fedmetrics::autoscaler {

using detail::FieldReader;
using detail::Fields;
using nlohmann::json;

namespace {

std::optional<Timestamp> optional_time(const Fields& f, std::string_view key, Timestamp start) {
  const auto* v = f.raw(key);
  if (v == nullptr) return std::nullopt;
  return detail::time_value(f.reader(), *v, start, f.path_of(key));
}

std::optional<std::chrono::nanoseconds> optional_seconds(const Fields& f, std::string_view key) {
  const auto* v = f.raw(key);
  if (v == nullptr) return std::nullopt;
  return detail::seconds_value(f.reader(), *v, f.path_of(key));
}

ResourceList resource_list(const Fields& f) {
  ResourceList list;
  for (const auto& [name, value] : f.raw_object().items()) {
    if (value.is_null()) continue;
    list[name] = f.reader().quantity(value, f.path_of(name));
  }
  return list;
}

ConditionStatus ready_value(FieldReader& reader, const json& v, const std::string& path) {
  if (v.is_boolean()) return v.get<bool>() ? ConditionStatus::True : ConditionStatus::False;
  if (!v.is_string()) {
    reader.fail(path, "not a condition status");
    return ConditionStatus::Unknown;
  }
  return reader.one_of<ConditionStatus>(
      v, path,
      {{"True", ConditionStatus::True}, {"False", ConditionStatus::False}, {"Unknown", ConditionStatus::Unknown}});
}

struct DecodedPod {
  Pod pod;
  std::optional<PodResourceSample> usage;
  std::vector<std::pair<std::string, PodMetricSample>> metrics;
};

// `usage`: per container ({"web": {"cpu": "400m"}}), or flat ({"cpu": "400m"}) for a pod of one container.
std::optional<PodResourceSample> decode_usage(const Fields& f, const Pod& pod, Timestamp step_time, Timestamp start) {
  auto usage = f.object("usage");
  if (!usage) return std::nullopt;
  PodResourceSample sample;
  sample.key = pod.key;
  sample.timestamp = optional_time(f, "usageTimestamp", start).value_or(step_time);
  if (auto window = optional_seconds(f, "usageWindowSeconds")) sample.window = *window;
  bool flat = false;
  bool nested = false;
  for (const auto& [key, value] : usage->raw_object().items()) {
    if (value.is_object()) {
      nested = true;
    } else if (!value.is_null()) {
      flat = true;
    }
  }
  if (flat && nested) usage->fail_here("mixes per-container usage with a flat resource map");
  if (flat) {
    // {"cpu": "400m"}: the usage of the pod's only container.
    if (pod.containers.size() > 1) {
      usage->fail_here("a flat resource map needs a pod with one container; give the usage per container");
    }
    ContainerUsage cu;
    cu.name = pod.containers.empty() ? "" : pod.containers.front().name;
    cu.usage = resource_list(*usage);
    sample.containers.push_back(std::move(cu));
  } else {
    for (const auto& [key, value] : usage->raw_object().items()) {
      if (value.is_null()) continue;
      ContainerUsage cu;
      cu.name = key;
      cu.usage = resource_list(usage->child(value, usage->path_of(key)));
      sample.containers.push_back(std::move(cu));
    }
  }
  return sample;
}

DecodedPod decode_pod(const Fields& f, Timestamp step_time, Timestamp start, const std::string& default_namespace) {
  f.allow({"name", "namespace", "cluster", "phase", "ready", "startTime", "readyTransitionTime", "deleting",
           "containers", "resources", "usage", "usageTimestamp", "usageWindowSeconds", "metrics"});
  DecodedPod out;
  Pod& pod = out.pod;
  auto name = f.string("name").value_or("");
  if (name.empty()) f.fail("name", "is required");
  pod.key = PodKey{f.string("cluster").value_or("default"), f.string("namespace").value_or(default_namespace), name};
  if (auto phase = f.one_of<PodPhase>("phase", {{"Pending", PodPhase::Pending},
                                                {"Running", PodPhase::Running},
                                                {"Succeeded", PodPhase::Succeeded},
                                                {"Failed", PodPhase::Failed},
                                                {"Unknown", PodPhase::Unknown}}))
    pod.phase = *phase;

  const Timestamp an_hour_before = step_time - std::chrono::hours(1);
  pod.start_time = optional_time(f, "startTime", start).value_or(an_hour_before);
  PodReadyCondition ready;
  if (const auto* r = f.raw("ready")) ready.status = ready_value(f.reader(), *r, f.path_of("ready"));
  ready.last_transition_time = optional_time(f, "readyTransitionTime", start).value_or(an_hour_before);
  pod.ready = ready;
  pod.deleting = f.boolean("deleting").value_or(false);

  std::set<std::string> container_names;
  f.each_object("containers", [&](const Fields& c) {
    c.allow({"name", "requests"});
    Container container;
    container.name = c.string("name").value_or("");
    if (container.name.empty()) c.fail("name", "is required");
    if (!container_names.insert(container.name).second)
      c.fail("name", "duplicate container \"" + container.name + "\"");
    if (auto requests = c.object("requests")) container.requests = resource_list(*requests);
    pod.containers.push_back(std::move(container));
  });
  // Pod-level resources, as pod.spec.resources: {"requests": {"cpu": "1"}}.
  if (auto resources = f.object("resources")) {
    resources->allow({"requests"});
    if (auto requests = resources->object("requests")) pod.requests = resource_list(*requests);
  }

  out.usage = decode_usage(f, pod, step_time, start);

  if (auto metrics = f.object("metrics")) {
    for (const auto& [key, value] : metrics->raw_object().items()) {
      if (value.is_null()) continue;
      PodMetricSample sample{pod.key, f.reader().quantity(value, metrics->path_of(key)), step_time};
      out.metrics.emplace_back(key, std::move(sample));
    }
  }
  return out;
}

// A replica count placed in a member: a non-negative 32-bit integer.
std::int32_t member_replicas_value(FieldReader& reader, const nlohmann::json& v, const std::string& path) {
  const std::int64_t n = reader.integer(v, path);
  if (n < 0) reader.fail(path, "must not be negative");
  if (n > std::numeric_limits<std::int32_t>::max()) reader.fail(path, "out of range for a 32-bit integer");
  return reader.ok() ? static_cast<std::int32_t>(n) : 0;
}

// "missingMembers": ["member2"], the members whose part of a value is missing.
std::vector<std::string> missing_members(const Fields& f) {
  std::vector<std::string> out;
  f.each("missingMembers", [&](const json& member, const std::string& path) {
    if (!member.is_string() || member.get<std::string>().empty()) {
      f.reader().fail(path, "not a member name");
      return;
    }
    out.push_back(member.get<std::string>());
  });
  return out;
}

// `metric` of an objectMetrics or externalMetrics entry: its name and the
// selector as a string, "" when it has none.
std::pair<std::string, std::string> metric_identifier(const Fields& f) {
  auto metric = f.required_object("metric");
  metric.allow({"name", "selector"});
  auto name = metric.string("name").value_or("");
  if (name.empty()) metric.fail("name", "is required");
  auto selector = detail::selector(metric, "selector");
  return {std::move(name), selector ? selector->to_string() : std::string()};
}

ObjectMetricValue decode_object_metric(const Fields& f) {
  f.allow({"describedObject", "metric", "value", "missingMembers", "error"});
  ObjectMetricValue out;
  auto described = f.required_object("describedObject");
  described.allow({"apiVersion", "kind", "name"});
  out.kind = described.string("kind").value_or("");
  out.name = described.string("name").value_or("");
  if (out.kind.empty()) described.fail("kind", "is required");
  if (out.name.empty()) described.fail("name", "is required");
  std::tie(out.metric_name, out.selector) = metric_identifier(f);
  out.missing_members = missing_members(f);
  // "error" lets a file say the API failed (docs/simulate.md, "Scenario files").
  if (auto error = f.string("error")) {
    out.value = k8s::Error{*error};
  } else {
    auto value = f.quantity("value");
    if (!value) f.fail("value", "is required");
    out.value = value.value_or(k8s::Quantity());
  }
  return out;
}

ExternalMetricValues decode_external_metric(const Fields& f) {
  f.allow({"metric", "values", "missingMembers", "error"});
  ExternalMetricValues out;
  std::tie(out.metric_name, out.selector) = metric_identifier(f);
  out.missing_members = missing_members(f);
  if (auto error = f.string("error")) {
    out.values = k8s::Error{*error};
    return out;
  }
  if (!f.has("values")) f.fail("values", "is required");
  std::vector<k8s::Quantity> quantities;
  f.each("values",
         [&](const json& value, const std::string& path) { quantities.push_back(f.reader().quantity(value, path)); });
  out.values = std::move(quantities);
  return out;
}

// A map of member name to a replica count (memberReplicas, availableReplicas).
ClusterReplicas member_counts(const Fields& map) {
  ClusterReplicas out;
  for (const auto& [member, replicas] : map.raw_object().items())
    out[member] = member_replicas_value(map.reader(), replicas, map.path_of(member));
  return out;
}

// One cluster group: affinityName (1 to 32 characters, as Karmada's API
// validates it) and clusterNames, at least one.
ScenarioClusterGroup decode_cluster_group(const Fields& f) {
  ScenarioClusterGroup group;
  group.name = f.string("affinityName").value_or("");
  if (group.name.empty()) f.fail("affinityName", "is required");
  else if (group.name.size() > 32) f.fail("affinityName", "must be at most 32 characters");
  f.each("clusterNames", [&](const json& name, const std::string& path) {
    if (!name.is_string() || name.get<std::string>().empty()) f.reader().fail(path, "not a cluster name");
    else group.clusters.push_back(name.get<std::string>());
  });
  if (group.clusters.empty()) f.fail("clusterNames", "must name at least one cluster");
  return group;
}

// `placement`: the primary group inline, its overflow groups after it,
// each named apart (as Karmada validates overflowAffinities).
ScenarioPlacement decode_placement(const Fields& f) {
  f.allow({"affinityName", "clusterNames", "overflowAffinities", "availableReplicas"});
  ScenarioPlacement placement;
  placement.groups.push_back(decode_cluster_group(f));
  f.each_object("overflowAffinities", [&](const Fields& overflow) {
    overflow.allow({"affinityName", "clusterNames"});
    auto group = decode_cluster_group(overflow);
    for (const auto& earlier : placement.groups)
      if (f.ok() && earlier.name == group.name)
        overflow.fail("affinityName", "\"" + group.name + "\" names an earlier group");
    placement.groups.push_back(std::move(group));
  });
  if (auto available = f.object("availableReplicas")) placement.available_replicas = member_counts(*available);
  return placement;
}

ScenarioStep decode_step(const Fields& f, Timestamp start, const std::string& default_namespace, bool placed) {
  f.allow({"at", "replicas", "statusReplicas", "pods", "objectMetrics", "externalMetrics", "memberReplicas",
           "unreadMembers", "availableReplicas"});
  ScenarioStep step;
  const auto& at = f.required("at");
  step.at_written = at;
  step.at = detail::time_value(f.reader(), at, start, f.path_of("at"));
  step.replicas = f.int32("replicas");
  if (step.replicas && *step.replicas < 0) f.fail("replicas", "must not be negative");
  step.status_replicas = f.int32("statusReplicas");
  if (step.status_replicas && *step.status_replicas < 0) f.fail("statusReplicas", "must not be negative");

  std::vector<PodResourceSample> usage;
  std::map<std::string, std::vector<PodMetricSample>, std::less<>> pod_metrics;
  std::set<PodKey> keys;
  f.each_object("pods", [&](const Fields& pod) {
    DecodedPod decoded = decode_pod(pod, step.at, start, default_namespace);
    if (!keys.insert(decoded.pod.key).second) {
      pod.fail_here("duplicate pod " + to_string(decoded.pod.key) +
                    " (pods are identified by cluster, namespace, name)");
    }
    if (decoded.usage) usage.push_back(std::move(*decoded.usage));
    for (auto& [name, sample] : decoded.metrics) pod_metrics[name].push_back(std::move(sample));
    step.pods.push_back(std::move(decoded.pod));
  });
  step.metrics.resource = std::move(usage);
  for (auto& [name, samples] : pod_metrics) step.metrics.pods.emplace(name, std::move(samples));

  f.each_object("objectMetrics",
                [&](const Fields& object) { step.metrics.objects.push_back(decode_object_metric(object)); });
  f.each_object("externalMetrics",
                [&](const Fields& external) { step.metrics.externals.push_back(decode_external_metric(external)); });

  // Several members (docs/autoscaling.md, "Decisions on complete data only").
  if (auto given = f.object("memberReplicas")) {
    if (placed)
      f.fail("memberReplicas", "the scenario's placement schedules the members' replicas: give one or the other");
    step.placement.member_replicas = member_counts(*given);
  }
  if (auto available = f.object("availableReplicas")) {
    if (!placed) f.fail("availableReplicas", "needs the scenario's placement");
    step.available_replicas = member_counts(*available);
  }
  if (auto unread = f.object("unreadMembers")) {
    for (const auto& [member, value] : unread->raw_object().items()) {
      const Fields m = unread->child(value, unread->path_of(member));
      m.allow({"replicas"});
      const auto& replicas = m.required("replicas");
      step.placement.unread_members[member] = member_replicas_value(f.reader(), replicas, m.path_of("replicas"));
    }
  }
  return step;
}

ControllerConfig decode_config(const Fields& f) {
  f.allow(
      {"tolerance", "cpuInitializationPeriodSeconds", "initialReadinessDelaySeconds", "downscaleStabilizationSeconds"});
  ControllerConfig config;
  if (auto tolerance = f.number("tolerance")) {
    if (*tolerance < 0) f.fail("tolerance", "must not be negative");
    config.tolerance = *tolerance;
  }
  if (auto period = optional_seconds(f, "cpuInitializationPeriodSeconds")) {
    config.calculator.cpu_initialization_period = *period;
  }
  if (auto delay = optional_seconds(f, "initialReadinessDelaySeconds"))
    config.calculator.initial_readiness_delay = *delay;
  if (auto window = optional_seconds(f, "downscaleStabilizationSeconds")) config.downscale_stabilization = *window;
  return config;
}

// The scenario's CronFederatedHPA: its target must be the scenario's
// FederatedHPA or that FederatedHPA's workload, and every rule must be able
// to run (schedule and zone included), since a replay cannot show a rule
// that never fires.
CronFederatedHPA decode_cron(FieldReader& reader, const json& json, const FederatedHPA& hpa) {
  if (!reader.ok()) return {};
  auto cron = decode_cron_federated_hpa(json, "cron", UnknownFields::Refuse);
  if (!cron) {
    reader.fail(cron.error());
    return {};
  }
  const auto& target = cron->scale_target_ref;
  const auto& workload = hpa.spec.scale_target_ref;
  const bool federated_hpa = targets_federated_hpa(target) && (hpa.name.empty() || target.name == hpa.name);
  const bool its_workload =
      !targets_federated_hpa(target) && target.kind == workload.kind && target.name == workload.name;
  const std::string spec_path = json.is_object() && json.contains("spec") ? "cron.spec" : "cron";
  if (!federated_hpa && !its_workload)
    reader.fail(spec_path + ".scaleTargetRef", "must be the scenario's FederatedHPA" +
                                                   (hpa.name.empty() ? std::string() : " (\"" + hpa.name + "\")") +
                                                   " or its workload (" + workload.kind + " \"" + workload.name +
                                                   "\"), not " + target.kind + " \"" + target.name + "\"");
  for (std::size_t i = 0; i < cron->rules.size() && reader.ok(); ++i) {
    const auto& rule = cron->rules[i];
    if (rule.invalid) reader.fail(k8s::Error{*rule.invalid});
    // The schedule alone first, so that an unknown zone is blamed on the field that names it.
    const std::string rule_path = detail::index(spec_path + ".rules", i);
    if (auto schedule = cron::Schedule::parse(rule.schedule); !schedule) {
      reader.fail(rule_path + ".schedule", schedule.error().message);
    }
    if (auto zoned = cron::Schedule::parse(rule.schedule, rule.time_zone.value_or("UTC")); !zoned) {
      reader.fail(rule_path + ".timeZone", zoned.error().message);
    }
  }
  return std::move(*cron);
}

// hpa.status.conditions (type, status, reason, message), as on the object.
std::vector<HorizontalPodAutoscalerCondition> decode_conditions(const Fields& top, Timestamp start) {
  std::vector<HorizontalPodAutoscalerCondition> out;
  auto hpa = top.object("hpa");
  if (!hpa) return out;
  auto status = hpa->object("status");
  if (!status) return out;
  // The rest of a status copied from the API server is ignored.
  status->each_object("conditions", [&](const Fields& c) {
    c.allow({"type", "status", "reason", "message", "lastTransitionTime"});
    HorizontalPodAutoscalerCondition condition;
    condition.type = c.string("type").value_or("");
    if (condition.type.empty()) c.fail("type", "is required");
    condition.status = ready_value(c.reader(), c.required("status"), c.path_of("status"));
    condition.reason = c.string("reason").value_or("");
    condition.message = c.string("message").value_or("");
    condition.last_transition_time = optional_time(c, "lastTransitionTime", start).value_or(start);
    out.push_back(std::move(condition));
  });
  return out;
}

Scenario decode(FieldReader& reader, const json& json) {
  if (!json.is_object()) {
    reader.fail("scenario", "not a JSON object");
    return {};
  }
  const Fields top(reader, json, "", k8s::UnknownFields::Refuse);
  top.allow({"description", "mode", "hpa", "config", "start", "cron", "placement", "steps"});
  Scenario scenario;

  scenario.hpa = detail::scenario_hpa(top);

  if (auto config = top.object("config")) scenario.config = decode_config(*config);

  scenario.start = detail::scenario_start(top);
  scenario.conditions = decode_conditions(top, scenario.start);

  if (const auto* cron = top.raw("cron")) scenario.cron = decode_cron(reader, *cron, scenario.hpa);
  if (auto placement = top.object("placement")) scenario.placement = decode_placement(*placement);

  const auto& steps = detail::scenario_steps(top);
  for (std::size_t i = 0; i < steps.size() && reader.ok(); ++i) {
    const std::string path = detail::index("steps", i);
    scenario.steps.push_back(decode_step(top.child(steps[i], path), scenario.start, scenario.hpa.namespace_name,
                                         scenario.placement.has_value()));
    detail::check_step_time(reader, scenario.steps, scenario.start, path);
    if (i == 0 && !scenario.steps.front().replicas)
      reader.fail(detail::join(path, "replicas"), "is required on the first step");
  }
  return scenario;
}

}  // namespace

Timestamp default_scenario_start() {
  // 2024-01-01T00:00:00Z
  return Timestamp(std::chrono::seconds(1704067200));
}

k8s::Expected<Scenario> decode_scenario(const json& json) {
  FieldReader reader;
  Scenario scenario = decode(reader, json);
  return reader.finish(std::move(scenario));
}

}  // namespace fedmetrics::autoscaler
