#pragma once
// The process metrics every Prometheus client library exports (client_golang's
// process collector, which kube components serve too), read from /proc at
// scrape time: prometheus-cpp 1.0 exports none of them. And
// fedmetrics_build_info, as Go's go_build_info and kube's
// kubernetes_build_info: a gauge of 1 whose labels say what runs.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <prometheus/collectable.h>

namespace fedmetrics::telemetry {

// What /proc/<pid>/stat says of a process (proc(5)): the clock ticks spent
// in user and kernel mode, the start after boot in clock ticks, the virtual
// size in bytes and the resident set in pages. Pure.
struct ProcStat {
  std::uint64_t utime_ticks = 0;
  std::uint64_t stime_ticks = 0;
  std::uint64_t start_ticks = 0;
  std::uint64_t virtual_bytes = 0;
  std::uint64_t resident_pages = 0;
};
// Parses the line of /proc/<pid>/stat; the command name (field 2, in
// parentheses) may hold spaces and parentheses. nullopt when malformed.
std::optional<ProcStat> parse_proc_stat(std::string_view text);
// The boot time (seconds since the epoch) from /proc/stat's `btime` line.
std::optional<std::uint64_t> parse_boot_time(std::string_view proc_stat);
// The soft limit of "Max open files" in /proc/<pid>/limits; nullopt when
// absent, +inf for "unlimited".
std::optional<double> parse_max_open_files(std::string_view limits);

// process_cpu_seconds_total, process_resident_memory_bytes,
// process_virtual_memory_bytes, process_open_fds, process_max_fds and
// process_start_time_seconds of this process. A file that cannot be read
// leaves its metrics out of that scrape.
class ProcessMetrics final : public prometheus::Collectable {
 public:
  std::vector<prometheus::MetricFamily> Collect() const override;
};

// What fedmetrics_build_info says of the build.
struct BuildLabels {
  std::string version;  // "v0.1.0"
  std::string git_commit;
  std::string compiler;  // "GNU 12.2.0"
};

// fedmetrics_build_info{version, git_commit, compiler} 1.
class BuildInfoMetric final : public prometheus::Collectable {
 public:
  explicit BuildInfoMetric(BuildLabels build) : build_(std::move(build)) {}
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  BuildLabels build_;
};

}  // namespace fedmetrics::telemetry
