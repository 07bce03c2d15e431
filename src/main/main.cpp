// The composition root: the only place where the modules meet. Parses the
// command line, builds the pieces and wires them together.
#include <cstdlib>
#include <iostream>

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include "main/serve_command.hpp"

int main(int argc, char** argv) {
  CLI::App app{"fedmetrics: the Kubernetes metrics APIs (metrics.k8s.io, custom.metrics.k8s.io,\n"
               "external.metrics.k8s.io) served across every member cluster of a Karmada federation."};
  app.require_subcommand(1);
  app.set_version_flag("--version", "fedmetrics v0.1.0");

  fedmetrics::cli::ServeOptions serve_options;
  CLI::App* serve = fedmetrics::cli::add_serve_command(app, serve_options);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11 prints help for --help (exit 0) and the error with a hint otherwise.
    int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }

  try {
    if (serve->parsed()) return fedmetrics::cli::run_serve(serve_options);
  } catch (const std::exception& e) {
    // Start-up and configuration failures: a clear message and a non-zero exit.
    std::cerr << "fedmetrics: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
