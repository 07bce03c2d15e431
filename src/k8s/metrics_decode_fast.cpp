// The member answer on the hot path, PodMetricsList, decoded straight from
// the text: no document tree, one pass, by read_json_subset below when the
// text is in the subset metrics-server writes, else by nlohmann's SAX parser
// (detail::PodMetricsListSax, in pod_metrics_sax.hpp, says which shape it
// takes). Anything else is left to the tree decoder
// (pod_metrics_list_from_json); both give the same values
// (test/k8s/metrics_decode_fast_test.cpp).
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "fedmetrics/k8s/metrics_types.hpp"
#include "k8s/json_subset.hpp"
#include "k8s/pod_metrics_sax.hpp"

namespace fedmetrics::k8s {
namespace {

// The reader's events into PodMetrics values.
class PodMetricsSink {
 public:
  explicit PodMetricsSink(std::vector<PodMetrics>& out) : out_(out) {}
  void begin_item() { out_.emplace_back(); }
  bool end_item() { return true; }
  void name(std::string& value) { pod().metadata.name = std::move(value); }
  void namespace_name(std::string& value) { pod().metadata.namespace_name = std::move(value); }
  void label(std::string& key, std::string& value) { pod().metadata.labels[std::move(key)] = std::move(value); }
  void annotation(std::string& key, std::string& value) {
    pod().metadata.annotations[std::move(key)] = std::move(value);
  }
  bool creation_timestamp(const std::string& value) {
    auto t = parse_time(value);
    if (t) pod().metadata.creation_timestamp = *t;
    return t.ok();
  }
  bool timestamp(const std::string& value) {
    auto t = parse_time(value);
    if (t) pod().timestamp = *t;
    return t.ok();
  }
  bool window(const std::string& value) {
    auto d = parse_duration(value);
    if (d) pod().window = *d;
    return d.ok();
  }
  void begin_container() { pod().containers.emplace_back(); }
  void container_name(std::string& value) { pod().containers.back().name = std::move(value); }
  bool usage(std::string& key, const std::string& value) {
    auto q = Quantity::parse(value);
    if (q) pod().containers.back().usage.insert_or_assign(std::move(key), *q);
    return q.ok();
  }

 private:
  PodMetrics& pod() { return out_.back(); }
  std::vector<PodMetrics>& out_;
};

}  // namespace

std::optional<std::vector<PodMetrics>> try_decode_pod_metrics_list(std::string_view body) {
  {
    std::vector<PodMetrics> out;
    PodMetricsSink sink(out);
    detail::PodMetricsListSax sax(sink);
    if (detail::read_json_subset(body, sax) && sax.complete()) return out;
  }
  // Outside the subset, or not the common shape: nlohmann's parser decides.
  std::vector<PodMetrics> out;
  PodMetricsSink sink(out);
  detail::PodMetricsListSax sax(sink);
  const bool parsed =
      nlohmann::json::sax_parse(body.begin(), body.end(), &sax, nlohmann::json::input_format_t::json, /*strict=*/true);
  if (!parsed || !sax.complete()) return std::nullopt;
  return out;
}

}  // namespace fedmetrics::k8s
