#include "fedmetrics/autoscaler/cron_federated_hpa.hpp"

#include <algorithm>
#include <set>

#include "json_reader.hpp"

namespace fedmetrics::autoscaler {

using detail::Fields;
using nlohmann::json;

namespace {

constexpr std::size_t kMaxRuleName = 32;
constexpr std::int32_t kMaxHistoryLimit = 32;

std::string describe(std::string_view path, const std::string& message) { return std::string(path) + ": " + message; }

// One rule; its defects go to `invalid` (the first found), never to the
// object: it is read with a reader of its own.
CronRule decode_rule(const Fields& spec, const json& raw, const std::string& path, bool federated_hpa_target) {
  CronRule rule;
  detail::FieldReader reader;
  const Fields f(reader, raw, path, spec.refuses_unknown() ? k8s::UnknownFields::Refuse : k8s::UnknownFields::Ignore);
  f.allow({"name", "schedule", "timeZone", "targetReplicas", "targetMinReplicas", "targetMaxReplicas", "suspend",
           "successfulHistoryLimit", "failedHistoryLimit"});
  rule.name = f.string("name").value_or("");
  rule.schedule = f.string("schedule").value_or("");
  rule.time_zone = f.string("timeZone");
  rule.target_replicas = f.int32("targetReplicas");
  rule.target_min_replicas = f.int32("targetMinReplicas");
  rule.target_max_replicas = f.int32("targetMaxReplicas");
  rule.suspend = f.boolean("suspend").value_or(false);
  rule.successful_history_limit = f.int32("successfulHistoryLimit").value_or(3);
  rule.failed_history_limit = f.int32("failedHistoryLimit").value_or(3);
  if (rule.name.empty() || rule.name.size() > kMaxRuleName)
    f.fail("name", "must be 1 to 32 characters (got " + std::to_string(rule.name.size()) + ")");
  if (rule.schedule.empty()) f.fail("schedule", "is required");
  if (rule.successful_history_limit < 1 || rule.successful_history_limit > kMaxHistoryLimit)
    f.fail("successfulHistoryLimit",
           "must be between 1 and 32 (got " + std::to_string(rule.successful_history_limit) + ")");
  if (rule.failed_history_limit < 0 || rule.failed_history_limit > kMaxHistoryLimit)
    f.fail("failedHistoryLimit", "must be between 0 and 32 (got " + std::to_string(rule.failed_history_limit) + ")");
  if (federated_hpa_target) {
    if (rule.target_replicas)
      f.fail("targetReplicas",
             "applies to a workload; a FederatedHPA takes targetMinReplicas and/or targetMaxReplicas");
    if (!rule.target_min_replicas && !rule.target_max_replicas)
      f.fail_here("a FederatedHPA target needs targetMinReplicas and/or targetMaxReplicas");
    if (rule.target_min_replicas && *rule.target_min_replicas < 0) f.fail("targetMinReplicas", "must not be negative");
    if (rule.target_max_replicas && *rule.target_max_replicas < 1) f.fail("targetMaxReplicas", "must be at least 1");
  } else {
    if (rule.target_min_replicas || rule.target_max_replicas)
      f.fail_here("targetMinReplicas and targetMaxReplicas apply to a FederatedHPA; a workload takes targetReplicas");
    if (!rule.target_replicas) f.fail("targetReplicas", "is required for a workload target");
    if (rule.target_replicas && *rule.target_replicas < 0) f.fail("targetReplicas", "must not be negative");
  }
  if (reader.error()) rule.invalid = reader.error()->message;
  return rule;
}

std::optional<k8s::Timestamp> time_field(const json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_string()) return std::nullopt;
  auto parsed = k8s::parse_time(it->get<std::string>());
  if (!parsed) return std::nullopt;
  return *parsed;
}

std::optional<std::int32_t> int_field(const json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_number_integer()) return std::nullopt;
  const auto v = it->get<std::int64_t>();
  if (v < 0 || v > std::numeric_limits<std::int32_t>::max()) return std::nullopt;
  return static_cast<std::int32_t>(v);
}

std::vector<CronExecution> decode_executions(const json& entry, const char* key) {
  std::vector<CronExecution> out;
  const auto it = entry.find(key);
  if (it == entry.end() || !it->is_array()) return out;
  for (const auto& e : *it) {
    if (!e.is_object()) continue;
    auto schedule_time = time_field(e, "scheduleTime");
    if (!schedule_time) continue;  // a run without its scheduleTime cannot keep a run from repeating
    CronExecution x;
    x.schedule_time = *schedule_time;
    x.execution_time = time_field(e, "executionTime").value_or(*schedule_time);
    x.applied.replicas = int_field(e, "appliedReplicas");
    x.applied.min_replicas = int_field(e, "appliedMinReplicas");
    x.applied.max_replicas = int_field(e, "appliedMaxReplicas");
    if (auto m = e.find("message"); m != e.end() && m->is_string()) x.message = m->get<std::string>();
    out.push_back(std::move(x));
  }
  return out;
}

void record(std::vector<CronExecution>& list, std::int32_t limit, CronExecution execution) {
  list.insert(list.begin(), std::move(execution));
  if (list.size() > static_cast<std::size_t>(std::max(limit, 0)))
    list.resize(static_cast<std::size_t>(std::max(limit, 0)));
}

}  // namespace

bool targets_federated_hpa(const CrossVersionObjectReference& target) {
  return target.kind == "FederatedHPA" &&
         (target.api_version.empty() || target.api_version.rfind("autoscaling.karmada.io/", 0) == 0);
}

k8s::Expected<CronFederatedHPA> decode_cron_federated_hpa(const json& json, std::string_view path,
                                                          UnknownFields unknown) {
  detail::FieldReader reader;
  const Fields top(reader, json, std::string(path), detail::reader_rule(unknown));
  CronFederatedHPA cron;
  cron.namespace_name = "default";
  const bool whole =
      top.has("spec") || (top.refuses_unknown() && (top.has("apiVersion") || top.has("kind") || top.has("metadata")));
  if (whole) {
    top.allow({"apiVersion", "kind", "metadata", "spec", "status"});
    if (auto meta = top.object("metadata")) {
      detail::allow_object_meta(*meta);
      cron.name = meta->string("name").value_or("");
      cron.namespace_name = meta->string("namespace").value_or("default");
    }
  }
  const Fields spec = whole ? top.required_object("spec") : top;
  spec.allow({"scaleTargetRef", "rules"});
  cron.scale_target_ref =
      detail::decode_reference_as<CrossVersionObjectReference>(spec.required_object("scaleTargetRef"));
  const bool federated_hpa = targets_federated_hpa(cron.scale_target_ref);
  std::set<std::string> names;
  spec.each("rules", [&](const nlohmann::json& raw, const std::string& rule_path) {
    CronRule rule = decode_rule(spec, raw, rule_path, federated_hpa);
    if (!rule.invalid && !names.insert(rule.name).second)
      rule.invalid =
          describe(rule_path + ".name", "\"" + rule.name + "\" is used by an earlier rule; rule names are unique");
    cron.rules.push_back(std::move(rule));
  });
  return reader.finish(std::move(cron));
}

k8s::Expected<CronApplied> apply_to_federated_hpa(const CronRule& rule, const FederatedHPASpec& current) {
  CronApplied out;
  out.min_replicas = rule.target_min_replicas.value_or(current.min_replicas.value_or(1));
  out.max_replicas = rule.target_max_replicas.value_or(current.max_replicas);
  auto origin = [](bool from_rule) { return from_rule ? "the rule's" : "the FederatedHPA's"; };
  if (*out.min_replicas > *out.max_replicas)
    return k8s::Error{"minReplicas " + std::to_string(*out.min_replicas) + " (" +
                      origin(rule.target_min_replicas.has_value()) + ") would exceed maxReplicas " +
                      std::to_string(*out.max_replicas) + " (" + origin(rule.target_max_replicas.has_value()) +
                      "); nothing written"};
  if (*out.min_replicas == 0 && !allows_scale_to_zero(current))
    return k8s::Error{
        "minReplicas 0 is allowed only when every metric of the FederatedHPA is Object or External; "
        "nothing written"};
  return out;
}

std::vector<CronRuleHistory> decode_execution_histories(const json& object) {
  std::vector<CronRuleHistory> out;
  if (!object.is_object()) return out;
  const auto status = object.find("status");
  if (status == object.end() || !status->is_object()) return out;
  const auto list = status->find("executionHistories");
  if (list == status->end() || !list->is_array()) return out;
  for (const auto& entry : *list) {
    if (!entry.is_object()) continue;
    const auto name = entry.find("ruleName");
    if (name == entry.end() || !name->is_string()) continue;
    CronRuleHistory h;
    h.rule_name = name->get<std::string>();
    h.next_execution_time = time_field(entry, "nextExecutionTime");
    h.successful = decode_executions(entry, "successfulExecutions");
    h.failed = decode_executions(entry, "failedExecutions");
    out.push_back(std::move(h));
  }
  return out;
}

std::vector<CronRuleHistory> histories_for(const CronFederatedHPA& cron, std::vector<CronRuleHistory> existing) {
  std::vector<CronRuleHistory> out;
  for (const auto& rule : cron.rules) {
    auto it = std::find_if(existing.begin(), existing.end(), [&](const auto& h) { return h.rule_name == rule.name; });
    if (it != existing.end()) {
      out.push_back(std::move(*it));
      existing.erase(it);  // a name used twice gets one history
    } else {
      out.push_back(CronRuleHistory{rule.name, std::nullopt, {}, {}});
    }
  }
  return out;
}

std::optional<k8s::Timestamp> last_schedule_time(const CronRuleHistory& history) {
  std::optional<k8s::Timestamp> last;
  for (const auto* list : {&history.successful, &history.failed})
    for (const auto& e : *list)
      if (!last || e.schedule_time > *last) last = e.schedule_time;
  return last;
}

void record_success(CronRuleHistory& history, const CronRule& rule, CronExecution execution) {
  record(history.successful, rule.successful_history_limit, std::move(execution));
}

void record_failure(CronRuleHistory& history, const CronRule& rule, CronExecution execution) {
  record(history.failed, rule.failed_history_limit, std::move(execution));
}

json cron_status_json(const std::vector<CronRuleHistory>& histories) {
  json list = json::array();
  for (const auto& h : histories) {
    json entry = {{"ruleName", h.rule_name}};
    if (h.next_execution_time) entry["nextExecutionTime"] = k8s::format_time(*h.next_execution_time);
    json successful = json::array();
    for (const auto& e : h.successful) {
      json x = {{"scheduleTime", k8s::format_time(e.schedule_time)},
                {"executionTime", k8s::format_time(e.execution_time)}};
      if (e.applied.replicas) x["appliedReplicas"] = *e.applied.replicas;
      if (e.applied.min_replicas) x["appliedMinReplicas"] = *e.applied.min_replicas;
      if (e.applied.max_replicas) x["appliedMaxReplicas"] = *e.applied.max_replicas;
      successful.push_back(std::move(x));
    }
    json failed = json::array();
    for (const auto& e : h.failed)
      failed.push_back({{"scheduleTime", k8s::format_time(e.schedule_time)},
                        {"executionTime", k8s::format_time(e.execution_time)},
                        {"message", e.message}});
    if (!successful.empty()) entry["successfulExecutions"] = std::move(successful);
    if (!failed.empty()) entry["failedExecutions"] = std::move(failed);
    list.push_back(std::move(entry));
  }
  return {{"executionHistories", std::move(list)}};
}

}  // namespace fedmetrics::autoscaler
