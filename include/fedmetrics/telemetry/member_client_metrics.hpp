#pragma once
// Per-member client metrics for /metrics, read from the member clients at
// scrape time: requests by outcome, latency histogram (to 60 s), in flight,
// pool size, TLS handshakes, last success time, and the members left out.
#include <memory>

#include <prometheus/collectable.h>

namespace fedmetrics::clusterclient {
class RefreshingMemberSource;
}

namespace fedmetrics::telemetry {

class MemberClientMetrics final : public prometheus::Collectable {
 public:
  explicit MemberClientMetrics(std::shared_ptr<clusterclient::RefreshingMemberSource> members)
      : members_(std::move(members)) {}
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  std::shared_ptr<clusterclient::RefreshingMemberSource> members_;
};

}  // namespace fedmetrics::telemetry
