#include "server/api_handler.hpp"

#include <chrono>

#include <nlohmann/json.hpp>

namespace fedmetrics::server {

using nlohmann::json;

namespace {

// The group and resource a request is about, for the request metrics.
std::pair<std::string, std::string> metric_labels(const ApiRequest& request) {
  struct Visitor {
    std::pair<std::string, std::string> operator()(const InfoRequest& r) const { return {r.group, ""}; }
    std::pair<std::string, std::string> operator()(const aggregator::ResourceMetricsQuery& q) const {
      return {"metrics.k8s.io", q.kind == aggregator::ResourceMetricsQuery::Kind::Pods ? "pods" : "nodes"};
    }
    std::pair<std::string, std::string> operator()(const aggregator::CustomMetricsQuery& q) const {
      return {"custom.metrics.k8s.io", q.resource.to_string()};
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
  // What metrics-server's discovery says (wire contract 1.4): get and list, no watch.
  return k8s::APIResourceList{"metrics.k8s.io/v1beta1",
                              {{"nodes", "", false, "NodeMetrics", {"get", "list"}},
                               {"pods", "", true, "PodMetrics", {"get", "list"}}}};
}

std::vector<k8s::APIGroup> served_groups() {
  return {k8s::make_api_group("metrics.k8s.io", {"metrics.k8s.io/v1beta1"}),
          // v1beta2 first: clients take the first version they know.
          k8s::make_api_group("custom.metrics.k8s.io", {"custom.metrics.k8s.io/v1beta2", "custom.metrics.k8s.io/v1beta1"}),
          k8s::make_api_group("external.metrics.k8s.io", {"external.metrics.k8s.io/v1beta1"})};
}

}  // namespace

ApiHandler::ApiHandler(std::shared_ptr<MetricsBackend> backend, std::shared_ptr<ServerMetrics> metrics,
                       BuildInfo build)
    : backend_(std::move(backend)), metrics_(std::move(metrics)), build_(std::move(build)) {}

void ApiHandler::handle(const HttpRequest& request, Respond respond) const {
  auto started = std::chrono::steady_clock::now();
  ApiRequest parsed = parse_api_request(request.method, request.target);
  auto [group, resource] = metric_labels(parsed);
  if (metrics_) metrics_->request_started();
  // Every response passes here once, so that it is counted once.
  auto finish = [this, started, group = group, resource = resource, respond = std::move(respond)](HttpResponse r) {
    if (metrics_) {
      double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      metrics_->observe_request(group, resource, r.status, seconds);
      metrics_->request_finished();
    }
    respond(std::move(r));
  };

  if (const auto* status = std::get_if<k8s::Status>(&parsed)) return finish(status_response(*status));
  if (const auto* info_request = std::get_if<InfoRequest>(&parsed)) return finish(info(*info_request));
  if (!backend_) {
    return finish(status_response(k8s::Status::service_unavailable(
        "no member cluster could serve " + std::string(group_of(parsed)) + ": no member cluster is configured")));
  }
  backend_->query(parsed, std::move(finish));
}

HttpResponse ApiHandler::info(const InfoRequest& request) const {
  switch (request.endpoint) {
    case Endpoint::Healthz:
    case Endpoint::Livez:
      return text_response("ok");
    case Endpoint::Readyz: {
      // Ready once configured and the data pipeline has delivered (metrics-server's rule).
      if (!configured_.load()) return text_response("[-]configuration not loaded\nreadyz check failed\n", 500);
      if (!backend_ || !backend_->has_served())
        return text_response("[-]no member cluster has answered yet\nreadyz check failed\n", 500);
      return text_response("ok");
    }
    case Endpoint::Version:
      return json_response(json{{"major", "0"},
                                     {"minor", "1"},
                                     {"gitVersion", build_.git_version},
                                     {"gitCommit", build_.git_commit},
                                     {"gitTreeState", "clean"},
                                     {"buildDate", build_.build_date},
                                     {"goVersion", ""},
                                     {"compiler", "gcc"},
                                     {"platform", "linux/amd64"}}
                                    .dump());
    case Endpoint::SelfMetrics: {
      HttpResponse r = text_response(metrics_ ? metrics_->serialize() : std::string());
      r.content_type = "text/plain; version=0.0.4; charset=utf-8";
      return r;
    }
    case Endpoint::ApiGroupList:
      return json_response(k8s::api_group_list_to_json(served_groups()).dump());
    case Endpoint::ApiGroup:
      for (const auto& g : served_groups()) {
        if (g.name == request.group) return json_response(k8s::to_json(g).dump());
      }
      return status_response(k8s::Status::not_found_resource());
    case Endpoint::ApiResourceList: {
      if (request.group == "metrics.k8s.io") return json_response(k8s::to_json(resource_metrics_resources()).dump());
      // Served from the backend's cache, never by asking a member inline.
      k8s::APIResourceList list{request.group + "/" + request.version, {}};
      if (backend_) list = backend_->resources(request.group, request.version);
      return json_response(k8s::to_json(list).dump());
    }
  }
  return status_response(k8s::Status::not_found_resource());
}

}  // namespace fedmetrics::server
