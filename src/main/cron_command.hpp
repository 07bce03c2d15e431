#pragma once
// `fedmetrics cron next`: the next firing times of a schedule, to check it
// before a CronFederatedHPA carries it (docs/cron.md, "Check a schedule").
#include <cstddef>
#include <iosfwd>
#include <string>

namespace CLI {
class App;
}

namespace fedmetrics::cli {

struct CronNextOptions {
  std::string schedule;
  std::string time_zone = "UTC";  // the default of --cron-default-time-zone
  std::string from;               // RFC 3339; empty: now
  std::size_t count = 5;
};

// Adds `cron` with its subcommand `next`; returns `next`.
CLI::App* add_cron_command(CLI::App& app, CronNextOptions& options);
// Prints one RFC 3339 time per line (the zone's offset) to `out`; exit status
// 2 with the parse error on `err` for a bad schedule, zone or --from time.
int run_cron_next(const CronNextOptions& options, std::ostream& out, std::ostream& err);

}  // namespace fedmetrics::cli
