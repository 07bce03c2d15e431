// The distributed mode's aggregated status: what the members' HPAs report,
// summed and averaged into the FederatedHPA's status.
#include "autoscaler/distributor_parts.hpp"

#include <algorithm>
#include <utility>

namespace fedmetrics::autoscaler::detail {
namespace {

// Per metric of the spec: Value summed, AverageValue and Utilization averaged
// weighted by the members' currentReplicas (rounded down). When no member
// runs a replica, the plain average (there is nothing to weigh by).
std::vector<MetricStatus> aggregate_metrics(const FederatedHPASpec& spec, const std::vector<const MemberHPA*>& hpas) {
  std::vector<MetricStatus> out;
  for (const auto& metric : with_defaults(spec).metrics) {
    struct Weighted {
      std::int64_t sum = 0;     // value x weight
      std::int64_t plain = 0;   // value
      std::int64_t weight = 0;  // replicas
      std::int64_t count = 0;
      void add(std::int64_t v, std::int64_t w) {
        sum += v * w;
        plain += v;
        weight += w;
        ++count;
      }
      std::int64_t average() const { return weight > 0 ? sum / weight : plain / count; }
    };
    Weighted average_value;
    Weighted utilization;
    std::optional<std::int64_t> value;
    bool found = false;
    for (const auto* hpa : hpas) {
      for (const auto& status : hpa->current_metrics) {
        if (!same_metric(metric, status)) continue;
        found = true;
        const std::int64_t w = std::max(hpa->current_replicas, 0);
        if (status.current.value) value = value.value_or(0) + *status.current.value;
        if (status.current.average_value) average_value.add(*status.current.average_value, w);
        if (status.current.average_utilization) utilization.add(*status.current.average_utilization, w);
        break;
      }
    }
    if (!found) continue;
    MetricStatus s;
    s.type = metric.type;
    s.resource_name = metric.resource_name;
    s.container = metric.container;
    s.metric = metric.metric;
    s.described_object = metric.described_object;
    s.current.value = value;
    if (average_value.count > 0) s.current.average_value = average_value.average();
    if (utilization.count > 0) s.current.average_utilization = static_cast<std::int32_t>(utilization.average());
    out.push_back(std::move(s));
  }
  return out;
}

// AbleToScale / ScalingActive: True when every member's is, otherwise False
// naming the members and their reasons. Members whose HPA reported no such
// condition yet (just created) are left out; with none at all it is not set.
void aggregate_condition(FederatedHPAStatus& status, std::string_view type, const std::vector<Member>& members,
                         std::string true_reason, std::string false_reason, Timestamp now) {
  std::vector<std::string> ok;
  std::vector<std::string> failing;
  for (const auto& m : members) {
    if (m.hpa == nullptr) continue;
    const auto* c = find_condition(m.hpa->conditions, type);
    if (c == nullptr) continue;
    if (c->status == ConditionStatus::True) {
      ok.push_back(m.name);
    } else {
      failing.push_back(m.name + ": " + c->reason + (c->message.empty() ? "" : " (" + c->message + ")"));
    }
  }
  if (ok.empty() && failing.empty()) return;
  if (failing.empty()) {
    set_condition(status.conditions, type, ConditionStatus::True, std::move(true_reason),
                  std::string(type) + " is True on every member HPA (" + join_names(ok) + ")", now);
  } else {
    set_condition(status.conditions, type, ConditionStatus::False, std::move(false_reason), join_names(failing, "; "),
                  now);
  }
}

}  // namespace

FederatedHPAStatus aggregate_status(const DistributionInput& input, const std::vector<Member>& members) {
  FederatedHPAStatus status;
  status.conditions = input.previous_conditions;
  std::vector<const MemberHPA*> hpas;
  for (const auto& m : members) {
    if (m.hpa == nullptr) continue;
    hpas.push_back(m.hpa);
    status.current_replicas += m.hpa->current_replicas;
    status.desired_replicas += m.hpa->desired_replicas;
    if (m.hpa->last_scale_time && (!status.last_scale_time || *m.hpa->last_scale_time > *status.last_scale_time)) {
      status.last_scale_time = m.hpa->last_scale_time;
    }
  }
  status.current_metrics = aggregate_metrics(input.spec, hpas);
  aggregate_condition(status, kAbleToScale, members, "MembersAbleToScale", "MemberNotAbleToScale", input.now);
  aggregate_condition(status, kScalingActive, members, "MembersScalingActive", "MemberNotScalingActive", input.now);
  return status;
}

std::string join_names(const std::vector<std::string>& names, std::string_view separator) {
  std::string out;
  for (const auto& n : names) {
    if (!out.empty()) out += separator;
    out += n;
  }
  return out;
}

}  // namespace fedmetrics::autoscaler::detail
