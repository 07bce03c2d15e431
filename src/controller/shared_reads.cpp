// HpaController: the reads every FederatedHPA of a namespace shares
// (ControllerOptions::member_pods). The pods come from the members' watches
// (list_pods with the MemberPods port); a member's pod metrics of a
// namespace are fetched once and shared for a sync period, so that a sync
// costs no member request of its own for either. What a sync gets is what
// its own requests would have given: the samples of the pods its selector
// matches, from the members its query would have asked, in the order of
// the aggregator's merged answer.

#include "controller/hpa_controller_state.hpp"

#include <algorithm>
#include <string_view>
#include <tuple>

namespace fedmetrics::controller {

namespace {

using async::Task;
using PodMetricsShared = aggregator::SharedAnswer<aggregator::PodMetricsAnswer>;

// The aggregator's message when none of the members asked could answer
// (aggregator/merge.cpp): the per-member parts of several are joined under it.
constexpr std::string_view kNoMemberCouldServe = "no member cluster could serve metrics.k8s.io: ";

// Only the member's own answer is shared; a failure or a member left out is asked again.
bool answered(const PodMetricsShared& answer) {
  return answer && std::holds_alternative<std::vector<k8s::PodMetrics>>(answer->result) &&
         answer->missing_members.empty();
}

std::string failure_of(const PodMetricsShared& answer) {
  if (!answer) return "the fetch was cancelled";
  if (const auto* s = std::get_if<k8s::Status>(&answer->result)) return s->message.empty() ? s->reason : s->message;
  std::string out = "left out";
  for (const auto& w : answer->warnings) out = w;
  return out;
}

}  // namespace

void HpaController::State::note_reads(const FederatedHPAKey& key, const aggregator::MemberList& members) {
  std::vector<std::string> names;
  names.reserve(members.size());
  for (const auto& m : members) names.push_back(m->name());
  std::sort(names.begin(), names.end());
  auto& m = memory[key];
  if (m.read_members == names) return;
  m.read_members = std::move(names);
  reads_changed = true;
}

void HpaController::State::keep_shared_reads() {
  reads_changed = false;
  std::set<MemberNamespace> in_use;
  for (const auto& [key, m] : memory)
    for (const auto& member : m.read_members) in_use.emplace(member, key.namespace_name);
  std::erase_if(shared_pod_metrics,
                [&](const auto& entry) { return !entry.second.in_flight && !in_use.count(entry.first); });
  options.member_pods->keep(in_use);
}

Task<void> HpaController::State::shared_pod_metrics_of(MemberNamespace which, Clock::Duration max_age,
                                                       PodMetricsShared& out) {
  const auto now = options.monotonic->now();
  {
    auto& entry = shared_pod_metrics[which];
    if (entry.answer && now - entry.asked < max_age) {
      out = entry.answer;
      co_return;
    }
    if (entry.in_flight) {
      auto waiting = entry.in_flight->wait();
      out = co_await std::move(waiting);
      co_return;
    }
    entry.in_flight.emplace();
  }
  const auto shot = *shared_pod_metrics[which].in_flight;
  aggregator::ResourceMetricsQuery query;
  query.namespace_name = which.second;
  query.label_selector = k8s::LabelSelector::from_requirements(
      {{std::string(aggregator::kClusterLabel), k8s::SelectorOperator::Equals, {which.first}}});
  PodMetricsShared answer;
  try {
    auto asking = metrics->pod_metrics(std::move(query));
    answer = co_await std::move(asking);
  } catch (...) {
    // Cancelled (the term ended): whoever waits on this fetch asks again.
    if (auto it = shared_pod_metrics.find(which); it != shared_pod_metrics.end()) it->second.in_flight.reset();
    shot.set(nullptr);
    throw;
  }
  // The entry may have been dropped meanwhile (keep_shared_reads leaves one in flight alone).
  auto& entry = shared_pod_metrics[which];
  entry.in_flight.reset();
  if (answered(answer)) {
    entry.answer = answer;
    entry.asked = now;
  }
  shot.set(answer);
  out = std::move(answer);
}

Task<ResourceSamples> HpaController::State::shared_resource_samples(std::vector<std::string> members,
                                                                    std::string namespace_name,
                                                                    k8s::LabelSelector selector,
                                                                    std::set<autoscaler::PodKey> listed,
                                                                    Clock::Duration max_age) {
  std::sort(members.begin(), members.end());  // the merged answer's order among same-named pods
  std::vector<PodMetricsShared> answers(members.size());
  std::vector<Task<void>> fetches;
  fetches.reserve(members.size());
  for (std::size_t i = 0; i < members.size(); ++i)
    fetches.push_back(shared_pod_metrics_of(MemberNamespace{members[i], namespace_name}, max_age, answers[i]));
  auto fetching = async::when_all(std::move(fetches));
  co_await std::move(fetching);

  std::vector<autoscaler::PodResourceSample> samples;
  std::vector<std::string> failures;
  for (std::size_t i = 0; i < members.size(); ++i) {
    if (!answered(answers[i])) {
      failures.push_back(failure_of(answers[i]));
      continue;
    }
    add_resource_samples(members[i], *answers[i], selector, listed, samples);
  }
  if (!members.empty() && failures.size() == members.size()) {
    // As the aggregator words it when none of the members it asked answered.
    if (failures.size() == 1) co_return k8s::Error{failures.front()};
    std::string message(kNoMemberCouldServe);
    for (std::size_t i = 0; i < failures.size(); ++i) {
      std::string_view part = failures[i];
      if (part.starts_with(kNoMemberCouldServe)) part.remove_prefix(kNoMemberCouldServe.size());
      message += (i ? "; " : "") + std::string(part);
    }
    co_return k8s::Error{message};
  }
  // metrics-server's order, by namespace then name; the member breaks ties.
  std::stable_sort(samples.begin(), samples.end(), [](const auto& a, const auto& b) {
    return std::tie(a.key.namespace_name, a.key.name) < std::tie(b.key.namespace_name, b.key.name);
  });
  co_return samples;
}

}  // namespace fedmetrics::controller
