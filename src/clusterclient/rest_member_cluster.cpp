#include "fedmetrics/clusterclient/rest_member_cluster.hpp"

#include <algorithm>

#include "fedmetrics/k8s/discovery.hpp"
#include "fedmetrics/kube/resource_path.hpp"

#include <nlohmann/json.hpp>

namespace fedmetrics::clusterclient {

using aggregator::Deadline;
using aggregator::MemberCapabilities;
using aggregator::MemberError;
using Kind = MemberError::Kind;

namespace {

using kube::ResourcePath;

ResourcePath metrics_api(std::string resource, std::string namespace_name = {}) {
  return ResourcePath::in_group("metrics.k8s.io", "v1beta1", std::move(resource), std::move(namespace_name));
}

// Turns a reply into a decoded value or a classified error. A NotFound from
// the member is data (an empty answer) when `not_found_is_empty`.
template <class T, class Decode>
aggregator::MemberResult<T> decode_reply(kube::HttpResult result, Decode decode, bool not_found_is_empty) {
  if (const auto* reply = std::get_if<kube::HttpReply>(&result); reply && reply->status == 404 && not_found_is_empty)
    return T{};
  auto document = kube::json_of(result);
  if (!document.ok()) return document.error();
  auto decoded = decode(*document);
  if (!decoded.ok())
    return MemberError{Kind::MalformedResponse, "unexpected response: " + decoded.error().message, 0, std::nullopt};
  return std::move(*decoded);
}

// A GET of `path` by `deadline`, its reply decoded as decode_reply does.
// Not a member of the client: a member dropped from the set meanwhile may go
// while the request is in flight (the task holds the connection's client).
template <class T, class Decode>
async::Task<aggregator::MemberResult<T>> get_decoded(std::shared_ptr<kube::HttpsClient> client, std::string path,
                                                     Deadline deadline, Decode decode, bool not_found_is_empty) {
  kube::OutgoingRequest get;
  get.target = std::move(path);
  auto asking = client->request(std::move(get), deadline);
  auto reply = co_await std::move(asking);
  co_return decode_reply<T>(std::move(reply), decode, not_found_is_empty);
}

// The pods' metrics, by the common shape's decoder without a document tree;
// anything else through the tree decoder.
async::Task<aggregator::MemberResult<std::vector<k8s::PodMetrics>>> get_pod_metrics(
    std::shared_ptr<kube::HttpsClient> client, std::string path, Deadline deadline) {
  kube::OutgoingRequest get;
  get.target = std::move(path);
  auto asking = client->request(std::move(get), deadline);
  auto reply = co_await std::move(asking);
  if (auto* ok = std::get_if<kube::HttpReply>(&reply); ok && ok->status == 200) {
    if (auto items = k8s::try_decode_pod_metrics_list(ok->body)) co_return std::move(*items);
  }
  co_return decode_reply<std::vector<k8s::PodMetrics>>(std::move(reply), k8s::pod_metrics_list_from_json, false);
}

async::Task<std::optional<MemberError>> get_any_answer(std::shared_ptr<kube::HttpsClient> client, std::string path,
                                                       Deadline deadline) {
  kube::OutgoingRequest get;
  get.target = std::move(path);
  auto asking = client->request(std::move(get), deadline);
  auto reply = co_await std::move(asking);
  if (auto* e = std::get_if<MemberError>(&reply)) co_return std::move(*e);
  co_return std::nullopt;
}

// custom.metrics.k8s.io's paths: a metric of a namespace itself is
// /namespaces/{name}/metrics/{metric}; any other object's (or a selector's,
// name "*") is [/namespaces/{ns}]/{resource.group}/{name}/{metric}.
std::string custom_metrics_path(const aggregator::CustomMetricsQuery& q, k8s::CustomMetricsVersion version) {
  const std::string_view group_version = k8s::group_version(version);
  const auto slash = group_version.find('/');
  ResourcePath path;
  path.group = std::string(group_version.substr(0, slash));
  path.version = std::string(group_version.substr(slash + 1));
  bool namespace_metric = q.resource.group.empty() && q.resource.resource == "namespaces" && q.namespace_name.empty();
  if (namespace_metric) {
    path.namespace_name = q.name;
    path.resource = "metrics";
    path.name = q.metric;
  } else {
    path.namespace_name = q.namespace_name;
    path.resource = q.resource.to_string();
    path.name = q.name;
    path.subresource = q.metric;
  }
  if (q.wildcard()) path.with("labelSelector", q.label_selector.to_string());
  path.with("metricLabelSelector", q.metric_selector.to_string());
  return path.target();
}

}  // namespace

RestMemberCluster::RestMemberCluster(kube::ClientRuntime& runtime, kube::ClusterEndpoint endpoint,
                                     kube::ClientOptions options)
    : name_(endpoint.name),
      client_(std::make_shared<kube::HttpsClient>(runtime, std::move(endpoint), std::move(options))) {}

namespace {
std::string pod_metrics_target(const std::string& namespace_name, const k8s::LabelSelector& labels,
                               const k8s::FieldSelector& fields) {
  return metrics_api("pods", namespace_name)
      .with("labelSelector", labels.to_string())
      .with("fieldSelector", fields.to_string())
      .target();
}

// The member's pods as encoded items in one pass over its text, without
// PodMetrics values (and without the body once done); anything else as
// pod_metrics reads it, with the same errors.
async::Task<aggregator::MemberResult<k8s::EncodedItems>> get_pod_metrics_items(
    std::shared_ptr<kube::HttpsClient> client, std::string path, Deadline deadline,
    std::shared_ptr<const k8s::ItemPreparation> preparation) {
  kube::OutgoingRequest get;
  get.target = std::move(path);
  auto asking = client->request(std::move(get), deadline);
  auto reply = co_await std::move(asking);
  if (auto* ok = std::get_if<kube::HttpReply>(&reply); ok && ok->status == 200) {
    if (auto items = k8s::transcode_pod_metrics_list(ok->body, *preparation)) co_return std::move(*items);
  }
  auto decoded = decode_reply<std::vector<k8s::PodMetrics>>(std::move(reply), k8s::pod_metrics_list_from_json, false);
  if (!decoded.ok()) co_return decoded.error();
  co_return k8s::encode_pod_metrics_items(std::move(*decoded), *preparation);
}
}  // namespace

async::Task<aggregator::MemberResult<std::vector<k8s::PodMetrics>>> RestMemberCluster::pod_metrics(
    const std::string& namespace_name, const k8s::LabelSelector& labels, const k8s::FieldSelector& fields,
    Deadline deadline) {
  return get_pod_metrics(client_, pod_metrics_target(namespace_name, labels, fields), deadline);
}

async::Task<aggregator::MemberResult<k8s::EncodedItems>> RestMemberCluster::pod_metrics_items(
    const std::string& namespace_name, const k8s::LabelSelector& labels, const k8s::FieldSelector& fields,
    std::shared_ptr<const k8s::ItemPreparation> preparation, Deadline deadline) {
  return get_pod_metrics_items(client_, pod_metrics_target(namespace_name, labels, fields), deadline,
                               std::move(preparation));
}

async::Task<aggregator::MemberResult<std::vector<k8s::Pod>>> RestMemberCluster::pods(const std::string& namespace_name,
                                                                                     const k8s::LabelSelector& labels,
                                                                                     Deadline deadline) {
  const auto path = ResourcePath::core("pods", namespace_name).with("labelSelector", labels.to_string());
  return get_decoded<std::vector<k8s::Pod>>(client_, path.target(), deadline, k8s::pod_list_from_json, false);
}

namespace {
// items[].metadata.name of a list.
k8s::Expected<std::vector<std::string>> names_of_list(const nlohmann::json& list) {
  std::vector<std::string> names;
  auto items = list.find("items");
  if (items == list.end() || !items->is_array()) return k8s::Error{"expected a list with items"};
  for (const auto& item : *items) {
    auto metadata = item.find("metadata");
    if (metadata == item.end() || !metadata->is_object()) return k8s::Error{"items[]: expected metadata"};
    auto name = metadata->find("name");
    if (name == metadata->end() || !name->is_string()) return k8s::Error{"items[].metadata: expected a name"};
    names.push_back(name->get<std::string>());
  }
  return names;
}
}  // namespace

async::Task<aggregator::MemberResult<std::vector<std::string>>> RestMemberCluster::object_names(
    const std::string& group, const std::string& version, const std::string& resource,
    const std::string& namespace_name, const k8s::LabelSelector& labels, Deadline deadline) {
  auto path = group.empty() ? ResourcePath::core(resource, namespace_name)
                            : ResourcePath::in_group(group, version, resource, namespace_name);
  path.with("labelSelector", labels.to_string());
  return get_decoded<std::vector<std::string>>(client_, path.target(), deadline, names_of_list, false);
}

async::Task<std::optional<MemberError>> RestMemberCluster::probe(Deadline deadline) {
  // The cheapest request an API server answers, the one Karmada's health
  // check makes; whether it is ready does not matter here, only that it answers.
  return get_any_answer(client_, "/readyz", deadline);
}

async::Task<aggregator::MemberResult<std::vector<k8s::NodeMetrics>>> RestMemberCluster::node_metrics(
    const k8s::LabelSelector& labels, const k8s::FieldSelector& fields, Deadline deadline) {
  const auto path =
      metrics_api("nodes").with("labelSelector", labels.to_string()).with("fieldSelector", fields.to_string());
  return get_decoded<std::vector<k8s::NodeMetrics>>(client_, path.target(), deadline, k8s::node_metrics_list_from_json,
                                                    false);
}

async::Task<aggregator::MemberResult<std::vector<k8s::MetricValue>>> RestMemberCluster::custom_metrics(
    const aggregator::CustomMetricsQuery& query, Deadline deadline) {
  // Ask in the version the member prefers; the decoder converts to the hub shape.
  auto caps = capabilities();
  auto version = caps && caps->custom_metrics ? *caps->custom_metrics : k8s::CustomMetricsVersion::V1beta2;
  return get_decoded<std::vector<k8s::MetricValue>>(client_, custom_metrics_path(query, version), deadline,
                                                    k8s::metric_value_list_from_json, true);
}

async::Task<aggregator::MemberResult<std::vector<k8s::ExternalMetricValue>>> RestMemberCluster::external_metrics(
    const aggregator::ExternalMetricsQuery& query, Deadline deadline) {
  auto path = ResourcePath::in_group("external.metrics.k8s.io", "v1beta1", query.metric, query.namespace_name);
  path.with("labelSelector", query.metric_selector.to_string());
  return get_decoded<std::vector<k8s::ExternalMetricValue>>(client_, path.target(), deadline,
                                                            k8s::external_metric_value_list_from_json, true);
}

namespace {

// Discovery in three steps: /apis, then the resource lists of the custom and
// external groups the member serves. State shared by the steps' callbacks.
struct DiscoveryRun {
  std::shared_ptr<kube::HttpsClient> client;
  Deadline deadline;
  std::function<void(std::shared_ptr<const MemberCapabilities>, std::string)> finish;
  MemberCapabilities caps;
  std::string custom_group_version;

  void start(std::shared_ptr<DiscoveryRun> self) {
    client->get("/apis", deadline, [self](kube::HttpResult r) {
      auto groups = decode_reply<std::vector<k8s::APIGroup>>(std::move(r), k8s::api_group_list_from_json, false);
      if (!groups) return self->finish(nullptr, "/apis: " + groups.error().message);
      for (const auto& g : *groups) {
        auto serves = [&](std::string_view gv) {
          return std::any_of(g.versions.begin(), g.versions.end(),
                             [&](const k8s::GroupVersionForDiscovery& v) { return v.group_version == gv; });
        };
        if (g.name == "metrics.k8s.io") self->caps.resource_metrics = serves("metrics.k8s.io/v1beta1");
        if (g.name == "external.metrics.k8s.io")
          self->caps.external_metrics = serves("external.metrics.k8s.io/v1beta1");
        if (g.name == "custom.metrics.k8s.io") {
          // Honour the member's preferred version among the two we speak.
          std::string preferred = g.preferred_version.group_version;
          if (preferred == k8s::kCustomMetricsV1beta2 ||
              (preferred != k8s::kCustomMetricsV1beta1 && serves(k8s::kCustomMetricsV1beta2)))
            self->caps.custom_metrics = k8s::CustomMetricsVersion::V1beta2;
          else if (serves(k8s::kCustomMetricsV1beta1)) self->caps.custom_metrics = k8s::CustomMetricsVersion::V1beta1;
        }
      }
      self->custom_step(self);
    });
  }

  void custom_step(std::shared_ptr<DiscoveryRun> self) {
    if (!caps.custom_metrics) return external_step(self);
    std::string path = "/apis/" + std::string(k8s::group_version(*caps.custom_metrics));
    client->get(path, deadline, [self, path](kube::HttpResult r) {
      auto list = decode_reply<k8s::APIResourceList>(std::move(r), k8s::api_resource_list_from_json, false);
      if (!list) return self->finish(nullptr, path + ": " + list.error().message);
      self->caps.custom_metric_resources = std::move(list->resources);
      self->external_step(self);
    });
  }

  void external_step(std::shared_ptr<DiscoveryRun> self) {
    if (!caps.external_metrics) return finish(std::make_shared<const MemberCapabilities>(std::move(caps)), {});
    client->get("/apis/external.metrics.k8s.io/v1beta1", deadline, [self](kube::HttpResult r) {
      auto list = decode_reply<k8s::APIResourceList>(std::move(r), k8s::api_resource_list_from_json, false);
      if (!list) return self->finish(nullptr, "/apis/external.metrics.k8s.io/v1beta1: " + list.error().message);
      self->caps.external_metric_resources = std::move(list->resources);
      self->finish(std::make_shared<const MemberCapabilities>(std::move(self->caps)), {});
    });
  }
};

}  // namespace

namespace {

// The first line of a health body, trimmed: "[-]etcd failed: reason withheld".
std::string first_line(const std::string& body) {
  auto line = body.substr(0, body.find('\n'));
  if (line.size() > 200) line = line.substr(0, 200) + "...";
  return line;
}

}  // namespace

void RestMemberCluster::probe_health(Deadline deadline, std::function<void(const MemberHealth&)> done) {
  auto client = client_;
  // Not `this`: the answer may come after this member was dropped from the set.
  auto finish = [slot = health_, done](MemberHealth health) {
    health.checked = std::chrono::system_clock::now();
    auto shared = std::make_shared<const MemberHealth>(std::move(health));
    slot->store(shared);
    if (done) done(*shared);
  };
  auto judge = [](const std::string& path, const kube::HttpResult& result) {
    MemberHealth h;
    if (const auto* e = std::get_if<MemberError>(&result)) {
      h.reason = "GET " + path + ": " + e->message;
      return h;
    }
    const auto& reply = std::get<kube::HttpReply>(result);
    // Karmada's healthEndpointCheck looks at the status only.
    h.healthy = reply.status == 200;
    h.reason = h.healthy ? "ok"
                         : "GET " + path + ": HTTP " + std::to_string(reply.status) +
                               (reply.body.empty() ? "" : ": " + first_line(reply.body));
    return h;
  };
  client->get("/readyz", deadline, [client, deadline, finish, judge](kube::HttpResult result) {
    const auto* reply = std::get_if<kube::HttpReply>(&result);
    if (reply == nullptr || reply->status != 404) return finish(judge("/readyz", result));
    // An API server older than /readyz (Kubernetes < 1.16): /healthz, as Karmada falls back.
    client->get("/healthz", deadline,
                [finish, judge](kube::HttpResult fallback) { finish(judge("/healthz", fallback)); });
  });
}

void RestMemberCluster::refresh_capabilities(Deadline deadline, std::function<void(bool, std::string)> done) {
  auto run = std::make_shared<DiscoveryRun>();
  run->client = client_;
  run->deadline = deadline;
  run->finish = [this, done = std::move(done)](std::shared_ptr<const MemberCapabilities> caps, std::string error) {
    if (caps) capabilities_.store(std::move(caps));
    bool ok = error.empty();
    done(ok, std::move(error));
  };
  run->start(run);
}

}  // namespace fedmetrics::clusterclient
