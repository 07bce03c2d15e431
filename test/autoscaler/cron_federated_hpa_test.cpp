// CronFederatedHPA (docs/cron.md) without clock or I/O: the object
// decoded with invalid rules marked, what a rule applies to a FederatedHPA,
// and the status's execution histories.
#include <catch2/catch.hpp>

#include "fedmetrics/autoscaler/cron_federated_hpa.hpp"

namespace fedmetrics::autoscaler {
namespace {

using nlohmann::json;

k8s::Timestamp at(const char* text) { return *k8s::parse_time(text); }

const char* kBusinessHours = R"({
  "apiVersion": "autoscaling.karmada.io/v1alpha1", "kind": "CronFederatedHPA",
  "metadata": {"name": "shop-business-hours", "namespace": "shop"},
  "spec": {
    "scaleTargetRef": {"apiVersion": "autoscaling.karmada.io/v1alpha1", "kind": "FederatedHPA", "name": "web"},
    "rules": [
      {"name": "weekday-morning", "schedule": "30 8 * * 1-5", "timeZone": "Europe/Berlin",
       "targetMinReplicas": 20, "targetMaxReplicas": 60, "suspend": false,
       "successfulHistoryLimit": 3, "failedHistoryLimit": 3},
      {"name": "evening", "schedule": "0 20 * * *", "targetMinReplicas": 2}]}})";

TEST_CASE("cron: the business-hours example decodes field for field, defaults applied", "[autoscaler][cron]") {
  auto cron = decode_cron_federated_hpa(json::parse(kBusinessHours));
  REQUIRE(cron);
  CHECK(cron->name == "shop-business-hours");
  CHECK(cron->namespace_name == "shop");
  CHECK(targets_federated_hpa(cron->scale_target_ref));
  REQUIRE(cron->rules.size() == 2);
  const auto& morning = cron->rules[0];
  CHECK(morning.name == "weekday-morning");
  CHECK(morning.schedule == "30 8 * * 1-5");
  CHECK(morning.time_zone == std::optional<std::string>("Europe/Berlin"));
  CHECK(morning.target_min_replicas == 20);
  CHECK(morning.target_max_replicas == 60);
  CHECK_FALSE(morning.invalid);
  const auto& evening = cron->rules[1];
  CHECK_FALSE(evening.time_zone);
  CHECK_FALSE(evening.target_max_replicas);
  CHECK(evening.successful_history_limit == 3);
  CHECK(evening.failed_history_limit == 3);
  CHECK_FALSE(evening.suspend);
  // The spec alone decodes too.
  auto spec_only = decode_cron_federated_hpa(json::parse(kBusinessHours)["spec"]);
  REQUIRE(spec_only);
  CHECK(spec_only->rules.size() == 2);
}

TEST_CASE("cron: a rule's defects make that rule invalid, with the field, and leave the others", "[autoscaler][cron]") {
  struct Row {
    const char* rule;
    bool federated_hpa;
    const char* invalid;  // nullptr: valid
  };
  const Row rows[] = {
      {R"({"name": "a", "schedule": "* * * * *", "targetMinReplicas": 1})", true, nullptr},
      {R"({"name": "a", "schedule": "* * * * *", "targetMaxReplicas": 5})", true, nullptr},
      {R"({"name": "a", "schedule": "* * * * *", "targetReplicas": 0})", false, nullptr},
      {R"({"name": "a", "schedule": "* * * * *", "targetReplicas": 1, "failedHistoryLimit": 0})", false, nullptr},
      {R"({"name": "", "schedule": "* * * * *", "targetReplicas": 1})", false,
       "spec.rules[0].name: must be 1 to 32 characters (got 0)"},
      {R"({"name": "abcdefghijklmnopqrstuvwxyz0123456", "schedule": "* * * * *", "targetReplicas": 1})", false,
       "spec.rules[0].name: must be 1 to 32 characters (got 33)"},
      {R"({"name": "a", "targetReplicas": 1})", false, "spec.rules[0].schedule: is required"},
      {R"({"name": "a", "schedule": 5, "targetReplicas": 1})", false, "spec.rules[0].schedule: not a string"},
      {R"({"name": "a", "schedule": "* * * * *", "targetReplicas": 1, "successfulHistoryLimit": 0})", false,
       "spec.rules[0].successfulHistoryLimit: must be between 1 and 32 (got 0)"},
      {R"({"name": "a", "schedule": "* * * * *", "targetReplicas": 1, "failedHistoryLimit": 33})", false,
       "spec.rules[0].failedHistoryLimit: must be between 0 and 32 (got 33)"},
      {R"({"name": "a", "schedule": "* * * * *"})", true,
       "spec.rules[0]: a FederatedHPA target needs targetMinReplicas and/or targetMaxReplicas"},
      {R"({"name": "a", "schedule": "* * * * *", "targetReplicas": 3})", true,
       "spec.rules[0].targetReplicas: applies to a workload; a FederatedHPA takes targetMinReplicas and/or "
       "targetMaxReplicas"},
      {R"({"name": "a", "schedule": "* * * * *", "targetMaxReplicas": 0})", true,
       "spec.rules[0].targetMaxReplicas: must be at least 1"},
      {R"({"name": "a", "schedule": "* * * * *", "targetMinReplicas": -1})", true,
       "spec.rules[0].targetMinReplicas: must not be negative"},
      {R"({"name": "a", "schedule": "* * * * *", "targetMinReplicas": 2})", false,
       "spec.rules[0]: targetMinReplicas and targetMaxReplicas apply to a FederatedHPA; a workload takes "
       "targetReplicas"},
      {R"({"name": "a", "schedule": "* * * * *"})", false,
       "spec.rules[0].targetReplicas: is required for a workload target"},
      {R"({"name": "a", "schedule": "* * * * *", "targetReplicas": -2})", false,
       "spec.rules[0].targetReplicas: must not be negative"},
      {R"("a rule")", false, "spec.rules[0]: not an object (got string)"},
  };
  for (const auto& row : rows) {
    INFO(row.rule);
    json target =
        row.federated_hpa
            ? json{{"apiVersion", "autoscaling.karmada.io/v1alpha1"}, {"kind", "FederatedHPA"}, {"name", "web"}}
            : json{{"apiVersion", "apps/v1"}, {"kind", "Deployment"}, {"name", "batch"}};
    json object = {
        {"spec",
         {{"scaleTargetRef", target},
          {"rules",
           json::array(
               {json::parse(row.rule),
                {{"name", "other"}, {"schedule", "0 0 * * *"}, {"targetReplicas", 1}, {"targetMinReplicas", 1}}})}}}};
    auto cron = decode_cron_federated_hpa(object);
    REQUIRE(cron);
    REQUIRE(cron->rules.size() == 2);
    if (row.invalid) CHECK(cron->rules[0].invalid == std::optional<std::string>(row.invalid));
    else CHECK_FALSE(cron->rules[0].invalid);
  }
  // Names are unique: the second of a name is invalid, the first runs.
  auto twice = decode_cron_federated_hpa(json::parse(R"({"spec": {
      "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "batch"},
      "rules": [{"name": "night", "schedule": "0 0 * * *", "targetReplicas": 0},
                {"name": "night", "schedule": "0 6 * * *", "targetReplicas": 3}]}})"));
  REQUIRE(twice);
  CHECK_FALSE(twice->rules[0].invalid);
  CHECK(twice->rules[1].invalid ==
        std::optional<std::string>("spec.rules[1].name: \"night\" is used by an earlier rule; rule names are unique"));
}

TEST_CASE("cron: what leaves no rule usable is an error of the object", "[autoscaler][cron]") {
  CHECK(decode_cron_federated_hpa(json::parse(R"({"spec": {"rules": []}})")).error().message ==
        "spec.scaleTargetRef: is required");
  CHECK(decode_cron_federated_hpa(json::parse(R"({"spec": {"scaleTargetRef": {"kind": "Deployment"}}})"))
            .error()
            .message == "spec.scaleTargetRef.name: is required");
  CHECK(decode_cron_federated_hpa(
            json::parse(R"({"spec": {"scaleTargetRef": {"kind": "Deployment", "name": "b"}, "rules": {}}})"))
            .error()
            .message == "spec.rules: not an array");
  CHECK_FALSE(decode_cron_federated_hpa(json::parse("[]")));
}

TEST_CASE("cron: what a rule applies to a FederatedHPA, and what it refuses", "[autoscaler][cron]") {
  FederatedHPASpec current;
  current.min_replicas = 2;
  current.max_replicas = 10;
  current.metrics.push_back(MetricSpec{});  // cpu Resource
  auto rule = [](std::optional<std::int32_t> min, std::optional<std::int32_t> max) {
    CronRule r;
    r.name = "r";
    r.target_min_replicas = min;
    r.target_max_replicas = max;
    return r;
  };
  auto both = apply_to_federated_hpa(rule(20, 60), current);
  REQUIRE(both);
  CHECK(both->min_replicas == 20);
  CHECK(both->max_replicas == 60);
  auto min_only = apply_to_federated_hpa(rule(5, std::nullopt), current);
  REQUIRE(min_only);
  CHECK(min_only->min_replicas == 5);
  CHECK(min_only->max_replicas == 10);  // unchanged, recorded as what the object now has
  CHECK(apply_to_federated_hpa(rule(20, std::nullopt), current).error().message ==
        "minReplicas 20 (the rule's) would exceed maxReplicas 10 (the FederatedHPA's); nothing written");
  CHECK(apply_to_federated_hpa(rule(std::nullopt, 1), current).error().message ==
        "minReplicas 2 (the FederatedHPA's) would exceed maxReplicas 1 (the rule's); nothing written");
  CHECK(apply_to_federated_hpa(rule(0, std::nullopt), current).error().message ==
        "minReplicas 0 is allowed only when every metric of the FederatedHPA is Object or External; nothing written");
  current.metrics[0].type = MetricSourceType::External;
  auto zero = apply_to_federated_hpa(rule(0, std::nullopt), current);
  REQUIRE(zero);
  CHECK(zero->min_replicas == 0);
  // No minReplicas in the object: the Kubernetes default 1.
  current.min_replicas.reset();
  CHECK(apply_to_federated_hpa(rule(std::nullopt, 4), current)->min_replicas == 1);
}

TEST_CASE("cron: histories follow the rules, newest first, cut to their limits", "[autoscaler][cron]") {
  auto cron = *decode_cron_federated_hpa(json::parse(kBusinessHours));
  json object = json::parse(kBusinessHours);
  object["status"] = json::parse(R"({"executionHistories": [
      {"ruleName": "removed-rule", "successfulExecutions": [{"scheduleTime": "2026-11-20T07:30:00Z", "executionTime": "2026-11-20T07:30:01Z"}]},
      {"ruleName": "evening", "nextExecutionTime": "2026-11-25T20:00:00Z",
       "successfulExecutions": [{"scheduleTime": "2026-11-24T20:00:00Z", "executionTime": "2026-11-24T20:00:00.5Z", "appliedMinReplicas": 2, "appliedMaxReplicas": 10}],
       "failedExecutions": [{"scheduleTime": "2026-11-23T20:00:00Z", "executionTime": "2026-11-23T20:00:01Z", "message": "conflict"},
                            {"executionTime": "2026-11-22T20:00:01Z", "message": "no scheduleTime: dropped"}]},
      "garbage", {"ruleName": 3}]})");
  auto histories = histories_for(cron, decode_execution_histories(object));
  REQUIRE(histories.size() == 2);
  CHECK(histories[0].rule_name == "weekday-morning");  // spec order; a new rule starts empty
  CHECK(histories[0].successful.empty());
  CHECK(histories[1].rule_name == "evening");
  REQUIRE(histories[1].successful.size() == 1);
  CHECK(histories[1].successful[0].applied.min_replicas == 2);
  REQUIRE(histories[1].failed.size() == 1);
  CHECK(last_schedule_time(histories[1]) == at("2026-11-24T20:00:00Z"));
  CHECK_FALSE(last_schedule_time(histories[0]));

  // Newest first, cut to the limit.
  CronRule limited = cron.rules[1];
  limited.successful_history_limit = 2;
  for (const char* t : {"2026-11-25T20:00:00Z", "2026-11-26T20:00:00Z"}) {
    CronExecution x;
    x.schedule_time = at(t);
    x.execution_time = at(t);
    x.applied.min_replicas = 2;
    record_success(histories[1], limited, x);
  }
  REQUIRE(histories[1].successful.size() == 2);
  CHECK(histories[1].successful[0].schedule_time == at("2026-11-26T20:00:00Z"));
  CHECK(histories[1].successful[1].schedule_time == at("2026-11-25T20:00:00Z"));
  // failedHistoryLimit 0: no failure kept (Karmada's controller crashes here).
  limited.failed_history_limit = 0;
  record_failure(histories[1], limited, CronExecution{at("2026-11-27T20:00:00Z"), at("2026-11-27T20:00:01Z"), {}, "x"});
  CHECK(histories[1].failed.empty());

  // The status as written, and read back the same.
  histories[1].next_execution_time = at("2026-11-27T20:00:00Z");
  json status = cron_status_json(histories);
  CHECK(status == json::parse(R"({"executionHistories": [
      {"ruleName": "weekday-morning"},
      {"ruleName": "evening", "nextExecutionTime": "2026-11-27T20:00:00Z",
       "successfulExecutions": [
         {"scheduleTime": "2026-11-26T20:00:00Z", "executionTime": "2026-11-26T20:00:00Z", "appliedMinReplicas": 2},
         {"scheduleTime": "2026-11-25T20:00:00Z", "executionTime": "2026-11-25T20:00:00Z", "appliedMinReplicas": 2}]}]})"));
  json reread = {{"status", status}};
  auto again = histories_for(cron, decode_execution_histories(reread));
  CHECK(cron_status_json(again) == status);
}

}  // namespace
}  // namespace fedmetrics::autoscaler
