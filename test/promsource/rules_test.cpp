// prometheus-adapter's rules file read unchanged (pkg/config/config.go's
// fields; deploy/manifests' resourceRules), and Prometheus durations.
#include <chrono>
#include <string>

#include <catch2/catch.hpp>

#include "fedmetrics/promsource/metric_namer.hpp"
#include "fedmetrics/promsource/rules.hpp"

using namespace fedmetrics::promsource;
using namespace std::chrono_literals;

TEST_CASE("promsource: a rules file with every section is read field by field") {
  auto config = parse_rules(R"(
rules:
- seriesQuery: '{__name__=~"^http_requests.*_total$",namespace!="",pod!=""}'
  seriesFilters:
  - is: "^http_"
  - isNot: "_seconds_total$"
  resources:
    template: "kube_<<.Group>>_<<.Resource>>"
    overrides:
      namespace: {resource: "namespace"}
      pod: {group: "", resource: "pod"}
  name:
    matches: "(.*)_total"
    as: "${1}_per_second"
  metricsQuery: sum(rate(<<.Series>>{<<.LabelMatchers>>}[2m])) by (<<.GroupBy>>)
  unknownKey: ignored as the adapter's YAML reader ignores it
externalRules:
- seriesQuery: '{__name__="queue_depth"}'
  metricsQuery: sum(<<.Series>>{<<.LabelMatchers>>})
  resources: {namespaced: false}
  labelValueReplacements: [{find: "_", replace: "#"}]
resourceRules:
  cpu:
    containerQuery: 'sum by (<<.GroupBy>>) (irate(container_cpu_usage_seconds_total{<<.LabelMatchers>>,container!="",pod!=""}[4m]))'
    nodeQuery: 'sum by (<<.GroupBy>>) (irate(node_cpu_seconds_total{mode!="idle",<<.LabelMatchers>>}[4m]))'
    resources: &resources
      overrides:
        node: {resource: node}
        namespace: {resource: namespace}
        pod: {resource: pod}
    containerLabel: container
  memory:
    containerQuery: 'sum by (<<.GroupBy>>) (container_memory_working_set_bytes{<<.LabelMatchers>>,container!="",pod!=""})'
    nodeQuery: 'sum by (<<.GroupBy>>) (node_memory_MemTotal_bytes{<<.LabelMatchers>>} - node_memory_MemAvailable_bytes{<<.LabelMatchers>>})'
    resources: *resources  # a YAML alias, as yaml.v2 reads it
    containerLabel: container
  window: 5m
)",
                            "adapter.yaml");
  REQUIRE(config.ok());
  REQUIRE(config->rules.size() == 1);
  const DiscoveryRule& rule = config->rules[0];
  CHECK(rule.series_query == R"({__name__=~"^http_requests.*_total$",namespace!="",pod!=""})");
  REQUIRE(rule.series_filters.size() == 2);
  CHECK(rule.series_filters[0].is == "^http_");
  CHECK(rule.series_filters[1].is_not == "_seconds_total$");
  CHECK(rule.resources.template_text == "kube_<<.Group>>_<<.Resource>>");
  CHECK(rule.resources.overrides.at("pod").resource == "pod");
  CHECK(rule.name.matches == "(.*)_total");
  CHECK(rule.name.as == "${1}_per_second");
  CHECK(rule.metrics_query == "sum(rate(<<.Series>>{<<.LabelMatchers>>}[2m])) by (<<.GroupBy>>)");
  REQUIRE(config->external_rules.size() == 1);
  CHECK(config->external_rules[0].resources.namespaced == false);
  REQUIRE(config->external_rules[0].label_value_replacements.size() == 1);
  CHECK(config->external_rules[0].label_value_replacements[0].replace == "#");
  REQUIRE(config->resource_rules.has_value());
  CHECK(config->resource_rules->window == 5min);
  CHECK(config->resource_rules->memory.container_label == "container");

  auto compiled = compile_rules(*config, "adapter.yaml");
  REQUIRE(compiled.ok());
  REQUIRE(compiled->cpu.has_value());
  auto pods = compiled->cpu->container_query("default", {"web-1", "web-2"});
  REQUIRE(pods.ok());
  CHECK(
      *pods ==
      R"(sum by (pod,container) (irate(container_cpu_usage_seconds_total{namespace="default",pod=~"web-1|web-2",container!="",pod!=""}[4m])))");
  auto nodes = compiled->memory->node_query({"n1"});
  REQUIRE(nodes.ok());
  CHECK(*nodes ==
        R"(sum by (node) (node_memory_MemTotal_bytes{node="n1"} - node_memory_MemAvailable_bytes{node="n1"}))");
}

TEST_CASE("promsource: an empty file has no rules, a file that cannot be read is an error") {
  auto empty = parse_rules("", "empty.yaml");
  REQUIRE(empty.ok());
  CHECK(empty->rules.empty());
  CHECK_FALSE(empty->resource_rules.has_value());
  auto missing = read_rules_file("/nonexistent/rules.yaml");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().message == "/nonexistent/rules.yaml: cannot be read");
}

TEST_CASE("promsource: Prometheus durations") {
  struct Case {
    std::string text;
    std::chrono::milliseconds value;
  };
  for (const auto& c : {Case{"5m", 5min}, Case{"1h30m", 90min}, Case{"0", 0ms}, Case{"1d", 24h}, Case{"1w", 168h},
                        Case{"1s500ms", 1500ms}, Case{"2y", 2 * 365 * 24h}}) {
    INFO(c.text);
    auto d = parse_prometheus_duration(c.text);
    REQUIRE(d.ok());
    CHECK(*d == c.value);
  }
  for (const std::string bad : {"", "5", "m", "5m1h", "1.5m", "-1m", "5mm", "99999999999999999999y"}) {
    INFO(bad);
    CHECK_FALSE(parse_prometheus_duration(bad).ok());
  }
}
