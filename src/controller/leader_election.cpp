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
  while (true) {
    if (leading_) {
      if (!renew()) step_down("did not renew within the renew deadline");
    } else {
      // Acquire: one try per retry period, bounded so that the first renewal
      // (a retry period after it, counted from when the attempt began) still
      // has time before the renew deadline: a slow acquisition must not be
      // followed by a step-down without a try, which would flap leadership.
      (void)attempt(std::chrono::steady_clock::now() + options_.renew_deadline - options_.retry_period);
    }
    if (!pause(options_.retry_period)) return;
  }
}

bool LeaderElector::pause(std::chrono::steady_clock::duration period) {
  std::unique_lock lock(mutex_);
  wake_.wait_for(lock, period, [this] { return stopping_; });
  return !stopping_;
}

bool LeaderElector::renew() {
  // client-go: wait.PollImmediateUntil(RetryPeriod, tryAcquireOrRenew, ctx
  // with RenewDeadline). Counted from the last renewal rather than from the
  // round's start (a retry period later), so that the leader stops before
  // lease duration after its last renewTime for any flags that pass
  // lease duration > renew deadline, not only for the defaults.
  const auto deadline = last_renewal_ + options_.renew_deadline;
  while (std::chrono::steady_clock::now() < deadline) {
    if (attempt(deadline)) return true;
    if (!leading_) return true;  // someone else holds it: already stepped down
    auto left = deadline - std::chrono::steady_clock::now();
    if (left <= std::chrono::steady_clock::duration::zero()) break;
    if (!pause(std::min<std::chrono::steady_clock::duration>(options_.retry_period, left))) return true;
  }
  return false;
}

void LeaderElector::step_down(const std::string& why) {
  if (!leading_.exchange(false)) return;
  spdlog::warn("leader election: {} stopped leading {}/{}: {}", options_.identity, options_.namespace_name,
               options_.name, why);
  if (options_.on_stopped_leading) options_.on_stopped_leading();
}

bool LeaderElector::attempt(std::chrono::steady_clock::time_point deadline) {
  try {
    return attempt_unguarded(deadline);
  } catch (const std::exception& e) {  // a malformed Lease from the control plane
    spdlog::warn("leader election: {}", e.what());
    return false;
  }
}

bool LeaderElector::attempt_unguarded(std::chrono::steady_clock::time_point deadline) {
  const std::string where = options_.namespace_name + "/" + options_.name;
  const auto began = std::chrono::steady_clock::now();
  auto fail = [&](const std::string& what) {
    spdlog::debug("leader election: {}: {}", where, what);
    return false;
  };
  auto current = client_->get(options_.namespace_name, options_.name, deadline);
  if (!current) return fail(current.error().message);
  // A client that answered late is as good as one that did not answer.
  if (std::chrono::steady_clock::now() >= deadline) return fail("no answer before the renew deadline");
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
    step_down(where + " is now held by " + step.holder);
    return false;
  }
  auto written = step.action == LeaseStep::Action::Create
                     ? client_->create(options_.namespace_name, step.lease, deadline)
                     : client_->update(options_.namespace_name, options_.name, step.lease, deadline);
  if (!written) return fail(written.error().message);
  if (std::chrono::steady_clock::now() >= deadline) return fail("the write was answered after the renew deadline");
  last_renewal_ = began;
  const bool started = !leading_.exchange(true);
  if (started) {
    spdlog::info("leader election: {} acquired the lease {}", options_.identity, where);
    if (options_.on_started_leading) options_.on_started_leading();
  }
  return true;
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
  step_down("stopping");
  // Release, so that another replica takes over at once rather than after the lease duration.
  const auto deadline = std::chrono::steady_clock::now() + options_.renew_deadline;
  auto current = client_->get(options_.namespace_name, options_.name, deadline);
  if (!current || !*current) return;
  if (auto released = released_lease(**current, options_.identity))
    (void)client_->update(options_.namespace_name, options_.name, *released, deadline);
}

}  // namespace fedmetrics::controller
