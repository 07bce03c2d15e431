#include "fedmetrics/clusterclient/member_set.hpp"

#include "fedmetrics/transport/async.hpp"

#include <algorithm>
#include <stdexcept>

#include <spdlog/spdlog.h>

namespace fedmetrics::clusterclient {

namespace {

std::string describe(const aggregator::MemberCapabilities& c) {
  std::string out = c.resource_metrics ? "metrics.k8s.io" : "no metrics.k8s.io";
  if (c.custom_metrics)
    out += std::string(", custom.metrics.k8s.io/") +
           (*c.custom_metrics == k8s::CustomMetricsVersion::V1beta2 ? "v1beta2" : "v1beta1") + " (" +
           std::to_string(c.custom_metric_resources.size()) + " metrics)";
  else out += ", no custom.metrics.k8s.io";
  out += c.external_metrics
             ? ", external.metrics.k8s.io (" + std::to_string(c.external_metric_resources.size()) + " metrics)"
             : ", no external.metrics.k8s.io";
  return out;
}

// Discovers what is due, then sleeps until the next is due or something changed.
async::Task<void> discovery_loop(async::Wakeup* wakeup,
                                 std::function<std::chrono::steady_clock::time_point()> discover_due) {
  for (;;) {
    const auto next = discover_due();
    const bool go_on = co_await wakeup->wait_for(next - std::chrono::steady_clock::now());
    if (!go_on) co_return;  // stop()
  }
}

}  // namespace

void MemberSet::Shared::changed() {
  wake.notify_all();
  wakeup->notify();
}

MemberSet::MemberSet(kube::ClientRuntime& runtime, MemberSetOptions options)
    : runtime_(runtime), options_(std::move(options)) {
  snapshot_.store(std::make_shared<const aggregator::MemberSnapshot>());
  auto strand = async::make_strand(runtime.executor());
  shared_->wakeup = std::make_shared<async::Wakeup>(strand);
  discovery_ = std::make_unique<async::Job>();
  discovery_->start(strand, "member discovery", [this, wakeup = shared_->wakeup.get()] {
    return discovery_loop(wakeup, [this] { return discover_due(); });
  });
}

MemberSet::~MemberSet() { stop(); }

void MemberSet::stop() {
  {
    std::lock_guard lock(shared_->mutex);
    shared_->stopping = true;
  }
  if (discovery_) discovery_->stop();
  // Drop the member clients now: their connections and strands belong to the
  // ClientRuntime, which the caller is about to destroy.
  snapshot_.store(std::make_shared<const aggregator::MemberSnapshot>());
  std::lock_guard lock(shared_->mutex);
  shared_->members.clear();
  shared_->discovery_waiters.clear();  // never called after stop()
}

void MemberSet::reconcile(const std::vector<kube::ClusterEndpoint>& desired, OnBadEndpoint on_bad,
                          std::vector<aggregator::LeftOutMember> left_out,
                          const std::map<std::string, kube::ClusterEndpoint>& prometheus) {
  std::lock_guard lock(shared_->mutex);
  const auto& current = shared_->members;
  const bool log_changes = shared_->reconciled;
  // Built aside and swapped in at the end, so that a throw leaves the set as it was.
  std::map<std::string, Member> next;
  std::map<std::string, kube::ClusterEndpoint> rejected;
  std::vector<std::string> changes;
  for (const auto& e : desired) {
    if (next.count(e.name)) {
      std::string message = "member \"" + e.name + "\" is given twice";
      if (on_bad == OnBadEndpoint::Throw) throw std::runtime_error(message);
      spdlog::error("{}; keeping the first", message);
      continue;
    }
    auto existing = current.find(e.name);
    std::optional<kube::ClusterEndpoint> its_prometheus;
    if (auto p = prometheus.find(e.name); p != prometheus.end()) its_prometheus = p->second;
    if (existing != current.end() && existing->second.cluster->endpoint() == e &&
        existing->second.prometheus == its_prometheus) {
      next.emplace(e.name, existing->second);  // unchanged: keep its pool and capabilities
      continue;
    }
    try {
      Member m;
      m.cluster = std::make_shared<RestMemberCluster>(runtime_, e, options_.client);
      m.prometheus = its_prometheus;
      m.served = options_.serve_as ? options_.serve_as(m.cluster, m.prometheus ? &*m.prometheus : nullptr) : m.cluster;
      changes.push_back("member " + e.name + ": " + (existing == current.end() ? "added" : "changed") + " at " +
                        e.server);
      next.emplace(e.name, std::move(m));
    } catch (const std::exception& ex) {
      if (on_bad == OnBadEndpoint::Throw) throw;
      auto known = shared_->rejected.find(e.name);
      if (known == shared_->rejected.end() || !(known->second == e))
        spdlog::error(
            "{}; {}", ex.what(),
            existing == current.end() ? "left out until its endpoint changes" : "keeping its previous endpoint");
      rejected.emplace(e.name, e);
      if (existing != current.end()) {
        next.emplace(e.name, existing->second);
      } else {
        // Its client's error names the member already ("member b: ...").
        std::string why = ex.what();
        const std::string prefix = "member " + e.name + ": ";
        if (why.rfind(prefix, 0) == 0) why.erase(0, prefix.size());
        left_out.push_back({e.name, "its endpoint cannot be used: " + why});
      }
    }
  }
  for (const auto& [name, m] : current)
    if (!next.count(name)) changes.push_back("member " + name + ": removed");
  shared_->members = std::move(next);
  shared_->rejected = std::move(rejected);
  shared_->reconciled = true;
  auto snapshot = std::make_shared<aggregator::MemberSnapshot>();
  for (const auto& [name, m] : shared_->members) snapshot->members.push_back(m.served);
  // By name, once each, and never a name that is a member.
  std::stable_sort(left_out.begin(), left_out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  for (auto& m : left_out)
    if (!shared_->members.count(m.name) && (snapshot->left_out.empty() || snapshot->left_out.back().name != m.name))
      snapshot->left_out.push_back(std::move(m));
  snapshot_.store(std::move(snapshot));
  shared_->changed();
  if (log_changes)
    for (const auto& change : changes) spdlog::info("{}", change);
}

void MemberSet::discover(const std::string& name) {
  auto& m = shared_->members.at(name);
  m.in_flight = true;
  auto cluster = m.cluster;  // kept alive by the callback while discovery runs
  auto deadline = std::chrono::steady_clock::now() + options_.discovery_timeout;
  // The health probe on the same cadence; logged when its verdict changes.
  cluster->probe_health(deadline, [shared = shared_, cluster, name](const MemberHealth& health) {
    std::lock_guard lock(shared->mutex);
    auto it = shared->members.find(name);
    if (it == shared->members.end() || it->second.cluster != cluster) return;
    auto& last = it->second.last_health;
    if (health.reason == last) return;
    if (health.healthy) spdlog::info("member {}: healthy", name);
    else spdlog::warn("member {}: not healthy: {}", name, health.reason);
    last = health.reason;
  });
  cluster->refresh_capabilities(
      deadline, [shared = shared_, interval = options_.discovery_interval, cluster, name](bool ok, std::string error) {
        ok = ok && error.empty();  // an error text is a failure, whatever the member client says
        std::lock_guard lock(shared->mutex);
        auto it = shared->members.find(name);
        if (it == shared->members.end() || it->second.cluster != cluster) return;  // removed or replaced meanwhile
        Member& member = it->second;
        member.in_flight = false;
        member.attempted = true;
        auto now = std::chrono::steady_clock::now();
        if (ok) {
          member.backoff = std::chrono::milliseconds(500);
          member.next_discovery = now + interval;
        } else {
          // Retried with backoff, never forgotten.
          member.next_discovery = now + member.backoff;
          member.backoff = std::min(member.backoff * 2, std::chrono::milliseconds(30'000));
        }
        // Logged when what the member serves changes, not on every refresh.
        auto caps = cluster->capabilities();
        std::string now_serving = caps ? describe(*caps) : "unreachable";
        if (!ok && member.last_capabilities != "unreachable (" + error + ")")
          spdlog::warn("member {}: discovery failed: {}", name, error);
        if (!ok) now_serving = "unreachable (" + error + ")";
        else if (now_serving != member.last_capabilities) spdlog::info("member {}: serves {}", name, now_serving);
        member.last_capabilities = now_serving;
        shared->changed();
      });
}

bool MemberSet::Shared::all_attempted() const {
  // Not before the source named its members once (a Karmada source's first poll).
  return reconciled && std::all_of(members.begin(), members.end(), [](const auto& kv) { return kv.second.attempted; });
}

std::chrono::steady_clock::time_point MemberSet::discover_due() {
  std::vector<std::function<void()>> ready;  // called once the lock is released
  std::chrono::steady_clock::time_point wake_at;
  {
    std::lock_guard lock(shared_->mutex);
    auto now = std::chrono::steady_clock::now();
    wake_at = now + std::chrono::hours(1);  // or sooner, when reconcile() or a discovery notifies
    if (shared_->stopping) return wake_at;
    for (auto& [name, m] : shared_->members) {
      if (!m.in_flight && m.next_discovery <= now) discover(name);
      if (!m.in_flight) wake_at = std::min(wake_at, m.next_discovery);
    }
    const bool attempted = shared_->all_attempted();
    std::erase_if(shared_->discovery_waiters, [&](Shared::Waiter& w) {
      if (!attempted && w.deadline > now) {
        wake_at = std::min(wake_at, w.deadline);
        return false;
      }
      ready.push_back(std::move(w.ready));
      return true;
    });
  }
  for (auto& call : ready) call();
  return wake_at;
}

void MemberSet::wait_for_first_discovery(std::chrono::milliseconds timeout) {
  std::unique_lock lock(shared_->mutex);
  shared_->wake.wait_for(lock, timeout, [this] { return shared_->all_attempted(); });
}

void MemberSet::when_discovered(std::chrono::milliseconds timeout, std::function<void()> ready) const {
  std::lock_guard lock(shared_->mutex);
  if (shared_->stopping) return;
  shared_->discovery_waiters.push_back({std::chrono::steady_clock::now() + timeout, std::move(ready)});
  shared_->changed();  // the loop looks at it now, and again by its deadline
}

async::Task<void> MemberSet::first_discovery(std::chrono::milliseconds timeout) const {
  auto executor = co_await async::asio::this_coro::executor;
  async::Wakeup discovered{async::Strand(executor)};
  when_discovered(timeout, [discovered]() mutable { discovered.notify(); });
  // By `timeout` also when the set stops first (when_discovered never calls back then).
  co_await discovered.wait_for(timeout);
}

std::vector<std::shared_ptr<const RestMemberCluster>> MemberSet::clients() const {
  std::lock_guard lock(shared_->mutex);
  std::vector<std::shared_ptr<const RestMemberCluster>> out;
  out.reserve(shared_->members.size());
  for (const auto& [name, m] : shared_->members) out.push_back(m.cluster);
  return out;
}

std::optional<kube::ClusterEndpoint> MemberSet::endpoint_of(const std::string& name) const {
  std::lock_guard lock(shared_->mutex);
  auto it = shared_->members.find(name);
  if (it == shared_->members.end()) return std::nullopt;
  return it->second.cluster->endpoint();
}

}  // namespace fedmetrics::clusterclient
