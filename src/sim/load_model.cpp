#include "fedmetrics/sim/load_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace fedmetrics::sim {

namespace {

constexpr std::int64_t kPage = 4096;  // working sets are whole pages

std::int64_t to_int64(k8s::Quantity::Nanos n) {
  constexpr auto max = std::numeric_limits<std::int64_t>::max();
  return n > max ? max : static_cast<std::int64_t>(n);
}

std::int64_t resource_nanos(const k8s::ResourceList& list, std::string_view name) {
  auto it = list.find(name);
  return it == list.end() ? 0 : to_int64(it->second.nanos());
}

// Splits `total` over the containers in proportion to `weights` (equally when
// they are all zero); the last container takes the rounding rest.
std::vector<std::int64_t> split(std::int64_t total, const std::vector<std::int64_t>& weights) {
  std::vector<std::int64_t> out(weights.size(), 0);
  if (weights.empty()) return out;
  long double sum = 0;
  for (auto w : weights) sum += static_cast<long double>(w);
  std::int64_t given = 0;
  for (std::size_t i = 0; i + 1 < weights.size(); ++i) {
    long double part = sum > 0 ? static_cast<long double>(total) * static_cast<long double>(weights[i]) / sum
                               : static_cast<long double>(total) / static_cast<long double>(weights.size());
    out[i] = static_cast<std::int64_t>(part);
    given += out[i];
  }
  out.back() = total - given;
  return out;
}

}  // namespace

std::int64_t PodUsage::cpu_nanocores() const {
  std::int64_t sum = 0;
  for (const auto& c : containers) sum += c.cpu_nanocores;
  return sum;
}

std::int64_t PodUsage::memory_bytes() const {
  std::int64_t sum = 0;
  for (const auto& c : containers) sum += c.memory_bytes;
  return sum;
}

PodUsage pod_usage(const WorkloadSpec& workload, const Load& load, std::size_t serving_pods, bool serving) {
  PodUsage usage;
  // Quantity nano-units of a CPU quantity in cores are nanocores.
  std::int64_t share = 0;
  if (serving && serving_pods > 0) share = to_int64(load.cpu.nanos()) / static_cast<std::int64_t>(serving_pods);
  std::int64_t total = share + to_int64(workload.baseline_cpu.nanos());

  std::vector<std::int64_t> cpu_requests, cpu_limits, memory_requests;
  bool every_container_limited = true;
  for (const auto& c : workload.containers) {
    cpu_requests.push_back(resource_nanos(c.requests, "cpu"));
    memory_requests.push_back(resource_nanos(c.requests, "memory"));
    auto limit = resource_nanos(c.limits, "cpu");
    cpu_limits.push_back(limit);
    if (limit == 0) every_container_limited = false;
  }
  // A CPU limit is a CFS quota: usage never goes above it.
  if (every_container_limited) {
    std::int64_t limit_sum = 0;
    for (auto l : cpu_limits) limit_sum += l;
    total = std::min(total, limit_sum);
  }
  auto cpu = split(total, cpu_requests);
  // Nano-units of a memory quantity are nanobytes.
  auto memory = split(to_int64(workload.memory_usage.nanos()) / 1'000'000'000, memory_requests);
  for (std::size_t i = 0; i < workload.containers.size(); ++i) {
    std::int64_t c = cpu[i];
    if (cpu_limits[i] > 0) c = std::min(c, cpu_limits[i]);
    std::int64_t m = (memory[i] + kPage - 1) / kPage * kPage;
    usage.containers.push_back({workload.containers[i].name, std::max<std::int64_t>(c, 0), m});
  }
  if (serving && serving_pods > 0)
    usage.requests_per_second = load.requests_per_second.as_double() / static_cast<double>(serving_pods);
  return usage;
}

}  // namespace fedmetrics::sim
