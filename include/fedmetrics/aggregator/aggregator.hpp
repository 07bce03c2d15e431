#pragma once
// The MetricsService that answers every query by asking the member clusters
// in parallel and merging their answers (src/aggregator/merge.hpp holds the
// pure merge rules). It has no timers: each member calls back by the deadline
// it is given (the client enforces it), so an answer is ready when the last
// member has called back, never later than the member timeout.
//
// Identical queries in flight together share one fan-out (coalescing); an
// optional result cache answers repeats within cache_ttl. Time comes from the
// injected clock, so tests drive it.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "fedmetrics/aggregator/member_cluster.hpp"
#include "fedmetrics/aggregator/metrics_service.hpp"

namespace fedmetrics::aggregator {

using Clock = std::function<std::chrono::steady_clock::time_point()>;

struct AggregatorOptions {
  // Deadline of every member call, from the moment the fan-out starts (--member-timeout).
  std::chrono::milliseconds member_timeout{3000};
  // Result cache window (--cache-ttl); zero or negative turns the cache off.
  std::chrono::milliseconds cache_ttl{0};
  // At most this many answers in the result cache (--cache-max-entries); when
  // full, the oldest (the next to expire) makes room. Zero counts as one.
  std::size_t cache_max_entries = 1024;
  // Called once per failed member call, on the thread that delivered the
  // failure, so the composition root can log it. Optional; must be thread-safe.
  std::function<void(std::string_view member, const MemberError& error)> on_member_error;
};

// Counters since construction, for the server's /metrics.
struct AggregatorStats {
  std::uint64_t queries = 0;        // every query received
  std::uint64_t fan_outs = 0;       // queries that asked the members
  std::uint64_t coalesced = 0;      // queries attached to a fan-out already in flight
  std::uint64_t cache_hits = 0;     // queries answered from the result cache
  std::uint64_t member_calls = 0;   // calls made to members
  std::uint64_t member_errors = 0;  // of those, the ones that failed
  std::map<std::string, std::uint64_t, std::less<>> member_errors_by_cluster;
};

class Aggregator final : public MetricsService {
 public:
  Aggregator(std::shared_ptr<MemberSource> members, AggregatorOptions options,
             Clock clock = [] { return std::chrono::steady_clock::now(); });
  ~Aggregator() override;
  Aggregator(const Aggregator&) = delete;
  Aggregator& operator=(const Aggregator&) = delete;

  void pod_metrics(const ResourceMetricsQuery& query, AnswerCallback<PodMetricsAnswer> done) override;
  void node_metrics(const ResourceMetricsQuery& query, AnswerCallback<NodeMetricsAnswer> done) override;
  void custom_metrics(const CustomMetricsQuery& query, AnswerCallback<CustomMetricsAnswer> done) override;
  void external_metrics(const ExternalMetricsQuery& query, AnswerCallback<ExternalMetricsAnswer> done) override;

  [[nodiscard]] k8s::APIResourceList custom_metrics_resources(k8s::CustomMetricsVersion version) const override;
  [[nodiscard]] k8s::APIResourceList external_metrics_resources() const override;
  // True once a member call succeeded or a member's discovery did
  // (its capabilities are known).
  [[nodiscard]] bool has_served() const override;

  [[nodiscard]] AggregatorStats stats() const;

 private:
  struct State;
  // Shared with the member callbacks in flight, so that destroying the
  // Aggregator before the last member calls back is safe.
  std::shared_ptr<State> state_;
};

}  // namespace fedmetrics::aggregator
