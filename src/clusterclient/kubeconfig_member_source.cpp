#include "fedmetrics/clusterclient/kubeconfig_member_source.hpp"

#include <stdexcept>

#include <spdlog/spdlog.h>

namespace fedmetrics::clusterclient {

namespace {

MemberSetOptions member_set_options(const KubeconfigSourceOptions& o) {
  MemberSetOptions out;
  out.discovery_interval = o.discovery_interval;
  out.discovery_timeout = o.discovery_timeout;
  out.client = o.client;
  out.serve_as = o.serve_as;
  return out;
}

}  // namespace

KubeconfigMemberSource::KubeconfigMemberSource(kube::ClientRuntime& runtime, KubeconfigSourceOptions options)
    : options_(std::move(options)), members_(runtime, member_set_options(options_)) {
  load(true);
  file_watcher_.start(runtime.executor(), "--member-kubeconfig file check", options_.file_check_interval,
                      [this] { check_files(); });
}

KubeconfigMemberSource::~KubeconfigMemberSource() { stop(); }

void KubeconfigMemberSource::stop() {
  file_watcher_.stop();
  members_.stop();
}

void KubeconfigMemberSource::wait_for_first_discovery(std::chrono::milliseconds timeout) {
  members_.wait_for_first_discovery(timeout);
}

// Reads every file and hands their endpoints to the member set. At start a bad
// file is fatal; later the previous member set stays and the error is logged.
void KubeconfigMemberSource::load(bool initial) {
  std::vector<kube::ClusterEndpoint> endpoints;
  for (const auto& file : options_.kubeconfig_files) {
    std::error_code ec;
    file_times_[file] = std::filesystem::last_write_time(file, ec);
    auto loaded = kube::load_kubeconfig(file, options_.only_contexts);
    if (!loaded) {
      if (initial) throw std::runtime_error("--member-kubeconfig " + loaded.error().message);
      spdlog::error("--member-kubeconfig: keeping the previous member set: {}", loaded.error().message);
      return;
    }
    endpoints.insert(endpoints.end(), loaded->begin(), loaded->end());
  }
  try {
    members_.reconcile(endpoints, initial ? OnBadEndpoint::Throw : OnBadEndpoint::KeepPrevious);
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("--member-kubeconfig: ") + e.what());
  }
}

void KubeconfigMemberSource::check_files() {
  bool changed = false;
  for (const auto& [file, time] : file_times_) {
    std::error_code ec;
    if (std::filesystem::last_write_time(file, ec) != time) changed = true;
  }
  if (!changed) return;
  spdlog::info("--member-kubeconfig changed: re-reading");
  load(false);
}

}  // namespace fedmetrics::clusterclient
