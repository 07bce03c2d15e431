#include "fedmetrics/plugin/top_command.hpp"

#include <chrono>
#include <cstdlib>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fedmetrics/kube/https_client.hpp"
#include "fedmetrics/kube/resource_path.hpp"
#include "fedmetrics/kube/kubectl_config.hpp"
#include "fedmetrics/clusterclient/rest_member_cluster.hpp"
#include "fedmetrics/k8s/ascii.hpp"
#include "fedmetrics/k8s/label_selector.hpp"
#include "fedmetrics/k8s/metrics_types.hpp"
#include "fedmetrics/k8s/time.hpp"
#include "fedmetrics/plugin/kubectl_messages.hpp"
#include "fedmetrics/plugin/top_printer.hpp"
#include "plugin/session.hpp"

namespace fedmetrics::plugin {

using kube::HttpReply;
using kube::HttpResult;
using nlohmann::json;

namespace {

// Each step gives its value or a kubectl error: an Error whose message is
// the line printed on stderr before exit status 1 (cmdutil.CheckErr).
k8s::Error failure(std::string line) { return k8s::Error{std::move(line)}; }

constexpr std::string_view kMetricsApi = "/apis/metrics.k8s.io/v1beta1";

std::vector<std::string> warning_values(const HttpReply& reply) {
  std::vector<std::string> values;
  for (const auto& [name, value] : reply.headers)
    if (k8s::iequals(name, "Warning")) values.push_back(value);
  return values;
}

// The metrics answer: its Warning headers printed (client-go prints them as
// the answer arrives, before any output), then its JSON, or the kubectl error.
k8s::Expected<json> metrics_answer(Session& session, const std::string& target, std::string_view resource,
                                   const std::string& name, std::ostream& err) {
  HttpResult result = session.get(target).get();
  if (auto* e = std::get_if<aggregator::MemberError>(&result)) return failure(session.connection_error(*e));
  auto& reply = std::get<HttpReply>(result);
  for (const auto& line : warning_lines(warning_values(reply))) err << line << "\n";
  if (reply.status < 200 || reply.status > 299) {
    // A list the server has no path for: kubectl's discovery would have found no metrics.k8s.io.
    if (reply.status == 404 && name.empty() && status_reason(reply.status, reply.body) == "NotFound" &&
        reply.body.find("could not find the requested resource") != std::string::npos)
      return failure("error: Metrics API not available");
    return failure(server_error_line(reply.status, reply.body, "get", resource, name));
  }
  auto doc = json::parse(reply.body, nullptr, false);
  if (doc.is_discarded()) return failure("error: the server's answer to GET " + target + " is not JSON");
  return doc;
}

// A decoded answer to GET `target`, or kubectl's line for one that is not what was asked.
template <class T>
k8s::Expected<T> decoded(k8s::Expected<T> value, const std::string& target) {
  if (!value) return failure("error: the server's answer to GET " + target + ": " + value.error().message);
  return value;
}

// The one object asked by name, as a list of one.
template <class T>
k8s::Expected<std::vector<T>> list_of_one(k8s::Expected<T> one) {
  if (!one) return one.error();
  return std::vector<T>{std::move(*one)};
}

std::string selector_query(const k8s::LabelSelector& selector) {
  std::string canonical = selector.to_string();
  return canonical.empty() ? "" : "?labelSelector=" + kube::escape_query_value(canonical);
}

std::optional<k8s::Error> top_pod(const TopOptions& o, const std::string& namespace_name,
                                  const k8s::LabelSelector& selector, SortBy sort_by, Session& session,
                                  std::ostream& out, std::ostream& err) {
  std::string target(kMetricsApi);
  // A pod by name is looked for in the namespace, even with -A (kubectl would ask /pods/NAME, which no server serves).
  if (!o.all_namespaces || !o.name.empty()) target += "/namespaces/" + kube::escape_path_segment(namespace_name);
  target += "/pods";
  if (!o.name.empty()) target += "/" + kube::escape_path_segment(o.name);
  else target += selector_query(selector);
  auto doc = metrics_answer(session, target, "pods.metrics.k8s.io", o.name, err);
  if (!doc) return doc.error();
  auto pods = decoded(
      o.name.empty() ? k8s::pod_metrics_list_from_json(*doc) : list_of_one(k8s::pod_metrics_from_json(*doc)), target);
  if (!pods) return pods.error();
  if (pods->empty()) {
    // kubectl then lists the core pods to explain why; they live in the members, so we only say it.
    if (o.all_namespaces) err << "No resources found\n";
    else err << "No resources found in " << namespace_name << " namespace.\n";
    return std::nullopt;
  }
  out << format_pod_table(std::move(*pods), {o.all_namespaces, o.containers, o.no_headers, sort_by});
  return std::nullopt;
}

std::optional<k8s::Error> top_node(const TopOptions& o, const k8s::LabelSelector& selector, SortBy sort_by,
                                   Session& session, std::ostream& out, std::ostream& err) {
  std::string target = std::string(kMetricsApi) + "/nodes";
  if (!o.name.empty()) target += "/" + kube::escape_path_segment(o.name);
  else target += selector_query(selector);
  auto doc = metrics_answer(session, target, "nodes.metrics.k8s.io", o.name, err);
  if (!doc) return doc.error();
  auto metrics = decoded(
      o.name.empty() ? k8s::node_metrics_list_from_json(*doc) : list_of_one(k8s::node_metrics_from_json(*doc)), target);
  if (!metrics) return metrics.error();
  if (metrics->empty()) return failure("error: metrics not available yet");

  // Each member's Nodes, for their allocatable: the control plane has no Node
  // objects, its cluster proxy reaches the member's own. Asked all at once.
  std::set<std::string> members;
  for (const auto& m : *metrics)
    if (auto cluster = cluster_of(m.metadata); cluster != kNoCluster) members.insert(cluster);
  std::map<std::string, std::future<HttpResult>> pending;
  for (const auto& member : members)
    pending.emplace(member, session.get("/apis/cluster.karmada.io/v1alpha1/clusters/" +
                                        kube::escape_path_segment(member) + "/proxy/api/v1/nodes"));
  MemberNodes nodes;
  for (auto& [member, answer] : pending) {
    HttpResult result = answer.get();
    std::string why;
    if (auto* e = std::get_if<aggregator::MemberError>(&result)) {
      why = e->message;
    } else if (auto& reply = std::get<HttpReply>(result); reply.status < 200 || reply.status > 299) {
      why = server_error_line(reply.status, reply.body, "get", "nodes", "");
    } else if (auto list = json::parse(reply.body, nullptr, false); list.is_discarded()) {
      why = "the answer is not JSON";
    } else if (auto decoded_nodes = node_list_from_json(list); !decoded_nodes) {
      why = decoded_nodes.error().message;
    } else {
      nodes.emplace(member, std::move(*decoded_nodes));
      continue;
    }
    nodes.emplace(member, std::nullopt);
    err << "Warning: " << member << ": its nodes could not be read through the cluster proxy, CPU(%) and MEMORY(%) "
        << "are <unknown>: " << why << "\n";
  }
  NodeTableOptions options{o.no_headers, sort_by, o.name, selector};
  out << format_node_table(std::move(*metrics), nodes, options);
  return std::nullopt;
}

// The command, once its flags are parsed: nothing, or the kubectl error.
std::optional<k8s::Error> top(const TopOptions& o, std::ostream& out, std::ostream& err) {
  auto sort_by = parse_sort_by(o.sort_by);
  if (!sort_by) return failure("error: " + sort_by.error().message);
  if (!o.name.empty() && !o.selector.empty())
    return failure(o.nodes ? "error: only one of NAME or --selector can be provided"
                           : "error: only one of NAME or selector can be provided");
  auto selector = k8s::LabelSelector::parse(o.selector);
  if (!selector) return failure("error: " + selector.error().message);

  auto opened = open_session({o.kubeconfig, o.context, o.namespace_name, o.request_timeout});
  if (!opened) return opened.error();
  auto& [session, namespace_name] = *opened;
  if (o.nodes) return top_node(o, *selector, *sort_by, *session, out, err);
  return top_pod(o, namespace_name, *selector, *sort_by, *session, out, err);
}

}  // namespace

int run_top(const TopOptions& o, std::ostream& out, std::ostream& err) {
  return run_as_kubectl([&] { return top(o, out, err); }, out, err);
}

}  // namespace fedmetrics::plugin
