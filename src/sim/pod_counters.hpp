#pragma once
// What a Prometheus in a simulated member scrapes: each running pod's
// request counters, `<metric>_total` for every custom metric its workload
// exposes (http_requests_total for http_requests), in Prometheus' text
// format at the member API server's /metrics/pods, with the labels a
// kube-prometheus pod scrape attaches (`namespace`, `pod`). The counters
// grow at each pod's requests per second of the load model, integrated
// from one scrape to the next, so that rate() over them gives the value
// the member's custom metrics API answers. Reached with a member token, as
// kube-apiserver's own /metrics is. Internal to the sim module.
#include <map>
#include <mutex>
#include <string>
#include <tuple>

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
    double total = 0;  // requests since the pod's first scrape
    double rate = 0;   // per second, as of `at`
    k8s::Timestamp at{};
  };
  std::mutex mutex_;
  std::map<std::tuple<std::string, std::string, std::string>, Counter> counters_;  // (namespace, pod, metric)
};

}  // namespace fedmetrics::sim::detail
