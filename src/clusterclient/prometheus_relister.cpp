#include "fedmetrics/clusterclient/prometheus_relister.hpp"

#include <utility>  // before Asio's awaitable.hpp (transport/async.hpp)

#include <map>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "fedmetrics/clusterclient/prometheus_member_cluster.hpp"
#include "fedmetrics/transport/async.hpp"

namespace fedmetrics::clusterclient {

namespace {

// How often the loop looks for members that are due: a new member's first
// relist waits at most this long.
constexpr std::chrono::seconds kLook{1};

async::Task<void> relist_one(std::shared_ptr<PrometheusMemberCluster> member, std::chrono::milliseconds timeout,
                             std::map<std::string, std::string>* logged) {
  auto relisting = member->relist(std::chrono::steady_clock::now() + timeout);
  auto error = co_await std::move(relisting);
  auto& last = (*logged)[member->name()];
  const std::string now = error ? error->message : std::string();
  if (now == last) co_return;
  if (error) spdlog::warn("member {}: relist of its Prometheus series failed: {}", member->name(), now);
  else spdlog::info("member {}: the series of {} are listed again", member->name(), member->location().description);
  last = now;
}

async::Task<void> relist_loop(std::shared_ptr<const aggregator::MemberSource> source,
                              std::chrono::milliseconds timeout) {
  std::map<std::string, std::string> logged;  // member -> its last relist error ("" once it succeeded)
  for (;;) {
    auto snapshot = source->snapshot();
    std::vector<std::shared_ptr<aggregator::MemberCluster>> all = snapshot->members;
    for (const auto& left : snapshot->left_out)
      if (left.member) all.push_back(left.member);
    const auto now = std::chrono::steady_clock::now();
    std::vector<async::Task<void>> due;
    for (const auto& m : all) {
      auto prometheus = std::dynamic_pointer_cast<PrometheusMemberCluster>(m);
      if (prometheus && prometheus->relist_due(now)) due.push_back(relist_one(prometheus, timeout, &logged));
    }
    if (!due.empty()) co_await async::when_all(std::move(due));
    auto sleeping = async::sleep_for(kLook);
    const bool slept = co_await std::move(sleeping);
    if (!slept) co_return;
  }
}

}  // namespace

PrometheusRelister::PrometheusRelister(kube::ClientRuntime& runtime,
                                       std::shared_ptr<const aggregator::MemberSource> source,
                                       std::chrono::milliseconds timeout)
    : job_(std::make_unique<async::Job>()) {
  job_->start(async::make_strand(runtime.executor()), "Prometheus relist",
              [source = std::move(source), timeout] { return relist_loop(source, timeout); });
}

PrometheusRelister::~PrometheusRelister() { stop(); }

void PrometheusRelister::stop() {
  if (job_) job_->stop();
}

}  // namespace fedmetrics::clusterclient
