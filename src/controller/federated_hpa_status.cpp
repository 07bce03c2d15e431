#include "fedmetrics/controller/federated_hpa_status.hpp"

#include "fedmetrics/k8s/time.hpp"

namespace fedmetrics::controller {

using nlohmann::json;

namespace {

std::optional<k8s::Timestamp> time_field(const json& object, const char* field) {
  auto it = object.find(field);
  if (it == object.end() || !it->is_string()) return std::nullopt;
  auto parsed = k8s::parse_time(it->get<std::string>());
  if (!parsed) return std::nullopt;
  return *parsed;
}

template <class T>
std::optional<T> integer_field(const json& object, const char* field) {
  auto it = object.find(field);
  if (it == object.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<T>();
}

std::string string_field(const json& object, const char* field) {
  auto it = object.find(field);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

ObservedStatus observed_status(const json& object) {
  ObservedStatus out;
  if (!object.is_object()) return out;
  auto found = object.find("status");
  if (found == object.end() || !found->is_object()) return out;
  const json& status = *found;
  out.status.observed_generation = integer_field<std::int64_t>(status, "observedGeneration");
  out.status.last_scale_time = time_field(status, "lastScaleTime");
  out.status.current_replicas = integer_field<std::int32_t>(status, "currentReplicas").value_or(0);
  if (auto desired = integer_field<std::int32_t>(status, "desiredReplicas")) {
    out.status.desired_replicas = *desired;
    out.has_desired_replicas = true;
  }
  auto conditions = status.find("conditions");
  if (conditions != status.end() && conditions->is_array()) {
    for (const auto& c : *conditions) {
      if (!c.is_object()) continue;
      autoscaler::HorizontalPodAutoscalerCondition condition;
      condition.type = string_field(c, "type");
      if (condition.type.empty()) continue;
      const std::string s = string_field(c, "status");
      condition.status = s == "True"    ? autoscaler::ConditionStatus::True
                         : s == "False" ? autoscaler::ConditionStatus::False
                                        : autoscaler::ConditionStatus::Unknown;
      condition.reason = string_field(c, "reason");
      condition.message = string_field(c, "message");
      condition.last_transition_time = time_field(c, "lastTransitionTime").value_or(k8s::Timestamp{});
      out.status.conditions.push_back(std::move(condition));
    }
  }
  return out;
}

}  // namespace fedmetrics::controller
