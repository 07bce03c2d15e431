// Naming, discovery and the metricsQuery template against prometheus-adapter:
// its stock rules (docs/sample-config.yaml, the walkthrough's http_requests
// rule, config-gen's defaults) and the strings its query builder renders
// (pkg/naming/metrics_query_test.go vectors).
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "fedmetrics/promsource/metric_namer.hpp"
#include "fedmetrics/promsource/rules.hpp"
#include "fedmetrics/promsource/series_registry.hpp"

using fedmetrics::k8s::LabelSelector;
using namespace fedmetrics::promsource;

namespace {

CompiledRules compile(const std::string& yaml) {
  auto config = parse_rules(yaml, "rules.yaml");
  REQUIRE(config.ok());
  auto compiled = compile_rules(*config, "rules.yaml");
  if (!compiled) FAIL(compiled.error().message);
  return *compiled;
}

std::string compile_error(const std::string& yaml) {
  auto config = parse_rules(yaml, "rules.yaml");
  if (!config) return config.error().message;
  auto compiled = compile_rules(*config, "rules.yaml");
  return compiled ? "<no error>" : compiled.error().message;
}

LabelSelector selector(const std::string& text) {
  auto s = LabelSelector::parse(text);
  REQUIRE(s.ok());
  return *s;
}

// The stock rules: the walkthrough's http_requests rule, the sample config's
// cAdvisor rules, and a template rule.
const std::string kStock = R"yaml(
rules:
- seriesQuery: '{__name__=~"^http_requests.*_total$",container!="POD",namespace!="",pod!=""}'
  resources:
    overrides:
      namespace: {resource: "namespace"}
      pod: {resource: "pod"}
  name:
    matches: "(.*)_total"
  metricsQuery: sum(rate(<<.Series>>{<<.LabelMatchers>>}[2m])) by (<<.GroupBy>>)
- seriesQuery: '{__name__=~"^container_.*",container!="POD",namespace!="",pod!=""}'
  resources:
    overrides:
      namespace: {resource: "namespace"}
      pod: {resource: "pod"}
  name:
    matches: "^container_(.*)_seconds_total$"
  metricsQuery: "sum(rate(<<.Series>>{<<.LabelMatchers>>,container!=\"POD\"}[2m])) by (<<.GroupBy>>)"
- seriesQuery: '{__name__=~"^container_.*_total",container!="POD",namespace!="",pod!=""}'
  resources:
    overrides:
      namespace: {resource: "namespace"}
      pod: {resource: "pod"}
  seriesFilters:
  - isNot: "^container_.*_seconds_total$"
  name: {matches: "^container_(.*)_total$"}
  metricsQuery: "sum(rate(<<.Series>>{<<.LabelMatchers>>,container!=\"POD\"}[2m])) by (<<.GroupBy>>)"
- seriesQuery: '{namespace!="",__name__!~"^container_.*"}'
  name: {matches: "^(.*)_seconds_total$", as: "${1}_per_second"}
  resources:
    template: "<<.Resource>>"
  metricsQuery: "sum(rate(<<.Series>>{<<.LabelMatchers>>}[5m])) by (<<.GroupBy>>)"
externalRules:
- seriesQuery: '{__name__="queue_depth",topic!=""}'
  metricsQuery: sum(<<.Series>>{<<.LabelMatchers>>}) by (name)
  resources:
    namespaced: false
- seriesQuery: '{__name__="queue_consumer_lag",name!=""}'
  metricsQuery: sum(<<.Series>>{<<.LabelMatchers>>}) by (name)
)yaml";

std::vector<std::string> names_of(const std::vector<CustomMetricInfo>& infos) {
  std::vector<std::string> out;
  for (const auto& i : infos)
    out.push_back(i.group_resource.to_string() + "/" + i.metric + (i.namespaced ? " (namespaced)" : ""));
  return out;
}

}  // namespace

TEST_CASE("promsource: stock rules name the series the adapter names") {
  const CompiledRules rules = compile(kStock);
  const std::vector<Series> http{
      {"http_requests_total", {{"namespace", "default"}, {"pod", "sample-app-1"}, {"container", "app"}}},
      {"http_requests_seconds_total", {{"namespace", "default"}, {"pod", "sample-app-1"}}},
  };
  const std::vector<Series> cadvisor{
      {"container_cpu_usage_seconds_total", {{"namespace", "kube-system"}, {"pod", "dns"}, {"container", "dns"}}},
      {"container_network_receive_bytes_total", {{"namespace", "kube-system"}, {"pod", "dns"}}},
      {"container_memory_working_set_bytes", {{"namespace", "kube-system"}, {"pod", "dns"}}},
  };
  const std::vector<Series> generic{
      {"process_cpu_seconds_total",
       {{"namespace", "shop"}, {"service", "cart"}, {"job", "cart"}, {"instance", "10.0.0.1:80"}}},
      {"up", {{"namespace", "shop"}, {"service", "cart"}}},
  };
  const std::vector<Series> queue{{"queue_depth", {{"topic", "orders"}}}};
  SeriesRegistry registry(std::make_shared<const CompiledRules>(rules), {http, cadvisor, cadvisor, generic},
                          {queue, {}});
  // Sorted by group, resource, metric; a label the template maps to a
  // resource counts (job -> jobs.batch), one naming none does not (instance).
  CHECK(names_of(registry.custom_metrics()) == std::vector<std::string>{
                                                   "namespaces/cpu_usage",
                                                   "namespaces/http_requests",
                                                   "namespaces/http_requests_seconds",
                                                   "namespaces/network_receive_bytes",
                                                   "namespaces/process_cpu_per_second",
                                                   "pods/cpu_usage (namespaced)",
                                                   "pods/http_requests (namespaced)",
                                                   "pods/http_requests_seconds (namespaced)",
                                                   "pods/network_receive_bytes (namespaced)",
                                                   "services/process_cpu_per_second (namespaced)",
                                                   "jobs.batch/process_cpu_per_second (namespaced)",
                                               });
  CHECK(registry.external_metrics() == std::vector<std::string>{"queue_depth"});
}

TEST_CASE("promsource: metricsQuery renders what the adapter renders for names and selectors") {
  const CompiledRules rules = compile(kStock);
  const std::vector<Series> http{{"http_requests_total", {{"namespace", "default"}, {"pod", "a"}}}};
  SeriesRegistry registry(std::make_shared<const CompiledRules>(rules), {http, {}, {}, {}}, {});
  struct Case {
    std::vector<std::string> names;
    std::string selector;
    std::string query;
  };
  const std::vector<Case> cases{
      {{"a"}, "", R"(sum(rate(http_requests_total{namespace="default",pod="a"}[2m])) by (pod))"},
      {{"a", "b"}, "", R"(sum(rate(http_requests_total{namespace="default",pod=~"a|b"}[2m])) by (pod))"},
      {{"a"}, "verb=GET", R"(sum(rate(http_requests_total{verb="GET",namespace="default",pod="a"}[2m])) by (pod))"},
      {{"a"},
       "verb in (GET,PUT)",
       R"(sum(rate(http_requests_total{verb=~"GET|PUT",namespace="default",pod="a"}[2m])) by (pod))"},
      {{"a"},
       "verb in (GET)",
       R"(sum(rate(http_requests_total{verb=~"GET",namespace="default",pod="a"}[2m])) by (pod))"},
      {{"a"},
       "verb notin (GET,PUT)",
       R"(sum(rate(http_requests_total{verb!~"GET|PUT",namespace="default",pod="a"}[2m])) by (pod))"},
      {{"a"},
       "verb notin (GET)",
       R"(sum(rate(http_requests_total{verb!~"GET",namespace="default",pod="a"}[2m])) by (pod))"},
      {{"a"}, "verb!=GET", R"(sum(rate(http_requests_total{verb!="GET",namespace="default",pod="a"}[2m])) by (pod))"},
      {{"a"}, "verb", R"(sum(rate(http_requests_total{verb!="",namespace="default",pod="a"}[2m])) by (pod))"},
      {{"a"}, "!verb", R"(sum(rate(http_requests_total{verb="",namespace="default",pod="a"}[2m])) by (pod))"},
      {{"a"},
       "z=1,code=200",
       R"(sum(rate(http_requests_total{code="200",z="1",namespace="default",pod="a"}[2m])) by (pod))"},
      {{"a\"b"}, "", R"(sum(rate(http_requests_total{namespace="default",pod="a\"b"}[2m])) by (pod))"},
  };
  for (const auto& c : cases) {
    INFO(c.selector);
    auto query = registry.query_for_metric({"", "pods"}, "http_requests", "default", selector(c.selector), c.names);
    REQUIRE(query.has_value());
    REQUIRE(query->ok());
    CHECK(**query == c.query);
  }
  SECTION("numeric comparisons have no PromQL form") {
    auto query = registry.query_for_metric({"", "pods"}, "http_requests", "default", selector("code>499"), {"a"});
    REQUIRE(query.has_value());
    REQUIRE_FALSE(query->ok());
    CHECK(query->error().message == "operator not supported by prometheus");
  }
  SECTION("an unknown metric is not found") {
    CHECK_FALSE(registry.query_for_metric({"", "pods"}, "nope", "default", {}, {"a"}).has_value());
    CHECK_FALSE(registry.query_for_metric({"apps", "deployments"}, "http_requests", "default", {}, {"a"}).has_value());
  }
}

TEST_CASE("promsource: template fields as the adapter's query builder gives them") {
  auto rules_with = [](const std::string& query) {
    return compile("rules:\n- seriesQuery: 'x'\n  resources: {template: \"<<.Resource>>\"}\n  metricsQuery: '" + query +
                   "'\n");
  };
  struct Case {
    std::string templ;
    std::vector<std::string> names;
    std::string ns;
    std::string query;
  };
  const std::vector<Case> cases{
      {"series <<.Series>>", {"bar"}, "", "series foo"},
      {"<<.LabelMatchers>>", {"bar", "baz"}, "", R"(service=~"bar|baz")"},
      {R"(<<index .LabelValuesByName "service">>)", {"bar", "baz"}, "", "bar|baz"},
      {R"(<<index .LabelValuesByName "namespace">> <<index .LabelValuesByName "service">>)",
       {"bar", "baz"},
       "default",
       "default bar|baz"},
      {R"(<<index .LabelValuesByName "absent">>|<<.LabelValuesByName.absent>>)", {"bar"}, "", "|<no value>"},
      {"<<.LabelValuesByName>>", {"bar"}, "default", "map[namespace:default service:bar]"},
      {"<<.GroupBy>> <<.GroupBySlice>>", {"bar"}, "", "service [service]"},
      {"a <<- /* trimmed */ ->>  b", {"bar"}, "", "ab"},
  };
  for (const auto& c : cases) {
    INFO(c.templ);
    const CompiledRules rules = rules_with(c.templ);
    auto query = rules.rules[0].query_for_series("foo", {"", "services"}, c.ns, {}, c.names);
    REQUIRE(query.ok());
    CHECK(*query == c.query);
  }
}

TEST_CASE("promsource: external queries: selector, then namespace unless namespaced is false") {
  const CompiledRules rules = compile(kStock + "  resources: {template: \"<<.Resource>>\"}\n");
  SeriesRegistry registry(std::make_shared<const CompiledRules>(rules), {},
                          {{{"queue_depth", {{"topic", "a"}}}}, {{"queue_consumer_lag", {{"name", "q"}}}}});
  auto depth = registry.query_for_external_metric("queue_depth", "default", selector("topic in (a,b)"));
  REQUIRE(depth.has_value());
  REQUIRE(depth->ok());
  CHECK(**depth == R"(sum(queue_depth{topic=~"a|b"}) by (name))");
  auto lag = registry.query_for_external_metric("queue_consumer_lag", "default", selector("name=q"));
  REQUIRE(lag.has_value());
  REQUIRE(lag->ok());
  CHECK(**lag == R"(sum(queue_consumer_lag{name="q",namespace="default"}) by (name))");
}

TEST_CASE("promsource: labels and group-resources, both ways") {
  const CompiledRules rules = compile(R"(
rules:
- seriesQuery: 'x'
  resources:
    template: "kube_<<.Group>>_<<.Resource>>"
    overrides:
      ns: {resource: namespaces}
  metricsQuery: '<<.LabelMatchers>>'
)");
  const ResourceConverter& conv = rules.rules[0].resources();
  auto [resources, namespaced] = conv.resources_for_series(
      {{"kube_apps_deployment", "web"}, {"ns", "shop"}, {"kube__pod", "p"}, {"kube_x_unknown", "u"}, {"job", "j"}});
  std::vector<std::string> names;
  for (const auto& gr : resources) names.push_back(gr.to_string());
  // kube__pod: the group's (?P<group>.+?) needs a character, as in Go.
  CHECK(names == std::vector<std::string>{"deployments.apps", "namespaces"});
  CHECK(namespaced);
  CHECK(*conv.label_for_resource({"apps", "deployments"}) == "kube_apps_deployment");
  CHECK(*conv.label_for_resource({"networking.k8s.io", "ingresses"}) == "kube_networking_k8s_io_ingress");
  CHECK(*conv.label_for_resource({"", "namespaces"}) == "ns");
}

TEST_CASE("promsource: name.as expands as Go's Regexp.Expand") {
  struct Case {
    std::string matches, as, series, name;
  };
  const std::vector<Case> cases{
      {"^(.*)_total$", "", "http_requests_total", "http_requests"},
      {"", "", "up", "up"},
      {"^(.*)_total$", "${1}_per_second", "http_requests_total", "http_requests_per_second"},
      {"^(?P<base>.*)_total$", "${base}_rate", "http_requests_total", "http_requests_rate"},
      {"^(.*)_total$", "$1_x", "a_total", ""},  // "$1_x" names the group "1_x", which does not exist
      {"^(.*)_total$", "$$1", "a_total", "$1"},
      {"_total", "", "a_total_b", "_total"},  // a match anywhere, as Go's regexp.FindStringSubmatchIndex
      {"(a)(b)?", "[$2]", "a", "[]"},
  };
  for (const auto& c : cases) {
    INFO(c.matches << " as " << c.as);
    const CompiledRules rules = compile("rules:\n- seriesQuery: x\n  name: {matches: '" + c.matches + "', as: '" +
                                        c.as + "'}\n  resources: {template: '<<.Resource>>'}\n  metricsQuery: x\n");
    auto name = rules.rules[0].metric_name_for_series(c.series);
    REQUIRE(name.has_value());
    CHECK(*name == c.name);
  }
}

TEST_CASE("promsource: a bad rule is refused at load, naming the file and the rule") {
  const std::string head = "rules:\n- seriesQuery: x\n  metricsQuery: x\n  resources: {template: '<<.Resource>>'}\n";
  struct Case {
    std::string yaml, error;
  };
  const std::vector<Case> cases{
      {head + "- seriesQuery: y\n  name: {matches: '(unclosed'}\n  metricsQuery: x\n",
       "rules.yaml: rules[1].name.matches: error parsing regexp: "},
      {head + "- seriesQuery: y\n  name: {matches: '(?i)abc'}\n  metricsQuery: x\n",
       "rules.yaml: rules[1].name.matches: error parsing regexp: flags and look-around groups (?...) are not supported "
       "here"},
      {head + "- seriesQuery: y\n  name: {matches: 'a{1001}'}\n  metricsQuery: x\n",
       "rules.yaml: rules[1].name.matches: error parsing regexp: invalid repeat count (above 1000 in all)"},
      {head + "- seriesQuery: y\n  name: {matches: '" + std::string(101, '(') + std::string(101, ')') +
           "'}\n  metricsQuery: x\n",
       "rules.yaml: rules[1].name.matches: error parsing regexp: expression nests too deeply"},
      {head + "- seriesQuery: y\n  name: {matches: '(a)(b)'}\n  metricsQuery: x\n",
       "rules.yaml: rules[1].name.as: required when name.matches has more than one capture group"},
      {head + "- seriesQuery: y\n  metricsQuery: 'sum(<<.Serie>>)'\n",
       "rules.yaml: rules[1].metricsQuery: in <<.Serie>>: can't evaluate field Serie (the fields are .GroupBy, "
       ".GroupBySlice, .LabelMatchers, .LabelValuesByName, .Series)"},
      {head + "- seriesQuery: y\n  metricsQuery: 'sum(<<.Series>>'\n  resources: {template: '<<.Resource'}\n",
       "rules.yaml: rules[1].resources.template: unclosed action (no >> after <<)"},
      {head + "- seriesQuery: y\n  metricsQuery: '<<index .Series \"a\">>'\n",
       "rules.yaml: rules[1].metricsQuery: in <<index .Series \"a\">>: .Series is not a map, it has no keys"},
      {head + "- seriesQuery: y\n  metricsQuery: '<<.GroupBySlice.x>>'\n",
       "rules.yaml: rules[1].metricsQuery: in <<.GroupBySlice.x>>: .GroupBySlice is not a map, it has no keys"},
      {head + "- seriesQuery: y\n  metricsQuery: '<<if .Series>>x<<end>>'\n",
       "rules.yaml: rules[1].metricsQuery: unsupported action <<if .Series>> (only fields, map keys and index are "
       "supported)"},
      {head + "- seriesQuery: y\n  metricsQuery: x\n  seriesFilters: [{is: a, isNot: b}]\n",
       "rules.yaml: rules[1].seriesFilters[0]: cannot have both an `is` and `isNot` expression in a single filter"},
      {head + "- seriesQuery: y\n  metricsQuery: x\n  resources: {overrides: {brand: {group: cheese.io, resource: "
              "brand}}}\n",
       "rules.yaml: rules[1].resources.overrides.brand: unable to normalize group-resource brand.cheese.io: no such "
       "resource"},
      {head + "- seriesQuery: y\n  metricsQuery: x\n  resources: {template: 'kube_<<.Group>>'}\n",
       "rules.yaml: rules[1].resources.template: must include at least <<.Resource>> in the label template"},
      {"externalRules:\n- metricsQuery: x\n", "rules.yaml: externalRules[0].seriesQuery: required"},
      {"rules: {a: b}\n", "rules.yaml: rules: expected a list of rules"},
      {"rules:\n- seriesQuery: [a]\n", "rules.yaml: rules[0].seriesQuery: expected a string"},
      {"rules:\n- seriesQuery: a\n  seriesFilters: x\n", "rules.yaml: rules[0].seriesFilters: expected a list"},
      {"resourceRules:\n  window: 5x\n", "rules.yaml: resourceRules.window: not a valid duration string: \"5x\""},
      {"resourceRules:\n  cpu: {containerQuery: x, nodeQuery: x}\n",
       "rules.yaml: resourceRules.cpu.containerLabel: required"},
      {"rules: [\n", "rules.yaml: yaml-cpp: error at line 2, column 1: end of sequence flow not found"},
  };
  for (const auto& c : cases) {
    INFO(c.yaml);
    CHECK_THAT(compile_error(c.yaml), Catch::StartsWith(c.error));
  }
}

TEST_CASE("promsource: config-gen's default rules for counters: _total is a rate, _seconds_total its own rule") {
  // The shape of prometheus-adapter's generated defaults
  // (cmd/config-gen/utils/default.go): template resources, a 5m rate.
  const CompiledRules rules = compile(R"yaml(
rules:
- seriesQuery: '{namespace!="",__name__=~"^.*_seconds_total$"}'
  resources: {template: "<<.Resource>>"}
  name: {matches: "^(.*)_seconds_total$"}
  metricsQuery: sum(rate(<<.Series>>{<<.LabelMatchers>>}[5m])) by (<<.GroupBy>>)
- seriesQuery: '{namespace!="",__name__=~"^.*_total$"}'
  resources: {template: "<<.Resource>>"}
  seriesFilters: [{isNot: "^.*_seconds_total$"}]
  name: {matches: "^(.*)_total$"}
  metricsQuery: sum(rate(<<.Series>>{<<.LabelMatchers>>}[5m])) by (<<.GroupBy>>)
)yaml");
  const std::vector<Series> relist{
      {"http_requests_total", {{"namespace", "default"}, {"pod", "a"}}},
      {"http_request_duration_seconds_total", {{"namespace", "default"}, {"pod", "a"}}},
  };
  SeriesRegistry registry(std::make_shared<const CompiledRules>(rules), {relist, relist}, {});
  CHECK(names_of(registry.custom_metrics()) ==
        std::vector<std::string>{"namespaces/http_request_duration", "namespaces/http_requests",
                                 "pods/http_request_duration (namespaced)", "pods/http_requests (namespaced)"});
  auto pods = registry.query_for_metric({"", "pods"}, "http_requests", "default", {}, {"a", "b"});
  REQUIRE(pods.has_value());
  REQUIRE(pods->ok());
  CHECK(**pods == R"(sum(rate(http_requests_total{namespace="default",pod=~"a|b"}[5m])) by (pod))");
  auto ns = registry.query_for_metric({"", "namespaces"}, "http_request_duration", "", {}, {"default"});
  REQUIRE(ns.has_value());
  REQUIRE(ns->ok());
  CHECK(**ns == R"(sum(rate(http_request_duration_seconds_total{namespace="default"}[5m])) by (namespace))");
}

TEST_CASE("promsource: labelValueReplacements change an external query's LabelValuesByName only") {
  const CompiledRules rules = compile(R"yaml(
externalRules:
- seriesQuery: '{__name__="queue_depth"}'
  resources: {namespaced: false}
  labelValueReplacements:
  - {find: "_", replace: "#"}
  metricsQuery: 'sum(<<.Series>>{<<.LabelMatchers>>,queue="<<index .LabelValuesByName "queue">>"})'
)yaml");
  auto query = rules.external_rules[0].query_for_external_series("queue_depth", "default", selector("queue=a_b"));
  REQUIRE(query.ok());
  CHECK(*query == R"(sum(queue_depth{queue="a_b",queue="a#b"}))");
}
