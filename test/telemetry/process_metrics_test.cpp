// The process metrics every Prometheus client exports, from /proc, and
// fedmetrics_build_info: the parsers on proc(5)'s formats, then the real
// process.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <map>

#include <prometheus/metric_family.h>

#include "fedmetrics/telemetry/process_metrics.hpp"

namespace fedmetrics::telemetry {
namespace {

TEST_CASE("process metrics: /proc/<pid>/stat, a command with spaces and parentheses") {
  // Fields as proc(5) numbers them: 14 utime, 15 stime, 22 starttime, 23 vsize, 24 rss.
  const std::string line =
      "4242 (fed metrics) (x)) S 1 4242 4242 0 -1 4194560 2000 0 0 0 "
      "150 25 0 0 20 0 9 0 "
      "123456 987654321 3210 18446744073709551615 1 1 0 0 0 0 0 4096 0 0 0 0 17 1 0 0 0 0 0\n";
  const auto stat = parse_proc_stat(line);
  REQUIRE(stat);
  CHECK(stat->utime_ticks == 150);
  CHECK(stat->stime_ticks == 25);
  CHECK(stat->start_ticks == 123456);
  CHECK(stat->virtual_bytes == 987654321);
  CHECK(stat->resident_pages == 3210);
  CHECK_FALSE(parse_proc_stat("4242 (truncated) S 1 2 3"));
  CHECK_FALSE(parse_proc_stat("no parenthesis at all"));
  CHECK_FALSE(parse_proc_stat("1 (x) S 1 1 1 0 -1 0 0 0 0 0 x 25 0 0 20 0 9 0 1 2 3"));
}

TEST_CASE("process metrics: btime of /proc/stat, Max open files of /proc/<pid>/limits") {
  CHECK(parse_boot_time("cpu  1 2 3\ncpu0 1 2 3\nintr 5\nctxt 77\nbtime 1700000000\nprocesses 12\n") ==
        std::optional<std::uint64_t>(1700000000));
  CHECK_FALSE(parse_boot_time("cpu 1 2 3\nctxt 77\n"));
  const std::string limits =
      "Limit                     Soft Limit           Hard Limit           Units     \n"
      "Max cpu time              unlimited            unlimited            seconds   \n"
      "Max open files            1024                 1048576              files     \n"
      "Max locked memory         8388608              8388608              bytes     \n";
  CHECK(parse_max_open_files(limits) == std::optional<double>(1024));
  const auto unlimited =
      parse_max_open_files("Max open files            unlimited            unlimited            files\n");
  REQUIRE(unlimited);
  CHECK(std::isinf(*unlimited));
  CHECK_FALSE(parse_max_open_files("Max cpu time unlimited unlimited seconds\n"));
}

TEST_CASE("process metrics: this process, as client_golang names them") {
  std::map<std::string, double> values;
  std::map<std::string, prometheus::MetricType> types;
  for (const auto& family : ProcessMetrics().Collect()) {
    REQUIRE(family.metric.size() == 1);
    types[family.name] = family.type;
    values[family.name] =
        family.type == prometheus::MetricType::Counter ? family.metric[0].counter.value : family.metric[0].gauge.value;
    CHECK_FALSE(family.help.empty());
  }
  REQUIRE(values.size() == 6);
  CHECK(types.at("process_cpu_seconds_total") == prometheus::MetricType::Counter);
  CHECK(values.at("process_cpu_seconds_total") >= 0);
  CHECK(values.at("process_resident_memory_bytes") > 1024 * 1024);
  CHECK(values.at("process_virtual_memory_bytes") >= values.at("process_resident_memory_bytes"));
  CHECK(values.at("process_open_fds") >= 3);  // stdin, stdout, stderr at least
  CHECK(values.at("process_max_fds") >= values.at("process_open_fds"));
  // Started within the last day, not in the future.
  const double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  CHECK(values.at("process_start_time_seconds") <= now + 1);
  CHECK(values.at("process_start_time_seconds") > now - 86400);
  // One descriptor more is one more open fd.
  const double before = values.at("process_open_fds");
  const int fd = dup(1);
  REQUIRE(fd >= 0);
  double after = 0;
  for (const auto& family : ProcessMetrics().Collect())
    if (family.name == "process_open_fds") after = family.metric[0].gauge.value;
  close(fd);
  CHECK(after == before + 1);
}

TEST_CASE("process metrics: fedmetrics_build_info is 1, labelled with the build") {
  BuildLabels build;
  build.version = "v0.1.0";
  build.git_commit = "0123abcd";
  build.compiler = "GNU 12.2.0";
  const auto families = BuildInfoMetric(build).Collect();
  REQUIRE(families.size() == 1);
  CHECK(families[0].name == "fedmetrics_build_info");
  CHECK(families[0].type == prometheus::MetricType::Gauge);
  REQUIRE(families[0].metric.size() == 1);
  CHECK(families[0].metric[0].gauge.value == 1);
  std::map<std::string, std::string> labels;
  for (const auto& l : families[0].metric[0].label) labels[l.name] = l.value;
  CHECK(labels == std::map<std::string, std::string>{
                      {"compiler", "GNU 12.2.0"}, {"git_commit", "0123abcd"}, {"version", "v0.1.0"}});
}

}  // namespace
}  // namespace fedmetrics::telemetry
