#include "fedmetrics/autoscaler/hpa_spec.hpp"

#include <algorithm>
#include <iterator>
#include <utility>

#include "fedmetrics/k8s/ascii.hpp"
#include "json_reader.hpp"

namespace fedmetrics::autoscaler {

using detail::Fields;
using nlohmann::json;

std::string_view to_string(MetricSourceType type) {
  switch (type) {
    case MetricSourceType::Object: return "Object";
    case MetricSourceType::Pods: return "Pods";
    case MetricSourceType::Resource: return "Resource";
    case MetricSourceType::ContainerResource: return "ContainerResource";
    case MetricSourceType::External: return "External";
  }
  return "";
}

std::string_view to_string(MetricTargetType type) {
  switch (type) {
    case MetricTargetType::Utilization: return "Utilization";
    case MetricTargetType::Value: return "Value";
    case MetricTargetType::AverageValue: return "AverageValue";
  }
  return "";
}

namespace {

CrossVersionObjectReference decode_reference(const Fields& f) {
  return detail::decode_reference_as<CrossVersionObjectReference>(f);
}

MetricIdentifier decode_identifier(const Fields& f) {
  f.allow({"name", "selector"});
  MetricIdentifier id;
  id.name = f.string("name").value_or("");
  if (id.name.empty()) f.fail("name", "is required");
  if (auto selector = detail::selector(f, "selector")) {
    id.selector = std::move(*selector);
    id.selector_object = *f.raw("selector");
  }
  return id;
}

// Reads the target the way the controller does, which is not always by its
// type: Resource and External metrics use averageValue whenever it is set,
// Pods metrics only ever read averageValue (the Karmada walkthrough writes
// `type: Value` with `averageValue: 700m`), Object metrics go by the type.
// The effective kind is stored in `type`. A target without the value the
// controller would read cannot be evaluated and is an error; so is a target
// that is not positive, since it divides.
MetricTarget decode_target(const Fields& f, MetricSourceType source) {
  f.allow({"type", "value", "averageValue", "averageUtilization"});
  MetricTarget target;
  if (!f.has("type")) f.fail("type", "is required");
  const auto written = f.one_of<MetricTargetType>("type", {{"Utilization", MetricTargetType::Utilization},
                                                           {"Value", MetricTargetType::Value},
                                                           {"AverageValue", MetricTargetType::AverageValue}});
  target.value = f.quantity("value");
  target.average_value = f.quantity("averageValue");
  target.average_utilization = f.int32("averageUtilization");
  if (!f.ok()) return target;

  auto required_for = [&](std::string_view field, std::string_view what) {
    f.fail(field, "is required for " + std::string(what));
  };
  switch (source) {
    case MetricSourceType::Resource:
    case MetricSourceType::ContainerResource:
      if (target.average_value) {
        target.type = MetricTargetType::AverageValue;
      } else if (target.average_utilization) {
        target.type = MetricTargetType::Utilization;
      } else {
        required_for(written == MetricTargetType::Utilization ? "averageUtilization" : "averageValue",
                     "a resource metric target");
      }
      break;
    case MetricSourceType::Pods:
      if (!target.average_value) required_for("averageValue", "a Pods metric target");
      target.type = MetricTargetType::AverageValue;
      break;
    case MetricSourceType::Object:
      if (written == MetricTargetType::Value) {
        if (!target.value) required_for("value", "a Value target");
      } else if (written == MetricTargetType::AverageValue) {
        if (!target.average_value) required_for("averageValue", "an AverageValue target");
      } else {
        f.fail("type", "must be Value or AverageValue for an Object metric");
      }
      target.type = *written;
      break;
    case MetricSourceType::External:
      if (target.average_value) {
        target.type = MetricTargetType::AverageValue;
      } else if (target.value) {
        target.type = MetricTargetType::Value;
      } else {
        required_for(written == MetricTargetType::AverageValue ? "averageValue" : "value", "an External metric target");
      }
      break;
  }
  if (!f.ok()) return target;
  switch (target.type) {
    case MetricTargetType::Utilization:
      if (*target.average_utilization <= 0) f.fail("averageUtilization", "must be greater than 0");
      break;
    case MetricTargetType::Value:
      if (target.value->sign() <= 0) f.fail("value", "must be positive");
      break;
    case MetricTargetType::AverageValue:
      if (target.average_value->sign() <= 0) f.fail("averageValue", "must be positive");
      break;
  }
  return target;
}

// The member of a MetricSpec that holds each source type's fields.
constexpr std::string_view kMetricSources[] = {"resource", "containerResource", "pods", "object", "external"};

// The object at `key` that a metric of its type needs.
std::optional<Fields> metric_source(const Fields& f, std::string_view key, std::string_view what) {
  auto source = f.object(key);
  if (!source) f.fail(key, "is required for " + std::string(what));
  return source;
}

MetricSpec decode_metric(const Fields& f) {
  MetricSpec m;
  const std::string type = f.string("type").value_or("");
  if (!f.has("type")) f.fail("type", "is required");
  if (f.refuses_unknown() && f.ok()) {
    // One source, the type's ("Resource": "resource"), as the API server
    // requires: a block for another type would be read by nobody.
    std::string own = type;
    if (!own.empty()) own[0] = k8s::ascii_lower(own[0]);
    const bool known_type =
        std::find(std::begin(kMetricSources), std::end(kMetricSources), own) != std::end(kMetricSources);
    for (std::string_view source : kMetricSources) {
      if (known_type && f.has(source) && source != own) {
        f.fail(source, "must not be set for a metric of type " + type);
      }
    }
    f.allow({"type", "resource", "containerResource", "pods", "object", "external"});
  }
  if (!f.ok()) return m;
  if (type == "Resource") {
    m.type = MetricSourceType::Resource;
    auto r = metric_source(f, "resource", "a Resource metric");
    if (!r) return m;
    r->allow({"name", "target"});
    m.resource_name = r->string("name").value_or("");
    if (m.resource_name.empty()) r->fail("name", "is required");
    m.target = decode_target(r->required_object("target"), m.type);
  } else if (type == "ContainerResource") {
    m.type = MetricSourceType::ContainerResource;
    auto r = metric_source(f, "containerResource", "a ContainerResource metric");
    if (!r) return m;
    r->allow({"name", "container", "target"});
    m.resource_name = r->string("name").value_or("");
    if (m.resource_name.empty()) r->fail("name", "is required");
    m.container = r->string("container").value_or("");
    if (m.container.empty()) r->fail("container", "is required");
    m.target = decode_target(r->required_object("target"), m.type);
  } else if (type == "Pods") {
    m.type = MetricSourceType::Pods;
    auto p = metric_source(f, "pods", "a Pods metric");
    if (!p) return m;
    p->allow({"metric", "target"});
    m.metric = decode_identifier(p->required_object("metric"));
    m.target = decode_target(p->required_object("target"), m.type);
  } else if (type == "Object") {
    m.type = MetricSourceType::Object;
    auto o = metric_source(f, "object", "an Object metric");
    if (!o) return m;
    o->allow({"describedObject", "metric", "target"});
    m.described_object = decode_reference(o->required_object("describedObject"));
    m.metric = decode_identifier(o->required_object("metric"));
    m.target = decode_target(o->required_object("target"), m.type);
  } else if (type == "External") {
    m.type = MetricSourceType::External;
    auto e = metric_source(f, "external", "an External metric");
    if (!e) return m;
    e->allow({"metric", "target"});
    m.metric = decode_identifier(e->required_object("metric"));
    m.target = decode_target(e->required_object("target"), m.type);
  } else {
    f.fail("type", "must be Resource, ContainerResource, Pods, Object or External (got \"" + type + "\")");
  }
  return m;
}

HPAScalingPolicy decode_policy(const Fields& p) {
  p.allow({"type", "value", "periodSeconds"});
  HPAScalingPolicy policy;
  if (!p.has("type")) p.fail("type", "is required");
  policy.type =
      p.one_of<ScalingPolicyType>("type", {{"Pods", ScalingPolicyType::Pods}, {"Percent", ScalingPolicyType::Percent}})
          .value_or(ScalingPolicyType::Pods);
  auto value = p.int32("value");
  if (!value) p.fail("value", "is required");
  auto period = p.int32("periodSeconds");
  if (!period) p.fail("periodSeconds", "is required");
  policy.value = value.value_or(0);
  policy.period_seconds = period.value_or(0);
  return policy;
}

HPAScalingRules decode_rules(const Fields& f) {
  f.allow({"stabilizationWindowSeconds", "selectPolicy", "policies", "tolerance"});
  HPAScalingRules rules;
  // Ranges (window <= 3600 s, period <= 1800 s, value > 0) are the API
  // server's admission rules, which simulate does not apply on top
  // (a scenario may try any value); the arithmetic below is defined for any value.
  rules.stabilization_window_seconds = f.int32("stabilizationWindowSeconds");
  rules.select_policy = f.one_of<ScalingPolicySelect>("selectPolicy", {{"Max", ScalingPolicySelect::Max},
                                                                       {"Min", ScalingPolicySelect::Min},
                                                                       {"Disabled", ScalingPolicySelect::Disabled}});
  if (f.has("policies")) {
    std::vector<HPAScalingPolicy> policies;
    f.each_object("policies", [&](const Fields& p) { policies.push_back(decode_policy(p)); });
    rules.policies = std::move(policies);
  }
  rules.tolerance = f.quantity("tolerance");
  if (rules.tolerance && rules.tolerance->sign() < 0) f.fail("tolerance", "must not be negative");
  return rules;
}

FederatedHPASpec decode_spec(const Fields& f) {
  f.allow({"scaleTargetRef", "minReplicas", "maxReplicas", "metrics", "behavior"});
  FederatedHPASpec spec;
  spec.scale_target_ref = decode_reference(f.required_object("scaleTargetRef"));
  spec.min_replicas = f.int32("minReplicas");
  auto max = f.int32("maxReplicas");
  if (!max) f.fail("maxReplicas", "is required");
  spec.max_replicas = max.value_or(0);
  f.each_object("metrics", [&](const Fields& metric) { spec.metrics.push_back(decode_metric(metric)); });
  if (auto behavior = f.object("behavior")) {
    behavior->allow({"scaleUp", "scaleDown"});
    HorizontalPodAutoscalerBehavior b;
    if (auto up = behavior->object("scaleUp")) b.scale_up = decode_rules(*up);
    if (auto down = behavior->object("scaleDown")) b.scale_down = decode_rules(*down);
    spec.behavior = b;
  }
  return spec;
}

HPAScalingRules fill_rules(const std::optional<HPAScalingRules>& given, HPAScalingRules defaults) {
  if (!given) return defaults;
  if (given->select_policy) defaults.select_policy = given->select_policy;
  if (given->stabilization_window_seconds) defaults.stabilization_window_seconds = given->stabilization_window_seconds;
  if (given->policies) defaults.policies = given->policies;
  if (given->tolerance) defaults.tolerance = given->tolerance;
  return defaults;
}

FederatedHPA decode_hpa(const Fields& top) {
  FederatedHPA hpa;
  const bool whole =
      top.has("spec") || (top.refuses_unknown() && (top.has("apiVersion") || top.has("kind") || top.has("metadata")));
  if (!whole) {
    // Only the spec was given.
    hpa.name = "";
    hpa.namespace_name = "default";
    hpa.spec = decode_spec(top);
    return hpa;
  }
  top.allow({"apiVersion", "kind", "metadata", "spec", "status"});
  if (auto meta = top.object("metadata")) {
    detail::allow_object_meta(*meta);
    hpa.name = meta->string("name").value_or("");
    hpa.namespace_name = meta->string("namespace").value_or("default");
    hpa.generation = meta->integer("generation").value_or(0);
  } else {
    hpa.namespace_name = "default";
  }
  hpa.spec = decode_spec(top.required_object("spec"));
  return hpa;
}

}  // namespace

k8s::Expected<FederatedHPASpec> decode_federated_hpa_spec(const json& json, std::string_view path) {
  detail::FieldReader reader;
  FederatedHPASpec spec = decode_spec(Fields(reader, json, std::string(path)));
  return reader.finish(std::move(spec));
}

k8s::Expected<FederatedHPA> decode_federated_hpa(const json& json, std::string_view path, UnknownFields unknown) {
  detail::FieldReader reader;
  FederatedHPA hpa = decode_hpa(Fields(reader, json, std::string(path), detail::reader_rule(unknown)));
  return reader.finish(std::move(hpa));
}

namespace {

// A field error as apimachinery's field.Invalid prints it.
k8s::Error invalid(const std::string& field, std::int64_t value, std::string_view why) {
  return k8s::Error{"Invalid value: " + std::to_string(value) + ": " + std::string(why)}.at(field);
}

std::optional<k8s::Error> validate_rules(const std::optional<HPAScalingRules>& rules, const std::string& path) {
  if (!rules) return std::nullopt;
  // Upstream's MaxStabilizationWindowSeconds and MaxPeriodSeconds.
  constexpr std::int32_t max_window = 3600;
  constexpr std::int32_t max_period = 1800;
  if (const auto& window = rules->stabilization_window_seconds) {
    if (*window < 0)
      return invalid(path + ".stabilizationWindowSeconds", *window, "must be greater than or equal to zero");
    if (*window > max_window)
      return invalid(path + ".stabilizationWindowSeconds", *window,
                     "must be less than or equal to " + std::to_string(max_window));
  }
  if (!rules->policies) return std::nullopt;  // the defaults fill them
  if (rules->policies->empty())
    return k8s::Error{"Required value: must specify at least one Policy"}.at(path + ".policies");
  for (std::size_t i = 0; i < rules->policies->size(); ++i) {
    const auto& policy = (*rules->policies)[i];
    const std::string at = detail::index(path + ".policies", i);
    if (policy.value <= 0) return invalid(at + ".value", policy.value, "must be greater than zero");
    if (policy.period_seconds <= 0)
      return invalid(at + ".periodSeconds", policy.period_seconds, "must be greater than zero");
    if (policy.period_seconds > max_period)
      return invalid(at + ".periodSeconds", policy.period_seconds,
                     "must be less than or equal to " + std::to_string(max_period));
  }
  return std::nullopt;
}

}  // namespace

std::optional<k8s::Error> validate_federated_hpa_spec(const FederatedHPASpec& spec, std::string_view path) {
  const std::string base(path);
  const auto field = [&](std::string_view name) { return detail::join(base, name); };
  if (spec.min_replicas) {
    const std::int32_t lower_bound = allows_scale_to_zero(spec) ? 0 : 1;
    if (*spec.min_replicas < lower_bound)
      return invalid(field("minReplicas"), *spec.min_replicas,
                     "must be greater than or equal to " + std::to_string(lower_bound));
  }
  if (spec.max_replicas < 1) return invalid(field("maxReplicas"), spec.max_replicas, "must be greater than 0");
  if (spec.min_replicas && spec.max_replicas < *spec.min_replicas)
    return invalid(field("maxReplicas"), spec.max_replicas, "must be greater than or equal to `minReplicas`");
  if (spec.behavior) {
    if (auto e = validate_rules(spec.behavior->scale_up, field("behavior.scaleUp"))) return e;
    if (auto e = validate_rules(spec.behavior->scale_down, field("behavior.scaleDown"))) return e;
  }
  return std::nullopt;
}

HPAScalingRules default_scale_up_rules() {
  HPAScalingRules rules;
  rules.stabilization_window_seconds = 0;
  rules.select_policy = ScalingPolicySelect::Max;
  rules.policies = std::vector<HPAScalingPolicy>{
      {ScalingPolicyType::Pods, 4, 15},
      {ScalingPolicyType::Percent, 100, 15},
  };
  return rules;
}

HPAScalingRules default_scale_down_rules() {
  HPAScalingRules rules;
  // stabilization_window_seconds stays unset: the controller's
  // --horizontal-pod-autoscaler-downscale-stabilization fills it.
  rules.select_policy = ScalingPolicySelect::Max;
  rules.policies = std::vector<HPAScalingPolicy>{{ScalingPolicyType::Percent, 100, 15}};
  return rules;
}

FederatedHPASpec with_defaults(FederatedHPASpec spec) {
  if (!spec.min_replicas) spec.min_replicas = 1;
  if (spec.metrics.empty()) {
    MetricSpec cpu;
    cpu.type = MetricSourceType::Resource;
    cpu.resource_name = "cpu";
    cpu.target.type = MetricTargetType::Utilization;
    cpu.target.average_utilization = 80;  // autoscaling.DefaultCPUUtilization
    spec.metrics.push_back(std::move(cpu));
  }
  if (spec.behavior) {
    spec.behavior->scale_up = fill_rules(spec.behavior->scale_up, default_scale_up_rules());
    spec.behavior->scale_down = fill_rules(spec.behavior->scale_down, default_scale_down_rules());
  }
  return spec;
}

bool allows_scale_to_zero(const FederatedHPASpec& spec) {
  if (spec.metrics.empty()) return false;
  for (const auto& m : spec.metrics) {
    if (m.type != MetricSourceType::Object && m.type != MetricSourceType::External) return false;
  }
  return true;
}

nlohmann::ordered_json to_json(const MetricIdentifier& metric) {
  nlohmann::ordered_json out = {{"name", metric.name}};
  if (metric.selector_object) out["selector"] = *metric.selector_object;
  return out;
}

nlohmann::ordered_json to_json(const CrossVersionObjectReference& ref) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  if (!ref.api_version.empty()) out["apiVersion"] = ref.api_version;
  out["kind"] = ref.kind;
  out["name"] = ref.name;
  return out;
}

}  // namespace fedmetrics::autoscaler
