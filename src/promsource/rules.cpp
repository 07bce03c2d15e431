#include "fedmetrics/promsource/rules.hpp"

#include <fstream>
#include <limits>
#include <sstream>

#include <yaml-cpp/yaml.h>

namespace fedmetrics::promsource {

namespace {

using k8s::Error;
using k8s::Expected;

// yaml-cpp throws on type mismatches; every access below goes through these
// checks so that a malformed file is an error value with its path.
std::optional<Error> expect_map(const YAML::Node& node, const std::string& where) {
  if (!node || node.IsNull() || node.IsMap()) return std::nullopt;
  return Error{where + ": expected a mapping"};
}

Expected<std::string> string_field(const YAML::Node& map, const char* key, const std::string& where) {
  const YAML::Node v = map[key];
  if (!v || v.IsNull()) return std::string{};
  if (!v.IsScalar()) return Error{where + "." + key + ": expected a string"};
  return v.Scalar();
}

Expected<ResourceMapping> read_resources(const YAML::Node& node, const std::string& where) {
  ResourceMapping out;
  if (auto e = expect_map(node, where)) return *e;
  if (!node || node.IsNull()) return out;
  auto templ = string_field(node, "template", where);
  if (!templ) return templ.error();
  out.template_text = *templ;
  if (const YAML::Node namespaced = node["namespaced"]; namespaced && !namespaced.IsNull()) {
    bool value = true;
    if (!namespaced.IsScalar() || !YAML::convert<bool>::decode(namespaced, value)) {
      return Error{where + ".namespaced: expected true or false"};
    }
    out.namespaced = value;
  }
  const YAML::Node overrides = node["overrides"];
  if (overrides && !overrides.IsNull()) {
    if (!overrides.IsMap()) return Error{where + ".overrides: expected a mapping of label to group-resource"};
    for (const auto& entry : overrides) {
      if (!entry.first.IsScalar()) return Error{where + ".overrides: expected label names as keys"};
      const std::string label = entry.first.Scalar();
      const std::string at = where + ".overrides." + label;
      if (auto e = expect_map(entry.second, at)) return *e;
      GroupResource gr;
      if (entry.second && entry.second.IsMap()) {
        auto group = string_field(entry.second, "group", at);
        if (!group) return group.error();
        auto resource = string_field(entry.second, "resource", at);
        if (!resource) return resource.error();
        gr = {*group, *resource};
      }
      if (gr.resource.empty()) return Error{at + ".resource: required"};
      out.overrides[label] = gr;
    }
  }
  return out;
}

// A list of mappings with two string fields (seriesFilters' is and isNot,
// labelValueReplacements' find and replace).
Expected<std::vector<std::pair<std::string, std::string>>> string_pairs(const YAML::Node& map, const char* key,
                                                                        const char* first, const char* second,
                                                                        const std::string& where) {
  std::vector<std::pair<std::string, std::string>> out;
  const YAML::Node list = map[key];
  if (!list || list.IsNull()) return out;
  if (!list.IsSequence()) return Error{where + "." + key + ": expected a list"};
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string at = where + "." + key + "[" + std::to_string(i) + "]";
    if (!list[i].IsMap()) return Error{at + ": expected a mapping with " + first + " or " + second};
    auto a = string_field(list[i], first, at);
    if (!a) return a.error();
    auto b = string_field(list[i], second, at);
    if (!b) return b.error();
    out.emplace_back(std::move(*a), std::move(*b));
  }
  return out;
}

Expected<DiscoveryRule> read_rule(const YAML::Node& node, const std::string& where) {
  if (!node.IsMap()) return Error{where + ": expected a mapping"};
  DiscoveryRule rule;
  auto series_query = string_field(node, "seriesQuery", where);
  if (!series_query) return series_query.error();
  rule.series_query = *series_query;
  auto metrics_query = string_field(node, "metricsQuery", where);
  if (!metrics_query) return metrics_query.error();
  rule.metrics_query = *metrics_query;
  auto filters = string_pairs(node, "seriesFilters", "is", "isNot", where);
  if (!filters) return filters.error();
  for (auto& [is, is_not] : *filters) rule.series_filters.push_back({std::move(is), std::move(is_not)});
  auto replacements = string_pairs(node, "labelValueReplacements", "find", "replace", where);
  if (!replacements) return replacements.error();
  for (auto& [find, replace] : *replacements)
    rule.label_value_replacements.push_back({std::move(find), std::move(replace)});
  auto resources = read_resources(node["resources"], where + ".resources");
  if (!resources) return resources.error();
  rule.resources = std::move(*resources);
  const YAML::Node name = node["name"];
  if (auto e = expect_map(name, where + ".name")) return *e;
  if (name && name.IsMap()) {
    auto matches = string_field(name, "matches", where + ".name");
    if (!matches) return matches.error();
    auto as = string_field(name, "as", where + ".name");
    if (!as) return as.error();
    rule.name = {*matches, *as};
  }
  return rule;
}

Expected<std::vector<DiscoveryRule>> read_rule_list(const YAML::Node& root, const char* key) {
  std::vector<DiscoveryRule> out;
  const YAML::Node list = root[key];
  if (!list || list.IsNull()) return out;
  if (!list.IsSequence()) return Error{std::string(key) + ": expected a list of rules"};
  for (std::size_t i = 0; i < list.size(); ++i) {
    auto rule = read_rule(list[i], std::string(key) + "[" + std::to_string(i) + "]");
    if (!rule) return rule.error();
    out.push_back(std::move(*rule));
  }
  return out;
}

Expected<ResourceRule> read_resource_rule(const YAML::Node& node, const std::string& where) {
  ResourceRule out;
  if (auto e = expect_map(node, where)) return *e;
  if (!node || node.IsNull()) return out;
  for (auto [key, field] : {std::pair{"containerQuery", &out.container_query}, std::pair{"nodeQuery", &out.node_query},
                            std::pair{"containerLabel", &out.container_label}}) {
    auto v = string_field(node, key, where);
    if (!v) return v.error();
    *field = *v;
  }
  auto resources = read_resources(node["resources"], where + ".resources");
  if (!resources) return resources.error();
  out.resources = std::move(*resources);
  return out;
}

Expected<RulesConfig> parse_root(const YAML::Node& root) {
  RulesConfig config;
  if (!root || root.IsNull()) return config;
  if (!root.IsMap()) return Error{"expected a mapping with rules, resourceRules or externalRules"};
  auto rules = read_rule_list(root, "rules");
  if (!rules) return rules.error();
  config.rules = std::move(*rules);
  auto external = read_rule_list(root, "externalRules");
  if (!external) return external.error();
  config.external_rules = std::move(*external);
  const YAML::Node resource = root["resourceRules"];
  if (auto e = expect_map(resource, "resourceRules")) return *e;
  if (resource && resource.IsMap()) {
    ResourceRules rr;
    auto cpu = read_resource_rule(resource["cpu"], "resourceRules.cpu");
    if (!cpu) return cpu.error();
    rr.cpu = std::move(*cpu);
    auto memory = read_resource_rule(resource["memory"], "resourceRules.memory");
    if (!memory) return memory.error();
    rr.memory = std::move(*memory);
    auto window = string_field(resource, "window", "resourceRules");
    if (!window) return window.error();
    if (!window->empty()) {
      auto d = parse_prometheus_duration(*window);
      if (!d) return d.error().at("resourceRules.window");
      rr.window = *d;
    }
    config.resource_rules = std::move(rr);
  }
  return config;
}

}  // namespace

Expected<std::chrono::nanoseconds> parse_prometheus_duration(std::string_view text) {
  using std::chrono::nanoseconds;
  const Error bad{"not a valid duration string: \"" + std::string(text) + "\""};
  if (text == "0") return nanoseconds{0};
  if (text.empty()) return bad;
  struct Unit {
    std::string_view name;
    std::int64_t ms;
  };
  // Largest first; each unit at most once, in this order (model.ParseDuration).
  static constexpr Unit units[] = {{"y", 365LL * 24 * 3600 * 1000},
                                   {"w", 7LL * 24 * 3600 * 1000},
                                   {"d", 24LL * 3600 * 1000},
                                   {"h", 3600LL * 1000},
                                   {"m", 60LL * 1000},
                                   {"s", 1000},
                                   {"ms", 1}};
  std::size_t next_unit = 0;
  std::int64_t total_ms = 0;
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t j = i;
    std::int64_t n = 0;
    while (j < text.size() && text[j] >= '0' && text[j] <= '9') {
      if (n > (std::numeric_limits<std::int64_t>::max() - 9) / 10) return bad;
      n = n * 10 + (text[j] - '0');
      ++j;
    }
    if (j == i) return bad;
    std::size_t k = j;
    while (k < text.size() && !(text[k] >= '0' && text[k] <= '9')) ++k;
    const std::string_view unit = text.substr(j, k - j);
    std::size_t u = next_unit;
    while (u < std::size(units) && units[u].name != unit) ++u;
    if (u == std::size(units)) return bad;
    if (n > std::numeric_limits<std::int64_t>::max() / 1000000 / units[u].ms) return bad;
    total_ms += n * units[u].ms;
    if (total_ms > std::numeric_limits<std::int64_t>::max() / 1000000) return bad;
    next_unit = u + 1;
    i = k;
  }
  return std::chrono::duration_cast<nanoseconds>(std::chrono::milliseconds{total_ms});
}

Expected<RulesConfig> parse_rules(std::string_view yaml_text, std::string_view file_name) {
  const std::string prefix(file_name);
  try {
    auto config = parse_root(YAML::Load(std::string(yaml_text)));
    if (!config) return config.error().at(prefix);
    return config;
  } catch (const YAML::Exception& e) {
    return Error{prefix + ": " + e.what()};
  }
}

Expected<RulesConfig> read_rules_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{path + ": cannot be read"};
  std::ostringstream text;
  text << in.rdbuf();
  return parse_rules(text.str(), path);
}

}  // namespace fedmetrics::promsource
