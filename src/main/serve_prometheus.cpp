// `serve`'s Prometheus members: the flags that say where each member's
// Prometheus is and which rules file to read (docs/prometheus.md), turned
// into the MemberSet's serve_as (a PrometheusMemberCluster around each
// member that has one) and the background relist.
#include <algorithm>
#include <map>
#include <stdexcept>

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include "fedmetrics/clusterclient/prometheus_member_cluster.hpp"
#include "fedmetrics/clusterclient/prometheus_relister.hpp"
#include "fedmetrics/promsource/rules.hpp"
#include "main/serve_wiring.hpp"

namespace fedmetrics::cli {

void add_prometheus_flags(CLI::App* serve, ServeOptions& o) {
  auto* rules =
      serve
          ->add_option(
              "--prometheus-rules", o.prometheus_rules,
              "prometheus-adapter's configuration file (rules, externalRules, resourceRules), read unchanged:\n"
              "the custom, external and (with resourceRules) resource metrics of the members with a Prometheus\n"
              "(--prometheus-service, --member-prometheus, or with --karmada-kubeconfig the Cluster annotation\n"
              "metrics.fedmetrics.io/prometheus-url) are answered from it by PromQL, as prometheus-adapter\n"
              "would answer.")
          ->check(CLI::ExistingFile);
  serve
      ->add_option("--prometheus-service", o.prometheus_service,
                   "NAMESPACE/NAME:PORT of the Service of every member's Prometheus (monitoring/prometheus-k8s:9090),\n"
                   "reached through the member API server's service proxy with the member's own credentials.")
      ->needs(rules);
  serve
      ->add_option("--member-prometheus", o.member_prometheus,
                   "NAME=URL: member NAME's Prometheus at URL (http:// or https://), reached directly; overrides\n"
                   "--prometheus-service for that member. Repeatable.")
      ->needs(rules);
  serve
      ->add_option("--metrics-relist-interval", o.metrics_relist_interval,
                   "How often the series of each member's Prometheus are listed again to learn which metrics exist,\n"
                   "and how far back they are looked for (prometheus-adapter's flag of the same name; Go duration).")
      ->capture_default_str();
}

namespace {

// "monitoring/prometheus-k8s:9090" -> the service proxy path of the member API server.
std::string service_proxy_path(const std::string& flag) {
  const auto slash = flag.find('/');
  const auto colon = flag.rfind(':');
  if (slash == std::string::npos || slash == 0 || colon == std::string::npos || colon < slash + 2 ||
      colon + 1 == flag.size() || flag.find('/', slash + 1) != std::string::npos)
    throw std::runtime_error("--prometheus-service: \"" + flag +
                             "\" is not NAMESPACE/NAME:PORT (for example monitoring/prometheus-k8s:9090)");
  return "/api/v1/namespaces/" + flag.substr(0, slash) + "/services/" + flag.substr(slash + 1) + "/proxy";
}

std::map<std::string, std::string> member_prometheus_urls(const std::vector<std::string>& flags) {
  std::map<std::string, std::string> urls;
  for (const auto& f : flags) {
    const auto eq = f.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == f.size())
      throw std::runtime_error("--member-prometheus: \"" + f + "\" is not NAME=URL");
    const std::string url = f.substr(eq + 1);
    if (url.rfind("http://", 0) != 0 && url.rfind("https://", 0) != 0)
      throw std::runtime_error("--member-prometheus: \"" + f + "\": the URL must be http:// or https://");
    if (!urls.emplace(f.substr(0, eq), url).second)
      throw std::runtime_error("--member-prometheus: member " + f.substr(0, eq) + " is given twice");
  }
  return urls;
}

}  // namespace

PrometheusMembers prometheus_members(const ServeOptions& o, kube::ClientRuntime& runtime) {
  PrometheusMembers out;
  if (o.prometheus_rules.empty()) return out;
  if (o.prometheus_service.empty() && o.member_prometheus.empty() && o.karmada_kubeconfig.empty())
    throw std::runtime_error(
        "--prometheus-rules: give --prometheus-service or --member-prometheus to say where the members' "
        "Prometheus servers are (or --karmada-kubeconfig, whose Clusters name theirs)");
  out.relist_interval = duration_flag("--metrics-relist-interval", o.metrics_relist_interval);
  if (out.relist_interval.count() == 0) throw std::runtime_error("--metrics-relist-interval: must be more than 0s");
  auto config = promsource::read_rules_file(o.prometheus_rules);
  if (!config.ok()) throw std::runtime_error("--prometheus-rules: " + config.error().message);
  auto compiled = promsource::compile_rules(*config, o.prometheus_rules);
  if (!compiled.ok()) throw std::runtime_error("--prometheus-rules: " + compiled.error().message);
  clusterclient::PrometheusOptions options;
  options.rules = std::make_shared<const promsource::CompiledRules>(std::move(*compiled));
  options.relist_interval = out.relist_interval;
  const std::string proxy_path = o.prometheus_service.empty() ? "" : service_proxy_path(o.prometheus_service);
  auto urls = member_prometheus_urls(o.member_prometheus);
  kube::ClientOptions client;
  client.max_connections = 2;
  // Where a member's Prometheus is: --member-prometheus, else its Cluster's
  // annotation, else --prometheus-service.
  out.serve_as = [&runtime, options, proxy_path, urls, client, service = o.prometheus_service](
                     std::shared_ptr<clusterclient::RestMemberCluster> member,
                     const kube::ClusterEndpoint* annotated) -> std::shared_ptr<aggregator::MemberCluster> {
    clusterclient::PrometheusLocation location;
    if (auto url = urls.find(member->name()); url != urls.end()) {
      location.description = "Prometheus " + url->second;
      location.endpoint.name = member->name();
      location.endpoint.server = url->second;
    } else if (annotated != nullptr) {
      location.description = "Prometheus " + annotated->server;
      location.endpoint = *annotated;
    } else if (!proxy_path.empty()) {
      // The member's own endpoint and credentials, with the service proxy's
      // path in front of every request.
      location.description = "Prometheus " + service;
      location.endpoint = member->endpoint();
      location.endpoint.server += proxy_path;
    } else {
      return member;
    }
    return std::make_shared<clusterclient::PrometheusMemberCluster>(std::move(member), std::move(location), options,
                                                                    runtime, client);
  };
  return out;
}

std::shared_ptr<clusterclient::PrometheusRelister> start_prometheus_relist(
    const PrometheusMembers& prometheus, kube::ClientRuntime& runtime,
    std::shared_ptr<const aggregator::MemberSource> members) {
  if (!prometheus.serve_as) return nullptr;
  // Each relist by a deadline of its own, never longer than the interval.
  const auto timeout = std::min<std::chrono::milliseconds>(prometheus.relist_interval, std::chrono::seconds(30));
  return std::make_shared<clusterclient::PrometheusRelister>(runtime, std::move(members), timeout);
}

}  // namespace fedmetrics::cli
