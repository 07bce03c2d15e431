#include "fedmetrics/clusterclient/kubeconfig_member_source.hpp"

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
  else
    out += ", no custom.metrics.k8s.io";
  out += c.external_metrics ? ", external.metrics.k8s.io (" + std::to_string(c.external_metric_resources.size()) + " metrics)"
                            : ", no external.metrics.k8s.io";
  return out;
}

}  // namespace

KubeconfigMemberSource::KubeconfigMemberSource(ClientRuntime& runtime, KubeconfigSourceOptions options)
    : runtime_(runtime), options_(std::move(options)) {
  snapshot_.store(std::make_shared<const aggregator::MemberList>());
  load(true);
  thread_ = std::thread([this] { run(); });
}

KubeconfigMemberSource::~KubeconfigMemberSource() { stop(); }

void KubeconfigMemberSource::stop() {
  {
    std::lock_guard lock(shared_->mutex);
    shared_->stopping = true;
  }
  shared_->wake.notify_all();
  if (thread_.joinable()) thread_.join();
  // Drop the member clients now: their connections and strands belong to the
  // ClientRuntime, which the caller is about to destroy.
  snapshot_.store(std::make_shared<const aggregator::MemberList>());
  std::lock_guard lock(shared_->mutex);
  shared_->members.clear();
}

// Reads every file and swaps in a new snapshot. At start a bad file is fatal;
// later the previous member set stays and the error is logged.
void KubeconfigMemberSource::load(bool initial) {
  std::vector<ClusterEndpoint> endpoints;
  for (const auto& file : options_.kubeconfig_files) {
    std::error_code ec;
    file_times_[file] = std::filesystem::last_write_time(file, ec);
    auto loaded = load_kubeconfig(file, options_.only_contexts.empty() ? std::vector<std::string>{} : options_.only_contexts);
    if (!loaded) {
      if (initial) throw std::runtime_error("--member-kubeconfig " + loaded.error().message);
      spdlog::error("--member-kubeconfig: keeping the previous member set: {}", loaded.error().message);
      return;
    }
    endpoints.insert(endpoints.end(), loaded->begin(), loaded->end());
  }
  std::lock_guard lock(shared_->mutex);
  auto& current = shared_->members;
  std::map<std::string, Member> next;
  for (auto& e : endpoints) {
    if (next.count(e.name)) {
      std::string message = "member \"" + e.name + "\" is defined twice in --member-kubeconfig files";
      if (initial) throw std::runtime_error(message);
      spdlog::error("{}; keeping the first", message);
      continue;
    }
    auto existing = current.find(e.name);
    if (existing != current.end() && existing->second.cluster->endpoint() == e) {
      next.emplace(e.name, std::move(existing->second));  // unchanged: keep its pool and capabilities
      continue;
    }
    try {
      Member m;
      m.cluster = std::make_shared<RestMemberCluster>(runtime_, e, options_.client);
      if (!initial) spdlog::info("member {}: {} at {}", e.name, existing == current.end() ? "added" : "changed", e.server);
      next.emplace(e.name, std::move(m));
    } catch (const std::exception& ex) {
      if (initial) throw;
      spdlog::error("{}", ex.what());
    }
  }
  if (!initial) {
    for (const auto& [name, m] : current)
      if (!next.count(name)) spdlog::info("member {}: removed", name);
  }
  current = std::move(next);
  auto list = std::make_shared<aggregator::MemberList>();
  for (const auto& [name, m] : current) list->push_back(m.cluster);
  snapshot_.store(std::move(list));
  shared_->wake.notify_all();
}

void KubeconfigMemberSource::discover(const std::string& name) {
  auto& m = shared_->members.at(name);
  m.in_flight = true;
  auto cluster = m.cluster;  // kept alive by the callback while discovery runs
  auto deadline = std::chrono::steady_clock::now() + options_.discovery_timeout;
  cluster->refresh_capabilities(deadline, [shared = shared_, interval = options_.discovery_interval, cluster,
                                           name](bool ok, std::string error) {
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
    shared->wake.notify_all();
  });
}

void KubeconfigMemberSource::run() {
  auto next_file_check = std::chrono::steady_clock::now() + options_.file_check_interval;
  std::unique_lock lock(shared_->mutex);
  while (!shared_->stopping) {
    auto now = std::chrono::steady_clock::now();
    auto wake_at = next_file_check;
    for (auto& [name, m] : shared_->members) {
      if (!m.in_flight && m.next_discovery <= now) discover(name);
      if (!m.in_flight) wake_at = std::min(wake_at, m.next_discovery);
    }
    shared_->wake.wait_until(lock, wake_at);
    if (shared_->stopping) break;
    if (std::chrono::steady_clock::now() >= next_file_check) {
      next_file_check = std::chrono::steady_clock::now() + options_.file_check_interval;
      bool changed = false;
      for (const auto& [file, time] : file_times_) {
        std::error_code ec;
        if (std::filesystem::last_write_time(file, ec) != time) changed = true;
      }
      if (changed) {
        lock.unlock();
        spdlog::info("--member-kubeconfig changed: re-reading");
        load(false);
        lock.lock();
      }
    }
  }
}

void KubeconfigMemberSource::wait_for_first_discovery(std::chrono::milliseconds timeout) {
  std::unique_lock lock(shared_->mutex);
  shared_->wake.wait_for(lock, timeout, [this] {
    return std::all_of(shared_->members.begin(), shared_->members.end(),
                       [](const auto& kv) { return kv.second.attempted; });
  });
}

}  // namespace fedmetrics::clusterclient
