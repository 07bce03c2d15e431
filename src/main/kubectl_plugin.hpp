#pragma once
// `kubectl fedmetrics top pod|node`: the program installed as the kubectl
// plugin `kubectl-fedmetrics` (a link to this binary; main dispatches on the
// name it was started under). Its flags, as kubectl's; the command itself is
// the plugin module's (fedmetrics/plugin/top_command.hpp).
#include <ostream>
#include <string_view>

namespace fedmetrics::cli {

// The name kubectl finds on PATH for `kubectl fedmetrics`.
inline constexpr std::string_view kPluginName = "kubectl-fedmetrics";

// Whether argv[0] is the plugin's name (its basename, any directory).
bool invoked_as_kubectl_plugin(std::string_view argv0);

// Exit status as kubectl's: 0, or 1 after printing the error to `err`.
int run_kubectl_plugin(int argc, char** argv, std::ostream& out, std::ostream& err);

}  // namespace fedmetrics::cli
