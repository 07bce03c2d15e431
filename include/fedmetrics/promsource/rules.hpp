#pragma once
// prometheus-adapter's configuration file, read unchanged (its types are in
// prometheus-adapter pkg/config/config.go): `rules`, `resourceRules` and
// `externalRules`. An operator moving off the adapter keeps their file.
//
// parse_rules reads the YAML; compile_rules (metric_namer.hpp) checks the
// regexps and templates. Both name the place of an error the way a reader
// finds it in the file: "FILE: rules[3].name.matches: ...".
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fedmetrics/k8s/expected.hpp"

namespace fedmetrics::promsource {

// A Kubernetes group-resource: {"", "pods"}, {"apps", "deployments"}.
struct GroupResource {
  std::string group;
  std::string resource;
  // "pods", "deployments.apps" (schema.GroupResource.String()).
  [[nodiscard]] std::string to_string() const { return group.empty() ? resource : resource + "." + group; }
  friend auto operator<=>(const GroupResource&, const GroupResource&) = default;
};

struct RegexFilter {
  std::string is;
  std::string is_not;
};

struct ResourceMapping {
  std::string template_text;                       // `template`, delimiters << >>, fields .Group and .Resource
  std::map<std::string, GroupResource> overrides;  // label -> group-resource
  // externalRules only: false leaves the request's namespace out of the query
  // (https://github.com/kubernetes-sigs/prometheus-adapter/blob/master/docs/externalmetrics.md).
  std::optional<bool> namespaced;
};

struct NameMapping {
  std::string matches;  // Go regexp; empty means ".*"
  std::string as;       // expansion; empty means $0 or $1 (see metric_namer.hpp)
};

// A find/replace run on the label values an external query's
// .LabelValuesByName gives (values Kubernetes cannot hold, such as '#').
struct LabelValueReplacement {
  std::string find;
  std::string replace;
};

struct DiscoveryRule {
  std::string series_query;
  std::vector<RegexFilter> series_filters;
  ResourceMapping resources;
  NameMapping name;
  std::string metrics_query;
  std::vector<LabelValueReplacement> label_value_replacements;  // labelValueReplacements
};

struct ResourceRule {
  std::string container_query;
  std::string node_query;
  ResourceMapping resources;
  std::string container_label;
};

struct ResourceRules {
  ResourceRule cpu;
  ResourceRule memory;
  std::chrono::nanoseconds window{0};  // a Prometheus duration in the file ("5m", "1h30m")
};

struct RulesConfig {
  std::vector<DiscoveryRule> rules;
  std::optional<ResourceRules> resource_rules;
  std::vector<DiscoveryRule> external_rules;
};

// Reads the YAML text of a rules file; `file_name` prefixes every error.
// Never throws.
k8s::Expected<RulesConfig> parse_rules(std::string_view yaml_text, std::string_view file_name);
// Reads the file at `path` and parses it (an unreadable file is an error).
k8s::Expected<RulesConfig> read_rules_file(const std::string& path);

// Prometheus' duration syntax (prometheus/common model.ParseDuration):
// one or more <number><unit> with units y, w, d, h, m, s, ms in that order,
// or "0".
k8s::Expected<std::chrono::nanoseconds> parse_prometheus_duration(std::string_view text);

}  // namespace fedmetrics::promsource
