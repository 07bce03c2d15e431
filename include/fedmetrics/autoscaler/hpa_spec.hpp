#pragma once
// The FederatedHPA spec (autoscaling.karmada.io/v1alpha1), which has the shape
// of an autoscaling/v2 HorizontalPodAutoscaler spec: the types, decoding from
// JSON with errors that name the field, and the Kubernetes defaults
// (pkg/apis/autoscaling/v2/defaults.go, mirrored by Karmada's
// SetDefaultsFederatedHPA).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "fedmetrics/k8s/expected.hpp"
#include "fedmetrics/k8s/label_selector.hpp"
#include "fedmetrics/k8s/quantity.hpp"

namespace fedmetrics::autoscaler {

enum class MetricSourceType { Object, Pods, Resource, ContainerResource, External };
enum class MetricTargetType { Utilization, Value, AverageValue };
enum class ScalingPolicySelect { Max, Min, Disabled };
enum class ScalingPolicyType { Pods, Percent };

std::string_view to_string(MetricSourceType type);
std::string_view to_string(MetricTargetType type);

struct CrossVersionObjectReference {
  std::string kind;
  std::string name;
  std::string api_version;
};

// autoscaling/v2 MetricIdentifier. The selector is kept both parsed (to query
// with) and as written (to echo in MetricStatus).
struct MetricIdentifier {
  std::string name;
  std::optional<nlohmann::json> selector_object;  // as written, when given
  k8s::LabelSelector selector;                    // empty when not given
};

struct MetricTarget {
  MetricTargetType type = MetricTargetType::Utilization;
  std::optional<k8s::Quantity> value;
  std::optional<k8s::Quantity> average_value;
  std::optional<std::int32_t> average_utilization;  // percent of request
};

// One entry of spec.metrics. Which members are meaningful depends on `type`:
// Resource uses resource_name; ContainerResource resource_name and container;
// Pods and External metric; Object metric and described_object.
struct MetricSpec {
  MetricSourceType type = MetricSourceType::Resource;
  std::string resource_name;
  std::string container;
  MetricIdentifier metric;
  CrossVersionObjectReference described_object;
  MetricTarget target;
};

struct HPAScalingPolicy {
  ScalingPolicyType type = ScalingPolicyType::Pods;
  std::int32_t value = 0;
  std::int32_t period_seconds = 0;
};

// Unset members take the defaults when behavior is given (see with_defaults).
struct HPAScalingRules {
  std::optional<std::int32_t> stabilization_window_seconds;
  std::optional<ScalingPolicySelect> select_policy;
  std::optional<std::vector<HPAScalingPolicy>> policies;
  std::optional<k8s::Quantity> tolerance;  // a ratio, e.g. 0.05
};

struct HorizontalPodAutoscalerBehavior {
  std::optional<HPAScalingRules> scale_up;
  std::optional<HPAScalingRules> scale_down;
};

struct FederatedHPASpec {
  CrossVersionObjectReference scale_target_ref;
  std::optional<std::int32_t> min_replicas;
  std::int32_t max_replicas = 0;
  std::vector<MetricSpec> metrics;
  std::optional<HorizontalPodAutoscalerBehavior> behavior;
};

struct FederatedHPA {
  std::string name;
  std::string namespace_name;
  std::int64_t generation = 0;
  FederatedHPASpec spec;
};

// What a decoder does with a key it does not read. An object from the API
// server may come from a newer Karmada with fields this program does not
// know: they are ignored. A file a person wrote (a simulate scenario) is
// refused for them, since a misspelled field ("minReplica") would otherwise
// be dropped silently and change the result: "hpa.spec.minReplica: unknown
// field (did you mean \"minReplicas\"?)".
enum class UnknownFields { Ignore, Refuse };

// Decodes a whole FederatedHPA object ({"spec": ...}) or only its spec.
// Errors name the field from `path`, the place of `json` in its document
// ("hpa" gives "hpa.spec.metrics[0].type: ..."). Defaults are not applied;
// see with_defaults. With UnknownFields::Refuse, a key that is not a field of
// the object, its metadata or its spec is an error, and so is a metric
// source that does not match the metric's type (a `pods` block on a
// Resource metric) or a whole object without `spec`.
k8s::Expected<FederatedHPA> decode_federated_hpa(const nlohmann::json& json, std::string_view path = "",
                                                 UnknownFields unknown = UnknownFields::Ignore);
k8s::Expected<FederatedHPASpec> decode_federated_hpa_spec(const nlohmann::json& json, std::string_view path = "");

// What the API server refuses in a FederatedHPA spec that decoding lets
// through (Kubernetes' ValidateHorizontalPodAutoscalerSpec,
// pkg/apis/autoscaling/validation/validation.go, which Karmada's webhook
// applies to FederatedHPAs): minReplicas below 1 (0 is allowed only when
// allows_scale_to_zero), maxReplicas below 1 or below minReplicas, a
// stabilization window outside 0..3600 s, a behavior rule with an empty
// policy list, a policy whose value is not positive or whose period is
// outside 1..1800 s. The first problem, worded as the API server words a
// field error ("spec.maxReplicas: Invalid value: 3: must be greater than or
// equal to `minReplicas`"); nullopt for a spec that can be acted on.
// `path` is where the spec sits in its object.
std::optional<k8s::Error> validate_federated_hpa_spec(const FederatedHPASpec& spec, std::string_view path = "spec");

// The Kubernetes defaults: minReplicas 1; one cpu Utilization 80 % metric when
// none is given; when behavior is given, its unset parts from the default
// scale-up rules (no stabilization, max of 4 pods / 100 % per 15 s) and
// scale-down rules (100 % per 15 s). The scale-down stabilization window stays
// unset: the controller fills it from its own setting, as upstream does.
FederatedHPASpec with_defaults(FederatedHPASpec spec);

HPAScalingRules default_scale_up_rules();
HPAScalingRules default_scale_down_rules();

// True when every metric is Object or External, the only case where the
// Kubernetes API accepts minReplicas 0 (HPAScaleToZero).
bool allows_scale_to_zero(const FederatedHPASpec& spec);

// The metric as JSON in the autoscaling/v2 MetricIdentifier shape (keys in
// the API's order).
nlohmann::ordered_json to_json(const MetricIdentifier& metric);
nlohmann::ordered_json to_json(const CrossVersionObjectReference& ref);

}  // namespace fedmetrics::autoscaler
