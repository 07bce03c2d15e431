#pragma once
// Per-member client metrics for /metrics, read from the member clients at
// scrape time: requests by outcome, latency histogram (to 60 s), in flight,
// pool size, TLS handshakes, last success time, and the members left out.
#include <memory>

#include <prometheus/collectable.h>

namespace fedmetrics::clusterclient {
class RefreshingMemberSource;
}
namespace fedmetrics::aggregator {
class MemberSource;
}

namespace fedmetrics::telemetry {

class MemberClientMetrics final : public prometheus::Collectable {
 public:
  // `members` gives the clients; `view` (the aggregator's, when given) the
  // members left out, which include those left out for not answering.
  explicit MemberClientMetrics(std::shared_ptr<clusterclient::RefreshingMemberSource> members,
                               std::shared_ptr<aggregator::MemberSource> view = nullptr)
      : members_(std::move(members)), view_(std::move(view)) {}
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  std::shared_ptr<clusterclient::RefreshingMemberSource> members_;
  std::shared_ptr<aggregator::MemberSource> view_;
};

}  // namespace fedmetrics::telemetry
