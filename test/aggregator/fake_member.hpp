#pragma once
// Fakes and builders for the aggregator's tests: a member cluster with
// configurable answers that records what it was asked, answering either
// synchronously inside the call or later, when the test releases it.
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "fedmetrics/aggregator/member_cluster.hpp"
#include "fedmetrics/aggregator/metrics_service.hpp"
#include "fedmetrics/k8s/quantity.hpp"

namespace fedmetrics::aggregator::testing {

inline k8s::Quantity quantity(std::string_view text) {
  auto q = k8s::Quantity::parse(text);
  return q.ok() ? *q : k8s::Quantity();
}

inline k8s::LabelSelector selector(std::string_view text) {
  auto s = k8s::LabelSelector::parse(text);
  return s.ok() ? *s : k8s::LabelSelector();
}

inline k8s::Timestamp at_second(int second) { return k8s::Timestamp(std::chrono::seconds(1'787'000'000 + second)); }

inline k8s::PodMetrics pod(std::string ns, std::string name, std::string_view cpu = "10m", k8s::Labels labels = {}) {
  k8s::PodMetrics p;
  p.metadata.namespace_name = std::move(ns);
  p.metadata.name = std::move(name);
  p.metadata.labels = std::move(labels);
  p.timestamp = at_second(0);
  p.window = std::chrono::seconds(15);
  p.containers.push_back({"main", {{"cpu", quantity(cpu)}, {"memory", quantity("10Mi")}}});
  return p;
}

inline k8s::NodeMetrics node(std::string name) {
  k8s::NodeMetrics n;
  n.metadata.name = std::move(name);
  n.timestamp = at_second(0);
  n.window = std::chrono::seconds(20);
  n.usage = {{"cpu", quantity("1")}, {"memory", quantity("1Gi")}};
  return n;
}

inline k8s::MetricValue metric_value(std::string kind, std::string ns, std::string name, std::string_view value,
                                     int second = 0, std::optional<std::int64_t> window = 60) {
  k8s::MetricValue v;
  v.described_object.kind = std::move(kind);
  v.described_object.namespace_name = std::move(ns);
  v.described_object.name = std::move(name);
  v.described_object.api_version = "/v1";
  v.metric_name = "http_requests";
  v.timestamp = at_second(second);
  v.window_seconds = window;
  v.value = quantity(value);
  return v;
}

inline k8s::ExternalMetricValue external_value(k8s::Labels labels, std::string_view value) {
  k8s::ExternalMetricValue v;
  v.metric_name = "queue_depth";
  v.metric_labels = std::move(labels);
  v.timestamp = at_second(0);
  v.value = quantity(value);
  return v;
}

inline MemberError error(MemberError::Kind kind, std::string message) {
  MemberError e;
  e.kind = kind;
  e.message = std::move(message);
  return e;
}

inline std::shared_ptr<MemberCapabilities> resource_capabilities() {
  auto caps = std::make_shared<MemberCapabilities>();
  caps->resource_metrics = true;
  return caps;
}

inline k8s::APIResource custom_resource(std::string name, bool namespaced = true) {
  return k8s::APIResource{std::move(name), "", namespaced, "MetricValueList", {"get"}};
}

inline k8s::APIResource external_resource(std::string name) {
  return k8s::APIResource{std::move(name), "", true, "ExternalMetricValueList", {"get"}};
}

struct PodCall {
  std::string namespace_name;
  std::string labels;
  std::string fields;
  Deadline deadline;
};

struct NodeCall {
  std::string labels;
  std::string fields;
  Deadline deadline;
};

class FakeMember final : public MemberCluster {
 public:
  explicit FakeMember(std::string name, std::shared_ptr<const MemberCapabilities> caps = resource_capabilities())
      : name_(std::move(name)), caps_(std::move(caps)) {}

  const std::string& name() const override { return name_; }
  std::shared_ptr<const MemberCapabilities> capabilities() const override { return caps_; }
  void set_capabilities(std::shared_ptr<const MemberCapabilities> caps) { caps_ = std::move(caps); }

  void pod_metrics(const std::string& namespace_name, const k8s::LabelSelector& labels,
                   const k8s::FieldSelector& fields, Deadline deadline,
                   MemberCallback<std::vector<k8s::PodMetrics>> done) override {
    pod_calls.push_back({namespace_name, labels.to_string(), fields.to_string(), deadline});
    if (call_order != nullptr) call_order->push_back(name_);
    answer(pods, std::move(done));
  }
  void node_metrics(const k8s::LabelSelector& labels, const k8s::FieldSelector& fields, Deadline deadline,
                    MemberCallback<std::vector<k8s::NodeMetrics>> done) override {
    node_calls.push_back({labels.to_string(), fields.to_string(), deadline});
    answer(nodes, std::move(done));
  }
  void custom_metrics(const CustomMetricsQuery& query, Deadline deadline,
                      MemberCallback<std::vector<k8s::MetricValue>> done) override {
    custom_calls.push_back(query);
    last_deadline = deadline;
    answer(custom, std::move(done));
  }
  void external_metrics(const ExternalMetricsQuery& query, Deadline deadline,
                        MemberCallback<std::vector<k8s::ExternalMetricValue>> done) override {
    external_calls.push_back(query);
    last_deadline = deadline;
    answer(external, std::move(done));
  }

  [[nodiscard]] std::size_t calls() const {
    return pod_calls.size() + node_calls.size() + custom_calls.size() + external_calls.size();
  }

  // Answers every deferred call, in the order they were made.
  void release() {
    auto pending = std::move(pending_);
    pending_.clear();
    for (auto& answer : pending) answer();
  }
  // The deferred answers themselves, for a test that runs them elsewhere.
  std::vector<std::function<void()>> take_pending() { return std::exchange(pending_, {}); }
  [[nodiscard]] std::size_t pending() const { return pending_.size(); }

  // What the member answers; `deferred` holds the answer until release().
  bool deferred = false;
  bool answer_twice = false;  // breaks the exactly-once contract on purpose
  MemberResult<std::vector<k8s::PodMetrics>> pods;
  MemberResult<std::vector<k8s::NodeMetrics>> nodes;
  MemberResult<std::vector<k8s::MetricValue>> custom;
  MemberResult<std::vector<k8s::ExternalMetricValue>> external;

  std::vector<PodCall> pod_calls;
  std::vector<NodeCall> node_calls;
  std::vector<CustomMetricsQuery> custom_calls;
  std::vector<ExternalMetricsQuery> external_calls;
  Deadline last_deadline{};
  std::vector<std::string>* call_order = nullptr;  // when set, each pod_metrics call appends the name

 private:
  template <class R>
  void answer(const MemberResult<R>& result, MemberCallback<R> done) {
    auto call = [result, done, twice = answer_twice] {
      done(result);
      if (twice) done(result);
    };
    if (deferred) pending_.push_back(std::move(call));
    else call();
  }

  std::string name_;
  std::shared_ptr<const MemberCapabilities> caps_;
  std::vector<std::function<void()>> pending_;
};

class FakeSource final : public MemberSource {
 public:
  std::shared_ptr<const MemberList> members() const override { return std::make_shared<const MemberList>(list); }
  std::shared_ptr<const MemberSnapshot> snapshot() const override {
    return std::make_shared<const MemberSnapshot>(MemberSnapshot{list, left_out});
  }
  MemberList list;
  std::vector<LeftOutMember> left_out;
};

// Reading an Answer in a test: the value or the Status, failing the test when
// it holds the other. From a temporary answer: a copy, never a reference into it.
template <class T>
const T& items_of(const Answer<T>& answer) {
  REQUIRE(std::holds_alternative<T>(answer.result));
  return std::get<T>(answer.result);
}

template <class T>
const k8s::Status& status_of(const Answer<T>& answer) {
  REQUIRE(std::holds_alternative<k8s::Status>(answer.result));
  return std::get<k8s::Status>(answer.result);
}

template <class T>
T items_of(Answer<T>&& answer) {
  REQUIRE(std::holds_alternative<T>(answer.result));
  return std::get<T>(std::move(answer.result));
}

template <class T>
k8s::Status status_of(Answer<T>&& answer) {
  REQUIRE(std::holds_alternative<k8s::Status>(answer.result));
  return std::get<k8s::Status>(std::move(answer.result));
}

}  // namespace fedmetrics::aggregator::testing
