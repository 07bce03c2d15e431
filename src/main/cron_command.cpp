#include "main/cron_command.hpp"

#include <chrono>
#include <ostream>

#include <CLI/CLI.hpp>

#include "fedmetrics/cron/schedule.hpp"
#include "fedmetrics/k8s/time.hpp"

namespace fedmetrics::cli {

CLI::App* add_cron_command(CLI::App& app, CronNextOptions& options) {
  CLI::App* cron = app.add_subcommand("cron", "CronFederatedHPA schedules.");
  cron->require_subcommand(1);
  CLI::App* next = cron->add_subcommand(
      "next",
      "Print the next firing times of a schedule, one RFC 3339 time per line with the zone's UTC offset.\n"
      "The dialect of Kubernetes CronJob: five fields (minute hour day-of-month month day-of-week), or\n"
      "@yearly @monthly @weekly @daily @hourly, or \"@every <duration>\" (counted from --from), with an\n"
      "optional CRON_TZ=<zone> or TZ=<zone> prefix. Exit status 2 with the reason for a bad schedule or zone,\n"
      "or for a schedule that never fires (e.g. \"0 0 31 2 *\", 31 February).");
  next->add_option("SCHEDULE", options.schedule, "The schedule, quoted, e.g. \"30 8 * * 1-5\"")->required();
  next->add_option("--time-zone", options.time_zone,
                   "IANA time zone the schedule is read in, e.g. Europe/Berlin; a CRON_TZ= prefix wins")
      ->capture_default_str();
  next->add_option("--from", options.from,
                   "Print firing times strictly after this RFC 3339 time (default: now), e.g. 2026-03-28T00:00:00Z");
  next->add_option("--count", options.count, "How many firing times to print")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{1}, std::size_t{100000}));
  return next;
}

int run_cron_next(const CronNextOptions& options, std::ostream& out, std::ostream& err) {
  auto schedule = cron::Schedule::parse(options.schedule, options.time_zone);
  if (!schedule) {
    err << "fedmetrics cron next: " << schedule.error().message << "\n";
    return 2;
  }
  k8s::Timestamp from = std::chrono::time_point_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now());
  if (!options.from.empty()) {
    auto parsed = k8s::parse_time(options.from);
    if (!parsed) {
      err << "fedmetrics cron next: --from: " << parsed.error().message << "\n";
      return 2;
    }
    from = *parsed;
  }
  // An @every schedule counts from --from, as a rule from its first scheduling.
  k8s::Timestamp t = from;
  for (std::size_t i = 0; i < options.count; ++i) {
    auto fire = schedule->next(t, from);
    if (!fire && i == 0) {
      // Five fields repeat at the latest every 28 years (leap days by day of
      // week), so nothing within search_years means never ("0 0 31 2 *"): as
      // useless to apply as a schedule that does not parse.
      err << "fedmetrics cron next: schedule \"" << options.schedule << "\" never fires: no time matches it within "
          << cron::search_years << " years after " << schedule->format(t) << "\n";
      return 2;
    }
    if (!fire) {
      err << "fedmetrics cron next: no further firing time within " << cron::search_years << " years after "
          << schedule->format(t) << "\n";
      break;
    }
    out << schedule->format(*fire) << "\n";
    t = *fire;
  }
  return 0;
}

}  // namespace fedmetrics::cli
