#include "sim/pod_counters.hpp"

#include <chrono>
#include <cstdio>

#include "sim/http_util.hpp"

namespace fedmetrics::sim::detail {

namespace {

std::string number(double value) {
  char text[64];
  std::snprintf(text, sizeof text, "%.6f", value);
  return text;
}

}  // namespace

transport::HttpResponse PodCounters::scrape(const Federation& f, std::size_t member, k8s::Timestamp now) {
  const auto shares = f.load_shares(now);
  std::map<Key, Counter> next;
  std::string body;
  std::lock_guard lock(mutex_);
  // A counter growing at `rate` per second since the last scrape, written as `series{labels}`.
  auto count = [&](const std::string& series, const std::string& labels, double rate) {
    Key key{series, labels};
    Counter c;
    if (auto known = counters_.find(key); known != counters_.end()) {
      c = known->second;
      c.total += c.rate * std::chrono::duration<double>(now - c.at).count();
    }
    c.rate = rate;
    c.at = now;
    body += series + "{" + labels + "} " + number(c.total) + "\n";
    next.emplace(std::move(key), c);
  };
  for (const auto& pod : f.members[member].pods) {
    if (!f.exists(pod, now)) continue;
    const auto& w = f.world.workloads[pod.workload];
    const auto usage = f.usage(member, pod, now, shares);
    const std::string labels = "namespace=\"" + w.namespace_name + "\",pod=\"" + pod.name + "\"";
    for (const auto& metric : w.custom_metrics) count(metric + "_total", labels, usage.requests_per_second);
    // cAdvisor's, as the kubelet's /metrics/cadvisor gives them (cores integrated into seconds).
    for (const auto& c : usage.containers) {
      const std::string container = labels + ",container=\"" + c.name + "\"";
      count("container_cpu_usage_seconds_total", container, static_cast<double>(c.cpu_nanocores) / 1e9);
      body += "container_memory_working_set_bytes{" + container + "} " + std::to_string(c.memory_bytes) + "\n";
    }
  }
  counters_ = std::move(next);  // gone pods' counters go with them
  auto response = text_response(std::move(body));
  response.content_type = "text/plain; version=0.0.4";
  return response;
}

}  // namespace fedmetrics::sim::detail
