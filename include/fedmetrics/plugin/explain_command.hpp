#pragma once
// `kubectl fedmetrics explain fhpa NAME [-n NS]`: reads the FederatedHPA
// from the control plane and prints the last decision the autoscaler loop
// kept on it (the autoscaling.fedmetrics.io/last-decision annotation,
// docs/explain.md) as a table: the metrics against their targets, the
// members' pods, the calibration and the rule that bound the count.
#include <ostream>
#include <string>

namespace fedmetrics::plugin {

struct ExplainOptions {
  // kubectl's global flags.
  std::string kubeconfig;
  std::string context;
  std::string namespace_name;
  std::string request_timeout = "0";
  std::string name;  // the FederatedHPA's
};

// The table on `out`. Exit status as kubectl's: 0, or 1 after printing the
// error line to `err`.
int run_explain(const ExplainOptions& options, std::ostream& out, std::ostream& err);

}  // namespace fedmetrics::plugin
