#include "fedmetrics/promsource/metric_namer.hpp"

#include <algorithm>
#include <map>

#include "promsource/go_regexp.hpp"
#include "promsource/go_template.hpp"

namespace fedmetrics::promsource {

using k8s::Error;
using k8s::Expected;
using k8s::SelectorOperator;

struct ResourceConverter::Impl {
  std::map<std::string, GroupResource> label_to_resource;  // overrides, normalized
  std::map<GroupResource, std::string> resource_to_label;
  std::optional<GoTemplate> label_template;
  std::optional<GoRegexp> label_extractor;  // the template with (?P<group>.+?) and (?P<resource>.+?)
  bool extractor_has_group = false;
};

struct MetricNamer::Impl {
  std::string series_query;
  bool namespaced = true;  // externalRules' resources.namespaced
  std::vector<LabelValueReplacement> replacements;
  std::vector<std::pair<GoRegexp, bool>> filters;  // regexp, must match
  GoRegexp name_matches;
  std::string name_as;
  GoTemplate metrics_query;
};

struct ResourceQuery::Impl {
  GoTemplate container_query;
  GoTemplate node_query;
  std::string container_label;
};

std::string label_matcher(std::string_view label, std::string_view op, std::string_view value) {
  return std::string(label) + std::string(op) + k8s::detail::go_quote(value);
}

namespace {

const std::map<std::string, FieldKind> kQueryFields = {{"Series", FieldKind::String},
                                                       {"LabelMatchers", FieldKind::String},
                                                       {"LabelValuesByName", FieldKind::Map},
                                                       {"GroupBy", FieldKind::String},
                                                       {"GroupBySlice", FieldKind::Slice}};
const GroupResource kNamespaces{"", "namespaces"};
const GroupResource kNodes{"", "nodes"};
const GroupResource kPods{"", "pods"};

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
  return out;
}

// Go's strings.ReplaceAll.
std::string replace_all(std::string_view text, std::string_view find, std::string_view replace) {
  std::string out;
  if (find.empty()) {
    // Go inserts `replace` before each UTF-8 sequence and at the end.
    for (std::size_t i = 0; i < text.size();) {
      out += replace;
      const std::size_t n = std::max<std::size_t>(1, k8s::detail::utf8_sequence_length(text, i));
      out += text.substr(i, n);
      i += n;
    }
    out += replace;
    return out;
  }
  std::size_t pos = 0;
  for (auto hit = text.find(find); hit != std::string_view::npos; hit = text.find(find, pos)) {
    out += text.substr(pos, hit - pos);
    out += replace;
    pos = hit + find.size();
  }
  out += text.substr(pos);
  return out;
}

struct Part {
  std::string label;
  std::vector<std::string> values;
  SelectorOperator op;
};

// processQueryParts, selectMatcher and selectTargetValue of
// prometheus-adapter pkg/naming/metrics_query.go: one value keeps its
// operator (in -> =~, notin -> !~), several become a regexp alternation, an
// exists is label!="" and a does-not-exist label="". Values are not escaped:
// a value is a regexp for =~ and !~, as in the adapter.
Expected<std::string> matchers(const std::vector<Part>& parts, std::map<std::string, std::string>& values_by_name,
                               std::vector<std::string>& exprs) {
  for (const auto& part : parts) {
    if (part.label.empty()) return Error{"label not specified"};
    if (part.op == SelectorOperator::GreaterThan || part.op == SelectorOperator::LessThan) {
      return Error{"operator not supported by prometheus"};
    }
    const bool exists = part.op == SelectorOperator::Exists || part.op == SelectorOperator::DoesNotExist;
    std::string_view op;
    if (part.values.empty()) {
      if (!exists) return Error{"operator requires values"};
      op = part.op == SelectorOperator::Exists ? "!=" : "=";
    } else {
      if (exists) return Error{"operator does not support values"};
      const bool several = part.values.size() > 1;
      switch (part.op) {
        case SelectorOperator::Equals:
        case SelectorOperator::DoubleEquals: op = several ? "=~" : "="; break;
        case SelectorOperator::NotEquals: op = several ? "!~" : "!="; break;
        case SelectorOperator::In: op = "=~"; break;
        default: op = "!~"; break;  // NotIn
      }
    }
    exprs.push_back(label_matcher(part.label, op, join(part.values, "|")));
    values_by_name[part.label] = join(part.values, "|");
  }
  return std::string{};
}

std::vector<Part> parts_of(const k8s::LabelSelector& selector) {
  std::vector<Part> parts;
  for (const auto& r : selector.requirements()) parts.push_back({r.key, r.values, r.op});
  return parts;
}

// The metric selector's matchers, then the namespace's (Build and
// BuildExternal of metrics_query.go).
Expected<std::string> base_matchers(const ResourceConverter& converter, const k8s::LabelSelector& selector,
                                    std::string_view namespace_name, std::map<std::string, std::string>& values_by_name,
                                    std::vector<std::string>& exprs) {
  std::vector<Part> parts = parts_of(selector);
  if (!namespace_name.empty()) {
    auto ns_label = converter.label_for_resource(kNamespaces);
    if (!ns_label) return ns_label.error();
    parts.push_back({*ns_label, {std::string(namespace_name)}, SelectorOperator::Equals});
  }
  return matchers(parts, values_by_name, exprs);
}

Expected<std::string> render_query(const GoTemplate& templ, std::string_view series, std::vector<std::string> exprs,
                                   std::map<std::string, std::string> values_by_name, std::vector<std::string> group_by,
                                   std::string group_by_text) {
  TemplateContext context;
  context.strings["Series"] = std::string(series);
  context.strings["LabelMatchers"] = join(exprs, ",");
  context.strings["GroupBy"] = std::move(group_by_text);
  context.maps["LabelValuesByName"] = std::move(values_by_name);
  context.slices["GroupBySlice"] = std::move(group_by);
  std::string out = templ.render(context);
  if (out.empty()) return Error{"empty query produced by metrics query template"};
  return out;
}

// Build of pkg/naming/metrics_query.go: selector parts, then the namespace,
// then the resource's names (= for one, =~"a|b" for several).
Expected<std::string> build(const GoTemplate& templ, const ResourceConverter& converter, std::string_view series,
                            const GroupResource& gr, std::string_view namespace_name,
                            const std::vector<std::string>& extra_group_by, const k8s::LabelSelector& selector,
                            const std::vector<std::string>& names) {
  if (names.empty()) return Error{"no resource names requested while producing a query"};
  std::vector<std::string> exprs;
  std::map<std::string, std::string> values_by_name;
  if (auto ok = base_matchers(converter, selector, namespace_name, values_by_name, exprs); !ok) return ok.error();
  auto resource_label = converter.label_for_resource(gr);
  if (!resource_label) return resource_label.error();
  const std::string target = join(names, "|");
  exprs.push_back(label_matcher(*resource_label, names.size() > 1 ? "=~" : "=", target));
  values_by_name[*resource_label] = target;
  std::vector<std::string> group_by{*resource_label};
  group_by.insert(group_by.end(), extra_group_by.begin(), extra_group_by.end());
  const std::string group_by_text = join(group_by, ",");
  return render_query(templ, series, std::move(exprs), std::move(values_by_name), std::move(group_by), group_by_text);
}

}  // namespace

struct Compiler {
  const ResourceCatalog& catalog;

  Expected<ResourceConverter> converter(const ResourceMapping& mapping, const std::string& where) {
    auto impl = std::make_shared<ResourceConverter::Impl>();
    if (!mapping.template_text.empty()) {
      auto templ =
          GoTemplate::parse(mapping.template_text, {{"Group", FieldKind::String}, {"Resource", FieldKind::String}});
      if (!templ) return templ.error().at(where + ".template");
      TemplateContext pattern;
      pattern.strings["Group"] = "(?P<group>.+?)";
      pattern.strings["Resource"] = "(?P<resource>.+?)";
      const std::string regex_text = "^" + templ->render(pattern) + "$";
      if (regex_text.find("(?P<resource>") == std::string::npos) {
        return Error{where + ".template: must include at least <<.Resource>> in the label template"};
      }
      auto extractor = GoRegexp::compile(regex_text);
      if (!extractor) return extractor.error().at(where + ".template");
      impl->extractor_has_group = regex_text.find("(?P<group>") != std::string::npos;
      impl->label_template = std::move(*templ);
      impl->label_extractor = std::move(*extractor);
    }
    for (const auto& [label, gr] : mapping.overrides) {
      const ResourceInfo* info = catalog.find(gr);
      if (info == nullptr) {
        return Error{where + ".overrides." + label + ": unable to normalize group-resource " + gr.to_string() +
                     ": no such resource"};
      }
      impl->label_to_resource[label] = info->group_resource;
      impl->resource_to_label[info->group_resource] = label;
    }
    ResourceConverter out;
    out.impl_ = std::move(impl);
    out.catalog_ = &catalog;
    return out;
  }

  Expected<GoTemplate> query_template(const std::string& text, const std::string& where) {
    auto templ = GoTemplate::parse(text, kQueryFields);
    if (!templ) return templ.error().at(where);
    return templ;
  }

  Expected<MetricNamer> namer(const DiscoveryRule& rule, const std::string& where) {
    auto conv = converter(rule.resources, where + ".resources");
    if (!conv) return conv.error();
    auto impl = std::make_shared<MetricNamer::Impl>();
    impl->series_query = rule.series_query;
    impl->namespaced = rule.resources.namespaced.value_or(true);
    impl->replacements = rule.label_value_replacements;
    if (rule.series_query.empty()) return Error{where + ".seriesQuery: required"};
    auto query = query_template(rule.metrics_query, where + ".metricsQuery");
    if (!query) return query.error();
    impl->metrics_query = std::move(*query);
    for (std::size_t i = 0; i < rule.series_filters.size(); ++i) {
      const auto& f = rule.series_filters[i];
      const std::string at = where + ".seriesFilters[" + std::to_string(i) + "]";
      if (!f.is.empty() && !f.is_not.empty()) {
        return Error{at + ": cannot have both an `is` and `isNot` expression in a single filter"};
      }
      if (f.is.empty() && f.is_not.empty()) return Error{at + ": must have either an `is` or `isNot` expression"};
      auto re = GoRegexp::compile(f.is.empty() ? f.is_not : f.is);
      if (!re) return re.error().at(at + (f.is.empty() ? ".isNot" : ".is"));
      impl->filters.emplace_back(std::move(*re), !f.is.empty());
    }
    auto matches = GoRegexp::compile(rule.name.matches.empty() ? ".*" : rule.name.matches);
    if (!matches) return matches.error().at(where + ".name.matches");
    impl->name_as = rule.name.as;
    if (impl->name_as.empty()) {
      // $0 without capture groups, $1 with one; more needs an explicit `as`
      // (metric_namer.go NamersFromConfig).
      if (matches->groups() == 0) impl->name_as = "$0";
      else if (matches->groups() == 1) impl->name_as = "$1";
      else return Error{where + ".name.as: required when name.matches has more than one capture group"};
    }
    if (!rule.name.matches.empty()) impl->filters.emplace_back(*matches, true);
    impl->name_matches = std::move(*matches);
    MetricNamer out;
    out.impl_ = std::move(impl);
    out.converter_ = std::move(*conv);
    return out;
  }

  Expected<ResourceQuery> resource(const ResourceRule& rule, const std::string& where) {
    auto conv = converter(rule.resources, where + ".resources");
    if (!conv) return conv.error();
    auto container = query_template(rule.container_query, where + ".containerQuery");
    if (!container) return container.error();
    auto node = query_template(rule.node_query, where + ".nodeQuery");
    if (!node) return node.error();
    if (rule.container_label.empty()) return Error{where + ".containerLabel: required"};
    ResourceQuery out;
    out.impl_ = std::make_shared<ResourceQuery::Impl>(
        ResourceQuery::Impl{std::move(*container), std::move(*node), rule.container_label});
    out.converter_ = std::move(*conv);
    return out;
  }
};

Expected<CompiledRules> compile_rules(const RulesConfig& config, std::string_view file_name,
                                      const ResourceCatalog& catalog) {
  const std::string file(file_name);
  Compiler compiler{catalog};
  CompiledRules out;
  for (auto [list, name, target] : {std::tuple{&config.rules, "rules", &out.rules},
                                    std::tuple{&config.external_rules, "externalRules", &out.external_rules}}) {
    for (std::size_t i = 0; i < list->size(); ++i) {
      auto namer = compiler.namer((*list)[i], std::string(name) + "[" + std::to_string(i) + "]");
      if (!namer) return namer.error().at(file);
      target->push_back(std::move(*namer));
    }
  }
  if (config.resource_rules) {
    auto cpu = compiler.resource(config.resource_rules->cpu, "resourceRules.cpu");
    if (!cpu) return cpu.error().at(file);
    auto memory = compiler.resource(config.resource_rules->memory, "resourceRules.memory");
    if (!memory) return memory.error().at(file);
    out.cpu = std::move(*cpu);
    out.memory = std::move(*memory);
    out.window = config.resource_rules->window;
  }
  return out;
}

std::pair<std::vector<GroupResource>, bool> ResourceConverter::resources_for_series(const k8s::Labels& labels) const {
  std::vector<GroupResource> out;
  bool namespaced = false;
  for (const auto& [label, value] : labels) {
    std::optional<GroupResource> found;
    if (auto o = impl_->label_to_resource.find(label); o != impl_->label_to_resource.end()) {
      found = o->second;
    } else if (impl_->label_extractor) {
      // lbl_res.go GroupResourceForLabel, then normalized by the catalog.
      const auto resource = impl_->label_extractor->expand("${resource}", label);
      if (resource) {
        GroupResource gr{impl_->extractor_has_group ? *impl_->label_extractor->expand("${group}", label) : "",
                         *resource};
        if (const ResourceInfo* info = catalog_->find(gr)) found = info->group_resource;
      }
    }
    if (!found) continue;
    if (*found == kNamespaces) namespaced = true;
    out.push_back(*found);
  }
  return {out, namespaced};
}

Expected<std::string> ResourceConverter::label_for_resource(const GroupResource& gr) const {
  if (auto o = impl_->resource_to_label.find(gr); o != impl_->resource_to_label.end()) return o->second;
  const std::string prefix = "unable to convert resource " + gr.to_string() + " into label: ";
  if (!impl_->label_template) return Error{prefix + "no generic resource label form specified for this metric"};
  const ResourceInfo* info = catalog_->find(gr);
  if (info == nullptr) return Error{prefix + "unable to singularize resource " + gr.to_string()};
  // GroupNameSanitizer: '.' and '-' become '_' (resource_converter.go).
  std::string group = gr.group;
  for (char& c : group)
    if (c == '.' || c == '-') c = '_';
  TemplateContext context;
  context.strings["Group"] = group;
  context.strings["Resource"] = info->singular;
  std::string label = impl_->label_template->render(context);
  if (label.empty()) return Error{prefix + "empty label produced by label template"};
  return label;
}

const std::string& MetricNamer::series_query() const { return impl_->series_query; }

std::vector<Series> MetricNamer::filter_series(const std::vector<Series>& series) const {
  std::vector<Series> out;
  for (const auto& s : series) {
    bool keep = true;
    for (const auto& [re, positive] : impl_->filters) keep = keep && re.search(s.name) == positive;
    if (keep) out.push_back(s);
  }
  return out;
}

std::optional<std::string> MetricNamer::metric_name_for_series(std::string_view series_name) const {
  return impl_->name_matches.expand(impl_->name_as, series_name);
}

Expected<std::string> MetricNamer::query_for_series(std::string_view series, const GroupResource& gr,
                                                    std::string_view namespace_name,
                                                    const k8s::LabelSelector& metric_selector,
                                                    const std::vector<std::string>& names) const {
  return build(impl_->metrics_query, converter_, series, gr, namespace_name, {}, metric_selector, names);
}

// BuildExternal of pkg/naming/metrics_query.go: the selector's parts and the
// namespace; .GroupBy and .GroupBySlice are empty.
Expected<std::string> MetricNamer::query_for_external_series(std::string_view series, std::string_view namespace_name,
                                                             const k8s::LabelSelector& metric_selector) const {
  std::vector<std::string> exprs;
  std::map<std::string, std::string> values_by_name;
  const std::string_view scope = impl_->namespaced ? namespace_name : std::string_view{};
  if (auto ok = base_matchers(converter_, metric_selector, scope, values_by_name, exprs); !ok) return ok.error();
  // BuildExternal runs labelValueReplacements on .LabelValuesByName only
  // (strings.ReplaceAll; an empty find inserts between characters, as Go does).
  for (const auto& r : impl_->replacements) {
    for (auto& [label, value] : values_by_name) value = replace_all(value, r.find, r.replace);
  }
  return render_query(impl_->metrics_query, series, std::move(exprs), std::move(values_by_name), {}, "");
}

Expected<std::string> ResourceQuery::container_query(std::string_view namespace_name,
                                                     const std::vector<std::string>& pods) const {
  return build(impl_->container_query, converter_, "", kPods, namespace_name, {impl_->container_label}, {}, pods);
}

Expected<std::string> ResourceQuery::node_query(const std::vector<std::string>& nodes) const {
  return build(impl_->node_query, converter_, "", kNodes, "", {}, {}, nodes);
}

const std::string& ResourceQuery::container_label() const { return impl_->container_label; }

}  // namespace fedmetrics::promsource
