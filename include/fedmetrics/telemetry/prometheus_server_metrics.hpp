#pragma once
// The server's request metrics (server::ServerMetrics) on prometheus-cpp, and
// the registry every other collector of the process joins, served at
// /metrics. Owned by the composition root and passed in: no globals.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "fedmetrics/server/server_metrics.hpp"

namespace prometheus {
class Registry;
class Collectable;
}  // namespace prometheus

namespace fedmetrics::telemetry {

class PrometheusServerMetrics final : public server::ServerMetrics {
 public:
  PrometheusServerMetrics();
  ~PrometheusServerMetrics() override;
  PrometheusServerMetrics(const PrometheusServerMetrics&) = delete;
  PrometheusServerMetrics& operator=(const PrometheusServerMetrics&) = delete;

  void observe_request(std::string_view group, std::string_view resource, int code, double seconds) override;
  void request_started() override;
  void request_finished() override;
  // Prometheus text exposition format 0.0.4.
  [[nodiscard]] std::string serialize() const override;

  // A TokenReview or SubjectAccessReview that could not be made (`review`
  // is "TokenReview" or "SubjectAccessReview").
  void review_failed(std::string_view review);

  // The registry, for other collectors (the autoscaler's) to add their families.
  [[nodiscard]] std::shared_ptr<prometheus::Registry> registry() const;
  // Adds metrics collected at scrape time by another module's adapter.
  void add_collectable(std::shared_ptr<prometheus::Collectable> collectable);

 private:
  struct Families;
  std::shared_ptr<prometheus::Registry> registry_;
  std::unique_ptr<Families> families_;
  std::vector<std::shared_ptr<prometheus::Collectable>> collectables_;  // set up before serving
};

}  // namespace fedmetrics::telemetry
