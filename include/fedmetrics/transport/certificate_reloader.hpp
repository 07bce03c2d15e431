#pragma once
// Keeps a served certificate fresh, as Kubernetes' dynamic serving
// certificate controller does: the certificate and key files are checked
// every interval and, when either changed, loaded again (--tls-cert-file and
// the pair in --cert-dir alike, as k8s.io/apiserver serves both from files)
// without a restart. A pair that cannot be loaded (often the certificate is
// written before its key) keeps the one being served, is logged once until
// it recovers, and is tried again at the next check.
#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <utility>

#include "fedmetrics/transport/executor.hpp"
#include "fedmetrics/transport/periodic.hpp"

namespace fedmetrics::transport {

class CertificateReloader {
 public:
  // `load(cert_file, key_file)` serves the pair from then on, or throws
  // (std::exception) and keeps the current one (TlsServer::set_certificate).
  using Load = std::function<void(const std::string& cert_file, const std::string& key_file)>;
  // The files' times are read now: what is served already is not loaded again.
  CertificateReloader(std::string cert_file, std::string key_file, Load load);

  // Checks every `interval` on a strand of `executor`, from start() to stop().
  void start(const async::Executor& executor, std::chrono::milliseconds interval);
  void stop() { ticks_.stop(); }

  // One check: loads the pair when a file's time changed since the last load.
  // True when it loaded one. What the ticks call; tests call it directly.
  bool check();

 private:
  using FileTimes = std::pair<std::filesystem::file_time_type, std::filesystem::file_time_type>;
  [[nodiscard]] FileTimes file_times() const;

  std::string cert_file_;
  std::string key_file_;
  Load load_;
  FileTimes loaded_times_;  // of the pair served; on the ticks' strand only
  bool failing_ = false;    // likewise
  async::Periodic ticks_;
};

}  // namespace fedmetrics::transport
