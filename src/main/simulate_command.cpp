#include "main/simulate_command.hpp"

#include <filesystem>
#include <fstream>
#include <istream>
#include <ostream>

#include <CLI/CLI.hpp>

#include "fedmetrics/autoscaler/simulate.hpp"
#include "fedmetrics/autoscaler/simulate_table.hpp"
#include "fedmetrics/plot/render.hpp"
#include "fedmetrics/plot/replay_chart.hpp"

namespace fedmetrics::cli {

CLI::App* add_simulate_command(CLI::App& app, SimulateOptions& options) {
  CLI::App* simulate = app.add_subcommand(
      "simulate",
      "Replay what the built-in autoscaler decides for one FederatedHPA, step by step, on a scenario\n"
      "file (pods and metrics given instead of read from member clusters). Prints one JSON line per\n"
      "step, or with --output table one aligned row per step. With \"mode\": \"distributed\" it replays\n"
      "the distributed-mode distributor instead: the members' own HPA states are given, the member\n"
      "shares, moves and conditions are printed. --plot draws the replay to an SVG or PNG file.\n"
      "Exit status 2 for a file that breaks the scenario format, naming the field.");
  simulate->add_option("SCENARIO", options.scenario_file, "Scenario file (JSON, see examples/scenarios/); - for stdin.")
      ->required();
  simulate
      ->add_option("-o,--output", options.output,
                   "json: one JSON object per step (for scripts); table: one aligned row per step (time, replicas "
                   "per member, each metric against its target, the deciding condition)")
      ->capture_default_str()
      ->check(CLI::IsMember({"json", "table"}));
  simulate->add_flag("--explain", options.explain,
                     "Print how each step decided instead: each metric against its target and its proposal, per "
                     "member the pods counted, missing, unready and ignored, the calibration and the rule that bound "
                     "the count, as `kubectl fedmetrics explain fhpa` prints a live decision");
  simulate->add_option("--plot", options.plot,
                       "Also draw the replay to this file, .svg or .png by its extension: replicas over time stacked "
                       "per member, min/max, rescales, each metric against its target");
  return simulate;
}

namespace {

std::string plot_title(const autoscaler::Replay& replay, const std::string& scenario_file) {
  const std::string file =
      scenario_file == "-" ? std::string("stdin") : std::filesystem::path(scenario_file).filename().string();
  return replay.name.empty() ? file : "FederatedHPA " + replay.name + " (" + file + ")";
}

}  // namespace

int run_simulate_command(const SimulateOptions& options, std::istream& in, std::ostream& out, std::ostream& err) {
  std::optional<plot::ImageFormat> format;
  if (!options.plot.empty()) {
    format = plot::image_format_for(options.plot);
    if (!format) {
      err << "fedmetrics simulate: " << plot::unknown_format_message(options.plot) << "\n";
      return 2;
    }
    if (!plot::rendering_available()) {  // before the replay: nothing printed for a plot that cannot be
      err << "fedmetrics simulate: " << plot::render({}, *format, options.plot).error().message << "\n";
      return 1;
    }
  }
  auto replay = autoscaler::replay_scenario(in, err);
  if (!replay) {
    err << replay.error().message << "\n";
    return 2;
  }
  if (options.explain) {
    out << autoscaler::format_explanations(*replay) << std::flush;
  } else if (options.output == "table") {
    out << autoscaler::format_table(*replay) << std::flush;
  } else {
    autoscaler::write_json_lines(*replay, out);
  }
  if (format) {
    auto rendered =
        plot::render(plot::chart_for(*replay, plot_title(*replay, options.scenario_file)), *format, options.plot);
    if (!rendered) {
      err << "fedmetrics simulate: " << rendered.error().message << "\n";
      return 1;
    }
  }
  return 0;
}

}  // namespace fedmetrics::cli
