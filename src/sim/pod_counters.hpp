#pragma once
// What a Prometheus in a simulated member scrapes: each running pod's
// request counters, `<metric>_total` for every custom metric its workload
// exposes (http_requests_total for http_requests), and its containers'
// cAdvisor series (container_cpu_usage_seconds_total,
// container_memory_working_set_bytes), in Prometheus' text format at the
// member API server's /metrics/pods, with the labels a kube-prometheus
// scrape attaches (`namespace`, `pod`, `container`). The counters grow at
// the load model's rates, integrated from one scrape to the next, so that
// rate() over them gives what the member's own metrics APIs answer.
// Reached with a member token, as kube-apiserver's own /metrics is.
// Internal to the sim module.
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "fedmetrics/k8s/time.hpp"
#include "fedmetrics/sim/federation.hpp"
#include "fedmetrics/transport/http_message.hpp"

namespace fedmetrics::sim::detail {

inline constexpr std::string_view kPodCountersPath = "/metrics/pods";

class PodCounters {
 public:
  // The exposition of member `member`'s pods at `now`. Thread-safe.
  transport::HttpResponse scrape(const Federation& f, std::size_t member, k8s::Timestamp now);

 private:
  struct Counter {
    double total = 0;  // since the series' first scrape
    double rate = 0;   // per second, as of `at`
    k8s::Timestamp at{};
  };
  using Key = std::pair<std::string, std::string>;  // (series name, labels as written)
  std::mutex mutex_;
  std::map<Key, Counter> counters_;
};

}  // namespace fedmetrics::sim::detail
