#pragma once
// `kubectl fedmetrics top pod|node` once its flags are parsed: reads the
// kubeconfig as kubectl does, asks the control plane's metrics.k8s.io
// (fedmetrics behind its aggregation layer) and prints kubectl top's table
// with the member of each row, and for nodes the CPU and memory shares of
// each member's node allocatable, read through the Karmada cluster proxy.
// A one-shot command line program: its thread waits for each answer.
#include <ostream>
#include <string>

namespace fedmetrics::plugin {

// What the command line asked, as kubectl's flags name it.
struct TopOptions {
  bool nodes = false;  // top node; else top pod
  // kubectl's global flags.
  std::string kubeconfig;
  std::string context;
  std::string namespace_name;
  std::string request_timeout = "0";
  // top pod and top node.
  std::string name;
  std::string selector;
  std::string sort_by;
  bool no_headers = false;
  // top pod only.
  bool all_namespaces = false;
  bool containers = false;
};

// The table on `out`, the server's warnings on `err`. Exit status as
// kubectl's: 0, or 1 after printing the error line to `err` (cmdutil.CheckErr).
int run_top(const TopOptions& options, std::ostream& out, std::ostream& err);

}  // namespace fedmetrics::plugin
