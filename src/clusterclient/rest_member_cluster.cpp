#include "fedmetrics/clusterclient/rest_member_cluster.hpp"

#include <algorithm>

#include "fedmetrics/k8s/discovery.hpp"
#include "fedmetrics/kube/resource_path.hpp"

namespace fedmetrics::clusterclient {

using aggregator::Deadline;
using aggregator::MemberCallback;
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
}  // namespace

void RestMemberCluster::pod_metrics(const std::string& namespace_name, const k8s::LabelSelector& labels,
                                    const k8s::FieldSelector& fields, Deadline deadline,
                                    MemberCallback<std::vector<k8s::PodMetrics>> done) {
  client_->get(pod_metrics_target(namespace_name, labels, fields), deadline,
               [done = std::move(done)](kube::HttpResult r) {
                 // The common shape without a document tree; anything else through the tree decoder.
                 if (auto* reply = std::get_if<kube::HttpReply>(&r); reply && reply->status == 200) {
                   if (auto items = k8s::try_decode_pod_metrics_list(reply->body)) return done(std::move(*items));
                 }
                 done(decode_reply<std::vector<k8s::PodMetrics>>(std::move(r), k8s::pod_metrics_list_from_json, false));
               });
}

void RestMemberCluster::pod_metrics_items(const std::string& namespace_name, const k8s::LabelSelector& labels,
                                          const k8s::FieldSelector& fields,
                                          std::shared_ptr<const k8s::ItemPreparation> preparation, Deadline deadline,
                                          MemberCallback<k8s::EncodedItems> done) {
  client_->get(
      pod_metrics_target(namespace_name, labels, fields), deadline,
      [preparation = std::move(preparation), done = std::move(done)](kube::HttpResult r) {
        // The common shape in one pass, without PodMetrics values (and without the body once done).
        if (auto* reply = std::get_if<kube::HttpReply>(&r); reply && reply->status == 200) {
          if (auto items = k8s::transcode_pod_metrics_list(reply->body, *preparation)) return done(std::move(*items));
        }
        // Anything else as pod_metrics reads it, with the same errors.
        auto decoded = decode_reply<std::vector<k8s::PodMetrics>>(std::move(r), k8s::pod_metrics_list_from_json, false);
        if (auto* error = std::get_if<MemberError>(&decoded)) return done(std::move(*error));
        done(k8s::encode_pod_metrics_items(std::get<std::vector<k8s::PodMetrics>>(std::move(decoded)), *preparation));
      });
}

void RestMemberCluster::pods(const std::string& namespace_name, const k8s::LabelSelector& labels, Deadline deadline,
                             MemberCallback<std::vector<k8s::Pod>> done) {
  const auto path = ResourcePath::core("pods", namespace_name).with("labelSelector", labels.to_string());
  client_->get(path.target(), deadline, [done = std::move(done)](kube::HttpResult r) {
    done(decode_reply<std::vector<k8s::Pod>>(std::move(r), k8s::pod_list_from_json, false));
  });
}

void RestMemberCluster::probe(Deadline deadline, std::function<void(std::optional<MemberError>)> done) {
  // The cheapest request an API server answers, the one Karmada's health
  // check makes; whether it is ready does not matter here, only that it answers.
  client_->get("/readyz", deadline, [done = std::move(done)](kube::HttpResult r) {
    if (auto* e = std::get_if<MemberError>(&r)) return done(std::move(*e));
    done(std::nullopt);
  });
}

void RestMemberCluster::node_metrics(const k8s::LabelSelector& labels, const k8s::FieldSelector& fields,
                                     Deadline deadline, MemberCallback<std::vector<k8s::NodeMetrics>> done) {
  const auto path =
      metrics_api("nodes").with("labelSelector", labels.to_string()).with("fieldSelector", fields.to_string());
  client_->get(path.target(), deadline, [done = std::move(done)](kube::HttpResult r) {
    done(decode_reply<std::vector<k8s::NodeMetrics>>(std::move(r), k8s::node_metrics_list_from_json, false));
  });
}

void RestMemberCluster::custom_metrics(const aggregator::CustomMetricsQuery& query, Deadline deadline,
                                       MemberCallback<std::vector<k8s::MetricValue>> done) {
  // Ask in the version the member prefers; the decoder converts to the hub shape.
  auto caps = capabilities();
  auto version = caps && caps->custom_metrics ? *caps->custom_metrics : k8s::CustomMetricsVersion::V1beta2;
  client_->get(custom_metrics_path(query, version), deadline, [done = std::move(done)](kube::HttpResult r) {
    done(decode_reply<std::vector<k8s::MetricValue>>(std::move(r), k8s::metric_value_list_from_json, true));
  });
}

void RestMemberCluster::external_metrics(const aggregator::ExternalMetricsQuery& query, Deadline deadline,
                                         MemberCallback<std::vector<k8s::ExternalMetricValue>> done) {
  auto path = ResourcePath::in_group("external.metrics.k8s.io", "v1beta1", query.metric, query.namespace_name);
  path.with("labelSelector", query.metric_selector.to_string());
  client_->get(path.target(), deadline, [done = std::move(done)](kube::HttpResult r) {
    done(decode_reply<std::vector<k8s::ExternalMetricValue>>(std::move(r), k8s::external_metric_value_list_from_json,
                                                             true));
  });
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
      if (auto* e = std::get_if<MemberError>(&groups)) return self->finish(nullptr, "/apis: " + e->message);
      for (const auto& g : std::get<0>(groups)) {
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
      if (auto* e = std::get_if<MemberError>(&list)) return self->finish(nullptr, path + ": " + e->message);
      self->caps.custom_metric_resources = std::move(std::get<0>(list).resources);
      self->external_step(self);
    });
  }

  void external_step(std::shared_ptr<DiscoveryRun> self) {
    if (!caps.external_metrics) return finish(std::make_shared<const MemberCapabilities>(std::move(caps)), {});
    client->get("/apis/external.metrics.k8s.io/v1beta1", deadline, [self](kube::HttpResult r) {
      auto list = decode_reply<k8s::APIResourceList>(std::move(r), k8s::api_resource_list_from_json, false);
      if (auto* e = std::get_if<MemberError>(&list))
        return self->finish(nullptr, "/apis/external.metrics.k8s.io/v1beta1: " + e->message);
      self->caps.external_metric_resources = std::move(std::get<0>(list).resources);
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
