// The member answer on the hot path, PodMetricsList, decoded straight from
// the text: no document tree, one pass, by the scanner when the text is in
// the shape metrics-server writes, else by nlohmann's SAX parser
// (detail::read_pod_metrics_list, pod_metrics_scan.hpp). Anything else is
// left to the tree decoder (pod_metrics_list_from_json); both give the same
// values (test/k8s/metrics_decode_fast_test.cpp).
#include <string>
#include <string_view>
#include <vector>

#include "fedmetrics/k8s/metrics_types.hpp"
#include "k8s/pod_metrics_scan.hpp"

namespace fedmetrics::k8s {
namespace {

// The reader's items into PodMetrics values.
class PodMetricsDecoder final : public detail::PodItemHandler {
 public:
  explicit PodMetricsDecoder(std::vector<PodMetrics>& out) : out_(out) {}

  void restart() override { out_.clear(); }

  bool item(const detail::PodItemView& v) override {
    PodMetrics& pod = out_.emplace_back();
    ObjectMeta& meta = pod.metadata;
    meta.name = v.name;
    meta.namespace_name = v.namespace_name;
    // A repeated key: the last one is kept, as the tree decoder keeps it.
    for (const auto& [key, value] : v.labels) meta.labels.insert_or_assign(std::string(key), value);
    for (const auto& [key, value] : v.annotations) meta.annotations.insert_or_assign(std::string(key), value);
    if (v.creation_timestamp) {
      auto t = parse_time(*v.creation_timestamp);
      if (!t) return false;
      meta.creation_timestamp = *t;
    }
    if (v.timestamp) {
      auto t = parse_time(*v.timestamp);
      if (!t) return false;
      pod.timestamp = *t;
    }
    if (v.window) {
      auto d = parse_duration(*v.window);
      if (!d) return false;
      pod.window = *d;
    }
    pod.containers.resize(v.container_count);
    for (std::size_t i = 0; i < v.container_count; ++i) {
      pod.containers[i].name = v.containers[i].name;
      for (const auto& [key, value] : v.containers[i].usage) {
        auto q = Quantity::parse(value);
        if (!q) return false;
        pod.containers[i].usage.insert_or_assign(std::string(key), *q);
      }
    }
    return true;
  }

 private:
  std::vector<PodMetrics>& out_;
};

}  // namespace

std::optional<std::vector<PodMetrics>> try_decode_pod_metrics_list(std::string_view body) {
  std::vector<PodMetrics> out;
  PodMetricsDecoder decoder(out);
  if (!detail::read_pod_metrics_list(body, decoder)) return std::nullopt;
  return out;
}

}  // namespace fedmetrics::k8s
