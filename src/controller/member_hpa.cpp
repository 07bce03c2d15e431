#include "fedmetrics/controller/member_hpa.hpp"

#include "fedmetrics/controller/federated_hpa_status.hpp"
#include "fedmetrics/k8s/quantity.hpp"

namespace fedmetrics::controller {

using nlohmann::json;

namespace {

constexpr std::string_view kFedmetrics = "fedmetrics";

const json& field(const json& object, std::string_view key) {
  static const json null;
  if (!object.is_object()) return null;
  auto it = object.find(key);
  return it == object.end() ? null : *it;
}

std::string text(const json& value) { return value.is_string() ? value.get<std::string>() : std::string(); }

std::string label(const json& object, std::string_view key) {
  return text(field(field(field(object, "metadata"), "labels"), key));
}

// The member's apiserver canonicalizes quantities ("1000m" comes back "1").
bool same_quantity(const json& a, const json& b) {
  if (!a.is_string() || !b.is_string()) return false;
  auto qa = k8s::Quantity::parse(a.get<std::string>());
  auto qb = k8s::Quantity::parse(b.get<std::string>());
  return qa && qb && qa->milli_value() == qb->milli_value();
}

// True when `have` holds everything `want` says: objects may carry more keys
// (the member's defaulting adds them), arrays match element by element.
bool covers(const json& have, const json& want, std::string_view key = "") {
  if (want.is_object()) {
    if (!have.is_object()) return false;
    for (auto it = want.begin(); it != want.end(); ++it) {
      auto found = have.find(it.key());
      if (found == have.end() || !covers(*found, it.value(), it.key())) return false;
    }
    return true;
  }
  if (want.is_array()) {
    if (!have.is_array() || have.size() != want.size()) return false;
    for (std::size_t i = 0; i < want.size(); ++i) {
      if (!covers(have[i], want[i])) return false;
    }
    return true;
  }
  if (have == want) return true;
  return (key == "value" || key == "averageValue") && same_quantity(have, want);
}

bool differs(const json& existing, const json& desired) {
  const json& have = field(existing, "spec");
  const json& want = desired["spec"];
  for (const char* key : {"scaleTargetRef", "minReplicas", "maxReplicas", "metrics"}) {
    if (!covers(field(have, key), want[key])) return true;
  }
  // behavior: removed from the FederatedHPA is removed from the member.
  if (want.contains("behavior") ? !covers(field(have, "behavior"), want["behavior"])
                                : !field(have, "behavior").is_null()) {
    return true;
  }
  return !covers(field(field(existing, "metadata"), "labels"), desired["metadata"]["labels"]);
}

json updated(json existing, const json& desired) {
  json& spec = existing["spec"];
  if (!spec.is_object()) spec = json::object();
  for (auto it = desired["spec"].begin(); it != desired["spec"].end(); ++it) spec[it.key()] = it.value();
  if (!desired["spec"].contains("behavior")) spec.erase("behavior");
  json& labels = existing["metadata"]["labels"];
  if (!labels.is_object()) labels = json::object();
  labels.update(desired["metadata"]["labels"]);
  return existing;
}

std::optional<std::int64_t> milli(const json& value) {
  if (value.is_number_integer()) return value.get<std::int64_t>() * 1000;
  if (!value.is_string()) return std::nullopt;
  auto q = k8s::Quantity::parse(value.get<std::string>());
  if (!q) return std::nullopt;
  return q->milli_value();
}

autoscaler::MetricIdentifier identifier(const json& in) {
  autoscaler::MetricIdentifier id;
  id.name = text(field(in, "name"));
  const json& selector = field(in, "selector");
  if (selector.is_object()) {
    if (auto parsed = k8s::LabelSelector::from_object(selector)) {
      id.selector = *parsed;
      id.selector_object = selector;
    }
  }
  return id;
}

// One entry of status.currentMetrics; nullopt for a type this version does not know.
std::optional<autoscaler::MetricStatus> metric_status(const json& in) {
  using autoscaler::MetricSourceType;
  autoscaler::MetricStatus out;
  const std::string type = text(field(in, "type"));
  const json* source = nullptr;
  if (type == "Resource") {
    out.type = MetricSourceType::Resource;
    source = &field(in, "resource");
    out.resource_name = text(field(*source, "name"));
  } else if (type == "ContainerResource") {
    out.type = MetricSourceType::ContainerResource;
    source = &field(in, "containerResource");
    out.resource_name = text(field(*source, "name"));
    out.container = text(field(*source, "container"));
  } else if (type == "Pods") {
    out.type = MetricSourceType::Pods;
    source = &field(in, "pods");
    out.metric = identifier(field(*source, "metric"));
  } else if (type == "Object") {
    out.type = MetricSourceType::Object;
    source = &field(in, "object");
    out.metric = identifier(field(*source, "metric"));
    const json& described = field(*source, "describedObject");
    out.described_object = {text(field(described, "kind")), text(field(described, "name")),
                            text(field(described, "apiVersion"))};
  } else if (type == "External") {
    out.type = MetricSourceType::External;
    source = &field(in, "external");
    out.metric = identifier(field(*source, "metric"));
  } else {
    return std::nullopt;
  }
  const json& current = field(*source, "current");
  out.current.value = milli(field(current, "value"));
  out.current.average_value = milli(field(current, "averageValue"));
  const json& utilization = field(current, "averageUtilization");
  if (utilization.is_number_integer()) out.current.average_utilization = utilization.get<std::int32_t>();
  return out;
}

std::string hpa_key(const json& federated_hpa) {
  const json& metadata = field(federated_hpa, "metadata");
  return text(field(metadata, "namespace")) + "/" + text(field(metadata, "name"));
}

}  // namespace

json member_hpa_object(const json& federated_hpa, const autoscaler::MemberShare& share) {
  const json& metadata = field(federated_hpa, "metadata");
  const json& source = field(federated_hpa, "spec");
  const std::string name = text(field(metadata, "name"));
  json spec = {{"scaleTargetRef", field(source, "scaleTargetRef")},
               {"minReplicas", share.min_replicas},
               {"maxReplicas", share.max_replicas}};
  const json& metrics = field(source, "metrics");
  spec["metrics"] =
      metrics.is_array() && !metrics.empty()
          ? metrics
          : json::array(
                {{{"type", "Resource"},
                  {"resource", {{"name", "cpu"}, {"target", {{"type", "Utilization"}, {"averageUtilization", 80}}}}}}});
  if (const json& behavior = field(source, "behavior"); behavior.is_object()) spec["behavior"] = behavior;
  return {{"apiVersion", "autoscaling/v2"},
          {"kind", "HorizontalPodAutoscaler"},
          {"metadata",
           {{"name", name},
            {"namespace", text(field(metadata, "namespace"))},
            {"labels",
             {{std::string(autoscaler::kManagedByLabel), std::string(kFedmetrics)},
              {std::string(autoscaler::kFederatedHPALabel), name}}}}},
          {"spec", std::move(spec)}};
}

k8s::LabelSelector member_hpa_selector(std::string_view federated_hpa_name) {
  return k8s::LabelSelector::from_requirements(
      {{std::string(autoscaler::kManagedByLabel), k8s::SelectorOperator::Equals, {std::string(kFedmetrics)}},
       {std::string(autoscaler::kFederatedHPALabel),
        k8s::SelectorOperator::Equals,
        {std::string(federated_hpa_name)}}});
}

bool managed_by_fedmetrics(const json& hpa) { return label(hpa, autoscaler::kManagedByLabel) == kFedmetrics; }

k8s::LabelSelector managed_member_hpas_selector() {
  return k8s::LabelSelector::from_requirements(
      {{std::string(autoscaler::kManagedByLabel), k8s::SelectorOperator::Equals, {std::string(kFedmetrics)}},
       {std::string(autoscaler::kFederatedHPALabel), k8s::SelectorOperator::Exists, {}}});
}

std::string federated_hpa_key_of(const json& hpa) {
  const std::string name = label(hpa, autoscaler::kFederatedHPALabel);
  if (name.empty()) return {};
  return text(field(field(hpa, "metadata"), "namespace")) + "/" + name;
}

std::optional<std::string> orphan_reason(const json& hpa, std::string_view member, const json* federated_hpa,
                                         bool ours) {
  if (!managed_by_fedmetrics(hpa) || federated_hpa_key_of(hpa).empty()) return std::nullopt;
  if (federated_hpa == nullptr) return std::string("its FederatedHPA is gone");
  if (!ours) return std::nullopt;
  const json& annotations = field(field(*federated_hpa, "metadata"), "annotations");
  const json& shares = field(annotations, autoscaler::kDistributionAnnotation);
  if (shares.is_string()) {
    auto parsed = autoscaler::parse_distribution_annotation(shares.get<std::string>());
    if (!parsed) return std::nullopt;
    if (parsed->count(std::string(member))) return std::nullopt;
    return "the FederatedHPA gives " + std::string(member) + " no share";
  }
  const json& mode = field(annotations, autoscaler::kModeAnnotation);
  if (mode.is_string() && mode.get<std::string>() == "distributed") return std::nullopt;
  return std::string("the FederatedHPA is not in distributed mode");
}

std::string_view to_string(MemberHPAOp op) {
  switch (op) {
    case MemberHPAOp::None: return "none";
    case MemberHPAOp::Create: return "create";
    case MemberHPAOp::Update: return "update";
    case MemberHPAOp::Delete: return "delete";
    case MemberHPAOp::Refuse: return "refuse";
  }
  return "none";
}

MemberHPAPlan plan_member_hpa(const json& federated_hpa, std::string_view member,
                              const autoscaler::MemberDecision& decision, const std::optional<json>& existing) {
  MemberHPAPlan plan;
  if (existing && !managed_by_fedmetrics(*existing)) {
    // A member that left: its HPA is not ours, so there is nothing to undo.
    if (decision.action == autoscaler::MemberAction::Delete) return plan;
    const std::string owner = label(*existing, autoscaler::kManagedByLabel);
    plan.op = MemberHPAOp::Refuse;
    plan.message = std::string(member) + " has a HorizontalPodAutoscaler " + hpa_key(federated_hpa) +
                   " that fedmetrics did not create (" +
                   (owner.empty() ? std::string("no ") + std::string(autoscaler::kManagedByLabel) + " label"
                                  : std::string(autoscaler::kManagedByLabel) + ": " + owner) +
                   "); it is left alone and gets no share";
    return plan;
  }
  if (decision.action == autoscaler::MemberAction::Delete) {
    if (existing) plan.op = MemberHPAOp::Delete;
    return plan;
  }
  json desired = member_hpa_object(federated_hpa, decision.share);
  if (!existing) {
    plan.op = MemberHPAOp::Create;
    plan.object = std::move(desired);
  } else if (differs(*existing, desired)) {
    plan.op = MemberHPAOp::Update;
    plan.object = updated(*existing, desired);
  }
  return plan;
}

autoscaler::MemberHPA read_member_hpa(const json& hpa) {
  autoscaler::MemberHPA out;
  const json& spec = field(hpa, "spec");
  const json& min = field(spec, "minReplicas");
  out.min_replicas = min.is_number_integer() ? min.get<std::int32_t>() : 1;
  const json& max = field(spec, "maxReplicas");
  out.max_replicas = max.is_number_integer() ? max.get<std::int32_t>() : 0;
  ObservedStatus observed = observed_status(hpa);
  out.current_replicas = observed.status.current_replicas;
  out.desired_replicas = observed.status.desired_replicas;
  out.last_scale_time = observed.status.last_scale_time;
  out.conditions = std::move(observed.status.conditions);
  const json& metrics = field(field(hpa, "status"), "currentMetrics");
  if (metrics.is_array()) {
    for (const auto& m : metrics) {
      if (auto status = metric_status(m)) out.current_metrics.push_back(std::move(*status));
    }
  }
  return out;
}

void observe_member_hpa(autoscaler::DistributionMember& member, const std::optional<json>& existing) {
  if (!existing) {
    member.state = autoscaler::MemberHPAState::Absent;
  } else if (!managed_by_fedmetrics(*existing)) {
    member.state = autoscaler::MemberHPAState::Unreadable;
  } else {
    member.state = autoscaler::MemberHPAState::Read;
    member.hpa = read_member_hpa(*existing);
  }
}

void apply_refusals(autoscaler::FederatedHPAStatus& status, const std::vector<Refusal>& refusals,
                    autoscaler::Timestamp now) {
  if (refusals.empty()) return;
  std::string message;
  for (const auto& r : refusals) message += (message.empty() ? "" : "; ") + r.message;
  autoscaler::set_condition(status.conditions, "ScalingActive", autoscaler::ConditionStatus::False,
                            std::string(kForeignMemberHPAReason), std::move(message), now);
}

json distributed_status_json(const autoscaler::Distribution& distribution, const std::vector<Refusal>& refusals,
                             autoscaler::Timestamp now) {
  autoscaler::FederatedHPAStatus status = distribution.status;
  apply_refusals(status, refusals, now);
  return json::parse(autoscaler::to_json(status).dump());
}

}  // namespace fedmetrics::controller
