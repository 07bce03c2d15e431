#pragma once
// One Lease with a resourceVersion, as the control plane keeps it. Answers
// at once; once `slow`, every call takes until its deadline (on `clock`)
// and fails, as the HTTPS client does when the control plane does not answer.
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fedmetrics/controller/leader_election.hpp"
#include "fedmetrics/transport/async.hpp"

namespace fedmetrics::testing {

struct FakeLeases final : controller::LeaseClient {
  using Clock = controller::Clock;
  std::mutex mutex;
  std::optional<nlohmann::json> stored;
  int version = 1;
  std::atomic<bool> slow{false};
  std::shared_ptr<controller::Clock> clock = controller::steady_clock();  // the elector's
  std::vector<Clock::Duration> budgets;  // deadline - call time, of every call made while slow
  Clock::TimePoint last_write{};         // of the last successful write

  async::Task<k8s::Expected<std::optional<nlohmann::json>>> get(const std::string&, const std::string&,
                                                                Deadline deadline) override {
    if (slow) {
      auto failed = co_await stall(deadline, "GET");
      co_return failed;
    }
    std::lock_guard lock(mutex);
    co_return stored;
  }
  async::Task<k8s::Expected<nlohmann::json>> create(const std::string&, const nlohmann::json& lease,
                                                    Deadline deadline) override {
    if (slow) {
      auto failed = co_await stall(deadline, "POST");
      co_return failed.error();
    }
    std::lock_guard lock(mutex);
    if (stored) co_return k8s::Error{"AlreadyExists"};
    co_return write_locked(lease);
  }
  async::Task<k8s::Expected<nlohmann::json>> update(const std::string&, const std::string&, const nlohmann::json& lease,
                                                    Deadline deadline) override {
    if (slow) {
      auto failed = co_await stall(deadline, "PUT");
      co_return failed.error();
    }
    std::lock_guard lock(mutex);
    if (!stored || lease["metadata"].value("resourceVersion", "") != (*stored)["metadata"]["resourceVersion"])
      co_return k8s::Error{"Conflict"};
    co_return write_locked(lease);
  }
  // Another replica's write.
  nlohmann::json write(nlohmann::json lease) {
    std::lock_guard lock(mutex);
    return write_locked(std::move(lease));
  }
  std::string holder() {
    std::lock_guard lock(mutex);
    return stored ? (*stored)["spec"].value("holderIdentity", "") : "";
  }

 private:
  nlohmann::json write_locked(nlohmann::json lease) {
    lease["metadata"]["resourceVersion"] = std::to_string(++version);
    stored = lease;
    last_write = clock->now();
    return lease;
  }
  async::Task<k8s::Expected<std::optional<nlohmann::json>>> stall(Deadline deadline, const char* method) {
    {
      std::lock_guard lock(mutex);
      budgets.push_back(deadline - clock->now());
    }
    const auto left = deadline - clock->now();
    co_await clock->sleep_for(left);
    co_return k8s::Error{std::string(method) + " lease: timeout"};
  }
};

}  // namespace fedmetrics::testing
