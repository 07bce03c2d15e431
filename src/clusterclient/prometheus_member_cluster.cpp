#include "fedmetrics/clusterclient/prometheus_member_cluster.hpp"

#include <cstdio>
#include <map>
#include <mutex>
#include <stdexcept>
#include <variant>

#include "fedmetrics/kube/plain_http.hpp"
#include "fedmetrics/kube/resource_path.hpp"
#include "fedmetrics/promsource/series_registry.hpp"

// GCC 12 inlines Asio's coroutine frame allocation and then reports its own
// matching operator delete as mismatched: a false positive (see tls_server.cpp).
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

namespace fedmetrics::clusterclient {

using aggregator::Deadline;
using aggregator::MemberCapabilities;
using aggregator::MemberError;
using aggregator::MemberResult;
using Kind = MemberError::Kind;

struct PrometheusMemberCluster::State {
  std::shared_ptr<RestMemberCluster> member;
  PrometheusLocation location;
  PrometheusOptions options;
  // One of the two: an https:// server through the kube client (its pool,
  // credentials and rate limit), or an http:// one in the clear.
  std::shared_ptr<kube::HttpsClient> https;
  kube::PlainHttpServer plain;

  std::atomic<std::shared_ptr<const promsource::SeriesRegistry>> registry;
  std::atomic<std::chrono::steady_clock::time_point> next_relist{};

  mutable std::mutex mutex;
  std::optional<k8s::Error> relist_error;  // the last relist's failure, until one succeeds
  // capabilities() made once per (member capabilities, registry) pair.
  mutable std::shared_ptr<const MemberCapabilities> member_caps_seen;
  mutable std::shared_ptr<const promsource::SeriesRegistry> registry_seen;
  mutable std::shared_ptr<const MemberCapabilities> combined;

  [[nodiscard]] bool covers_custom() const { return !options.rules->rules.empty(); }
  [[nodiscard]] bool covers_external() const { return !options.rules->external_rules.empty(); }
  [[nodiscard]] bool covers_resource() const { return options.rules->cpu && options.rules->memory; }

  // An error of talking to Prometheus, naming it.
  [[nodiscard]] MemberError named(const k8s::Error& e) const {
    MemberError out = e;
    out.message = location.description + ": " + e.message;
    return out;
  }
};

namespace {

using StatePtr = std::shared_ptr<PrometheusMemberCluster::State>;

std::string unix_seconds(std::chrono::system_clock::time_point t) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
  char text[32];
  std::snprintf(text, sizeof text, "%lld.%03lld", static_cast<long long>(ms / 1000), static_cast<long long>(ms % 1000));
  return text;
}

// GET `target` of the Prometheus API by `deadline`.
async::Task<kube::HttpResult> prometheus_get(StatePtr s, std::string target, Deadline deadline) {
  if (s->https) {
    kube::OutgoingRequest get;
    get.target = std::move(target);
    auto asking = s->https->request(std::move(get), deadline);
    co_return co_await std::move(asking);
  }
  auto asking = kube::plain_http_get(s->plain, std::move(target), {}, deadline, s->options.limits.max_bytes);
  co_return co_await std::move(asking);
}

// The body of an answer, or the transport's error. Prometheus answers its
// own errors (400 bad_data, 422 execution, 503 timeout) with its JSON
// envelope, which the answer's reader turns into its message; a status
// without that envelope (a proxy in front, a 404 of a wrong service) is
// said as such.
k8s::Expected<std::string> answer_body(const PrometheusMemberCluster::State& s, kube::HttpResult result) {
  if (auto* e = std::get_if<k8s::Error>(&result)) return s.named(*e);
  auto& reply = std::get<kube::HttpReply>(result);
  if (reply.status != 200 && reply.body.find("\"status\"") == std::string::npos)
    return s.named(MemberError{Kind::HttpStatus, kube::describe(result), reply.status});
  return std::move(reply.body);
}

// What a reader's error of an answer becomes: the status Prometheus
// answered when it was not 200 (its own error), else a malformed answer.
template <class T>
k8s::Expected<T> read_answer(const PrometheusMemberCluster::State& s, int status, k8s::Expected<T> read) {
  if (read.ok()) return read;
  if (status != 200) return s.named(MemberError{Kind::HttpStatus, read.error().message, status});
  return s.named(MemberError{Kind::MalformedResponse, read.error().message});
}

int status_of(const kube::HttpResult& result) {
  const auto* reply = std::get_if<kube::HttpReply>(&result);
  return reply ? reply->status : 0;
}

async::Task<k8s::Expected<promsource::QueryResult>> instant_query(StatePtr s, std::string promql, Deadline deadline) {
  // time: the adapter asks at pmodel.Now() (pkg/custom-provider/provider.go buildQuery).
  const std::string target = "/api/v1/query?query=" + kube::escape_query_value(promql) +
                             "&time=" + unix_seconds(std::chrono::system_clock::now());
  auto asking = prometheus_get(s, target, deadline);
  auto result = co_await std::move(asking);
  const int status = status_of(result);
  auto body = answer_body(*s, std::move(result));
  if (!body.ok()) co_return body.error();
  co_return read_answer(*s, status, promsource::parse_query_answer(*body, s->options.limits));
}

// The registry for a query, or why there is none yet.
k8s::Expected<std::shared_ptr<const promsource::SeriesRegistry>> registry_of(const PrometheusMemberCluster::State& s) {
  if (auto registry = s.registry.load()) return registry;
  std::lock_guard lock(s.mutex);
  if (s.relist_error) return *s.relist_error;
  return s.named(MemberError{Kind::Timeout, "its series have not been listed yet"});
}

async::Task<MemberResult<std::vector<k8s::MetricValue>>> custom_from_prometheus(StatePtr s,
                                                                                aggregator::CustomMetricsQuery q,
                                                                                Deadline deadline) {
  auto registry = registry_of(*s);
  if (!registry.ok()) co_return registry.error();
  const promsource::ResourceInfo* info =
      promsource::ResourceCatalog::builtin().find({q.resource.group, q.resource.resource});
  if (info == nullptr) co_return std::vector<k8s::MetricValue>{};  // no such resource: the metric is not found
  // A namespace's own metric (/namespaces/{name}/metrics/{metric}) is asked
  // of the namespace by name, as custom-metrics-apiserver asks the adapter.
  std::vector<std::string> names;
  if (q.wildcard()) {
    // The objects the selector chooses, listed from the member's API server
    // first; the query names them (GetMetricBySelector).
    auto listing =
        s->member->object_names(info->group_resource.group, info->version, info->group_resource.resource,
                                info->namespaced ? q.namespace_name : std::string(), q.label_selector, deadline);
    auto listed = co_await std::move(listing);
    if (!listed.ok()) co_return listed.error();
    names = std::move(*listed);
    if (names.empty()) co_return std::vector<k8s::MetricValue>{};
  } else {
    names.push_back(q.name);
  }
  auto query =
      (*registry)->query_for_metric(info->group_resource, q.metric, q.namespace_name, q.metric_selector, names);
  if (!query) co_return std::vector<k8s::MetricValue>{};  // a metric the relist did not find
  if (!query->ok()) co_return query->error();
  auto label = (*registry)->label_for(info->group_resource, q.metric);
  if (!label) co_return std::vector<k8s::MetricValue>{};
  auto asking = instant_query(s, **query, deadline);
  auto result = co_await std::move(asking);
  if (!result.ok()) co_return result.error();
  const auto now = std::chrono::time_point_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now());
  auto values = promsource::custom_metric_values(*result, *info, *label, q.namespace_name, names, q.metric,
                                                 q.metric_selector, now);
  if (!values.ok()) co_return s->named(values.error());
  co_return std::move(*values);
}

async::Task<MemberResult<std::vector<k8s::ExternalMetricValue>>> external_from_prometheus(
    StatePtr s, aggregator::ExternalMetricsQuery q, Deadline deadline) {
  auto registry = registry_of(*s);
  if (!registry.ok()) co_return registry.error();
  auto query = (*registry)->query_for_external_metric(q.metric, q.namespace_name, q.metric_selector);
  if (!query) co_return std::vector<k8s::ExternalMetricValue>{};
  if (!query->ok()) co_return query->error();
  auto asking = instant_query(s, **query, deadline);
  auto result = co_await std::move(asking);
  if (!result.ok()) co_return result.error();
  auto values = promsource::external_metric_values(*result, q.metric);
  if (!values.ok()) co_return s->named(values.error());
  co_return std::move(*values);
}

async::Task<std::optional<k8s::Error>> relist_series(StatePtr s, Deadline deadline) {
  const auto& rules = *s->options.rules;
  // start: the series seen over the last interval, as the adapter lists them
  // (periodic_metric_lister.go: pmodel.Now().Add(-updateInterval)).
  const auto now = std::chrono::system_clock::now();
  const std::string start = unix_seconds(now - s->options.relist_interval);
  // Rules sharing a seriesQuery share one answer.
  std::map<std::string, std::vector<promsource::Series>, std::less<>> answers;
  auto series_of = [&](const promsource::MetricNamer& namer) { answers.try_emplace(namer.series_query()); };
  for (const auto& r : rules.rules) series_of(r);
  for (const auto& r : rules.external_rules) series_of(r);
  for (auto& [series_query, series] : answers) {
    const std::string target =
        "/api/v1/series?match%5B%5D=" + kube::escape_query_value(series_query) + "&start=" + start;
    auto asking = prometheus_get(s, target, deadline);
    auto result = co_await std::move(asking);
    const int status = status_of(result);
    auto body = answer_body(*s, std::move(result));
    if (!body.ok()) co_return body.error();
    auto read = read_answer(*s, status, promsource::parse_series_answer(*body, s->options.limits));
    if (!read.ok()) {
      MemberError e = read.error();
      e.message += " (seriesQuery " + series_query + ")";
      co_return e;
    }
    series = std::move(*read);
  }
  std::vector<std::vector<promsource::Series>> custom, external;
  for (const auto& r : rules.rules) custom.push_back(answers.find(r.series_query())->second);
  for (const auto& r : rules.external_rules) external.push_back(answers.find(r.series_query())->second);
  s->registry.store(std::make_shared<const promsource::SeriesRegistry>(s->options.rules, custom, external));
  co_return std::nullopt;
}

async::Task<std::optional<k8s::Error>> relist_and_keep(StatePtr s, Deadline deadline) {
  s->next_relist.store(std::chrono::steady_clock::now() + s->options.relist_interval);
  auto listing = relist_series(s, deadline);
  auto error = co_await std::move(listing);
  std::lock_guard lock(s->mutex);
  s->relist_error = error;
  co_return error;
}

// The resource rules' label of `resource` objects ("pod", "node"), or an error naming the rule.
k8s::Expected<std::string> resource_label(const promsource::ResourceQuery& q, std::string resource) {
  return q.resources().label_for_resource({"", std::move(resource)});
}

// The cpu and memory answers of the resource rules' two queries (rendered
// by the caller, either of which may have failed to render), one after the other.
struct Usage {
  promsource::QueryResult cpu, memory;
};
async::Task<k8s::Expected<Usage>> cpu_and_memory(StatePtr s, k8s::Expected<std::string> cpu_query,
                                                 k8s::Expected<std::string> memory_query, Deadline deadline) {
  if (!cpu_query.ok()) co_return cpu_query.error();
  if (!memory_query.ok()) co_return memory_query.error();
  auto asking_cpu = instant_query(s, *cpu_query, deadline);
  auto cpu = co_await std::move(asking_cpu);
  if (!cpu.ok()) co_return cpu.error();
  auto asking_memory = instant_query(s, *memory_query, deadline);
  auto memory = co_await std::move(asking_memory);
  if (!memory.ok()) co_return memory.error();
  co_return Usage{std::move(*cpu), std::move(*memory)};
}

// One namespace's pods, as prometheus-adapter's resource provider answers
// them (pkg/resourceprovider/provider.go GetPodMetrics): both queries for
// the pods listed, the pod's own labels on its metrics.
async::Task<MemberResult<std::vector<k8s::PodMetrics>>> pods_of_namespace(StatePtr s, std::string namespace_name,
                                                                          std::vector<const k8s::Pod*> pods,
                                                                          Deadline deadline) {
  const auto& rules = *s->options.rules;
  std::vector<std::string> names;
  for (const auto* p : pods) names.push_back(p->metadata.name);
  auto pod_label = resource_label(*rules.cpu, "pods");
  if (!pod_label.ok()) co_return pod_label.error();
  auto asking = cpu_and_memory(s, rules.cpu->container_query(namespace_name, names),
                               rules.memory->container_query(namespace_name, names), deadline);
  auto usage = co_await std::move(asking);
  if (!usage.ok()) co_return usage.error();
  const auto now = std::chrono::time_point_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now());
  auto metrics =
      promsource::pod_metrics(usage->cpu, usage->memory, namespace_name, names, *pod_label,
                              rules.cpu->container_label(), rules.memory->container_label(), rules.window, now);
  if (!metrics.ok()) co_return s->named(metrics.error());
  for (auto& m : *metrics)
    for (const auto* p : pods)
      if (p->metadata.name == m.metadata.name) m.metadata.labels = p->metadata.labels;
  co_return std::move(*metrics);
}

async::Task<MemberResult<std::vector<k8s::PodMetrics>>> pods_from_prometheus(StatePtr s, std::string namespace_name,
                                                                             k8s::LabelSelector labels,
                                                                             k8s::FieldSelector fields,
                                                                             Deadline deadline) {
  // The pods first, from the member's API server, as metrics-server's API
  // layer lists them before it asks its storage (or the adapter's provider).
  auto listing = s->member->pods(namespace_name, labels, deadline);
  auto listed = co_await std::move(listing);
  if (!listed.ok()) co_return listed.error();
  std::map<std::string, std::vector<const k8s::Pod*>> by_namespace;
  for (const auto& p : *listed)
    if (fields.matches(p.metadata.name, p.metadata.namespace_name))
      by_namespace[p.metadata.namespace_name].push_back(&p);
  std::vector<k8s::PodMetrics> out;
  for (auto& [ns, pods] : by_namespace) {
    auto asking = pods_of_namespace(s, ns, std::move(pods), deadline);
    auto some = co_await std::move(asking);
    if (!some.ok()) co_return some.error();
    for (auto& m : *some) out.push_back(std::move(m));
  }
  co_return out;
}

async::Task<MemberResult<std::vector<k8s::NodeMetrics>>> nodes_from_prometheus(StatePtr s, k8s::LabelSelector labels,
                                                                               k8s::FieldSelector fields,
                                                                               Deadline deadline) {
  const auto& rules = *s->options.rules;
  auto listing = s->member->object_names("", "v1", "nodes", "", labels, deadline);
  auto listed = co_await std::move(listing);
  if (!listed.ok()) co_return listed.error();
  std::vector<std::string> names;
  for (auto& n : *listed)
    if (fields.matches(n, "")) names.push_back(std::move(n));
  if (names.empty()) co_return std::vector<k8s::NodeMetrics>{};
  auto node_label = resource_label(*rules.cpu, "nodes");
  if (!node_label.ok()) co_return node_label.error();
  auto asking = cpu_and_memory(s, rules.cpu->node_query(names), rules.memory->node_query(names), deadline);
  auto usage = co_await std::move(asking);
  if (!usage.ok()) co_return usage.error();
  const auto now = std::chrono::time_point_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now());
  auto metrics = promsource::node_metrics(usage->cpu, usage->memory, names, *node_label, rules.window, now);
  if (!metrics.ok()) co_return s->named(metrics.error());
  co_return std::move(*metrics);
}

std::shared_ptr<const MemberCapabilities> combine(const PrometheusMemberCluster::State& s,
                                                  const std::shared_ptr<const MemberCapabilities>& member,
                                                  const promsource::SeriesRegistry& registry) {
  auto caps = std::make_shared<MemberCapabilities>(*member);
  if (s.covers_resource()) caps->resource_metrics = true;
  if (s.covers_custom()) {
    // Both versions are served, v1beta2 preferred, as by prometheus-adapter.
    caps->custom_metrics = k8s::CustomMetricsVersion::V1beta2;
    caps->custom_metric_resources.clear();
    for (const auto& m : registry.custom_metrics())
      caps->custom_metric_resources.push_back(
          {m.group_resource.to_string() + "/" + m.metric, "", m.namespaced, "MetricValueList", {"get"}});
  }
  if (s.covers_external()) {
    caps->external_metrics = true;
    caps->external_metric_resources.clear();
    for (const auto& m : registry.external_metrics())
      caps->external_metric_resources.push_back({m, "", true, "ExternalMetricValueList", {"get"}});
  }
  return caps;
}

}  // namespace

PrometheusMemberCluster::PrometheusMemberCluster(std::shared_ptr<RestMemberCluster> member, PrometheusLocation location,
                                                 PrometheusOptions options, kube::ClientRuntime& runtime,
                                                 kube::ClientOptions client)
    : state_(std::make_shared<State>()) {
  if (!options.rules) throw std::logic_error("PrometheusMemberCluster: no rules");
  state_->member = std::move(member);
  const std::string what = "member " + state_->member->name() + ": " + location.description;
  if (location.endpoint.server.rfind("http://", 0) == 0) {
    state_->plain = kube::parse_plain_http_url(location.endpoint.server, location.description, what);
  } else {
    client.max_response_bytes = options.limits.max_bytes;
    client.peer_name = location.description;
    state_->https = std::make_shared<kube::HttpsClient>(runtime, location.endpoint, std::move(client));
  }
  state_->location = std::move(location);
  state_->options = std::move(options);
}

const std::string& PrometheusMemberCluster::name() const { return state_->member->name(); }
const PrometheusLocation& PrometheusMemberCluster::location() const { return state_->location; }
const std::shared_ptr<RestMemberCluster>& PrometheusMemberCluster::member() const { return state_->member; }

std::shared_ptr<const MemberCapabilities> PrometheusMemberCluster::capabilities() const {
  auto member = state_->member->capabilities();
  auto registry = state_->registry.load();
  if (!member || !registry) return nullptr;
  std::lock_guard lock(state_->mutex);
  if (state_->member_caps_seen != member || state_->registry_seen != registry) {
    state_->combined = combine(*state_, member, *registry);
    state_->member_caps_seen = member;
    state_->registry_seen = registry;
  }
  return state_->combined;
}

async::Task<MemberResult<std::vector<k8s::PodMetrics>>> PrometheusMemberCluster::pod_metrics(
    const std::string& namespace_name, const k8s::LabelSelector& labels, const k8s::FieldSelector& fields,
    Deadline deadline) {
  if (state_->covers_resource()) return pods_from_prometheus(state_, namespace_name, labels, fields, deadline);
  return state_->member->pod_metrics(namespace_name, labels, fields, deadline);
}

async::Task<MemberResult<k8s::EncodedItems>> PrometheusMemberCluster::pod_metrics_items(
    const std::string& namespace_name, const k8s::LabelSelector& labels, const k8s::FieldSelector& fields,
    std::shared_ptr<const k8s::ItemPreparation> preparation, Deadline deadline) {
  if (state_->covers_resource())
    return aggregator::encode_items(pods_from_prometheus(state_, namespace_name, labels, fields, deadline),
                                    std::move(preparation));
  return state_->member->pod_metrics_items(namespace_name, labels, fields, std::move(preparation), deadline);
}

async::Task<MemberResult<std::vector<k8s::NodeMetrics>>> PrometheusMemberCluster::node_metrics(
    const k8s::LabelSelector& labels, const k8s::FieldSelector& fields, Deadline deadline) {
  if (state_->covers_resource()) return nodes_from_prometheus(state_, labels, fields, deadline);
  return state_->member->node_metrics(labels, fields, deadline);
}

async::Task<MemberResult<std::vector<k8s::MetricValue>>> PrometheusMemberCluster::custom_metrics(
    const aggregator::CustomMetricsQuery& query, Deadline deadline) {
  if (!state_->covers_custom()) return state_->member->custom_metrics(query, deadline);
  return custom_from_prometheus(state_, query, deadline);
}

async::Task<MemberResult<std::vector<k8s::ExternalMetricValue>>> PrometheusMemberCluster::external_metrics(
    const aggregator::ExternalMetricsQuery& query, Deadline deadline) {
  if (!state_->covers_external()) return state_->member->external_metrics(query, deadline);
  return external_from_prometheus(state_, query, deadline);
}

async::Task<MemberResult<std::vector<k8s::Pod>>> PrometheusMemberCluster::pods(const std::string& namespace_name,
                                                                               const k8s::LabelSelector& labels,
                                                                               Deadline deadline) {
  return state_->member->pods(namespace_name, labels, deadline);
}

async::Task<std::optional<MemberError>> PrometheusMemberCluster::probe(Deadline deadline) {
  return state_->member->probe(deadline);
}

async::Task<std::optional<k8s::Error>> PrometheusMemberCluster::relist(Deadline deadline) {
  return relist_and_keep(state_, deadline);
}

bool PrometheusMemberCluster::relist_due(std::chrono::steady_clock::time_point now) const {
  return now >= state_->next_relist.load();
}

}  // namespace fedmetrics::clusterclient
