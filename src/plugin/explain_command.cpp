#include "fedmetrics/plugin/explain_command.hpp"

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "fedmetrics/autoscaler/decision.hpp"
#include "fedmetrics/kube/resource_path.hpp"
#include "fedmetrics/plugin/kubectl_messages.hpp"
#include "plugin/session.hpp"

namespace fedmetrics::plugin {

namespace {

using nlohmann::json;

constexpr std::string_view kResource = "federatedhpas.autoscaling.karmada.io";

k8s::Error failure(std::string line) { return k8s::Error{std::move(line)}; }

// The FederatedHPA as stored, or kubectl's error line.
k8s::Expected<json> get_federated_hpa(Session& session, const std::string& namespace_name, const std::string& name) {
  const std::string target = "/apis/autoscaling.karmada.io/v1alpha1/namespaces/" +
                             kube::escape_path_segment(namespace_name) + "/federatedhpas/" +
                             kube::escape_path_segment(name);
  kube::HttpResult result = session.get(target).get();
  if (auto* e = std::get_if<aggregator::MemberError>(&result)) return failure(session.connection_error(*e));
  auto& reply = std::get<kube::HttpReply>(result);
  if (reply.status < 200 || reply.status > 299)
    return failure(server_error_line(reply.status, reply.body, "get", kResource, name));
  auto doc = json::parse(reply.body, nullptr, false);
  if (doc.is_discarded() || !doc.is_object())
    return failure("error: the server's answer to GET " + target + " is not a JSON object");
  return doc;
}

std::optional<k8s::Error> explain(const ExplainOptions& o, std::ostream& out) {
  if (o.name.empty()) return failure("error: a FederatedHPA's name is required: kubectl fedmetrics explain fhpa NAME");
  auto opened = open_session({o.kubeconfig, o.context, o.namespace_name, o.request_timeout});
  if (!opened) return opened.error();
  const std::string& ns = opened->namespace_name;
  auto object = get_federated_hpa(*opened->session, ns, o.name);
  if (!object) return object.error();
  const std::string which = "federatedhpa " + ns + "/" + o.name;
  const auto& annotations = (*object)["metadata"].value("annotations", json::object());
  const auto found =
      annotations.is_object() ? annotations.find(std::string(autoscaler::kDecisionAnnotation)) : annotations.end();
  if (!annotations.is_object() || found == annotations.end() || !found->is_string()) {
    return failure("error: " + which +
                   " has no decision yet: the autoscaler loop (fedmetrics serve --enable-autoscaler) keeps one "
                   "on it from its first sync that computes the metrics");
  }
  auto document = json::parse(found->get<std::string>(), nullptr, false);
  auto decision = document.is_discarded() ? k8s::Expected<autoscaler::Decision>(k8s::Error{"not JSON"})
                                          : autoscaler::decision_from_json(document);
  if (!decision) {
    return failure("error: the annotation " + std::string(autoscaler::kDecisionAnnotation) + " of " + which +
                   " is not a decision: " + decision.error().message);
  }
  out << "FederatedHPA: " << ns << "/" << o.name << "\n" << autoscaler::format_decision(*decision);
  return std::nullopt;
}

}  // namespace

int run_explain(const ExplainOptions& o, std::ostream& out, std::ostream& err) {
  return run_as_kubectl([&] { return explain(o, out); }, out, err);
}

}  // namespace fedmetrics::plugin
