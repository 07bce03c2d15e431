#include "server/api_handler.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <stdexcept>
#include <utility>

#include <nlohmann/json.hpp>

#include "fedmetrics/k8s/ascii.hpp"
#include "fedmetrics/k8s/table.hpp"
#include "fedmetrics/k8s/url.hpp"

namespace fedmetrics::server {

using nlohmann::json;

namespace {

// The resource label of a custom metrics request: the object's resource when
// it is one of the kinds an HPA commonly targets, else "other". The path is
// the caller's, so taking it as it is would let any authorized caller create
// series without bound (kube-apiserver's apiserver_request_total likewise
// labels only resources it serves; custom paths are "other").
std::string custom_metrics_resource_label(const k8s::GroupResource& resource) {
  static constexpr std::string_view kKnown[] = {"pods",
                                                "nodes",
                                                "namespaces",
                                                "services",
                                                "deployments.apps",
                                                "statefulsets.apps",
                                                "replicasets.apps",
                                                "daemonsets.apps",
                                                "jobs.batch",
                                                "ingresses.networking.k8s.io"};
  const std::string name = resource.to_string();
  for (std::string_view known : kKnown)
    if (name == known) return name;
  return "other";
}

// The group and resource a request is about, for the request metrics. Every
// value comes from a closed set: the three metrics groups (or "" for the
// non-resource paths), and pods/nodes, the known custom kinds or "other",
// "external".
std::pair<std::string, std::string> metric_labels(const ApiRequest& request) {
  struct Visitor {
    std::pair<std::string, std::string> operator()(const InfoRequest& r) const { return {r.group, ""}; }
    std::pair<std::string, std::string> operator()(const aggregator::ResourceMetricsQuery& q) const {
      return {"metrics.k8s.io", q.kind == aggregator::ResourceMetricsQuery::Kind::Pods ? "pods" : "nodes"};
    }
    std::pair<std::string, std::string> operator()(const aggregator::CustomMetricsQuery& q) const {
      return {"custom.metrics.k8s.io", custom_metrics_resource_label(q.resource)};
    }
    std::pair<std::string, std::string> operator()(const aggregator::ExternalMetricsQuery&) const {
      return {"external.metrics.k8s.io", "external"};
    }
    std::pair<std::string, std::string> operator()(const k8s::Status&) const { return {"", ""}; }
  };
  return std::visit(Visitor{}, request);
}

std::string_view group_of(const ApiRequest& request) {
  if (std::holds_alternative<aggregator::ResourceMetricsQuery>(request)) return "metrics.k8s.io";
  if (std::holds_alternative<aggregator::CustomMetricsQuery>(request)) return "custom.metrics.k8s.io";
  return "external.metrics.k8s.io";
}

k8s::APIResourceList resource_metrics_resources() {
  // What metrics-server's discovery says (GET /apis/metrics.k8s.io/v1beta1): get and list, no watch.
  return k8s::APIResourceList{
      "metrics.k8s.io/v1beta1",
      {{"nodes", "", false, "NodeMetrics", {"get", "list"}}, {"pods", "", true, "PodMetrics", {"get", "list"}}}};
}

std::vector<k8s::APIGroup> served_groups() {
  return {
      k8s::make_api_group("metrics.k8s.io", {"metrics.k8s.io/v1beta1"}),
      // v1beta2 first: clients take the first version they know.
      k8s::make_api_group("custom.metrics.k8s.io", {"custom.metrics.k8s.io/v1beta2", "custom.metrics.k8s.io/v1beta1"}),
      k8s::make_api_group("external.metrics.k8s.io", {"external.metrics.k8s.io/v1beta1"})};
}

using k8s::iequals;

// The request's Accept header; several header lines are one list (RFC 9110 5.3).
std::string accept_header(const HttpRequest& request) {
  std::string out;
  for (const auto& [name, value] : request.headers) {
    if (!iequals(name, "Accept")) continue;
    if (!out.empty()) out += ", ";
    out += value;
  }
  return out;
}

// How a metrics query is answered: its JSON (nullopt) or a Table with the
// request's includeObject, or the Status that refuses it (406, 400).
//
// The metrics paths negotiate as kube-apiserver does, and answer 406
// NotAcceptable when the Accept header admits nothing we write. This
// overrides the simpler rule "JSON for any Accept", which predates
// the Table form: with Tables served, an Accept that rules JSON out would
// otherwise get a document it said it cannot read. Every client we know
// admits JSON (kubectl top sends `..., */*`, the HPA controller
// `...,application/json`), so they still get JSON. Discovery and the health
// endpoints do not negotiate: the aggregator's discovery fallback depends on
// their plain JSON.
//
// Tables exist for pods and nodes of metrics.k8s.io only. Custom and external
// metrics values are not objects that `kubectl get` lists (their paths name a
// metric, not a resource), so no printer expects a Table there: a Table
// clause is skipped on them, the JSON clause after it answers, and a
// Table-only Accept is a 406 that says the server writes application/json.
std::variant<std::optional<k8s::TableOptions>, k8s::Status> response_form(const HttpRequest& request,
                                                                          const ApiRequest& parsed) {
  const bool table_convertible = std::holds_alternative<aggregator::ResourceMetricsQuery>(parsed);
  auto negotiated = negotiate_representation(accept_header(request), table_convertible);
  if (auto* status = std::get_if<k8s::Status>(&negotiated)) return std::move(*status);
  const auto* table = std::get_if<TableRepresentation>(&std::get<Representation>(negotiated));
  if (table == nullptr) return std::nullopt;
  k8s::TableOptions options;
  options.version = table->version;
  auto target = k8s::parse_request_target(request.target);
  auto include = k8s::parse_include_object(target ? k8s::query_value(target->query, "includeObject") : "");
  if (!include) return k8s::Status::bad_request(include.error().message);
  options.include_object = *include;
  return options;
}

// The Cluster column: the member each row came from, as the merge annotated it.
const std::vector<k8s::AnnotationColumn>& cluster_column() {
  static const std::vector<k8s::AnnotationColumn> columns{
      {"Cluster", "The member cluster the metrics came from", std::string(aggregator::kQueryFromClusterAnnotation)}};
  return columns;
}

// The EncodingMemo key of a Table form: one per version and includeObject.
std::string table_format(const k8s::TableOptions& options) {
  static constexpr std::string_view kInclude[] = {"None", "Metadata", "Object"};
  return "table/" + std::string(k8s::group_version(options.version)) + "/" +
         std::string(kInclude[static_cast<int>(options.include_object)]);
}

}  // namespace

ApiHandler::ApiHandler(std::shared_ptr<aggregator::MetricsService> metrics_service,
                       std::shared_ptr<ServerMetrics> metrics, BuildInfo build)
    : service_(std::move(metrics_service)), metrics_(std::move(metrics)), build_(std::move(build)) {}

void ApiHandler::count_unhandled(const HttpRequest& request, int status, double seconds) const {
  if (!metrics_) return;
  // The labels depend on the path alone: the query (selectors of up to
  // 64 KiB) is not parsed for a request that was never authenticated.
  const auto path = std::string_view(request.target).substr(0, request.target.find('?'));
  auto [group, resource] = metric_labels(parse_api_request(request.method, std::string(path)));
  metrics_->observe_request(group, resource, status, seconds);
}

async::Task<HttpResponse> ApiHandler::handle(HttpRequest request) const {
  const auto started = std::chrono::steady_clock::now();
  ApiRequest parsed = parse_api_request(request.method, request.target);
  // In flight until this coroutine ends, answered or cancelled.
  struct InFlight {
    ServerMetrics* metrics;
    explicit InFlight(ServerMetrics* m) : metrics(m) {
      if (metrics) metrics->request_started();
    }
    ~InFlight() {
      if (metrics) metrics->request_finished();
    }
    InFlight(const InFlight&) = delete;
    InFlight& operator=(const InFlight&) = delete;
  } in_flight(metrics_.get());
  HttpResponse response = co_await answer(request, parsed);
  // Every answer passes here once, so that it is counted once.
  if (metrics_) {
    auto [group, resource] = metric_labels(parsed);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    metrics_->observe_request(group, resource, response.status, seconds);
  }
  co_return response;
}

async::Task<HttpResponse> ApiHandler::answer(const HttpRequest& request, const ApiRequest& parsed) const {
  if (const auto* status = std::get_if<k8s::Status>(&parsed)) co_return status_response(*status);
  if (const auto* info_request = std::get_if<InfoRequest>(&parsed)) {
    // ?verbose, with or without a value, as kube-apiserver reads it.
    auto target = k8s::parse_request_target(request.target);
    co_return info(*info_request, target && target->query.contains("verbose"));
  }
  // Which representation, before any member is asked (kube-apiserver
  // negotiates first too): a 406 or a bad includeObject costs no fan-out.
  auto form = response_form(request, parsed);
  if (const auto* status = std::get_if<k8s::Status>(&form)) co_return status_response(*status);
  if (!service_) {
    co_return status_response(k8s::Status::service_unavailable(
        "no member cluster could serve " + std::string(group_of(parsed)) + ": no member cluster is configured"));
  }
  co_return co_await query(parsed, std::get<std::optional<k8s::TableOptions>>(form));
}

namespace {

// /version's major and minor, split from gitVersion ("v1.2.3": "1" and "2")
// as kube-apiserver's are, so that they follow the project's version; empty
// for a version that is not one ("unknown").
std::pair<std::string, std::string> major_minor(std::string_view git_version) {
  if (!git_version.empty() && git_version.front() == 'v') git_version.remove_prefix(1);
  if (git_version.empty() || !std::isdigit(static_cast<unsigned char>(git_version.front()))) return {};
  const auto first = git_version.find('.');
  const auto second = first == std::string_view::npos ? first : git_version.find('.', first + 1);
  if (first == std::string_view::npos) return {std::string(git_version), ""};
  return {std::string(git_version.substr(0, first)), std::string(git_version.substr(first + 1, second - first - 1))};
}

// Each warning becomes `Warning: 299 - "<text>"` (RFC 7234), which kubectl prints.
std::string warning_header(std::string_view text) {
  std::string quoted;
  for (char c : text) {
    if (c == '"' || c == '\\') quoted.push_back('\\');
    if (c == '\n' || c == '\r') c = ' ';
    quoted.push_back(c);
  }
  return "299 - \"" + quoted + "\"";
}

// Writes an aggregator answer: the Status, or the JSON of the value with
// warnings. The JSON is made once per answer and `format` (the answer may be
// shared by many requests) and written from the shared bytes; a merged list
// that came as JSON (Answer::json_list) is written from its pieces, which the
// response keeps alive by holding the answer.
template <class T, class Encode>
HttpResponse write_answer(const aggregator::SharedAnswer<aggregator::Answer<T>>& shared, std::string_view format,
                          Encode encode) {
  const aggregator::Answer<T>& answer = *shared;
  HttpResponse r;
  if (const auto* status = std::get_if<k8s::Status>(&answer.result)) {
    r = status_response(*status);
  } else if (answer.json_list) {
    r = json_response({});
    r.body_pieces = std::shared_ptr<const std::vector<std::string_view>>(shared, &answer.json_list->pieces);
  } else {
    r = json_response({});
    r.shared_body = answer.encodings->get(format, [&] { return encode(std::get<T>(answer.result)); });
  }
  for (const auto& w : answer.warnings) r.headers.emplace_back("Warning", warning_header(w));
  return r;
}

}  // namespace

async::Task<HttpResponse> ApiHandler::query(const ApiRequest& request, std::optional<k8s::TableOptions> table) const {
  using aggregator::ResourceMetricsQuery;
  if (const auto* q = std::get_if<ResourceMetricsQuery>(&request)) {
    const bool single = !q->name.empty();
    ResourceMetricsQuery wanted = *q;
    wanted.encode_list = !table;  // a JSON list is written here; a Table is built from the items
    if (q->kind == ResourceMetricsQuery::Kind::Pods) {
      // Each answer awaited into a named local (GCC 12: no temporaries in a co_await).
      auto asking = service_->pod_metrics(wanted);
      const auto a = co_await std::move(asking);
      if (table) {
        co_return write_answer(a, table_format(*table), [&](const std::vector<k8s::PodMetrics>& items) {
          return k8s::encode_table(k8s::pod_metrics_table(items, *table, cluster_column()));
        });
      }
      // A list may come encoded already (EncodingMemo::kListJson).
      co_return write_answer(a, single ? "pod" : aggregator::EncodingMemo::kListJson,
                             [single](const std::vector<k8s::PodMetrics>& items) {
                               return single && items.size() == 1 ? k8s::encode_pod_metrics(items.front())
                                                                  : k8s::encode_pod_metrics_list(items);
                             });
    }
    auto asking = service_->node_metrics(wanted);
    const auto a = co_await std::move(asking);
    if (table) {
      co_return write_answer(a, table_format(*table), [&](const std::vector<k8s::NodeMetrics>& items) {
        return k8s::encode_table(k8s::node_metrics_table(items, *table, cluster_column()));
      });
    }
    co_return write_answer(a, single ? "node" : aggregator::EncodingMemo::kListJson,
                           [single](const std::vector<k8s::NodeMetrics>& items) {
                             return single && items.size() == 1 ? k8s::encode_node_metrics(items.front())
                                                                : k8s::encode_node_metrics_list(items);
                           });
  }
  if (const auto* q = std::get_if<aggregator::CustomMetricsQuery>(&request)) {
    const auto version = q->version;
    auto asking = service_->custom_metrics(*q);
    const auto a = co_await std::move(asking);
    co_return write_answer(a, k8s::group_version(version), [version](const std::vector<k8s::MetricValue>& items) {
      return k8s::metric_value_list_to_json(items, version).dump();
    });
  }
  const auto& q = std::get<aggregator::ExternalMetricsQuery>(request);
  auto asking = service_->external_metrics(q);
  const auto a = co_await std::move(asking);
  co_return write_answer(a, "external", [](const std::vector<k8s::ExternalMetricValue>& items) {
    return k8s::external_metric_value_list_to_json(items).dump();
  });
}

HttpResponse health_response(std::string_view name, const std::vector<HealthCheck>& checks, bool verbose) {
  // k8s.io/apiserver/pkg/server/healthz handleRootHealth: "[+]<check> ok" or
  // "[-]<check> failed: reason withheld" per check; on a failure all of them
  // and "<name> check failed" with 500; otherwise "ok", or with ?verbose the
  // list and "<name> check passed".
  std::string list;
  bool failed = false;
  for (const auto& check : checks) {
    list += (check.ok ? "[+]" : "[-]") + check.name + (check.ok ? " ok\n" : " failed: reason withheld\n");
    failed = failed || !check.ok;
  }
  HttpResponse r = failed    ? text_response(list + std::string(name) + " check failed\n", 500)
                   : verbose ? text_response(list + std::string(name) + " check passed\n")
                             : text_response("ok");
  r.headers.emplace_back("X-Content-Type-Options", "nosniff");
  return r;
}

HttpResponse ApiHandler::info(const InfoRequest& request, bool verbose) const {
  switch (request.endpoint) {
    case Endpoint::Healthz: return health_response("healthz", {{"ping", true}}, verbose);
    case Endpoint::Livez: return health_response("livez", {{"ping", true}}, verbose);
    case Endpoint::Readyz:
      // Ready once configured and the data pipeline has delivered (metrics-server's rule).
      return health_response("readyz",
                             {{"ping", true},
                              {"configuration-loaded", configured_.load()},
                              {"member-answered", service_ && service_->has_served()},
                              {"shutdown", !shutting_down_.load()}},
                             verbose);
    case Endpoint::Version: {
      const auto [major, minor] = major_minor(build_.git_version);
      return json_response(json{
          {"major", major},
          {"minor", minor},
          {"gitVersion", build_.git_version},
          {"gitCommit", build_.git_commit},
          {"gitTreeState", "clean"},
          {"buildDate", build_.build_date},
          {"goVersion", ""},
          {"compiler", "gcc"},
          {"platform",
           "linux/amd64"}}.dump());
    }
    case Endpoint::SelfMetrics: {
      HttpResponse r = text_response(metrics_ ? metrics_->serialize() : std::string());
      r.content_type = "text/plain; version=0.0.4; charset=utf-8";
      return r;
    }
    case Endpoint::ApiGroupList: return json_response(k8s::api_group_list_to_json(served_groups()).dump());
    case Endpoint::ApiGroup:
      for (const auto& g : served_groups()) {
        if (g.name == request.group) return json_response(k8s::to_json(g).dump());
      }
      return status_response(k8s::Status::not_found_resource());
    case Endpoint::ApiResourceList: {
      if (request.group == "metrics.k8s.io") return json_response(k8s::to_json(resource_metrics_resources()).dump());
      // Served from the backend's cache, never by asking a member inline.
      k8s::APIResourceList list{request.group + "/" + request.version, {}};
      if (service_ && request.group == "custom.metrics.k8s.io") {
        list = service_->custom_metrics_resources(request.version == "v1beta1" ? k8s::CustomMetricsVersion::V1beta1
                                                                               : k8s::CustomMetricsVersion::V1beta2);
      } else if (service_) {
        list = service_->external_metrics_resources();
      }
      return json_response(k8s::to_json(list).dump());
    }
  }
  return status_response(k8s::Status::not_found_resource());
}

}  // namespace fedmetrics::server
