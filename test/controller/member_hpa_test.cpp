// Distributed mode's member HPA objects (docs/distributed-mode.md): the
// object written, the per-member decision (create / update only when
// something differs / delete / none / refuse), the observed state read back,
// and the status written to the FederatedHPA.
#include <catch2/catch.hpp>

#include <chrono>

#include "fedmetrics/controller/member_hpa.hpp"
#include "fedmetrics/k8s/time.hpp"

namespace fedmetrics::controller {
namespace {

using autoscaler::MemberAction;
using autoscaler::MemberDecision;
using autoscaler::MemberShare;
using nlohmann::json;

const autoscaler::Timestamp kNow = autoscaler::Timestamp(std::chrono::seconds(1704067500));

json federated_hpa() {
  return json::parse(R"({
    "apiVersion": "autoscaling.karmada.io/v1alpha1", "kind": "FederatedHPA",
    "metadata": {"name": "web", "namespace": "shop", "uid": "u1", "resourceVersion": "7",
                 "annotations": {"autoscaling.fedmetrics.io/mode": "distributed"}},
    "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
             "minReplicas": 2, "maxReplicas": 9,
             "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}},
                         {"type": "External", "external": {"metric": {"name": "queue"}, "target": {"type": "AverageValue", "averageValue": "500m"}}}],
             "behavior": {"scaleDown": {"stabilizationWindowSeconds": 60}}}})");
}

// What a member's apiserver returns for what we wrote: resourceVersion, uid,
// defaults added to behavior, a status.
json as_stored(json object) {
  object["metadata"]["resourceVersion"] = "41";
  object["metadata"]["uid"] = "m1";
  object["metadata"]["creationTimestamp"] = "2024-01-01T00:00:00Z";
  if (object["spec"].contains("behavior")) {
    object["spec"]["behavior"]["scaleDown"]["selectPolicy"] = "Max";
    object["spec"]["behavior"]["scaleUp"] = {{"stabilizationWindowSeconds", 0}, {"selectPolicy", "Max"}};
  }
  object["status"] = {{"currentReplicas", 2}, {"desiredReplicas", 2}};
  return object;
}

MemberDecision keep(std::int32_t min, std::int32_t max, MemberAction action = MemberAction::Update) {
  return {MemberShare{min, max}, action};
}

TEST_CASE("member hpa: the object written for a share", "[controller][member_hpa]") {
  json hpa = member_hpa_object(federated_hpa(), {1, 3});
  CHECK(hpa["apiVersion"] == "autoscaling/v2");
  CHECK(hpa["kind"] == "HorizontalPodAutoscaler");
  CHECK(hpa["metadata"] == json::parse(R"({"name": "web", "namespace": "shop", "labels": {
        "app.kubernetes.io/managed-by": "fedmetrics", "autoscaling.fedmetrics.io/federatedhpa": "web"}})"));
  CHECK(hpa["spec"]["scaleTargetRef"] == federated_hpa()["spec"]["scaleTargetRef"]);
  CHECK(hpa["spec"]["minReplicas"] == 1);
  CHECK(hpa["spec"]["maxReplicas"] == 3);
  CHECK(hpa["spec"]["metrics"] == federated_hpa()["spec"]["metrics"]);
  CHECK(hpa["spec"]["behavior"] == federated_hpa()["spec"]["behavior"]);
  CHECK_FALSE(hpa.contains("status"));
  CHECK(managed_by_fedmetrics(hpa));

  SECTION("no metrics: the Kubernetes default written out; no behavior: none") {
    json f = federated_hpa();
    f["spec"].erase("metrics");
    f["spec"].erase("behavior");
    json h = member_hpa_object(f, {1, 3});
    CHECK(h["spec"]["metrics"] == json::parse(R"([{"type": "Resource", "resource": {"name": "cpu",
          "target": {"type": "Utilization", "averageUtilization": 80}}}])"));
    CHECK_FALSE(h["spec"].contains("behavior"));
  }
}

TEST_CASE("member hpa: managed_by_fedmetrics", "[controller][member_hpa]") {
  struct Row {
    const char* object;
    bool managed;
  };
  const Row rows[] = {
      {R"({"metadata": {"labels": {"app.kubernetes.io/managed-by": "fedmetrics"}}})", true},
      {R"({"metadata": {"labels": {"app.kubernetes.io/managed-by": "Helm"}}})", false},
      {R"({"metadata": {"labels": {"autoscaling.fedmetrics.io/federatedhpa": "web"}}})", false},
      {R"({"metadata": {}})", false},
      {R"({"metadata": {"labels": null}})", false},
      {R"({})", false},
      {R"([])", false},
  };
  for (const auto& row : rows) {
    INFO(row.object);
    CHECK(managed_by_fedmetrics(json::parse(row.object)) == row.managed);
  }
  CHECK(member_hpa_selector("web").to_string() ==
        "app.kubernetes.io/managed-by=fedmetrics,autoscaling.fedmetrics.io/federatedhpa=web");
  CHECK(member_hpa_selector("web").matches(
      {{"app.kubernetes.io/managed-by", "fedmetrics"}, {"autoscaling.fedmetrics.io/federatedhpa", "web"}, {"x", "y"}}));
  CHECK_FALSE(member_hpa_selector("web").matches(
      {{"app.kubernetes.io/managed-by", "fedmetrics"}, {"autoscaling.fedmetrics.io/federatedhpa", "api"}}));
}

TEST_CASE("member hpa: the orphan sweep's verdict", "[controller][member_hpa]") {
  const json ours_on_member2 = json::parse(R"({"metadata": {"name": "web", "namespace": "shop", "uid": "m2",
      "labels": {"app.kubernetes.io/managed-by": "fedmetrics", "autoscaling.fedmetrics.io/federatedhpa": "web"}}})");
  CHECK(federated_hpa_key_of(ours_on_member2) == "shop/web");
  auto with = [](const char* mode, const char* shares) {
    json f = federated_hpa();
    auto& annotations = f["metadata"]["annotations"];
    annotations = json::object();
    if (mode) annotations["autoscaling.fedmetrics.io/mode"] = mode;
    if (shares) annotations["autoscaling.fedmetrics.io/distribution"] = shares;
    return f;
  };
  const char* both =
      R"({"member1": {"minReplicas": 1, "maxReplicas": 5}, "member2": {"minReplicas": 1, "maxReplicas": 4}})";
  const char* member1_only = R"({"member1": {"minReplicas": 2, "maxReplicas": 9}})";
  struct Row {
    const char* what;
    std::optional<json> federated;
    bool ours;
    std::optional<std::string> reason;
  };
  const Row rows[] = {
      {"no FederatedHPA", std::nullopt, true, "its FederatedHPA is gone"},
      {"no FederatedHPA, whoever ran it", std::nullopt, false, "its FederatedHPA is gone"},
      {"distributed, member2 has a share", with("distributed", both), true, std::nullopt},
      {"distributed, member2 left", with("distributed", member1_only), true, "the FederatedHPA gives member2 no share"},
      {"another fedmetrics runs it", with("distributed", member1_only), false, std::nullopt},
      {"a broken annotation: the sync rewrites it", with("distributed", "{not json"), true, std::nullopt},
      {"distributed, no annotation yet", with("distributed", nullptr), true, std::nullopt},
      {"centralized, no annotation left", with(nullptr, nullptr), true, "the FederatedHPA is not in distributed mode"},
      {"an invalid mode, no annotation", with("spread", nullptr), true, "the FederatedHPA is not in distributed mode"},
      {"centralized, leaving (the annotation names it)", with("centralized", both), true, std::nullopt},
  };
  for (const auto& row : rows) {
    INFO(row.what);
    const json* federated = row.federated ? &*row.federated : nullptr;
    CHECK(orphan_reason(ours_on_member2, "member2", federated, row.ours) == row.reason);
  }
  // Never an HPA fedmetrics did not create, nor one without the FederatedHPA label.
  json theirs = ours_on_member2;
  theirs["metadata"]["labels"]["app.kubernetes.io/managed-by"] = "Helm";
  CHECK_FALSE(orphan_reason(theirs, "member2", nullptr, true));
  json unlabelled = ours_on_member2;
  unlabelled["metadata"]["labels"].erase("autoscaling.fedmetrics.io/federatedhpa");
  CHECK(federated_hpa_key_of(unlabelled).empty());
  CHECK_FALSE(orphan_reason(unlabelled, "member2", nullptr, true));
  CHECK(managed_member_hpas_selector().to_string() ==
        "app.kubernetes.io/managed-by=fedmetrics,autoscaling.fedmetrics.io/federatedhpa");
}

TEST_CASE("member hpa: the decision per member", "[controller][member_hpa]") {
  const json f = federated_hpa();
  const json ours = as_stored(member_hpa_object(f, {1, 3}));
  json foreign = ours;
  foreign["metadata"]["labels"] = {{"app.kubernetes.io/managed-by", "Helm"}};
  json unlabelled = ours;
  unlabelled["metadata"].erase("labels");

  struct Row {
    const char* what;
    MemberDecision decision;
    std::optional<json> existing;
    MemberHPAOp op;
  };
  const Row rows[] = {
      {"absent, kept: create", keep(1, 3, MemberAction::Create), std::nullopt, MemberHPAOp::Create},
      {"absent, the distributor thought it there: create", keep(1, 3, MemberAction::None), std::nullopt,
       MemberHPAOp::Create},
      {"ours, same share (defaults added by the member): none", keep(1, 3), ours, MemberHPAOp::None},
      {"ours, the distributor says create but it is there and equal: none", keep(1, 3, MemberAction::Create), ours,
       MemberHPAOp::None},
      {"ours, max moved: update", keep(1, 4), ours, MemberHPAOp::Update},
      {"ours, min moved: update", keep(2, 3), ours, MemberHPAOp::Update},
      {"ours, the distributor says none but the member differs: update", keep(1, 4, MemberAction::None), ours,
       MemberHPAOp::Update},
      {"ours, member left: delete", keep(1, 3, MemberAction::Delete), ours, MemberHPAOp::Delete},
      {"absent, member left: none", keep(1, 3, MemberAction::Delete), std::nullopt, MemberHPAOp::None},
      {"foreign, kept: refuse", keep(1, 3), foreign, MemberHPAOp::Refuse},
      {"foreign, equal share: still refuse", keep(1, 3, MemberAction::None), foreign, MemberHPAOp::Refuse},
      {"unlabelled, kept: refuse", keep(1, 3, MemberAction::Create), unlabelled, MemberHPAOp::Refuse},
      {"foreign, member left: left alone", keep(1, 3, MemberAction::Delete), foreign, MemberHPAOp::None},
  };
  for (const auto& row : rows) {
    INFO(row.what);
    MemberHPAPlan plan = plan_member_hpa(f, "member1", row.decision, row.existing);
    CHECK(to_string(plan.op) == to_string(row.op));
  }
}

TEST_CASE("member hpa: what an update writes", "[controller][member_hpa]") {
  json f = federated_hpa();
  json ours = as_stored(member_hpa_object(f, {1, 3}));
  ours["metadata"]["labels"]["team"] = "shop";

  MemberHPAPlan plan = plan_member_hpa(f, "member1", keep(1, 5), ours);
  REQUIRE(plan.op == MemberHPAOp::Update);
  CHECK(plan.object["metadata"]["resourceVersion"] == "41");   // conditional on what was read
  CHECK(plan.object["metadata"]["labels"]["team"] == "shop");  // other labels kept
  CHECK(plan.object["spec"]["maxReplicas"] == 5);
  CHECK(plan.object["spec"]["minReplicas"] == 1);

  SECTION("a spec edit of the FederatedHPA reaches the member") {
    struct Row {
      const char* what;
      void (*edit)(json&);
    };
    const Row rows[] = {
        {"metric target", [](json& s) { s["metrics"][0]["resource"]["target"]["averageUtilization"] = 70; }},
        {"metric removed", [](json& s) { s["metrics"].erase(1); }},
        {"target renamed", [](json& s) { s["scaleTargetRef"]["name"] = "web2"; }},
        {"behavior changed", [](json& s) { s["behavior"]["scaleDown"]["stabilizationWindowSeconds"] = 30; }},
        {"behavior removed", [](json& s) { s.erase("behavior"); }},
    };
    for (const auto& row : rows) {
      INFO(row.what);
      json edited = f;
      row.edit(edited["spec"]);
      MemberHPAPlan p = plan_member_hpa(edited, "member1", keep(1, 3), ours);
      REQUIRE(p.op == MemberHPAOp::Update);
      CHECK(p.object["spec"].value("behavior", json()) == edited["spec"].value("behavior", json()));
      CHECK(p.object["spec"]["metrics"] == edited["spec"]["metrics"]);
      // Written again, it is equal: no update loop.
      CHECK(plan_member_hpa(edited, "member1", keep(1, 3), p.object).op == MemberHPAOp::None);
    }
  }
  SECTION("a quantity the member canonicalized is not a difference") {
    json canonical = ours;
    canonical["spec"]["metrics"][1]["external"]["target"]["averageValue"] = "0.5";
    CHECK(plan_member_hpa(f, "member1", keep(1, 3), canonical).op == MemberHPAOp::None);
    canonical["spec"]["metrics"][1]["external"]["target"]["averageValue"] = "600m";
    CHECK(plan_member_hpa(f, "member1", keep(1, 3), canonical).op == MemberHPAOp::Update);
  }
  SECTION("our label removed by someone: written back") {
    json stripped = ours;
    stripped["metadata"]["labels"].erase("autoscaling.fedmetrics.io/federatedhpa");
    MemberHPAPlan p = plan_member_hpa(f, "member1", keep(1, 3), stripped);
    REQUIRE(p.op == MemberHPAOp::Update);
    CHECK(p.object["metadata"]["labels"]["autoscaling.fedmetrics.io/federatedhpa"] == "web");
  }
}

TEST_CASE("member hpa: a foreign HPA is refused with a condition and an Event text", "[controller][member_hpa]") {
  json foreign = as_stored(member_hpa_object(federated_hpa(), {1, 3}));
  foreign["metadata"]["labels"] = {{"app.kubernetes.io/managed-by", "Helm"}};
  MemberHPAPlan plan = plan_member_hpa(federated_hpa(), "member2", keep(1, 3), foreign);
  REQUIRE(plan.op == MemberHPAOp::Refuse);
  CHECK(plan.object.is_null());
  CHECK(plan.message ==
        "member2 has a HorizontalPodAutoscaler shop/web that fedmetrics did not create "
        "(app.kubernetes.io/managed-by: Helm); it is left alone and gets no share");
  foreign["metadata"].erase("labels");
  CHECK_THAT(plan_member_hpa(federated_hpa(), "member3", keep(1, 3), foreign).message,
             Catch::Contains("(no app.kubernetes.io/managed-by label)"));

  autoscaler::Distribution d;
  autoscaler::set_condition(d.status.conditions, "ScalingActive", autoscaler::ConditionStatus::True,
                            "MembersScalingActive", "", kNow);
  d.status.current_replicas = 3;
  json status = distributed_status_json(d, {{"member2", plan.message}}, kNow);
  CHECK(status["currentReplicas"] == 3);
  REQUIRE(status["conditions"].size() == 1);
  CHECK(status["conditions"][0]["type"] == "ScalingActive");
  CHECK(status["conditions"][0]["status"] == "False");
  CHECK(status["conditions"][0]["reason"] == "ForeignMemberHPA");
  CHECK(status["conditions"][0]["message"] == plan.message);
  // Without refusals, the distributor's status as the centralized loop writes it.
  CHECK(distributed_status_json(d, {}, kNow) == json::parse(autoscaler::to_json(d.status).dump()));
}

TEST_CASE("member hpa: the observed state read into the distributor's input", "[controller][member_hpa]") {
  const json stored = json::parse(R"({
    "metadata": {"name": "web", "namespace": "shop", "labels": {"app.kubernetes.io/managed-by": "fedmetrics"}},
    "spec": {"minReplicas": 2, "maxReplicas": 6},
    "status": {"currentReplicas": 6, "desiredReplicas": 6, "lastScaleTime": "2024-01-01T00:01:40Z",
      "currentMetrics": [
        {"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 93, "averageValue": "465m"}}},
        {"type": "External", "external": {"metric": {"name": "queue", "selector": {"matchLabels": {"q": "jobs"}}},
                                          "current": {"value": "3", "averageValue": "1500m"}}},
        {"type": "Pods", "pods": {"metric": {"name": "rps"}, "current": {"averageValue": "12"}}},
        {"type": "ContainerResource", "containerResource": {"name": "memory", "container": "app", "current": {"averageValue": "1Ki"}}},
        {"type": "Object", "object": {"describedObject": {"kind": "Ingress", "name": "main", "apiVersion": "networking.k8s.io/v1"},
                                      "metric": {"name": "hits"}, "current": {"value": "20"}}},
        {"type": "Future", "future": {}}],
      "conditions": [
        {"type": "AbleToScale", "status": "True", "reason": "ReadyForNewScale", "lastTransitionTime": "2024-01-01T00:00:00Z"},
        {"type": "ScalingLimited", "status": "True", "reason": "TooManyReplicas", "message": "the desired replica count is more than the maximum replica count"}]}})");
  autoscaler::MemberHPA hpa = read_member_hpa(stored);
  CHECK(hpa.min_replicas == 2);
  CHECK(hpa.max_replicas == 6);
  CHECK(hpa.current_replicas == 6);
  CHECK(hpa.desired_replicas == 6);
  REQUIRE(hpa.last_scale_time);
  CHECK(k8s::format_time(*hpa.last_scale_time) == "2024-01-01T00:01:40Z");
  REQUIRE(hpa.conditions.size() == 2);
  const auto* limited = autoscaler::find_condition(hpa.conditions, "ScalingLimited");
  REQUIRE(limited);
  CHECK(limited->status == autoscaler::ConditionStatus::True);
  CHECK(limited->reason == "TooManyReplicas");
  REQUIRE(hpa.current_metrics.size() == 5);  // the unknown type skipped
  CHECK(hpa.current_metrics[0].type == autoscaler::MetricSourceType::Resource);
  CHECK(hpa.current_metrics[0].resource_name == "cpu");
  CHECK(hpa.current_metrics[0].current.average_utilization == 93);
  CHECK(hpa.current_metrics[0].current.average_value == 465);
  CHECK(hpa.current_metrics[1].metric.name == "queue");
  CHECK(hpa.current_metrics[1].metric.selector.to_string() == "q=jobs");
  CHECK(hpa.current_metrics[1].current.value == 3000);
  CHECK(hpa.current_metrics[1].current.average_value == 1500);
  CHECK(hpa.current_metrics[2].type == autoscaler::MetricSourceType::Pods);
  CHECK(hpa.current_metrics[2].current.average_value == 12000);
  CHECK(hpa.current_metrics[3].container == "app");
  CHECK(hpa.current_metrics[3].current.average_value == 1024000);
  CHECK(hpa.current_metrics[4].described_object.kind == "Ingress");
  CHECK(hpa.current_metrics[4].current.value == 20000);

  SECTION("missing and malformed fields are tolerated") {
    struct Row {
      const char* object;
      std::int32_t min, max, current, desired;
    };
    const Row rows[] = {
        {R"({"metadata": {"labels": {"app.kubernetes.io/managed-by": "fedmetrics"}}})", 1, 0, 0, 0},
        {R"({"spec": {"maxReplicas": 3}})", 1, 3, 0, 0},  // just created: no status
        {R"({"spec": {"minReplicas": "2", "maxReplicas": 3}, "status": {"currentReplicas": "x", "desiredReplicas": 2}})",
         1, 3, 0, 2},
        {R"({"spec": null, "status": [], "metadata": 3})", 1, 0, 0, 0},
        {R"({"spec": {"maxReplicas": 4}, "status": {"currentReplicas": 2, "lastScaleTime": "yesterday",
             "currentMetrics": {"x": 1}, "conditions": [1, {"status": "True"}]}})",
         1, 4, 2, 0},
    };
    for (const auto& row : rows) {
      INFO(row.object);
      autoscaler::MemberHPA h = read_member_hpa(json::parse(row.object));
      CHECK(h.min_replicas == row.min);
      CHECK(h.max_replicas == row.max);
      CHECK(h.current_replicas == row.current);
      CHECK(h.desired_replicas == row.desired);
      CHECK_FALSE(h.last_scale_time);
      CHECK(h.current_metrics.empty());
      CHECK(h.conditions.empty());
    }
  }

  SECTION("the member's state for the distributor") {
    autoscaler::DistributionMember m;
    observe_member_hpa(m, std::nullopt);
    CHECK(m.state == autoscaler::MemberHPAState::Absent);
    observe_member_hpa(m, stored);
    CHECK(m.state == autoscaler::MemberHPAState::Read);
    CHECK(m.hpa.max_replicas == 6);
    json foreign = stored;
    foreign["metadata"]["labels"]["app.kubernetes.io/managed-by"] = "Helm";
    autoscaler::DistributionMember f;
    observe_member_hpa(f, foreign);
    CHECK(f.state == autoscaler::MemberHPAState::Unreadable);  // its signals are not ours
  }
}

TEST_CASE("member hpa: read back into the distributor, the status aggregated as documented",
          "[controller][member_hpa]") {
  // Two member HPAs as a member's apiserver returns them, through
  // read_member_hpa into distribute(): sums, replica-weighted utilization
  // rounded down, the latest lastScaleTime, ScalingLimited when the receiver
  // finds no donor.
  json f = federated_hpa();
  f["spec"]["maxReplicas"] = 6;
  f["spec"]["metrics"].erase(1);
  auto stored = [&f](std::int32_t max, std::int32_t current, int utilization, const char* scaled, bool limited) {
    json h = as_stored(member_hpa_object(f, {1, max}));
    h["status"] = {
        {"currentReplicas", current},
        {"desiredReplicas", current},
        {"lastScaleTime", scaled},
        {"currentMetrics",
         json::array({{{"type", "Resource"},
                       {"resource", {{"name", "cpu"}, {"current", {{"averageUtilization", utilization}}}}}}})},
        {"conditions", json::array({{{"type", "AbleToScale"}, {"status", "True"}, {"reason", "ReadyForNewScale"}},
                                    {{"type", "ScalingActive"}, {"status", "True"}, {"reason", "ValidMetricFound"}},
                                    {{"type", "ScalingLimited"},
                                     {"status", limited ? "True" : "False"},
                                     {"reason", limited ? "TooManyReplicas" : "DesiredWithinRange"}}})}};
    return h;
  };
  auto decoded = autoscaler::decode_federated_hpa(f);
  REQUIRE(decoded);
  autoscaler::DistributionInput in;
  in.spec = decoded->spec;
  in.now = kNow;
  in.previous = {{"member1", {1, 3}}, {"member2", {1, 3}}};
  autoscaler::DistributionMember m1;
  m1.name = "member1";
  observe_member_hpa(m1, stored(3, 3, 91, "2024-01-01T00:04:00Z", true));  // wants more
  autoscaler::DistributionMember m2;
  m2.name = "member2";
  observe_member_hpa(m2, stored(3, 2, 60, "2024-01-01T00:04:30Z", false));  // scaled within the window: no donor
  in.members = {m1, m2};
  autoscaler::Distribution d = autoscaler::distribute(in);
  json status = distributed_status_json(d, {}, kNow);
  CHECK(status["currentReplicas"] == 5);
  CHECK(status["desiredReplicas"] == 5);
  CHECK(status["lastScaleTime"] == "2024-01-01T00:04:30Z");
  CHECK(status["currentMetrics"][0]["resource"]["current"]["averageUtilization"] == 78);  // (3x91 + 2x60) / 5 = 78.6
  json limited;
  for (const auto& c : status["conditions"]) {
    if (c["type"] == "ScalingLimited") limited = c;
  }
  CHECK(limited["status"] == "True");
  CHECK(limited["reason"] == "TooManyReplicas");
  CHECK_THAT(limited["message"].get<std::string>(), Catch::Contains("member1"));
  // Nothing moved, so both member HPAs stay as they are.
  for (const auto& [name, decision] : d.members) {
    INFO(name);
    CHECK(plan_member_hpa(f, name, decision, stored(3, 0, 0, "2024-01-01T00:00:00Z", false)).op == MemberHPAOp::None);
  }
}

}  // namespace
}  // namespace fedmetrics::controller
