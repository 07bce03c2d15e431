#pragma once
// The one fake of the aggregator's MetricsService: the answers the test sets
// (fixed, or made from the query by a function), the queries it was asked,
// and a hold that keeps every query waiting until release(), as members that
// do not answer would.
#include <cstddef>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "fedmetrics/aggregator/metrics_service.hpp"
#include "fedmetrics/transport/async.hpp"

namespace fedmetrics::testing {

class FakeMetricsService final : public aggregator::MetricsService {
 public:
  // What each query answers (by default an empty list), or, when set, the
  // function of the query that makes its answer.
  aggregator::PodMetricsAnswer pods;
  aggregator::NodeMetricsAnswer nodes;
  aggregator::CustomMetricsAnswer custom;
  aggregator::ExternalMetricsAnswer external;
  std::function<aggregator::PodMetricsAnswer(const aggregator::ResourceMetricsQuery&)> pods_for;
  std::function<aggregator::CustomMetricsAnswer(const aggregator::CustomMetricsQuery&)> custom_for;
  std::function<aggregator::ExternalMetricsAnswer(const aggregator::ExternalMetricsQuery&)> external_for;
  k8s::APIResourceList custom_resources;
  k8s::APIResourceList external_resources;
  bool served = true;

  // What it was asked, in order (read them when no query runs).
  std::vector<aggregator::ResourceMetricsQuery> pod_queries;
  std::vector<aggregator::ResourceMetricsQuery> node_queries;
  std::vector<aggregator::CustomMetricsQuery> custom_queries;
  std::vector<aggregator::ExternalMetricsQuery> external_queries;

  // On: every query waits, its answer made only once released.
  bool hold = false;
  [[nodiscard]] std::size_t held() const {
    std::lock_guard lock(mutex_);
    return held_;
  }
  // Resumes every held query, each on its own executor.
  void release() {
    async::OneShot<bool> gate;
    {
      std::lock_guard lock(mutex_);
      gate = std::exchange(gate_, async::OneShot<bool>());
      held_ = 0;
    }
    gate.set(true);
  }

  async::Task<aggregator::SharedAnswer<aggregator::PodMetricsAnswer>> pod_metrics(
      aggregator::ResourceMetricsQuery query) override {
    return asked(pod_queries, query, pods_for ? pods_for(query) : pods);
  }
  async::Task<aggregator::SharedAnswer<aggregator::NodeMetricsAnswer>> node_metrics(
      aggregator::ResourceMetricsQuery query) override {
    return asked(node_queries, query, nodes);
  }
  async::Task<aggregator::SharedAnswer<aggregator::CustomMetricsAnswer>> custom_metrics(
      aggregator::CustomMetricsQuery query) override {
    return asked(custom_queries, query, custom_for ? custom_for(query) : custom);
  }
  async::Task<aggregator::SharedAnswer<aggregator::ExternalMetricsAnswer>> external_metrics(
      aggregator::ExternalMetricsQuery query) override {
    return asked(external_queries, query, external_for ? external_for(query) : external);
  }
  [[nodiscard]] k8s::APIResourceList custom_metrics_resources(k8s::CustomMetricsVersion version) const override {
    auto list = custom_resources;
    list.group_version = std::string(k8s::group_version(version));
    return list;
  }
  [[nodiscard]] k8s::APIResourceList external_metrics_resources() const override { return external_resources; }
  [[nodiscard]] bool has_served() const override { return served; }

 private:
  // Records `query` in `queries`; its answer, `made` now, comes when not held.
  template <class Q, class A>
  async::Task<aggregator::SharedAnswer<A>> asked(std::vector<Q>& queries, const Q& query, A made) {
    {
      std::lock_guard lock(mutex_);
      queries.push_back(query);
    }
    return answer(std::move(made), gate());
  }
  // What a query waits for when held.
  std::optional<async::OneShot<bool>> gate() {
    if (!hold) return std::nullopt;
    std::lock_guard lock(mutex_);
    ++held_;
    return gate_;
  }
  // The answer is made when the query is asked, given when not held.
  template <class A>
  static async::Task<aggregator::SharedAnswer<A>> answer(A made, std::optional<async::OneShot<bool>> gate) {
    if (gate) {
      auto waiting = gate->wait();
      co_await std::move(waiting);
    }
    co_return aggregator::share(std::move(made));
  }

  mutable std::mutex mutex_;
  async::OneShot<bool> gate_;  // guarded by mutex_
  std::size_t held_ = 0;       // guarded by mutex_
};

}  // namespace fedmetrics::testing
