#include "plugin/session.hpp"

#include <cstdlib>
#include <string>
#include <vector>

#include "fedmetrics/k8s/time.hpp"

namespace fedmetrics::plugin {

namespace {

// The kubeconfig files kubectl reads: --kubeconfig alone, else the
// KUBECONFIG list (merged), else ~/.kube/config.
std::vector<std::string> kubeconfig_paths(const GlobalOptions& o) {
  if (!o.kubeconfig.empty()) return {o.kubeconfig};
  if (const char* list = std::getenv("KUBECONFIG"); list != nullptr && *list != '\0') {
    auto paths = kube::split_kubeconfig_path_list(list);
    if (!paths.empty()) return paths;
  }
  const char* home = std::getenv("HOME");
  return {std::string(home != nullptr ? home : "") + "/.kube/config"};
}

}  // namespace

k8s::Expected<OpenedSession> open_session(const GlobalOptions& o) {
  std::chrono::nanoseconds timeout{0};
  if (o.request_timeout != "0") {
    auto parsed = k8s::parse_duration(o.request_timeout);
    if (!parsed || parsed->count() < 0)
      return k8s::Error{"error: invalid argument \"" + o.request_timeout + "\" for \"--request-timeout\" flag"};
    timeout = *parsed;
  }
  // No timeout is a day: every request still has a deadline for the client.
  const std::chrono::steady_clock::duration per_request =
      (timeout.count() > 0 ? std::chrono::duration_cast<std::chrono::steady_clock::duration>(timeout)
                           : std::chrono::hours(24));

  auto context = kube::load_kubectl_context(kubeconfig_paths(o), o.context);
  if (!context) return k8s::Error{"error: " + context.error().message};
  std::string namespace_name = !o.namespace_name.empty()          ? o.namespace_name
                               : !context->namespace_name.empty() ? context->namespace_name
                                                                  : "default";
  auto session = Session::open(std::move(context->endpoint), per_request);
  if (!session) return session.error();
  return OpenedSession{std::move(*session), std::move(namespace_name)};
}

int run_as_kubectl(const std::function<std::optional<k8s::Error>()>& command, std::ostream& out, std::ostream& err) {
  std::optional<k8s::Error> error;
  try {
    error = command();
  } catch (const std::exception& e) {
    error = k8s::Error{std::string("error: ") + e.what()};
  }
  if (!error) return 0;
  out.flush();
  err << error->message << "\n";
  return 1;
}

}  // namespace fedmetrics::plugin
