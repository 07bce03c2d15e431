#include "fedmetrics/transport/certificate_reloader.hpp"

#include <exception>
#include <system_error>

#include <spdlog/spdlog.h>

namespace fedmetrics::transport {

CertificateReloader::CertificateReloader(std::string cert_file, std::string key_file, Load load)
    : cert_file_(std::move(cert_file)), key_file_(std::move(key_file)), load_(std::move(load)) {
  loaded_times_ = file_times();
}

CertificateReloader::FileTimes CertificateReloader::file_times() const {
  // A file that cannot be read has no time (the error's): a change like any other.
  std::error_code cert_error, key_error;
  return {std::filesystem::last_write_time(cert_file_, cert_error),
          std::filesystem::last_write_time(key_file_, key_error)};
}

void CertificateReloader::start(const async::Executor& executor, std::chrono::milliseconds interval) {
  ticks_.start(executor, "certificate reloader", interval, [this] { check(); });
}

bool CertificateReloader::check() {
  const auto now = file_times();
  if (now == loaded_times_) return false;
  try {
    load_(cert_file_, key_file_);
  } catch (const std::exception& e) {
    // Retried at the next check, when the key has likely been written too.
    if (!failing_) spdlog::warn("serving certificate not reloaded (keeping the current one): {}", e.what());
    failing_ = true;
    return false;
  }
  spdlog::info("serving certificate reloaded from {}", cert_file_);
  loaded_times_ = now;
  failing_ = false;
  return true;
}

}  // namespace fedmetrics::transport
