#pragma once
// The request handler: a coroutine from HttpRequest to HttpResponse (metrics
// queries wait for the aggregator). It parses the request, answers
// information endpoints from state it is given, and passes metrics queries
// to the backend.
#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fedmetrics/aggregator/metrics_service.hpp"
#include "fedmetrics/k8s/discovery.hpp"
#include "fedmetrics/transport/task.hpp"
#include "server/api_request.hpp"
#include "server/content_negotiation.hpp"
#include "server/http_types.hpp"
#include "fedmetrics/server/server_metrics.hpp"

namespace fedmetrics::server {

// What /version and fedmetrics_build_info say of the build (CMake fills it in
// at configure time: src/main/build_identity.hpp.in).
struct BuildInfo {
  std::string git_version = "unknown";  // "v1.2.3": CMake's project VERSION
  std::string git_commit = "unknown";
  std::string build_date = "unknown";
  std::string compiler = "unknown";  // "GNU 12.2.0"
};

// One check of /healthz, /livez or /readyz.
struct HealthCheck {
  std::string name;  // "ping"
  bool ok = true;
};

// The answer of a health endpoint named `name` ("readyz") in
// kube-apiserver's format (k8s.io/apiserver/pkg/server/healthz).
HttpResponse health_response(std::string_view name, const std::vector<HealthCheck>& checks, bool verbose);

class ApiHandler {
 public:
  // `metrics_service` may be null: the server then answers every metrics
  // query with 503, as a federation without any member cluster would.
  ApiHandler(std::shared_ptr<aggregator::MetricsService> metrics_service, std::shared_ptr<ServerMetrics> metrics,
             BuildInfo build);

  // Cancelled while a metrics query is with the aggregator (the server
  // stops, the client left), it ends at once and the answer is dropped.
  async::Task<HttpResponse> handle(HttpRequest request) const;

  // Counts an answer given before the request reached handle(): the
  // RequestGate's 401, 403 or 500 (a review that could not be made), in the
  // same request metrics, so that refusals are seen as well as answers.
  void count_unhandled(const HttpRequest& request, int status, double seconds) const;

  // Readiness beyond the backend: set once configuration is loaded.
  void set_configured(bool configured) { configured_.store(configured); }
  // Termination began (SIGTERM): /readyz fails from now on, with the
  // "shutdown" check kube-apiserver has, so that load balancers and the
  // control plane's endpoints stop sending requests before the listener closes.
  void set_shutting_down() { shutting_down_.store(true); }

 private:
  HttpResponse info(const InfoRequest& request, bool verbose) const;

  // Everything but the metrics bookkeeping of handle().
  async::Task<HttpResponse> answer(const HttpRequest& request, const ApiRequest& parsed) const;
  // `table` set: the answer is written as that Table instead of the JSON
  // list or object (pods and nodes only; content_negotiation.hpp).
  async::Task<HttpResponse> query(const ApiRequest& request, std::optional<k8s::TableOptions> table) const;

  std::shared_ptr<aggregator::MetricsService> service_;
  std::shared_ptr<ServerMetrics> metrics_;
  BuildInfo build_;
  std::atomic<bool> configured_{false};
  std::atomic<bool> shutting_down_{false};
};

}  // namespace fedmetrics::server
