#include "fedmetrics/telemetry/process_metrics.hpp"

#include <unistd.h>

#include <charconv>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include <prometheus/metric_family.h>

namespace fedmetrics::telemetry {

namespace {

std::optional<std::string> read_file(const char* path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::optional<std::uint64_t> number(std::string_view text) {
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// The whitespace-separated fields of `text`.
std::vector<std::string_view> fields_of(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\n' || text[i] == '\t')) ++i;
    const std::size_t start = i;
    while (i < text.size() && text[i] != ' ' && text[i] != '\n' && text[i] != '\t') ++i;
    if (i > start) out.push_back(text.substr(start, i - start));
  }
  return out;
}

prometheus::MetricFamily family(std::string name, std::string help, prometheus::MetricType type, double value) {
  prometheus::ClientMetric m;
  if (type == prometheus::MetricType::Counter) m.counter.value = value;
  else m.gauge.value = value;
  return {std::move(name), std::move(help), type, {m}};
}

}  // namespace

std::optional<ProcStat> parse_proc_stat(std::string_view text) {
  // The command ends at the last ')': it may itself contain ") ".
  const auto close = text.rfind(')');
  if (close == std::string_view::npos) return std::nullopt;
  const auto rest = fields_of(text.substr(close + 1));
  // rest[0] is field 3 (state): field N is rest[N - 3].
  auto field = [&](std::size_t n) -> std::optional<std::uint64_t> {
    if (n - 3 >= rest.size()) return std::nullopt;
    return number(rest[n - 3]);
  };
  const auto utime = field(14), stime = field(15), start = field(22), vsize = field(23), rss = field(24);
  if (!utime || !stime || !start || !vsize || !rss) return std::nullopt;
  return ProcStat{*utime, *stime, *start, *vsize, *rss};
}

std::optional<std::uint64_t> parse_boot_time(std::string_view proc_stat) {
  std::size_t line_start = 0;
  while (line_start < proc_stat.size()) {
    auto line_end = proc_stat.find('\n', line_start);
    if (line_end == std::string_view::npos) line_end = proc_stat.size();
    const auto fields = fields_of(proc_stat.substr(line_start, line_end - line_start));
    if (fields.size() == 2 && fields[0] == "btime") return number(fields[1]);
    line_start = line_end + 1;
  }
  return std::nullopt;
}

std::optional<double> parse_max_open_files(std::string_view limits) {
  constexpr std::string_view kName = "Max open files";
  const auto at = limits.find(kName);
  if (at == std::string_view::npos) return std::nullopt;
  auto line_end = limits.find('\n', at);
  if (line_end == std::string_view::npos) line_end = limits.size();
  const auto fields = fields_of(limits.substr(at + kName.size(), line_end - at - kName.size()));
  if (fields.empty()) return std::nullopt;  // soft limit, hard limit, units
  if (fields[0] == "unlimited") return std::numeric_limits<double>::infinity();
  const auto value = number(fields[0]);
  if (!value) return std::nullopt;
  return static_cast<double>(*value);
}

std::vector<prometheus::MetricFamily> ProcessMetrics::Collect() const {
  using prometheus::MetricType;
  std::vector<prometheus::MetricFamily> out;
  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  const double page = static_cast<double>(sysconf(_SC_PAGESIZE));
  const auto stat_text = read_file("/proc/self/stat");
  const auto stat = stat_text ? parse_proc_stat(*stat_text) : std::nullopt;
  if (stat && ticks > 0) {
    out.push_back(family("process_cpu_seconds_total", "Total user and system CPU time spent in seconds.",
                         MetricType::Counter, static_cast<double>(stat->utime_ticks + stat->stime_ticks) / ticks));
  }
  std::error_code ec;
  std::size_t open = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/self/fd", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec))
    ++open;
  // The directory's own descriptor, open while it is listed, is not counted.
  if (!ec && open > 0)
    out.push_back(family("process_open_fds", "Number of open file descriptors.", MetricType::Gauge,
                         static_cast<double>(open - 1)));
  const auto limits = read_file("/proc/self/limits");
  if (const auto max = limits ? parse_max_open_files(*limits) : std::nullopt)
    out.push_back(family("process_max_fds", "Maximum number of open file descriptors.", MetricType::Gauge, *max));
  if (stat) {
    out.push_back(family("process_virtual_memory_bytes", "Virtual memory size in bytes.", MetricType::Gauge,
                         static_cast<double>(stat->virtual_bytes)));
    out.push_back(family("process_resident_memory_bytes", "Resident memory size in bytes.", MetricType::Gauge,
                         static_cast<double>(stat->resident_pages) * page));
  }
  const auto system_stat = read_file("/proc/stat");
  const auto boot = system_stat ? parse_boot_time(*system_stat) : std::nullopt;
  if (stat && boot && ticks > 0) {
    out.push_back(family("process_start_time_seconds", "Start time of the process since unix epoch in seconds.",
                         MetricType::Gauge,
                         static_cast<double>(*boot) + static_cast<double>(stat->start_ticks) / ticks));
  }
  return out;
}

std::vector<prometheus::MetricFamily> BuildInfoMetric::Collect() const {
  prometheus::ClientMetric m;
  m.label = {prometheus::ClientMetric::Label{"compiler", build_.compiler},
             prometheus::ClientMetric::Label{"git_commit", build_.git_commit},
             prometheus::ClientMetric::Label{"version", build_.version}};
  m.gauge.value = 1;
  return {{"fedmetrics_build_info",
           "A metric with a constant '1' value labeled by the version and git commit fedmetrics was built from, "
           "and the compiler that built it.",
           prometheus::MetricType::Gauge,
           {m}}};
}

}  // namespace fedmetrics::telemetry
