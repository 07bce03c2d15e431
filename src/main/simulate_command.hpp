#pragma once
// `fedmetrics simulate`: a scenario replayed (autoscaler/simulate.hpp),
// printed as JSON lines or as a table, and optionally plotted
// (plot/replay_chart.hpp drawn by plot/render.hpp).
#include <iosfwd>
#include <string>

namespace CLI {
class App;
}

namespace fedmetrics::cli {

struct SimulateOptions {
  std::string scenario_file;    // "-": stdin
  std::string output = "json";  // json | table
  std::string plot;             // an .svg or .png file to draw; empty: none
  bool explain = false;         // each step's decision instead of the lines or the table
};

CLI::App* add_simulate_command(CLI::App& app, SimulateOptions& options);

// Exit status 0 when every step was evaluated (and the plot written); 2 for
// a file that breaks the scenario format or a --plot file that is neither
// .svg nor .png (nothing on `out`, no file written); 1 when the plot cannot
// be drawn (a program built without cairo says so before replaying) or written.
int run_simulate_command(const SimulateOptions& options, std::istream& in, std::ostream& out, std::ostream& err);

}  // namespace fedmetrics::cli
