#include "fedmetrics/sim/placement.hpp"

#include <algorithm>
#include <cstdio>
#include <numeric>

namespace fedmetrics::sim {

namespace {

// k8s.io/apimachinery/pkg/util/rand: no vowels, no 0/1/3 (avoids words and look-alikes).
constexpr std::string_view kSafeAlphabet = "bcdfghjklmnpqrstvwxz2456789";

std::uint32_t fnv32a(std::string_view data, std::uint32_t hash = 2166136261U) {
  for (unsigned char c : data) {
    hash ^= c;
    hash *= 16777619U;
  }
  return hash;
}

std::uint64_t fnv64a(std::string_view data) {
  std::uint64_t hash = 14695981039346656037ULL;
  for (unsigned char c : data) {
    hash ^= c;
    hash *= 1099511628211ULL;
  }
  return hash;
}

}  // namespace

std::vector<TargetCluster> divide_replicas(std::int32_t replicas, const std::vector<ClusterWeight>& clusters) {
  std::vector<TargetCluster> result;
  result.reserve(clusters.size());
  for (const auto& c : clusters) result.push_back({c.cluster, 0});
  if (clusters.empty() || replicas <= 0) return result;

  std::vector<std::int64_t> weights;
  for (const auto& c : clusters) weights.push_back(std::max<std::int64_t>(c.weight, 0));
  std::int64_t sum = std::accumulate(weights.begin(), weights.end(), std::int64_t{0});
  if (sum == 0) {
    std::fill(weights.begin(), weights.end(), 1);
    sum = static_cast<std::int64_t>(weights.size());
  }

  std::int32_t remain = replicas;
  for (std::size_t i = 0; i < clusters.size(); ++i) {
    result[i].replicas = static_cast<std::int32_t>(weights[i] * replicas / sum);
    remain -= result[i].replicas;
  }
  std::vector<std::size_t> order(clusters.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (weights[a] != weights[b]) return weights[a] > weights[b];
    if (clusters[a].last_replicas != clusters[b].last_replicas)
      return clusters[a].last_replicas > clusters[b].last_replicas;
    return clusters[a].cluster < clusters[b].cluster;
  });
  for (std::size_t k = 0; remain > 0 && k < order.size(); ++k) {
    ++result[order[k]].replicas;
    --remain;
  }
  return result;
}

std::string pod_template_hash(std::string_view pod_template) {
  std::string decimal = std::to_string(fnv32a(pod_template));
  std::string out;
  for (unsigned char c : decimal) out.push_back(kSafeAlphabet[c % kSafeAlphabet.size()]);
  return out;
}

std::string pod_suffix(std::string_view seed, std::uint64_t ordinal) {
  std::uint32_t h = fnv32a(std::string(seed) + "#" + std::to_string(ordinal));
  std::string out;
  for (int i = 0; i < 5; ++i) {
    out.push_back(kSafeAlphabet[h % kSafeAlphabet.size()]);
    h /= static_cast<std::uint32_t>(kSafeAlphabet.size());
  }
  return out;
}

std::string object_uid(std::string_view identity) {
  std::uint64_t a = fnv64a(identity);
  std::uint64_t b = fnv64a(std::string(identity) + "#uid");
  char buf[40];
  std::snprintf(buf, sizeof buf, "%08x-%04x-4%03x-%04x-%012llx", static_cast<unsigned>(a >> 32),
                static_cast<unsigned>((a >> 16) & 0xffff), static_cast<unsigned>(a & 0xfff),
                static_cast<unsigned>(0x8000 | ((b >> 48) & 0x3fff)),
                static_cast<unsigned long long>(b & 0xffffffffffffULL));
  return buf;
}

}  // namespace fedmetrics::sim
