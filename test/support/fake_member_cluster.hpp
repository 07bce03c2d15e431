#pragma once
// The one fake of the aggregator's member ports: a member cluster with
// scripted answers per call that records what it was asked, answering at
// once or when the test releases it (a member that does not answer until
// then); a member source; the builders of their answers; and a loop that
// runs the coroutines of a test on the test's thread.
#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>

#include "fedmetrics/aggregator/member_cluster.hpp"
#include "fedmetrics/aggregator/metrics_service.hpp"
#include "fedmetrics/k8s/pod.hpp"
#include "fedmetrics/k8s/quantity.hpp"
#include "fedmetrics/transport/async.hpp"

namespace fedmetrics::aggregator::testing {

// The coroutines of a test on one io_context, run on the test's thread only
// when the test says so: start() a task, poll() what is ready.
class Loop {
 public:
  // The task's result once it has ended (an exception fails the test then).
  template <class T>
  std::shared_ptr<std::optional<T>> start(async::Task<T> task) {
    auto out = std::make_shared<std::optional<T>>();
    boost::asio::co_spawn(io_, std::move(task), [out](const std::exception_ptr& e, T value) {
      if (e) std::rethrow_exception(e);
      *out = std::move(value);
    });
    return out;
  }
  // A coroutine whose end the test does not wait for (a probe on fake time).
  void spawn(async::Task<void> task) {
    boost::asio::co_spawn(io_, std::move(task), [](const std::exception_ptr& e) {
      if (e) std::rethrow_exception(e);
    });
  }
  // Runs every handler that is ready, and those they make ready; how many ran.
  std::size_t poll() {
    io_.restart();
    return io_.poll();
  }
  // Starts `task` and polls: its result, which it must have by then.
  template <class T>
  T run(async::Task<T> task) {
    auto out = start(std::move(task));
    poll();
    REQUIRE(out->has_value());
    return std::move(**out);
  }
  boost::asio::io_context& context() { return io_; }

 private:
  boost::asio::io_context io_;
};

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

// A core/v1 pod, Running and Ready for an hour before at_second(0), its
// container "web" requesting `cpu`.
inline k8s::Pod ready_pod(std::string ns, std::string name, std::string_view cpu = "100m") {
  k8s::Pod p;
  p.metadata.name = std::move(name);
  p.metadata.namespace_name = std::move(ns);
  p.phase = "Running";
  p.conditions.push_back({"Ready", "True", at_second(-3600)});
  p.start_time = at_second(-3600);
  p.containers.push_back({"web", {{"cpu", quantity(cpu)}}});
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
  std::shared_ptr<const MemberCapabilities> capabilities() const override {
    std::lock_guard lock(mutex_);
    return caps_;
  }
  void set_capabilities(std::shared_ptr<const MemberCapabilities> caps) {
    std::lock_guard lock(mutex_);
    caps_ = std::move(caps);
  }

  // Each call is recorded when it is made (the task created), and answers
  // what the member was set to answer then.
  async::Task<MemberResult<std::vector<k8s::PodMetrics>>> pod_metrics(const std::string& namespace_name,
                                                                      const k8s::LabelSelector& labels,
                                                                      const k8s::FieldSelector& fields,
                                                                      Deadline deadline) override {
    pod_calls.push_back({namespace_name, labels.to_string(), fields.to_string(), deadline});
    if (call_order != nullptr) call_order->push_back(name_);
    return answer(pod_metrics_answer);
  }
  async::Task<MemberResult<std::vector<k8s::NodeMetrics>>> node_metrics(const k8s::LabelSelector& labels,
                                                                        const k8s::FieldSelector& fields,
                                                                        Deadline deadline) override {
    node_calls.push_back({labels.to_string(), fields.to_string(), deadline});
    return answer(nodes);
  }
  async::Task<MemberResult<std::vector<k8s::MetricValue>>> custom_metrics(const CustomMetricsQuery& query,
                                                                          Deadline deadline) override {
    custom_calls.push_back(query);
    last_deadline = deadline;
    return answer(custom);
  }
  async::Task<MemberResult<std::vector<k8s::ExternalMetricValue>>> external_metrics(const ExternalMetricsQuery& query,
                                                                                    Deadline deadline) override {
    external_calls.push_back(query);
    last_deadline = deadline;
    return answer(external);
  }
  async::Task<MemberResult<std::vector<k8s::Pod>>> pods(const std::string& namespace_name,
                                                        const k8s::LabelSelector& labels, Deadline deadline) override {
    pod_list_calls.push_back({namespace_name, labels.to_string(), {}, deadline});
    return answer(select_pods ? selected_pods(labels) : pod_list);
  }
  // The pods of `pod_list` that `labels` matches (its error as it is).
  [[nodiscard]] MemberResult<std::vector<k8s::Pod>> selected_pods(const k8s::LabelSelector& labels) const {
    if (!pod_list) return pod_list.error();
    std::vector<k8s::Pod> out;
    for (const auto& p : *pod_list)
      if (labels.matches(p.metadata.labels)) out.push_back(p);
    return out;
  }
  // As a node metrics list (recorded in node_calls, answering `nodes`): nothing, or its error.
  async::Task<std::optional<MemberError>> probe(Deadline deadline) override {
    node_calls.push_back({{}, {}, deadline});
    return probed(answer(nodes));
  }

  [[nodiscard]] std::size_t calls() const {
    return pod_calls.size() + node_calls.size() + custom_calls.size() + external_calls.size();
  }

  // Answers every deferred call, each resuming on its own executor (poll the loop).
  void release() {
    async::OneShot<bool> gate;
    {
      std::lock_guard lock(mutex_);
      gate = std::exchange(gate_, async::OneShot<bool>());
      pending_ = 0;
    }
    gate.set(true);
  }
  [[nodiscard]] std::size_t pending() const {
    std::lock_guard lock(mutex_);
    return pending_;
  }

  // What the member answers; `deferred` holds the answer until release().
  bool deferred = false;
  MemberResult<std::vector<k8s::PodMetrics>> pod_metrics_answer = std::vector<k8s::PodMetrics>{};
  MemberResult<std::vector<k8s::NodeMetrics>> nodes = std::vector<k8s::NodeMetrics>{};
  MemberResult<std::vector<k8s::MetricValue>> custom = std::vector<k8s::MetricValue>{};
  MemberResult<std::vector<k8s::ExternalMetricValue>> external = std::vector<k8s::ExternalMetricValue>{};
  MemberResult<std::vector<k8s::Pod>> pod_list = std::vector<k8s::Pod>{};  // core/v1 pods
  bool select_pods = false;  // pods() answers those its label selector matches, not all of pod_list

  std::vector<PodCall> pod_calls;
  std::vector<NodeCall> node_calls;
  std::vector<CustomMetricsQuery> custom_calls;
  std::vector<ExternalMetricsQuery> external_calls;
  std::vector<PodCall> pod_list_calls;
  Deadline last_deadline{};
  std::vector<std::string>* call_order = nullptr;  // when set, each pod_metrics call appends the name

 private:
  template <class R>
  async::Task<MemberResult<R>> answer(MemberResult<R> result) {
    std::optional<async::OneShot<bool>> gate;
    if (deferred) {
      std::lock_guard lock(mutex_);
      gate = gate_;
      ++pending_;
    }
    return answer_after(std::move(result), std::move(gate));
  }
  template <class R>
  static async::Task<MemberResult<R>> answer_after(MemberResult<R> result, std::optional<async::OneShot<bool>> gate) {
    if (gate) {
      auto waiting = gate->wait();
      co_await std::move(waiting);
    }
    co_return result;
  }
  static async::Task<std::optional<MemberError>> probed(async::Task<MemberResult<std::vector<k8s::NodeMetrics>>> list) {
    auto result = co_await std::move(list);
    if (!result) co_return result.error();
    co_return std::nullopt;
  }

  std::string name_;
  mutable std::mutex mutex_;
  std::shared_ptr<const MemberCapabilities> caps_;  // guarded by mutex_
  async::OneShot<bool> gate_;                       // guarded by mutex_: what the deferred calls wait for
  std::size_t pending_ = 0;                         // guarded by mutex_
};

// The member set as the test sets it (a fresh snapshot on each read).
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
