#pragma once
// What the server reports about the requests it answers, through a port it
// owns: telemetry implements it on Prometheus
// (fedmetrics/telemetry/prometheus_server_metrics.hpp), so that the server
// holds no metric types. Thread-safe: every worker reports.
#include <string>
#include <string_view>

namespace fedmetrics::server {

class ServerMetrics {
 public:
  virtual ~ServerMetrics() = default;

  // One answered request: `group`/`resource` label what was asked ("" for
  // non-resource paths), `code` the HTTP status, `seconds` the latency.
  virtual void observe_request(std::string_view group, std::string_view resource, int code, double seconds) = 0;
  virtual void request_started() = 0;
  virtual void request_finished() = 0;
  // Every metric of the process, as GET /metrics serves it (Prometheus text
  // exposition format 0.0.4).
  [[nodiscard]] virtual std::string serialize() const = 0;
};

}  // namespace fedmetrics::server
