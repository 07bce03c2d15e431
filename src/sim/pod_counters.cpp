#include "sim/pod_counters.hpp"

#include <chrono>
#include <cstdio>

#include "sim/http_util.hpp"

namespace fedmetrics::sim::detail {

transport::HttpResponse PodCounters::scrape(const Federation& f, std::size_t member, k8s::Timestamp now) {
  const auto shares = f.load_shares(now);
  std::map<std::tuple<std::string, std::string, std::string>, Counter> next;
  std::string body;
  std::lock_guard lock(mutex_);
  for (const auto& pod : f.members[member].pods) {
    if (!f.exists(pod, now)) continue;
    const auto& w = f.world.workloads[pod.workload];
    if (w.custom_metrics.empty()) continue;
    const double rate = f.usage(member, pod, now, shares).requests_per_second;
    for (const auto& metric : w.custom_metrics) {
      auto key = std::make_tuple(w.namespace_name, pod.name, metric);
      Counter c;
      if (auto known = counters_.find(key); known != counters_.end()) {
        c = known->second;
        c.total += c.rate * std::chrono::duration<double>(now - c.at).count();
      }
      c.rate = rate;
      c.at = now;
      char value[64];
      std::snprintf(value, sizeof value, "%.6f", c.total);
      body += metric + "_total{namespace=\"" + w.namespace_name + "\",pod=\"" + pod.name + "\"} " + value + "\n";
      next.emplace(std::move(key), c);
    }
  }
  counters_ = std::move(next);  // gone pods' counters go with them
  auto response = text_response(std::move(body));
  response.content_type = "text/plain; version=0.0.4";
  return response;
}

}  // namespace fedmetrics::sim::detail
