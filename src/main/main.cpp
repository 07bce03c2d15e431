// The composition root: the only place where the modules meet. Parses the
// command line, builds the pieces and wires them together.
#include <cstdlib>
#include <iostream>

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include <fstream>

#include "fedmetrics/sim/sim_command.hpp"
#include "main/build_identity.hpp"  // generated (CMakeLists.txt)
#include "main/cron_command.hpp"
#include "main/kubectl_plugin.hpp"
#include "main/serve_command.hpp"
#include "main/simulate_command.hpp"

int main(int argc, char** argv) {
  // Started as kubectl-fedmetrics (the link kubectl finds on PATH): the plugin.
  if (argc > 0 && fedmetrics::cli::invoked_as_kubectl_plugin(argv[0]))
    return fedmetrics::cli::run_kubectl_plugin(argc, argv, std::cout, std::cerr);

  CLI::App app{
      "fedmetrics: the Kubernetes metrics APIs (metrics.k8s.io, custom.metrics.k8s.io,\n"
      "external.metrics.k8s.io) served across every member cluster of a Karmada federation."};
  app.require_subcommand(1);
  app.set_version_flag("--version", "fedmetrics " FEDMETRICS_GIT_VERSION);

  fedmetrics::cli::ServeOptions serve_options;
  CLI::App* serve = fedmetrics::cli::add_serve_command(app, serve_options);

  fedmetrics::sim::SimOptions sim_options;
  CLI::App* sim = fedmetrics::sim::add_sim_command(app, sim_options);

  fedmetrics::cli::SimulateOptions simulate_options;
  CLI::App* simulate = fedmetrics::cli::add_simulate_command(app, simulate_options);

  fedmetrics::cli::CronNextOptions cron_next_options;
  CLI::App* cron_next = fedmetrics::cli::add_cron_command(app, cron_next_options);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11 prints help for --help (exit 0) and the error with a hint otherwise.
    int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }

  try {
    if (serve->parsed()) return fedmetrics::cli::run_serve(serve_options);
    if (sim->parsed()) return fedmetrics::sim::run_sim(sim_options);
    if (cron_next->parsed()) return fedmetrics::cli::run_cron_next(cron_next_options, std::cout, std::cerr);
    if (simulate->parsed()) {
      const std::string& file = simulate_options.scenario_file;
      if (file == "-") return fedmetrics::cli::run_simulate_command(simulate_options, std::cin, std::cout, std::cerr);
      std::ifstream in(file);
      if (!in) {
        std::cerr << "fedmetrics simulate: cannot read " << file << "\n";
        return 2;
      }
      return fedmetrics::cli::run_simulate_command(simulate_options, in, std::cout, std::cerr);
    }
  } catch (const std::exception& e) {
    // Start-up and configuration failures: a clear message and a non-zero exit.
    std::cerr << "fedmetrics: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
