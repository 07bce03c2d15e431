#pragma once
// The request handler: a function from HttpRequest to HttpResponse (delivered
// through a callback, because metrics queries are answered asynchronously by
// the aggregator). It parses the request, answers information endpoints from
// state it is given, and passes metrics queries to the backend.
#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "fedmetrics/k8s/discovery.hpp"
#include "server/api_request.hpp"
#include "server/http_types.hpp"
#include "server/server_metrics.hpp"

namespace fedmetrics::server {

using Respond = std::function<void(HttpResponse)>;

// What the handler needs from the aggregator (owned here, by its user).
class MetricsBackend {
 public:
  virtual ~MetricsBackend() = default;
  // Answers a metrics query; `respond` is called exactly once.
  virtual void query(const ApiRequest& request, Respond respond) = 0;
  // The custom or external metrics the members know, for discovery
  // (an APIResourceList document for `group`/`version`). Never blocks.
  virtual k8s::APIResourceList resources(std::string_view group, std::string_view version) const = 0;
  // True once at least one member has answered.
  virtual bool has_served() const = 0;
};

struct BuildInfo {
  std::string git_version = "v0.1.0";
  std::string git_commit = "unknown";
  std::string build_date = "unknown";
};

class ApiHandler {
 public:
  // `backend` may be null: the server then answers every metrics query with
  // 503, which is what a control plane with no reachable member looks like.
  ApiHandler(std::shared_ptr<MetricsBackend> backend, std::shared_ptr<ServerMetrics> metrics, BuildInfo build);

  void handle(const HttpRequest& request, Respond respond) const;

  // Readiness beyond the backend: set once configuration is loaded.
  void set_configured(bool configured) { configured_.store(configured); }

 private:
  HttpResponse info(const InfoRequest& request) const;

  std::shared_ptr<MetricsBackend> backend_;
  std::shared_ptr<ServerMetrics> metrics_;
  BuildInfo build_;
  std::atomic<bool> configured_{false};
};

}  // namespace fedmetrics::server
