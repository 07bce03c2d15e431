#include "fedmetrics/controller/metrics_gatherer.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <utility>

#include "fedmetrics/aggregator/query.hpp"
#include "fedmetrics/controller/scale_client.hpp"
#include "fedmetrics/k8s/ascii.hpp"
#include "fedmetrics/transport/async.hpp"

namespace fedmetrics::controller {

namespace {

using autoscaler::MetricSourceType;

autoscaler::PodPhase phase_of(const std::string& phase) {
  if (phase == "Pending") return autoscaler::PodPhase::Pending;
  if (phase == "Running") return autoscaler::PodPhase::Running;
  if (phase == "Succeeded") return autoscaler::PodPhase::Succeeded;
  if (phase == "Failed") return autoscaler::PodPhase::Failed;
  return autoscaler::PodPhase::Unknown;
}

// The query a Pods, Object or External metric of the spec is fetched by: a
// metric named twice is fetched once, and the metric selector is part of the
// key (two metrics of one name with different selectors are two values).
// Empty for Resource and ContainerResource, which share the pod metrics query.
std::string query_key(const autoscaler::MetricSpec& m) {
  const std::string metric_selector = m.metric.selector.to_string();
  switch (m.type) {
    case MetricSourceType::Pods: return "pods/" + autoscaler::pods_metric_key(m.metric.name, metric_selector);
    case MetricSourceType::Object:
      return "object/" + m.described_object.kind + "/" + m.described_object.name + "/" + m.metric.name + "/" +
             metric_selector;
    case MetricSourceType::External: return "external/" + m.metric.name + "/" + metric_selector;
    default: return {};
  }
}

autoscaler::ConditionStatus condition_status(const std::string& status) {
  if (status == "True") return autoscaler::ConditionStatus::True;
  if (status == "False") return autoscaler::ConditionStatus::False;
  return autoscaler::ConditionStatus::Unknown;
}

k8s::LabelSelector with_cluster(const k8s::LabelSelector& selector, const std::string& cluster) {
  auto requirements = selector.requirements();
  requirements.push_back({std::string(aggregator::kClusterLabel), k8s::SelectorOperator::Equals, {cluster}});
  return k8s::LabelSelector::from_requirements(std::move(requirements));
}

std::string message_of(const k8s::Status& status) { return status.message.empty() ? status.reason : status.message; }

}  // namespace

autoscaler::Pod to_autoscaler_pod(const std::string& cluster, const k8s::Pod& pod) {
  autoscaler::Pod out;
  out.key = {cluster, pod.metadata.namespace_name, pod.metadata.name};
  out.phase = phase_of(pod.phase);
  for (const auto& c : pod.conditions)
    if (c.type == "Ready")
      out.ready =
          autoscaler::PodReadyCondition{condition_status(c.status), c.last_transition_time.value_or(k8s::Timestamp{})};
  out.start_time = pod.start_time;
  out.deleting = pod.deletion_timestamp.has_value();
  for (const auto& c : pod.containers) out.containers.push_back({c.name, c.requests});
  // Native sidecars (init containers with restartPolicy Always) run beside
  // the containers and count in the requests, as upstream's
  // calculateRequests counts them; other init containers have finished.
  for (const auto& c : pod.init_containers)
    if (c.restart_policy == "Always") out.containers.push_back({c.name, c.requests});
  out.requests = pod.requests;
  out.overhead = pod.overhead;
  return out;
}

autoscaler::MemberPlacement member_placement(const std::optional<std::vector<TargetCluster>>& hosts,
                                             const PodListing& listing, std::int32_t status_replicas) {
  autoscaler::MemberPlacement placement;
  if (hosts) {
    for (const auto& c : *hosts) placement.member_replicas[c.name] = std::max<std::int32_t>(c.replicas, 0);
    for (const auto& m : listing.unread_members) {
      auto it = placement.member_replicas.find(m);
      placement.unread_members[m] = it == placement.member_replicas.end() ? 0 : it->second;
    }
    return placement;
  }
  if (listing.unread_members.empty()) return placement;
  // No binding: the pods that exist (status.replicas) and were not listed are
  // in the members that did not answer; shared evenly, the remainder to the
  // first in name order. An estimate, but never zero pods for a member that
  // may be under load.
  std::int64_t listed = 0;
  for (const auto& p : listing.pods)
    if (!p.deleting && p.phase != autoscaler::PodPhase::Failed) ++listed;
  const std::int64_t unaccounted = std::max<std::int64_t>(0, std::int64_t{status_replicas} - listed);
  const auto n = static_cast<std::int64_t>(listing.unread_members.size());
  for (std::int64_t i = 0; i < n; ++i) {
    placement.unread_members[listing.unread_members[static_cast<std::size_t>(i)]] =
        static_cast<std::int32_t>(unaccounted / n + (i < unaccounted % n ? 1 : 0));
  }
  return placement;
}

void add_members_not_asked(PodListing& listing, const aggregator::MemberSnapshot& members,
                           const std::optional<std::set<std::string>>& hosts) {
  auto reason_of = [&](const std::string& name) -> std::string {
    for (const auto& l : members.left_out)
      if (l.name == name) return l.reason;
    return "not a member cluster fedmetrics can ask";
  };
  auto add = [&](const std::string& name) {
    if (std::find(listing.unread_members.begin(), listing.unread_members.end(), name) != listing.unread_members.end())
      return;
    listing.unread_members.push_back(name);
    listing.failed_members.push_back(name + ": left out: " + reason_of(name));
  };
  if (hosts) {
    for (const auto& host : *hosts) {
      const bool asked =
          std::any_of(members.members.begin(), members.members.end(), [&](const auto& m) { return m->name() == host; });
      if (!asked) add(host);
    }
  } else {
    for (const auto& l : members.left_out) add(l.name);
  }
  std::sort(listing.unread_members.begin(), listing.unread_members.end());
}

namespace {

// Awaits every task, as the sync always has, even when the sync is
// cancelled meanwhile: each ends by its member deadline, and a fan-out the
// sync started must not be left running past the sync's scope (the runtime
// that stops after the loop would destroy it mid-flight). The sync's next
// co_await throws the cancellation then.
async::Task<void> all_of(std::vector<async::Task<void>> tasks) {
  const auto executor = co_await boost::asio::this_coro::executor;
  auto all = async::when_all(std::move(tasks));
  auto shielded = boost::asio::co_spawn(
      executor, std::move(all),
      boost::asio::bind_cancellation_slot(boost::asio::cancellation_slot(), boost::asio::use_awaitable));
  co_await std::move(shielded);
}

// One member's pods, added to `listing` (every member's task runs on one executor).
async::Task<void> list_member_pods(std::shared_ptr<aggregator::MemberCluster> member, const std::string& namespace_name,
                                   const k8s::LabelSelector& selector, aggregator::Deadline deadline,
                                   MemberPods* watched, PodListing& listing) {
  auto asking = watched != nullptr ? watched->pods(*member, namespace_name, selector, deadline)
                                   : member->pods(namespace_name, selector, deadline);
  auto result = co_await std::move(asking);
  const std::string& name = member->name();
  if (!result) {
    listing.failed_members.push_back(name + ": " + result.error().message);
    listing.unread_members.push_back(name);
    co_return;
  }
  for (const auto& pod : *result) listing.pods.push_back(to_autoscaler_pod(name, pod));
}

autoscaler::PodResourceSample resource_sample(const std::string& cluster, const k8s::PodMetrics& pm) {
  autoscaler::PodResourceSample sample;
  sample.key = {cluster, pm.metadata.namespace_name, pm.metadata.name};
  sample.timestamp = pm.timestamp;
  if (pm.window.count() > 0) sample.window = pm.window;
  for (const auto& c : pm.containers) sample.containers.push_back({c.name, c.usage});
  return sample;
}

// The time since `started`, for each spec entry a query answered for.
void took(GatheredMetrics& g, const std::vector<std::size_t>& entries, std::chrono::steady_clock::time_point started) {
  const auto elapsed = std::chrono::steady_clock::now() - started;
  for (auto i : entries) g.fetch_durations[i] = elapsed;
}

async::Task<void> gather_resource(aggregator::MetricsService& service, aggregator::ResourceMetricsQuery query,
                                  std::vector<std::size_t> entries, std::chrono::steady_clock::time_point started,
                                  GatheredMetrics& g) {
  auto asking = service.pod_metrics(std::move(query));
  const auto answer = co_await std::move(asking);
  took(g, entries, started);
  auto& snapshot = g.snapshot;
  if (auto* s = std::get_if<k8s::Status>(&answer->result)) {
    snapshot.resource = k8s::Error{message_of(*s)};
    co_return;
  }
  std::vector<autoscaler::PodResourceSample> samples;
  for (const auto& pm : std::get<std::vector<k8s::PodMetrics>>(answer->result)) {
    auto cluster = pm.metadata.annotations.find(aggregator::kQueryFromClusterAnnotation);
    samples.push_back(resource_sample(cluster == pm.metadata.annotations.end() ? std::string() : cluster->second, pm));
  }
  snapshot.resource = std::move(samples);
}

async::Task<void> gather_shared_resource(const ResourceFetch& resource, std::vector<std::size_t> entries,
                                         std::chrono::steady_clock::time_point started, GatheredMetrics& g) {
  auto fetching = resource();
  auto samples = co_await std::move(fetching);
  took(g, entries, started);
  g.snapshot.resource = std::move(samples);
}

// One member's values of a Pods metric.
async::Task<void> gather_member_pods_metric(
    aggregator::MetricsService& service, aggregator::CustomMetricsQuery query, std::string cluster,
    std::vector<std::pair<std::string, aggregator::SharedAnswer<aggregator::CustomMetricsAnswer>>>& results) {
  auto asking = service.custom_metrics(std::move(query));
  auto answer = co_await std::move(asking);
  results.emplace_back(std::move(cluster), std::move(answer));
}

// A Pods metric, asked per member, so that every value is attributed to its (cluster, namespace, name).
async::Task<void> gather_pods_metric(aggregator::MetricsService& service, const autoscaler::MetricSpec& m,
                                     const std::string& namespace_name, const k8s::LabelSelector& selector,
                                     const std::set<std::string>& clusters, std::vector<std::size_t> entries,
                                     std::chrono::steady_clock::time_point started, GatheredMetrics& g) {
  std::vector<std::pair<std::string, aggregator::SharedAnswer<aggregator::CustomMetricsAnswer>>> results;
  std::vector<async::Task<void>> asks;
  for (const auto& cluster : clusters) {
    aggregator::CustomMetricsQuery query;
    query.resource = {"", "pods"};
    query.namespace_name = namespace_name;
    query.name = "*";
    query.metric = m.metric.name;
    query.label_selector = with_cluster(selector, cluster);
    query.metric_selector = m.metric.selector;
    asks.push_back(gather_member_pods_metric(service, std::move(query), cluster, results));
  }
  auto asking = all_of(std::move(asks));
  co_await std::move(asking);
  took(g, entries, started);
  std::vector<autoscaler::PodMetricSample> samples;
  std::string errors;
  std::size_t answered = 0;
  for (auto& [cluster, answer] : results) {
    if (auto* s = std::get_if<k8s::Status>(&answer->result)) {
      errors += (errors.empty() ? "" : "; ") + cluster + ": " + message_of(*s);
      continue;
    }
    ++answered;
    for (const auto& v : std::get<std::vector<k8s::MetricValue>>(answer->result))
      samples.push_back({{cluster, v.described_object.namespace_name, v.described_object.name}, v.value, v.timestamp});
  }
  const std::string name = autoscaler::pods_metric_key(m.metric.name, m.metric.selector.to_string());
  if (answered == 0 && !results.empty()) g.snapshot.pods.emplace(name, k8s::Error{errors});
  else g.snapshot.pods.emplace(name, std::move(samples));
}

async::Task<void> gather_object_metric(aggregator::MetricsService& service, const autoscaler::MetricSpec& m,
                                       const std::string& namespace_name, std::vector<std::size_t> entries,
                                       std::chrono::steady_clock::time_point started, GatheredMetrics& g) {
  const auto& ref = m.described_object;
  auto target = target_resource(ref);
  aggregator::CustomMetricsQuery query;
  query.resource = {target.group, target.resource};
  const bool is_namespace = ref.kind == "Namespace" && target.group.empty();
  query.namespace_name = is_namespace ? std::string() : namespace_name;
  // A Namespace is always the FederatedHPA's own, whatever name the spec
  // gives (upstream GetObjectMetric: a CrossVersionObjectReference must
  // not escape its namespace).
  query.name = is_namespace ? namespace_name : ref.name;
  query.metric = m.metric.name;
  query.metric_selector = m.metric.selector;
  auto asking = service.custom_metrics(std::move(query));
  const auto answer = co_await std::move(asking);
  took(g, entries, started);
  autoscaler::ObjectMetricValue value{ref.kind, ref.name, m.metric.name, k8s::Quantity(), m.metric.selector.to_string(),
                                      {}};
  // A member that failed or was left out while others answered: the sum lacks its part.
  value.missing_members = answer->missing_members;
  if (auto* s = std::get_if<k8s::Status>(&answer->result)) {
    value.value = k8s::Error{message_of(*s)};
  } else {
    const auto& items = std::get<std::vector<k8s::MetricValue>>(answer->result);
    if (items.empty()) value.value = k8s::Error{"no metric value returned from custom metrics API"};
    else value.value = items.front().value;
  }
  g.snapshot.objects.push_back(std::move(value));
}

async::Task<void> gather_external_metric(aggregator::MetricsService& service, const autoscaler::MetricSpec& m,
                                         const std::string& namespace_name, std::vector<std::size_t> entries,
                                         std::chrono::steady_clock::time_point started, GatheredMetrics& g) {
  aggregator::ExternalMetricsQuery query{namespace_name, m.metric.name, m.metric.selector};
  auto asking = service.external_metrics(std::move(query));
  const auto answer = co_await std::move(asking);
  took(g, entries, started);
  autoscaler::ExternalMetricValues values{m.metric.name, m.metric.selector.to_string(), std::vector<k8s::Quantity>{},
                                          answer->missing_members};
  if (auto* s = std::get_if<k8s::Status>(&answer->result)) {
    values.values = k8s::Error{message_of(*s)};
  } else {
    std::vector<k8s::Quantity> out;
    for (const auto& v : std::get<std::vector<k8s::ExternalMetricValue>>(answer->result)) out.push_back(v.value);
    values.values = std::move(out);
  }
  g.snapshot.externals.push_back(std::move(values));
}

}  // namespace

async::Task<PodListing> list_pods(const aggregator::MemberList& members, const std::string& namespace_name,
                                  const k8s::LabelSelector& selector, aggregator::Deadline deadline,
                                  MemberPods* watched) {
  PodListing listing;
  std::vector<async::Task<void>> asks;
  asks.reserve(members.size());
  for (const auto& member : members)
    asks.push_back(list_member_pods(member, namespace_name, selector, deadline, watched, listing));
  auto asking = all_of(std::move(asks));
  co_await std::move(asking);
  std::sort(listing.pods.begin(), listing.pods.end(), [](const auto& a, const auto& b) { return a.key < b.key; });
  std::sort(listing.unread_members.begin(), listing.unread_members.end());
  co_return listing;
}

async::Task<GatheredMetrics> gather_metrics(aggregator::MetricsService& service, autoscaler::FederatedHPASpec spec,
                                            const std::string& namespace_name, const k8s::LabelSelector& selector,
                                            const std::vector<autoscaler::Pod>& pods,
                                            const std::optional<std::set<std::string>>& hosts, ResourceFetch resource) {
  GatheredMetrics gathered;
  gathered.fetch_durations.resize(spec.metrics.size());
  // The spec entries each query answers for; its answer's time is theirs.
  const auto started = std::chrono::steady_clock::now();
  std::map<std::string, std::vector<std::size_t>> entries_of;  // query key -> spec entries
  std::vector<std::size_t> resource_entries;
  for (std::size_t i = 0; i < spec.metrics.size(); ++i) {
    const auto& m = spec.metrics[i];
    if (m.type == MetricSourceType::Resource || m.type == MetricSourceType::ContainerResource)
      resource_entries.push_back(i);
    else if (auto key = query_key(m); !key.empty()) entries_of[key].push_back(i);
  }
  std::set<std::string> clusters;
  for (const auto& p : pods) clusters.insert(p.key.cluster);

  std::vector<async::Task<void>> asks;
  if (!resource_entries.empty() && resource) {
    asks.push_back(gather_shared_resource(resource, resource_entries, started, gathered));
  } else if (!resource_entries.empty()) {
    aggregator::ResourceMetricsQuery query;
    query.namespace_name = namespace_name;
    query.label_selector = selector;
    if (hosts && !hosts->empty()) {
      // Only the members the target is scheduled to (a pod with the same
      // labels elsewhere is not the target's).
      auto requirements = selector.requirements();
      requirements.push_back({std::string(aggregator::kClusterLabel), k8s::SelectorOperator::In,
                              std::vector<std::string>(hosts->begin(), hosts->end())});
      query.label_selector = k8s::LabelSelector::from_requirements(std::move(requirements));
    }
    asks.push_back(gather_resource(service, std::move(query), resource_entries, started, gathered));
  }

  // Each query once (query_key).
  std::set<std::string> asked;
  for (const auto& m : spec.metrics) {
    const std::string key = query_key(m);
    if (key.empty() || !asked.insert(key).second) continue;
    if (m.type == MetricSourceType::Pods)
      asks.push_back(
          gather_pods_metric(service, m, namespace_name, selector, clusters, entries_of[key], started, gathered));
    else if (m.type == MetricSourceType::Object)
      asks.push_back(gather_object_metric(service, m, namespace_name, entries_of[key], started, gathered));
    else if (m.type == MetricSourceType::External)
      asks.push_back(gather_external_metric(service, m, namespace_name, entries_of[key], started, gathered));
  }
  auto asking = all_of(std::move(asks));
  co_await std::move(asking);
  co_return gathered;
}

void add_resource_samples(const std::string& cluster, const aggregator::PodMetricsAnswer& answer,
                          const k8s::LabelSelector& selector, const std::set<autoscaler::PodKey>& listed,
                          std::vector<autoscaler::PodResourceSample>& out) {
  const auto* items = std::get_if<std::vector<k8s::PodMetrics>>(&answer.result);
  if (items == nullptr) return;
  for (const auto& pm : *items) {
    const bool kept = pm.metadata.labels.empty()
                          ? listed.count({cluster, pm.metadata.namespace_name, pm.metadata.name}) > 0
                          : selector.matches(pm.metadata.labels);
    if (kept) out.push_back(resource_sample(cluster, pm));
  }
}

TargetResource target_resource(const autoscaler::CrossVersionObjectReference& target) {
  TargetResource out;
  auto slash = target.api_version.find('/');
  if (slash == std::string::npos) {
    out.version = target.api_version.empty() ? "v1" : target.api_version;
  } else {
    out.group = target.api_version.substr(0, slash);
    out.version = target.api_version.substr(slash + 1);
  }
  const std::string lower = k8s::ascii_lowercase(target.kind);
  // The English plurals of the kinds that carry metrics or a scale subresource.
  if (lower.ends_with("s") || lower.ends_with("x") || lower.ends_with("ch") || lower.ends_with("sh"))
    out.resource = lower + "es";
  else if (lower.ends_with("y") && lower.size() > 1 &&
           std::string("aeiou").find(lower[lower.size() - 2]) == std::string::npos)
    out.resource = lower.substr(0, lower.size() - 1) + "ies";
  else out.resource = lower + "s";
  if (out.group.empty() && target.api_version.empty() &&
      (target.kind == "Deployment" || target.kind == "StatefulSet" || target.kind == "ReplicaSet")) {
    out.group = "apps";
  }
  return out;
}

}  // namespace fedmetrics::controller
