#include "fedmetrics/autoscaler/autoscaler.hpp"

#include <algorithm>
#include <utility>

#include "decision_rules.hpp"
#include "fedmetrics/k8s/quantity.hpp"

namespace fedmetrics::autoscaler {

using json = nlohmann::ordered_json;

namespace {

constexpr std::string_view kAbleToScale = "AbleToScale";
constexpr std::string_view kScalingActive = "ScalingActive";
constexpr std::string_view kScalingLimited = "ScalingLimited";
constexpr std::string_view kScaledToZero = "ScaledToZero";

std::string milli_string(std::int64_t milli) {
  return k8s::Quantity::from_milli(milli, k8s::QuantityFormat::DecimalSI).to_string();
}

// Why one metric gave no proposal: the ScalingActive condition it sets and
// the error reported for the sync.
struct MetricFailure {
  std::string reason;   // FailedGetResourceMetric, ...
  std::string message;  // the condition's message
  std::string error;
};

MetricFailure failure(std::string reason, const std::string& condition_error, std::string error) {
  return {std::move(reason), "the HPA was unable to compute the replica count: " + condition_error, std::move(error)};
}

struct Proposal {
  std::int32_t replicas = 0;
  std::string metric_name;  // "cpu resource utilization (percentage of request)"
  MetricStatus status;
  std::optional<std::string> incomplete;  // "Object metric qps on Service web misses member2"
  MetricExplanation explanation;
};

struct MetricOutcome {
  std::optional<Proposal> proposal;
  MetricFailure failure;
};

struct Context {
  const FederatedHPA& hpa;
  const SyncInput& input;  // with the unread members' pods added (effective_input)
  const ControllerConfig& config;
  Tolerances tolerances;
  double calibration = 1.0;  // Karmada's, see member_placement.hpp
};

std::string join(const std::vector<std::string>& parts, std::string_view separator) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : std::string(separator)) + p;
  return out;
}

std::string incomplete_message(const std::vector<std::string>& notes) {
  return "incomplete data: " + join(notes, "; ");
}

// An Object or External value that misses a member may justify a scale-up,
// never a scale-down: below the current replicas it proposes the current
// replicas, the rule the HPA applies to missing pods (which count at the
// target on a scale-down). The value is still reported in currentMetrics.
void hold_if_incomplete(const Context& ctx, Proposal& proposal, const std::vector<std::string>& missing,
                        const std::string& what) {
  if (missing.empty()) return;
  proposal.incomplete = what + " misses " + join(missing, ", ") + " (no scale-down on it)";
  proposal.replicas = std::max(proposal.replicas, ctx.input.scale.spec_replicas);
  proposal.explanation.proposal = proposal.replicas;
  proposal.explanation.note = "misses " + join(missing, ", ") + " (no scale-down on it)";
}

MetricOutcome resource_outcome(const Context& ctx, const MetricSpec& spec) {
  const bool container = spec.type == MetricSourceType::ContainerResource;
  const std::string& resource = spec.resource_name;
  const std::string reason = container ? "FailedGetContainerResourceMetric" : "FailedGetResourceMetric";
  const std::string outer = container ? "failed to get " + spec.container + " container metric value: "
                                      : "failed to get " + resource + " resource metric value: ";
  const bool utilization = spec.target.type == MetricTargetType::Utilization;
  const std::string what =
      utilization ? "failed to get " + resource + " utilization: " : "failed to get " + resource + " usage: ";
  auto fail = [&](const std::string& inner) {
    return MetricOutcome{std::nullopt, failure(reason, what + inner, outer + what + inner)};
  };

  if (!ctx.input.metrics.resource) {
    return fail("unable to get metrics for resource " + resource + ": " + ctx.input.metrics.resource.error().message);
  }
  const auto& samples = *ctx.input.metrics.resource;
  const std::int32_t spec_replicas = ctx.input.scale.spec_replicas;
  k8s::Expected<ReplicaCalculation> calc =
      utilization
          ? resource_replicas(spec_replicas, *spec.target.average_utilization, resource, spec.container, ctx.tolerances,
                              ctx.input.pods, samples, ctx.input.now, ctx.config.calculator, ctx.calibration)
          : raw_resource_replicas(spec_replicas, spec.target.average_value->milli_value(), resource, spec.container,
                                  ctx.tolerances, ctx.input.pods, samples, ctx.input.now, ctx.config.calculator,
                                  ctx.calibration);
  if (!calc) return fail(calc.error().message);

  Proposal p;
  p.replicas = calc->replicas;
  p.status.type = spec.type;
  p.status.resource_name = resource;
  p.status.container = spec.container;
  p.status.current.average_value = calc->usage;
  if (utilization) {
    p.status.current.average_utilization = calc->utilization;
    p.metric_name = resource + (container ? " container" : "") + " resource utilization (percentage of request)";
  } else {
    p.metric_name = resource + " resource";
  }
  p.explanation = detail::explain_metric(spec, *calc, p.metric_name);
  return {std::move(p), {}};
}

MetricOutcome pods_outcome(const Context& ctx, const MetricSpec& spec) {
  const std::string& name = spec.metric.name;
  auto fail = [&](const std::string& inner) {
    return MetricOutcome{std::nullopt,
                         failure("FailedGetPodsMetric", inner, "failed to get pods metric value: " + inner)};
  };
  static const std::vector<PodMetricSample> none;
  const std::vector<PodMetricSample>* samples = &none;
  // Keyed with the metric selector; a snapshot without selectors in its keys
  // (a scenario's per-pod values) answers for every selector of the name.
  auto it = ctx.input.metrics.pods.find(pods_metric_key(name, spec.metric.selector.to_string()));
  if (it == ctx.input.metrics.pods.end()) it = ctx.input.metrics.pods.find(name);
  if (it != ctx.input.metrics.pods.end()) {
    if (!it->second) return fail("unable to get metric " + name + ": " + it->second.error().message);
    samples = &*it->second;
  }
  auto calc = pods_metric_replicas(ctx.input.scale.spec_replicas, spec.target.average_value->milli_value(), name,
                                   ctx.tolerances, ctx.input.pods, *samples, ctx.input.now, ctx.config.calculator,
                                   ctx.calibration);
  if (!calc) return fail(calc.error().message);
  Proposal p;
  p.replicas = calc->replicas;
  p.metric_name = "pods metric " + name;
  p.status.type = MetricSourceType::Pods;
  p.status.metric = spec.metric;
  p.status.current.average_value = calc->usage;
  p.explanation = detail::explain_metric(spec, *calc, p.metric_name);
  return {std::move(p), {}};
}

MetricOutcome object_outcome(const Context& ctx, const MetricSpec& spec) {
  const auto& ref = spec.described_object;
  const std::string& name = spec.metric.name;
  // Upstream formats this message with its arguments out of order
  // ("unable to get metric qps: Deployment on ns name/<error>"); ours reads.
  auto fail = [&](const std::string& error) {
    const std::string inner = "unable to get metric " + name + " on " + ref.kind + " " + ctx.hpa.namespace_name + "/" +
                              ref.name + ": " + error;
    return MetricOutcome{std::nullopt,
                         failure("FailedGetObjectMetric", inner, "failed to get object metric value: " + inner)};
  };
  const std::string selector = spec.metric.selector.to_string();
  const ObjectMetricValue* found = nullptr;
  for (const auto& o : ctx.input.metrics.objects) {
    if (o.kind == ref.kind && o.name == ref.name && o.metric_name == name && o.selector == selector) {
      found = &o;
      break;
    }
  }
  if (found == nullptr) return fail("no metric value returned from custom metrics API");
  if (!found->value) return fail(found->value.error().message);
  const std::int64_t usage = found->value->milli_value();

  k8s::Expected<ReplicaCalculation> calc =
      spec.target.type == MetricTargetType::Value
          ? object_metric_replicas(ctx.input.scale.spec_replicas, spec.target.value->milli_value(), usage,
                                   ctx.tolerances, ctx.input.pods, ctx.calibration)
          : object_per_pod_metric_replicas(ctx.input.scale.status_replicas, spec.target.average_value->milli_value(),
                                           usage, ctx.tolerances);
  if (!calc) return fail(calc.error().message);
  Proposal p;
  p.replicas = calc->replicas;
  p.metric_name = ref.kind + " metric " + name;
  p.status.type = MetricSourceType::Object;
  p.status.metric = spec.metric;
  p.status.described_object = ref;
  if (spec.target.type == MetricTargetType::Value) {
    p.status.current.value = calc->usage;
  } else {
    p.status.current.average_value = calc->usage;
  }
  p.explanation = detail::explain_metric(spec, *calc, p.metric_name);
  hold_if_incomplete(ctx, p, found->missing_members, "Object metric " + name + " on " + ref.kind + " " + ref.name);
  return {std::move(p), {}};
}

MetricOutcome external_outcome(const Context& ctx, const MetricSpec& spec) {
  const std::string& name = spec.metric.name;
  const std::string selector = spec.metric.selector.to_string();
  auto fail = [&](const std::string& error) {
    const std::string inner =
        "unable to get external metric " + ctx.hpa.namespace_name + "/" + name + "/" + selector + ": " + error;
    return MetricOutcome{std::nullopt, failure("FailedGetExternalMetric", inner,
                                               "failed to get " + name + " external metric value: " + inner)};
  };
  const ExternalMetricValues* found = nullptr;
  for (const auto& e : ctx.input.metrics.externals) {
    if (e.metric_name == name && e.selector == selector) {
      found = &e;
      break;
    }
  }
  if (found == nullptr) return fail("no metric values returned from external metrics API");
  if (!found->values) return fail(found->values.error().message);
  std::vector<std::int64_t> values;
  for (const auto& q : *found->values) values.push_back(q.milli_value());

  k8s::Expected<ReplicaCalculation> calc =
      spec.target.type == MetricTargetType::Value
          ? external_metric_replicas(ctx.input.scale.spec_replicas, spec.target.value->milli_value(), values,
                                     ctx.tolerances, ctx.input.pods, ctx.calibration)
          : external_per_pod_metric_replicas(ctx.input.scale.status_replicas, spec.target.average_value->milli_value(),
                                             values, ctx.tolerances);
  if (!calc) return fail(calc.error().message);
  Proposal p;
  p.replicas = calc->replicas;
  p.metric_name = "external metric " + name + "(" + selector + ")";
  p.status.type = MetricSourceType::External;
  p.status.metric = spec.metric;
  if (spec.target.type == MetricTargetType::Value) {
    p.status.current.value = calc->usage;
  } else {
    p.status.current.average_value = calc->usage;
  }
  p.explanation = detail::explain_metric(spec, *calc, p.metric_name);
  hold_if_incomplete(ctx, p, found->missing_members, p.metric_name);
  return {std::move(p), {}};
}

MetricOutcome compute_replicas_for_metric(const Context& ctx, const MetricSpec& spec) {
  switch (spec.type) {
    case MetricSourceType::Resource:
    case MetricSourceType::ContainerResource: return resource_outcome(ctx, spec);
    case MetricSourceType::Pods: return pods_outcome(ctx, spec);
    case MetricSourceType::Object: return object_outcome(ctx, spec);
    case MetricSourceType::External: return external_outcome(ctx, spec);
  }
  return {std::nullopt, failure("InvalidMetricSourceType", "unknown metric source type", "unknown metric source type")};
}

struct MetricsOutcome {
  bool failed = false;  // no usable proposal (upstream returns -1)
  std::int32_t replicas = 0;
  std::string metric_name;
  std::vector<MetricStatus> statuses;
  std::optional<std::string> error;
  std::vector<std::string> incomplete;          // the metrics that miss a member
  std::vector<MetricComputation> computations;  // one per spec, in order
  std::vector<MetricExplanation> explanations;  // one per spec, in order
};

// Upstream computeReplicasForMetrics: the largest proposal wins. When some
// metrics fail, the valid ones may still scale up, never down: a failing
// metric might be the one that would hold the count.
MetricsOutcome compute_replicas_for_metrics(const Context& ctx, const std::vector<MetricSpec>& specs,
                                            const std::vector<std::string>& unread,
                                            std::vector<HorizontalPodAutoscalerCondition>& conditions) {
  MetricsOutcome out;
  std::size_t invalid = 0;
  MetricFailure first_failure;
  for (const auto& spec : specs) {
    MetricOutcome outcome = compute_replicas_for_metric(ctx, spec);
    out.computations.push_back({spec.type, outcome.proposal ? std::optional(outcome.proposal->replicas) : std::nullopt,
                                outcome.failure.reason == "InvalidMetricSourceType"});
    out.explanations.push_back(outcome.proposal ? std::move(outcome.proposal->explanation)
                                                : detail::explain_failed_metric(spec, outcome.failure.error));
    if (!outcome.proposal) {
      if (invalid == 0) first_failure = std::move(outcome.failure);
      ++invalid;
      continue;
    }
    if (outcome.proposal->incomplete) out.incomplete.push_back(std::move(*outcome.proposal->incomplete));
    if (out.replicas == 0 || outcome.proposal->replicas > out.replicas) {
      out.replicas = outcome.proposal->replicas;
      out.metric_name = outcome.proposal->metric_name;
    }
    out.statuses.push_back(std::move(outcome.proposal->status));
  }
  if (invalid > 0) {
    out.error = "invalid metrics (" + std::to_string(invalid) + " invalid out of " + std::to_string(specs.size()) +
                "), first error is: " + first_failure.error;
  }
  if (invalid >= specs.size() || (invalid > 0 && out.replicas < ctx.input.scale.spec_replicas)) {
    set_condition(conditions, kScalingActive, ConditionStatus::False, first_failure.reason, first_failure.message,
                  ctx.input.now);
    out.failed = true;
    return out;
  }
  std::string message = "the HPA was able to successfully calculate a replica count from " + out.metric_name;
  std::vector<std::string> notes = unread;
  notes.insert(notes.end(), out.incomplete.begin(), out.incomplete.end());
  if (!notes.empty()) message += "; " + incomplete_message(notes);
  set_condition(conditions, kScalingActive, ConditionStatus::True, "ValidMetricFound", std::move(message),
                ctx.input.now);
  return out;
}

// The unread members, as the status and the Event name them.
std::vector<std::string> unread_notes(const MemberPlacement& placement) {
  std::vector<std::string> notes;
  for (const auto& [member, replicas] : placement.unread_members) {
    notes.push_back("pods of " + member + " could not be read (" + std::to_string(replicas) +
                    " placed replicas counted as missing pods)");
  }
  return notes;
}

json value_status_json(const MetricValueStatus& v) {
  json out = json::object();
  if (v.average_utilization) out["averageUtilization"] = *v.average_utilization;
  if (v.average_value) out["averageValue"] = milli_string(*v.average_value);
  if (v.value) out["value"] = milli_string(*v.value);
  return out;
}

}  // namespace

json to_json(const MetricStatus& status) {
  json out = {{"type", std::string(to_string(status.type))}};
  switch (status.type) {
    case MetricSourceType::Resource:
      out["resource"] = {{"name", status.resource_name}, {"current", value_status_json(status.current)}};
      break;
    case MetricSourceType::ContainerResource:
      out["containerResource"] = {{"name", status.resource_name},
                                  {"container", status.container},
                                  {"current", value_status_json(status.current)}};
      break;
    case MetricSourceType::Pods:
      out["pods"] = {{"metric", to_json(status.metric)}, {"current", value_status_json(status.current)}};
      break;
    case MetricSourceType::Object:
      out["object"] = {{"describedObject", to_json(status.described_object)},
                       {"metric", to_json(status.metric)},
                       {"current", value_status_json(status.current)}};
      break;
    case MetricSourceType::External:
      out["external"] = {{"metric", to_json(status.metric)}, {"current", value_status_json(status.current)}};
      break;
  }
  return out;
}

json to_json(const HorizontalPodAutoscalerCondition& condition) {
  return {{"type", condition.type},
          {"status", std::string(to_string(condition.status))},
          {"lastTransitionTime", k8s::format_time(condition.last_transition_time)},
          {"reason", condition.reason},
          {"message", condition.message}};
}

json to_json(const FederatedHPAStatus& status) {
  json out = json::object();
  if (status.observed_generation) out["observedGeneration"] = *status.observed_generation;
  if (status.last_scale_time) out["lastScaleTime"] = k8s::format_time(*status.last_scale_time);
  out["currentReplicas"] = status.current_replicas;
  out["desiredReplicas"] = status.desired_replicas;
  json metrics = json::array();
  for (const auto& m : status.current_metrics) metrics.push_back(to_json(m));
  if (!metrics.empty()) out["currentMetrics"] = std::move(metrics);
  json conditions = json::array();
  for (const auto& c : status.conditions) conditions.push_back(to_json(c));
  if (!conditions.empty()) out["conditions"] = std::move(conditions);
  return out;
}

void set_condition(std::vector<HorizontalPodAutoscalerCondition>& conditions, std::string_view type,
                   ConditionStatus status, std::string reason, std::string message, Timestamp now) {
  auto it = std::find_if(conditions.begin(), conditions.end(), [&](const auto& c) { return c.type == type; });
  if (it == conditions.end()) {
    conditions.push_back({std::string(type), status, std::move(reason), std::move(message), now});
    return;
  }
  if (it->status != status) it->last_transition_time = now;
  it->status = status;
  it->reason = std::move(reason);
  it->message = std::move(message);
}

const HorizontalPodAutoscalerCondition* find_condition(const std::vector<HorizontalPodAutoscalerCondition>& conditions,
                                                       std::string_view type) {
  auto it = std::find_if(conditions.begin(), conditions.end(), [&](const auto& c) { return c.type == type; });
  return it == conditions.end() ? nullptr : &*it;
}

bool scaled_to_zero(const std::vector<HorizontalPodAutoscalerCondition>& conditions) {
  const auto* c = find_condition(conditions, kScaledToZero);
  return c != nullptr && c->status == ConditionStatus::True;
}

bool has_object_or_external_metrics(const FederatedHPASpec& spec) {
  return std::any_of(spec.metrics.begin(), spec.metrics.end(), [](const MetricSpec& m) {
    return m.type == MetricSourceType::Object || m.type == MetricSourceType::External;
  });
}

Tolerances tolerances_for(const FederatedHPASpec& spec, const ControllerConfig& config) {
  Tolerances t{config.tolerance, config.tolerance};
  if (spec.behavior) {
    if (spec.behavior->scale_up && spec.behavior->scale_up->tolerance) {
      t.scale_up = spec.behavior->scale_up->tolerance->as_double();
    }
    if (spec.behavior->scale_down && spec.behavior->scale_down->tolerance) {
      t.scale_down = spec.behavior->scale_down->tolerance->as_double();
    }
  }
  return t;
}

SyncResult sync(const FederatedHPA& hpa, const FederatedHPAStatus& previous, ScalingHistory history,
                const SyncInput& input, const ControllerConfig& config) {
  const FederatedHPASpec spec = with_defaults(hpa.spec);
  const Timestamp now = input.now;
  // The unread members' replicas join the pods as missing pods, and their
  // stray samples leave (member_placement.hpp).
  SyncInput effective = input;
  effective.pods = with_unread_members(input.pods, input.placement, hpa.namespace_name, now);
  if (effective.metrics.resource) {
    effective.metrics.resource = without_unread_members(std::move(*effective.metrics.resource), input.placement);
  }
  for (auto& [name, samples] : effective.metrics.pods) {
    if (samples) samples = without_unread_members(std::move(*samples), input.placement);
  }
  const Context ctx{hpa, effective, config, tolerances_for(spec, config),
                    calibration(input.placement, input.scale.spec_replicas)};
  const std::vector<std::string> unread = unread_notes(input.placement);

  SyncResult result;
  FederatedHPAStatus& status = result.status;
  status.observed_generation = hpa.generation;
  status.last_scale_time = previous.last_scale_time;
  status.desired_replicas = previous.desired_replicas;
  status.conditions = previous.conditions;
  auto& conditions = status.conditions;

  set_condition(conditions, kAbleToScale, ConditionStatus::True, "SucceededGetScale",
                "the HPA controller was able to get the target's current scale", now);
  const std::int32_t current = input.scale.spec_replicas;
  result.current_replicas = current;
  status.current_replicas = current;
  record_initial_recommendation(history, current, now);

  const std::int32_t min_replicas = spec.min_replicas.value_or(1);
  const std::int32_t max_replicas = spec.max_replicas;
  std::int32_t desired = 0;
  bool rescale = true;
  Decision& decision = result.decision;
  detail::start_decision(decision, input, ctx.tolerances, ctx.calibration, min_replicas, max_replicas);

  // Scale to zero as Kubernetes 1.37 does it (HPAScaleToZero, beta and on
  // by default; the condition-based semantics of kubernetes/kubernetes#135118,
  // pkg/controller/podautoscaler/horizontal.go reconcileAutoscaler): the
  // ScaledToZero condition tells a zero the autoscaler made from one an
  // operator made. From a zero of its own the autoscaler computes the metrics
  // again when an Object or External metric can wake the target, or when
  // minReplicas was raised above 0 since; any other target at 0 replicas is
  // left alone.
  const bool was_scaled_to_zero = scaled_to_zero(previous.conditions);
  const bool object_or_external = has_object_or_external_metrics(spec);
  const bool from_own_zero = current == 0 && was_scaled_to_zero && (min_replicas != 0 || object_or_external);

  if (current == 0 && !from_own_zero) {
    // A target scaled to zero by hand (or before this condition existed) is left alone.
    rescale = false;
    set_condition(conditions, kScalingActive, ConditionStatus::False, "ScalingDisabled",
                  "scaling is disabled since the replica count of the target is zero", now);
    detail::explain_without_metrics(decision, rule::kScalingDisabled);
  } else if (current > max_replicas) {
    result.rescale_reason = "Current number of replicas above Spec.MaxReplicas";
    desired = max_replicas;
    detail::explain_without_metrics(decision, rule::kAboveMaxReplicas);
  } else if (current != 0 && current < min_replicas) {
    result.rescale_reason = "Current number of replicas below Spec.MinReplicas";
    desired = min_replicas;
    detail::explain_without_metrics(decision, rule::kBelowMinReplicas);
  } else {
    MetricsOutcome metrics = compute_replicas_for_metrics(ctx, spec.metrics, unread, conditions);
    status.current_metrics = std::move(metrics.statuses);
    result.error = std::move(metrics.error);
    result.metric_computations = std::move(metrics.computations);
    decision.metrics = std::move(metrics.explanations);
    std::vector<std::string> notes = unread;
    notes.insert(notes.end(), metrics.incomplete.begin(), metrics.incomplete.end());
    if (!notes.empty()) result.incomplete = incomplete_message(notes);
    if (metrics.failed) {
      // The decision keeps the current count; upstream keeps the previous
      // status.desiredReplicas as well.
      result.desired_replicas = current;
      decision.desired_replicas = current;
      decision.rule = rule::kMetricsFailed;
      decision.detail = metrics.error ? *metrics.error : "no metric gave a proposal";
      result.history = history;
      result.history_without_scale_event = std::move(history);
      return result;
    }
    std::string rescale_metric;
    if (metrics.replicas > desired) {
      desired = metrics.replicas;
      rescale_metric = metrics.metric_name;
    }
    if (desired > current) result.rescale_reason = rescale_metric + " above target";
    if (desired < current) result.rescale_reason = "All metrics below target";

    Normalization norm = spec.behavior ? normalize_desired_replicas_with_behaviors(history, *spec.behavior, current,
                                                                                   desired, min_replicas, max_replicas,
                                                                                   now, config.downscale_stabilization)
                                       : normalize_desired_replicas(history, current, desired, min_replicas,
                                                                    max_replicas, now, config.downscale_stabilization);
    set_condition(conditions, kAbleToScale, ConditionStatus::True, norm.able_to_scale_reason,
                  norm.able_to_scale_message, now);
    set_condition(conditions, kScalingLimited, norm.scaling_limited ? ConditionStatus::True : ConditionStatus::False,
                  norm.scaling_limited_reason, norm.scaling_limited_message, now);
    desired = norm.desired_replicas;
    decision.proposal = metrics.replicas;
    decision.proposal_metric = metrics.metric_name;
    detail::explain_normalization(decision, spec, norm, history, config.downscale_stabilization, now);
    // From its own zero the target comes back to at least minReplicas.
    if (current == 0 && min_replicas != 0 && was_scaled_to_zero && desired < min_replicas) {
      desired = min_replicas;
      decision.rule = rule::kScaledFromZero;
      decision.detail = "from its own zero the target comes back to minReplicas " + std::to_string(min_replicas);
    }
    rescale = desired != current;
  }

  result.history_without_scale_event = history;
  if (rescale) {
    set_condition(conditions, kAbleToScale, ConditionStatus::True, "SucceededRescale",
                  "the HPA controller was able to update the target scale to " + std::to_string(desired), now);
    store_scale_event(history, spec.behavior, current, desired, now);
    status.last_scale_time = now;
    if (current > 0 && desired == 0 && min_replicas == 0 && object_or_external) {
      set_condition(conditions, kScaledToZero, ConditionStatus::True, "ScaledToZero",
                    "the HPA controller scaled the workload to zero", now);
      decision.rule = rule::kScaledToZero;
      decision.detail = "minReplicas 0 with an Object or External metric: scaled to zero (" + decision.detail + ")";
    } else {
      // Any other scale, from zero or not, as the merged upstream code and its
      // integration test (test/integration/podautoscaler, TestHPAScaleToZero)
      // have it.
      set_condition(conditions, kScaledToZero, ConditionStatus::False, "NotScaledToZero",
                    "the HPA controller did not scale the workload to zero", now);
    }
  } else {
    desired = current;
  }
  result.rescale = rescale;
  result.desired_replicas = desired;
  decision.desired_replicas = desired;
  status.desired_replicas = desired;
  result.history = std::move(history);
  return result;
}

RescaleFailure rescale_failed(const SyncResult& result, const FederatedHPAStatus& previous, const std::string& error,
                              Timestamp now) {
  RescaleFailure out{result.status, result.history_without_scale_event};
  set_condition(out.status.conditions, kAbleToScale, ConditionStatus::False, "FailedUpdateScale",
                "the HPA controller was unable to update the target scale: " + error, now);
  out.status.desired_replicas = previous.desired_replicas;
  out.status.last_scale_time = previous.last_scale_time;
  // Upstream sets ScaledToZero only once the scale was written.
  auto& conditions = out.status.conditions;
  std::erase_if(conditions, [](const auto& c) { return c.type == kScaledToZero; });
  if (const auto* before = find_condition(previous.conditions, kScaledToZero)) conditions.push_back(*before);
  return out;
}

bool same_metric(const MetricSpec& spec, const MetricStatus& status) {
  if (spec.type != status.type) return false;
  switch (spec.type) {
    case MetricSourceType::Resource: return spec.resource_name == status.resource_name;
    case MetricSourceType::ContainerResource:
      return spec.resource_name == status.resource_name && spec.container == status.container;
    case MetricSourceType::Pods:
    case MetricSourceType::External:
      return spec.metric.name == status.metric.name &&
             spec.metric.selector.to_string() == status.metric.selector.to_string();
    case MetricSourceType::Object:
      return spec.metric.name == status.metric.name &&
             spec.metric.selector.to_string() == status.metric.selector.to_string() &&
             spec.described_object.kind == status.described_object.kind &&
             spec.described_object.name == status.described_object.name;
  }
  return false;
}

}  // namespace fedmetrics::autoscaler
