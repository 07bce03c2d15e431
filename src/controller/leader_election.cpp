#include "fedmetrics/controller/leader_election.hpp"

#include <spdlog/spdlog.h>

namespace fedmetrics::controller {

using nlohmann::json;

namespace {

k8s::Timestamp system_now() {
  return std::chrono::time_point_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now());
}

}  // namespace

LeaseStep next_lease_step(const std::optional<json>& current, const ElectionOptions& options, k8s::Timestamp now,
                          bool holder_expired) {
  const auto seconds = std::max<std::int64_t>(
      1, std::chrono::duration_cast<std::chrono::seconds>(options.lease_duration).count());
  const auto stamp = k8s::format_micro_time(now);
  LeaseStep step;
  if (!current) {
    step.action = LeaseStep::Action::Create;
    step.holder = options.identity;
    step.lease = {{"apiVersion", "coordination.k8s.io/v1"},
                  {"kind", "Lease"},
                  {"metadata", {{"name", options.name}, {"namespace", options.namespace_name}}},
                  {"spec",
                   {{"holderIdentity", options.identity},
                    {"leaseDurationSeconds", seconds},
                    {"acquireTime", stamp},
                    {"renewTime", stamp},
                    {"leaseTransitions", 0}}}};
    return step;
  }
  json lease = *current;
  json spec = lease.value("spec", json::object());
  if (!spec.is_object()) spec = json::object();
  const std::string holder = spec.value("holderIdentity", "");
  const bool expired = holder.empty() || holder_expired;
  if (holder != options.identity && !expired) {
    step.holder = holder;  // someone else leads: wait
    return step;
  }
  step.action = LeaseStep::Action::Update;
  step.holder = options.identity;
  if (holder != options.identity) {
    spec["acquireTime"] = stamp;
    spec["leaseTransitions"] = spec.value("leaseTransitions", 0) + 1;
  }
  spec["holderIdentity"] = options.identity;
  spec["leaseDurationSeconds"] = seconds;
  spec["renewTime"] = stamp;
  lease["spec"] = spec;
  step.lease = std::move(lease);  // keeps metadata.resourceVersion: the write is conditional
  return step;
}

std::optional<json> released_lease(const json& current, const std::string& identity) {
  if (current.value("spec", json::object()).value("holderIdentity", "") != identity) return std::nullopt;
  json lease = current;
  lease["spec"]["holderIdentity"] = "";
  lease["spec"]["leaseDurationSeconds"] = 1;
  return lease;
}

LeaderElector::LeaderElector(std::shared_ptr<LeaseClient> client, ElectionOptions options,
                             std::function<k8s::Timestamp()> clock)
    : client_(std::move(client)), options_(std::move(options)), clock_(clock ? std::move(clock) : system_now) {}

LeaderElector::~LeaderElector() { stop(); }

void LeaderElector::start() {
  thread_ = std::thread([this] { run(); });
}

void LeaderElector::run() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    lock.unlock();
    attempt();
    lock.lock();
    wake_.wait_for(lock, options_.retry_period, [this] { return stopping_; });
  }
}

void LeaderElector::attempt() {
  try {
    attempt_unguarded();
  } catch (const std::exception& e) {  // a malformed Lease from the control plane
    spdlog::warn("leader election: {}", e.what());
    if (leading_ && std::chrono::steady_clock::now() - last_renewal_ > options_.renew_deadline) leading_ = false;
  }
}

void LeaderElector::attempt_unguarded() {
  const std::string where = options_.namespace_name + "/" + options_.name;
  auto fail = [&](const std::string& what) {
    // A leader that cannot renew within the renew deadline must stop acting.
    if (leading_ && std::chrono::steady_clock::now() - last_renewal_ > options_.renew_deadline) {
      leading_ = false;
      spdlog::warn("leader election: lost the lease {}: {}", where, what);
    } else {
      spdlog::debug("leader election: {}: {}", where, what);
    }
  };
  auto current = client_->get(options_.namespace_name, options_.name);
  if (!current) return fail(current.error().message);
  // client-go's observedTime: the holder's term runs from when we saw the record change.
  auto steady_now = std::chrono::steady_clock::now();
  bool expired = false;
  if (*current) {
    const auto& spec = (**current).value("spec", json::object());
    if (spec != observed_spec_) {
      observed_spec_ = spec;
      observed_at_ = steady_now;
    }
    auto duration = std::chrono::seconds(spec.value("leaseDurationSeconds", std::int64_t{15}));
    expired = steady_now > observed_at_ + duration;
  }
  auto step = next_lease_step(*current, options_, clock_(), expired);
  if (step.action == LeaseStep::Action::Wait) {
    if (leading_) spdlog::warn("leader election: {} is now held by {}", where, step.holder);
    leading_ = false;
    return;
  }
  auto written = step.action == LeaseStep::Action::Create ? client_->create(options_.namespace_name, step.lease)
                                                          : client_->update(options_.namespace_name, options_.name, step.lease);
  if (!written) return fail(written.error().message);
  last_renewal_ = std::chrono::steady_clock::now();
  const bool started = !leading_;
  leading_ = true;
  if (started) {
    spdlog::info("leader election: {} acquired the lease {}", options_.identity, where);
    if (options_.on_started_leading) options_.on_started_leading();
  }
}

void LeaderElector::stop() {
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (!leading_) return;
  // Release, so that another replica takes over at once rather than after the lease duration.
  leading_ = false;
  auto current = client_->get(options_.namespace_name, options_.name);
  if (!current || !*current) return;
  if (auto released = released_lease(**current, options_.identity))
    (void)client_->update(options_.namespace_name, options_.name, *released);
}

}  // namespace fedmetrics::controller
