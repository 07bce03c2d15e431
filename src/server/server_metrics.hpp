#pragma once
// The server's own Prometheus metrics (served at /metrics). Owned by the
// composition root and passed in: no globals.
#include <memory>
#include <string>
#include <string_view>

#include <vector>

namespace prometheus {
class Registry;
class Collectable;
}

namespace fedmetrics::server {

class ServerMetrics {
 public:
  ServerMetrics();
  ~ServerMetrics();
  ServerMetrics(const ServerMetrics&) = delete;
  ServerMetrics& operator=(const ServerMetrics&) = delete;

  // One answered request: `group`/`resource` label what was asked ("" for
  // non-resource paths), `code` the HTTP status, `seconds` the latency.
  void observe_request(std::string_view group, std::string_view resource, int code, double seconds);
  // A TokenReview or SubjectAccessReview that could not be made (`review`
  // is "TokenReview" or "SubjectAccessReview").
  void review_failed(std::string_view review);
  void request_started();
  void request_finished();

  // The registry, for other modules (the aggregator) to add their families.
  [[nodiscard]] std::shared_ptr<prometheus::Registry> registry() const;
  // Adds metrics collected at scrape time by another module's adapter.
  void add_collectable(std::shared_ptr<prometheus::Collectable> collectable);
  // Prometheus text exposition format 0.0.4.
  [[nodiscard]] std::string serialize() const;

 private:
  struct Families;
  std::shared_ptr<prometheus::Registry> registry_;
  std::unique_ptr<Families> families_;
  std::vector<std::shared_ptr<prometheus::Collectable>> collectables_;  // set up before serving
};

}  // namespace fedmetrics::server
