#include "main/kubectl_plugin.hpp"

#include <filesystem>

#include <CLI/CLI.hpp>

#include "fedmetrics/plugin/explain_command.hpp"
#include "fedmetrics/plugin/top_command.hpp"
#include "main/build_identity.hpp"  // generated (CMakeLists.txt)

namespace fedmetrics::cli {

bool invoked_as_kubectl_plugin(std::string_view argv0) {
  return std::filesystem::path(argv0).filename() == kPluginName;
}

namespace {

// kubectl's "See 'kubectl top pod --help' for usage." names the command that failed.
std::string command_path(CLI::App& app) {
  std::string path = "kubectl fedmetrics";
  for (CLI::App* at = &app;;) {
    auto chosen = at->get_subcommands();
    if (chosen.empty()) break;
    at = chosen.front();
    path += " " + at->get_name();
  }
  return path;
}

}  // namespace

int run_kubectl_plugin(int argc, char** argv, std::ostream& out, std::ostream& err) {
  plugin::TopOptions o;
  CLI::App app{
      "Display resource (CPU/memory) usage across the member clusters of a Karmada federation,\n"
      "as kubectl top does, with the member cluster each row comes from. Asks the metrics.k8s.io\n"
      "API of the server in the kubeconfig (a Karmada control plane with fedmetrics behind its\n"
      "aggregation layer). `explain fhpa NAME` prints why the autoscaler last scaled a FederatedHPA.\n"
      "Installed as kubectl-fedmetrics on PATH, run as `kubectl fedmetrics`.",
      "kubectl fedmetrics"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "kubectl-fedmetrics " FEDMETRICS_GIT_VERSION);
  app.add_option("--kubeconfig", o.kubeconfig,
                 "Path to the kubeconfig file to use. Without it, the files of KUBECONFIG (a colon-separated\n"
                 "list, merged as kubectl merges them), else ~/.kube/config.");
  app.add_option("--context", o.context, "The name of the kubeconfig context to use (default: its current-context).");
  app.add_option("-n,--namespace", o.namespace_name,
                 "The namespace of the pods or the FederatedHPA (default: the context's, else \"default\").");
  app.add_option("--request-timeout", o.request_timeout,
                 "How long to wait for each server request before giving up, with a unit (1s, 2m, 3h);\n"
                 "0 means no timeout.")
      ->capture_default_str();

  // Like kubectl's global flags, ours may come before or after the command; its help names them.
  const std::string global_flags =
      "Global options (before or after the command):\n"
      "  --kubeconfig FILE           the kubeconfig (default: KUBECONFIG's files, else ~/.kube/config)\n"
      "  --context NAME              its context (default: its current-context)\n"
      "  -n,--namespace NAME         the namespace (default: the context's, else default)\n"
      "  --request-timeout DURATION  per request, with a unit (1s, 2m); 0 (default) for none";

  CLI::App* top =
      app.add_subcommand("top", "Display resource (CPU/memory) usage of pods or nodes in every member cluster.");
  top->require_subcommand(1);
  top->fallthrough();
  top->footer(global_flags);

  CLI::App* pod =
      top->add_subcommand("pod",
                          "Display resource (CPU/memory) usage of pods across the member clusters: kubectl top pod's\n"
                          "columns and a CLUSTER column naming the member each pod runs in.\n"
                          "Examples:\n"
                          "  kubectl fedmetrics top pod -A\n"
                          "  kubectl fedmetrics top pod -n NAMESPACE -l app=nginx --sort-by cpu\n"
                          "  kubectl fedmetrics top pod -l fedmetrics/cluster=member1   # one member's pods\n"
                          "  kubectl fedmetrics top pod POD_NAME --containers");
  pod->alias("pods");
  pod->alias("po");
  pod->fallthrough();
  pod->footer(global_flags);
  pod->add_option("NAME", o.name, "A pod's name (in the namespace); without it, every pod the selector matches.");
  pod->add_flag("-A,--all-namespaces", o.all_namespaces,
                "List the pods of every namespace (the namespace is ignored).");
  pod->add_option("-l,--selector", o.selector,
                  "Selector (label query) to filter on, supports '=', '==', '!=', 'in', 'notin' and 'exists'\n"
                  "(e.g. -l key1=value1,key2=value2). fedmetrics/cluster=MEMBER selects members.");
  pod->add_flag("--containers", o.containers, "Print the usage of each container of a pod.");
  pod->add_option("--sort-by", o.sort_by, "Sort by cpu or memory (largest first) instead of by name.");
  pod->add_flag("--no-headers", o.no_headers, "Print the rows without the header line.");

  CLI::App* node = top->add_subcommand(
      "node",
      "Display resource (CPU/memory) usage of nodes across the member clusters: kubectl top node's\n"
      "columns and a CLUSTER column; CPU(%) and MEMORY(%) are shares of each node's allocatable,\n"
      "read from the member's own Node objects through the Karmada cluster proxy (a member whose\n"
      "nodes cannot be read prints <unknown> there, with a warning).\n"
      "Examples:\n"
      "  kubectl fedmetrics top node\n"
      "  kubectl fedmetrics top node -l fedmetrics/cluster=member2 --sort-by memory\n"
      "  kubectl fedmetrics top node NODE_NAME");
  node->alias("nodes");
  node->alias("no");
  node->fallthrough();
  node->footer(global_flags);
  node->add_option("NAME", o.name, "A node's name; without it, every node the selector matches.");
  node->add_option("-l,--selector", o.selector,
                   "Selector (label query) to filter on, supports '=', '==', '!=', 'in', 'notin' and 'exists'\n"
                   "(e.g. -l key1=value1,key2=value2). fedmetrics/cluster=MEMBER selects members.");
  node->add_option("--sort-by", o.sort_by, "Sort by cpu or memory (largest first) instead of by name.");
  node->add_flag("--no-headers", o.no_headers, "Print the rows without the header line.");

  CLI::App* explain = app.add_subcommand(
      "explain", "Explain what the built-in autoscaler decided for a FederatedHPA at its last sync.");
  explain->require_subcommand(1);
  explain->fallthrough();
  explain->footer(global_flags);
  std::string fhpa_name;
  CLI::App* fhpa = explain->add_subcommand(
      "fhpa",
      "Print the last decision of a FederatedHPA's autoscaler (fedmetrics serve --enable-autoscaler):\n"
      "each metric against its target and the replicas it proposed, per member the pods counted,\n"
      "missing, unready and ignored and the member's share of the metric, the calibration, and the\n"
      "rule that bound the count (tolerance, a stabilization window, a scaling policy, min/max).\n"
      "Examples:\n"
      "  kubectl fedmetrics explain fhpa nginx\n"
      "  kubectl fedmetrics explain fhpa web -n shop");
  fhpa->alias("federatedhpa");
  fhpa->alias("federatedhpas");
  fhpa->fallthrough();
  fhpa->footer(global_flags);
  fhpa->add_option("NAME", fhpa_name, "The FederatedHPA's name (in the namespace).")->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e, out, err);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e, out, err);
  } catch (const CLI::ParseError& e) {
    // kubectl's usage errors: the error, where to find help, status 1.
    err << "error: " << e.what() << "\nSee '" << command_path(app) << " --help' for usage.\n";
    return 1;
  }

  if (explain->parsed()) {
    return plugin::run_explain({o.kubeconfig, o.context, o.namespace_name, o.request_timeout, fhpa_name}, out, err);
  }
  o.nodes = node->parsed();
  return plugin::run_top(o, out, err);
}

}  // namespace fedmetrics::cli
