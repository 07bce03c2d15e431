#pragma once
// The background relist of every Prometheus member of a member source
// (PrometheusMemberCluster::relist): one coroutine on the client runtime
// that looks at the source's current members every second and relists
// those that are due (new ones at once, the others every
// --metrics-relist-interval), all together, each by its own deadline.
// Failures are logged once until they change; the member keeps the metrics
// of its last relist that succeeded.
#include <chrono>
#include <memory>

#include "fedmetrics/aggregator/member_cluster.hpp"
#include "fedmetrics/kube/https_client.hpp"

namespace fedmetrics::async {
class Job;
}

namespace fedmetrics::clusterclient {

class PrometheusRelister {
 public:
  // Starts at once. `timeout`: each relist's deadline.
  PrometheusRelister(kube::ClientRuntime& runtime, std::shared_ptr<const aggregator::MemberSource> source,
                     std::chrono::milliseconds timeout);
  ~PrometheusRelister();
  PrometheusRelister(const PrometheusRelister&) = delete;
  PrometheusRelister& operator=(const PrometheusRelister&) = delete;
  // Stops the loop and returns once it has ended; call it before the runtime stops.
  void stop();

 private:
  std::unique_ptr<async::Job> job_;
};

}  // namespace fedmetrics::clusterclient
