#pragma once
// What the aggregator offers its users (the API server, the autoscaler):
// merged answers across every member cluster, as typed values plus the
// warnings that make partial failure visible. No HTTP here.
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "fedmetrics/aggregator/query.hpp"
#include "fedmetrics/k8s/discovery.hpp"
#include "fedmetrics/k8s/metrics_list_items.hpp"
#include "fedmetrics/k8s/metrics_types.hpp"
#include "fedmetrics/k8s/status.hpp"
#include "fedmetrics/transport/task.hpp"

namespace fedmetrics::aggregator {

// The annotation naming the member an item came from (Karmada's key).
inline constexpr std::string_view kQueryFromClusterAnnotation = "resource.karmada.io/query-from-cluster";

// The encodings of one answer, made once and shared: an answer handed to
// many waiters (coalescing, the result cache) is serialized by the first
// request that needs a format and reused by the others. The aggregator does
// not interpret it; the server keys it by format ("pods/list/json", ...),
// except for kListJson, which the aggregator may fill in ahead.
class EncodingMemo {
 public:
  // The JSON list of a pods or nodes answer (k8s::encode_*_list), which the
  // aggregator assembles from items it encoded as each member answered.
  static constexpr std::string_view kListJson = "list/json";

  // Sets `format` ahead of any get (the first value stays).
  void put(std::string_view format, std::string bytes) {
    std::lock_guard lock(mutex_);
    for (const auto& entry : entries_)
      if (entry.first == format) return;
    entries_.emplace_back(std::string(format), std::make_shared<const std::string>(std::move(bytes)));
  }

  std::shared_ptr<const std::string> get(std::string_view format, const std::function<std::string()>& encode) {
    // Held while encoding, so that waiters arriving together encode once.
    std::lock_guard lock(mutex_);
    for (const auto& [key, bytes] : entries_)
      if (key == format) return bytes;
    auto bytes = std::make_shared<const std::string>(encode());
    entries_.emplace_back(std::string(format), bytes);
    return bytes;
  }

 private:
  std::mutex mutex_;
  std::vector<std::pair<std::string, std::shared_ptr<const std::string>>> entries_;
};

// A merged JSON list held as the members' encoded items in the answer's
// order, never joined into one string: `pieces` (the list's head, each item
// with the ',' after it but the last, its tail) point into `frame` and
// `runs`, and `bytes` is their total. The server writes the pieces as they
// are, so that a 35 MB answer is held once, not once more as one string.
struct JsonList {
  std::pair<std::string, std::string> frame;  // the empty list's text around its items
  std::vector<k8s::EncodedItems> runs;        // one per member that answered
  std::vector<std::string_view> pieces;
  std::size_t bytes = 0;
};

template <class T>
struct Answer {
  std::variant<T, k8s::Status> result;
  // One per member that failed while others answered, naming it and the
  // reason; the server sends each as a `Warning: 299 - "..."` header.
  std::vector<std::string> warnings;
  std::shared_ptr<EncodingMemo> encodings = std::make_shared<EncodingMemo>();
  // The members whose part the answer lacks (failed, or chosen but left
  // out), sorted: what the warnings say in words, for callers that decide
  // on the data (the autoscaler must not read them out of the warnings).
  std::vector<std::string> missing_members = {};
  // Set for a pods list asked with encode_list: the answer's JSON, and the
  // value's items are then left empty (nobody reads them: such a query has
  // an answer of its own, query_key).
  std::shared_ptr<const JsonList> json_list = {};
};

// For a get by name the list holds exactly one item.
using PodMetricsAnswer = Answer<std::vector<k8s::PodMetrics>>;
using NodeMetricsAnswer = Answer<std::vector<k8s::NodeMetrics>>;
using CustomMetricsAnswer = Answer<std::vector<k8s::MetricValue>>;
using ExternalMetricsAnswer = Answer<std::vector<k8s::ExternalMetricValue>>;

// Answers are immutable and shared: every waiter of one fan-out (and every
// cache hit) gets the same object, not a copy.
template <class A>
using SharedAnswer = std::shared_ptr<const A>;

template <class A>
SharedAnswer<A> share(A answer) {
  return std::make_shared<const A>(std::move(answer));
}

class MetricsService {
 public:
  virtual ~MetricsService() = default;
  // Each a coroutine the caller awaits on its own executor, ending with the
  // answer (never null). Cancelled, it ends at once by the cancellation; the
  // members it asked are still awaited by the fan-out, for the other queries
  // that wait on it and for the result cache.
  virtual async::Task<SharedAnswer<PodMetricsAnswer>> pod_metrics(ResourceMetricsQuery query) = 0;
  virtual async::Task<SharedAnswer<NodeMetricsAnswer>> node_metrics(ResourceMetricsQuery query) = 0;
  virtual async::Task<SharedAnswer<CustomMetricsAnswer>> custom_metrics(CustomMetricsQuery query) = 0;
  virtual async::Task<SharedAnswer<ExternalMetricsAnswer>> external_metrics(ExternalMetricsQuery query) = 0;

  // Discovery from the members' cached capabilities; never waits on a member.
  [[nodiscard]] virtual k8s::APIResourceList custom_metrics_resources(k8s::CustomMetricsVersion version) const = 0;
  [[nodiscard]] virtual k8s::APIResourceList external_metrics_resources() const = 0;
  // True once at least one member has answered a query or discovery.
  [[nodiscard]] virtual bool has_served() const = 0;
};

}  // namespace fedmetrics::aggregator
