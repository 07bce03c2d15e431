// prometheus-adapter's rules file (promsource): yaml-cpp, our reading of
// rules, externalRules and resourceRules, then the compilation of their Go
// regexps and << >> templates; when the file compiles, discovery over a fixed
// set of series and the rendering of every discovered metric's query.
//
// Properties: an error has a message that starts with the file's name; every
// metric discovery lists can be queried (the registry finds what it listed);
// a rendered query is never empty.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fedmetrics/promsource/metric_namer.hpp"
#include "fedmetrics/promsource/rules.hpp"
#include "fedmetrics/promsource/series_registry.hpp"
#include "fuzz_check.hpp"

namespace {

using namespace fedmetrics::promsource;

const std::vector<Series>& series() {
  static const std::vector<Series> all{
      {"http_requests_total", {{"namespace", "default"}, {"pod", "a"}, {"service", "web"}}},
      {"container_cpu_usage_seconds_total", {{"namespace", "kube-system"}, {"pod", "dns"}, {"container", "dns"}}},
      {"queue_depth", {{"topic", "orders"}, {"job", "q"}}},
      {"kube_apps_deployment_up", {{"kube_apps_deployment", "web"}, {"node", "n1"}}},
  };
  return all;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(fedmetrics::fuzz::as_text(data, size));
  auto config = parse_rules(text, "rules.yaml");
  if (!config) {
    FUZZ_CHECK(config.error().message.starts_with("rules.yaml: "), "error without the file: %s",
               config.error().message.c_str());
    return 0;
  }
  auto compiled = compile_rules(*config, "rules.yaml");
  if (!compiled) {
    FUZZ_CHECK(compiled.error().message.starts_with("rules.yaml: "), "error without the file: %s",
               compiled.error().message.c_str());
    return 0;
  }
  const auto rules = std::make_shared<const CompiledRules>(std::move(*compiled));
  const std::vector<std::vector<Series>> custom(rules->rules.size(), series());
  const std::vector<std::vector<Series>> external(rules->external_rules.size(), series());
  const SeriesRegistry registry(rules, custom, external);
  for (const auto& info : registry.custom_metrics()) {
    auto query =
        registry.query_for_metric(info.group_resource, info.metric, info.namespaced ? "default" : "", {}, {"a", "b"});
    FUZZ_CHECK(query.has_value(), "listed metric %s not found", info.metric.c_str());
    FUZZ_CHECK(!query->ok() || !query->value().empty(), "empty query for %s", info.metric.c_str());
  }
  for (const auto& name : registry.external_metrics()) {
    auto query = registry.query_for_external_metric(name, "default", {});
    FUZZ_CHECK(query.has_value(), "listed external metric %s not found", name.c_str());
  }
  if (rules->cpu) (void)rules->cpu->container_query("default", {"a"});
  if (rules->memory) (void)rules->memory->node_query({"n1", "n2"});
  return 0;
}
