#include "fedmetrics/sim/member_hpa_type.hpp"

#include <string>

#include "sim/http_util.hpp"
#include "sim/table_json.hpp"

namespace fedmetrics::sim {

using nlohmann::json;

namespace {

k8s::StatusCause required(std::string field) { return {"FieldValueRequired", "Required value", std::move(field)}; }

k8s::StatusCause invalid(std::string field, const json& value, const std::string& why) {
  return {"FieldValueInvalid", "Invalid value: " + value.dump() + ": " + why, std::move(field)};
}

std::string text(const json& v) { return v.is_string() ? v.get<std::string>() : std::string(); }

// "cpu: 45%/80%" per metric, as kube's printer formats the TARGETS column
// (<unknown> until the controller has measured).
std::string targets(const json& hpa) {
  const auto& spec = hpa.value("spec", json::object());
  const auto& current = hpa.value("status", json::object()).value("currentMetrics", json::array());
  std::string out;
  std::size_t i = 0;
  for (const auto& m : spec.value("metrics", json::array())) {
    if (!out.empty()) out += ", ";
    if (m.value("type", "") != "Resource") {
      out += "<" + text(m.value("type", json())) + ">";
      ++i;
      continue;
    }
    const auto& r = m.value("resource", json::object());
    const auto& target = r.value("target", json::object());
    std::string now = "<unknown>";
    if (i < current.size()) {
      const auto& c = current[i].value("resource", json::object()).value("current", json::object());
      if (c.contains("averageUtilization")) now = std::to_string(c["averageUtilization"].get<std::int64_t>()) + "%";
      else if (c.contains("averageValue")) now = text(c["averageValue"]);
    }
    std::string want = target.contains("averageUtilization")
                           ? std::to_string(target["averageUtilization"].get<std::int64_t>()) + "%"
                           : text(target.value("averageValue", json()));
    out += text(r.value("name", json())) + ": " + now + "/" + want;
    ++i;
  }
  return out.empty() ? "<none>" : out;
}

}  // namespace

ResourceType horizontal_pod_autoscaler_type() {
  ResourceType t{"autoscaling", "v2", "horizontalpodautoscalers", "HorizontalPodAutoscaler", true, true, {"hpa"}};
  t.defaults = default_horizontal_pod_autoscaler;
  t.validate = validate_horizontal_pod_autoscaler;
  return t;
}

// pkg/apis/autoscaling/v2/defaults.go SetDefaults_HorizontalPodAutoscaler.
void default_horizontal_pod_autoscaler(json& hpa) {
  if (!hpa.contains("spec") || !hpa["spec"].is_object()) return;  // validation names it
  auto& spec = hpa["spec"];
  if (!spec.contains("minReplicas") || spec["minReplicas"].is_null()) spec["minReplicas"] = 1;
  if (!spec.contains("metrics") || !spec["metrics"].is_array() || spec["metrics"].empty())
    spec["metrics"] = json::array(
        {{{"type", "Resource"},
          {"resource", {{"name", "cpu"}, {"target", {{"type", "Utilization"}, {"averageUtilization", 80}}}}}}});
}

// pkg/apis/autoscaling/validation ValidateHorizontalPodAutoscaler, its basic
// fields: the scale target named, minReplicas >= 1 (the HPAScaleToZero gate
// is off by default), maxReplicas >= 1 and >= minReplicas.
std::vector<k8s::StatusCause> validate_horizontal_pod_autoscaler(const json& hpa) {
  std::vector<k8s::StatusCause> causes;
  const json spec = hpa.value("spec", json::object());
  const json ref = spec.is_object() ? spec.value("scaleTargetRef", json::object()) : json::object();
  if (text(ref.value("kind", json())).empty()) causes.push_back(required("spec.scaleTargetRef.kind"));
  if (text(ref.value("name", json())).empty()) causes.push_back(required("spec.scaleTargetRef.name"));
  const json min = spec.is_object() ? spec.value("minReplicas", json()) : json();
  const json max = spec.is_object() ? spec.value("maxReplicas", json(0)) : json(0);
  if (!min.is_null() && (!min.is_number_integer() || min.get<std::int64_t>() < 1))
    causes.push_back(invalid("spec.minReplicas", min, "must be greater than or equal to 1"));
  if (!max.is_number_integer() || max.get<std::int64_t>() < 1) {
    causes.push_back(invalid("spec.maxReplicas", max, "must be greater than 0"));
  } else if (min.is_number_integer() && max.get<std::int64_t>() < min.get<std::int64_t>()) {
    causes.push_back(invalid("spec.maxReplicas", max, "must be greater than or equal to `minReplicas`"));
  }
  return causes;
}

json horizontal_pod_autoscaler_table(const json& doc, k8s::Timestamp now) {
  using detail::column;
  bool list = doc.contains("items");
  json items = list ? doc["items"] : json::array({doc});
  json columns =
      json::array({column("Name", "string", 0, "name"), column("Reference", "string", 0),
                   column("Targets", "string", 0), column("MinPods", "string", 0), column("MaxPods", "integer", 0),
                   column("Replicas", "integer", 0), column("Age", "string", 0)});
  json rows = json::array();
  for (const auto& item : items) {
    const auto& spec = item.value("spec", json::object());
    const auto& ref = spec.value("scaleTargetRef", json::object());
    auto created = k8s::parse_time(item["metadata"].value("creationTimestamp", ""));
    json cells = json::array(
        {item["metadata"].value("name", ""), text(ref.value("kind", json())) + "/" + text(ref.value("name", json())),
         targets(item), spec.contains("minReplicas") ? spec["minReplicas"].dump() : std::string("<unset>"),
         spec.value("maxReplicas", 0), item.value("status", json::object()).value("currentReplicas", 0),
         created ? detail::human_duration(now - *created) : std::string("<unknown>")});
    rows.push_back({{"cells", cells}});
  }
  return detail::table_document(std::move(columns), std::move(rows));
}

}  // namespace fedmetrics::sim
