#pragma once
// A rules file compiled: per rule, which series it takes, the API name it
// gives them, the labels <-> group-resources mapping and the metricsQuery
// template (prometheus-adapter pkg/naming/metric_namer.go,
// resource_converter.go, lbl_res.go, metrics_query.go). Pure: the queries it
// renders are sent by the caller.
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fedmetrics/k8s/expected.hpp"
#include "fedmetrics/k8s/label_selector.hpp"
#include "fedmetrics/promsource/resource_catalog.hpp"
#include "fedmetrics/promsource/rules.hpp"

namespace fedmetrics::promsource {

// One series as /api/v1/series lists it: its name (__name__) and labels.
struct Series {
  std::string name;
  k8s::Labels labels;
};

// The labels <-> group-resources mapping of one rule's `resources`.
class ResourceConverter {
 public:
  // The group-resources a series' labels name (overrides first, then the
  // template), and whether one of them is namespaces. Labels naming nothing
  // the catalog knows are skipped, as the adapter skips what its RESTMapper
  // cannot normalize.
  [[nodiscard]] std::pair<std::vector<GroupResource>, bool> resources_for_series(const k8s::Labels& labels) const;
  // The label that holds names of `gr` (an override's label, else the
  // template with .Group's dots and dashes as '_' and .Resource singular).
  [[nodiscard]] k8s::Expected<std::string> label_for_resource(const GroupResource& gr) const;
  [[nodiscard]] const ResourceCatalog& catalog() const { return *catalog_; }

 private:
  friend struct Compiler;
  struct Impl;
  std::shared_ptr<const Impl> impl_;
  const ResourceCatalog* catalog_ = nullptr;
};

// One compiled rule of `rules` or `externalRules`.
class MetricNamer {
 public:
  [[nodiscard]] const std::string& series_query() const;
  // The series that pass every seriesFilter and name.matches.
  [[nodiscard]] std::vector<Series> filter_series(const std::vector<Series>& series) const;
  // name.as expanded on name.matches; nullopt when the name does not match.
  [[nodiscard]] std::optional<std::string> metric_name_for_series(std::string_view series_name) const;
  // The PromQL for `names` of `gr` (in `namespace`, "" for cluster-scoped),
  // the metric selector's requirements first. Errors: a selector Prometheus
  // cannot express (> and <), no label for `gr`, an empty query.
  [[nodiscard]] k8s::Expected<std::string> query_for_series(std::string_view series, const GroupResource& gr,
                                                            std::string_view namespace_name,
                                                            const k8s::LabelSelector& metric_selector,
                                                            const std::vector<std::string>& names) const;
  [[nodiscard]] k8s::Expected<std::string> query_for_external_series(std::string_view series,
                                                                     std::string_view namespace_name,
                                                                     const k8s::LabelSelector& metric_selector) const;
  [[nodiscard]] const ResourceConverter& resources() const { return converter_; }

 private:
  friend struct Compiler;
  struct Impl;
  std::shared_ptr<const Impl> impl_;
  ResourceConverter converter_;
};

// resourceRules.cpu or .memory compiled.
class ResourceQuery {
 public:
  // containerQuery for these pods of one namespace, grouped by pod and containerLabel.
  [[nodiscard]] k8s::Expected<std::string> container_query(std::string_view namespace_name,
                                                           const std::vector<std::string>& pods) const;
  // nodeQuery for these nodes, grouped by node.
  [[nodiscard]] k8s::Expected<std::string> node_query(const std::vector<std::string>& nodes) const;
  [[nodiscard]] const std::string& container_label() const;
  [[nodiscard]] const ResourceConverter& resources() const { return converter_; }

 private:
  friend struct Compiler;
  struct Impl;
  std::shared_ptr<const Impl> impl_;
  ResourceConverter converter_;
};

struct CompiledRules {
  std::vector<MetricNamer> rules;
  std::vector<MetricNamer> external_rules;
  std::optional<ResourceQuery> cpu;
  std::optional<ResourceQuery> memory;
  std::chrono::nanoseconds window{0};
};

// Checks and compiles every regexp and template of `config`; the first error
// names the file and the rule: "FILE: rules[3].name.matches: ...".
k8s::Expected<CompiledRules> compile_rules(const RulesConfig& config, std::string_view file_name,
                                           const ResourceCatalog& catalog = ResourceCatalog::builtin());

// prom.LabelEq and friends (prometheus-adapter pkg/client/helpers.go):
// label, operator, then the value quoted as Go's %q does.
std::string label_matcher(std::string_view label, std::string_view op, std::string_view value);

}  // namespace fedmetrics::promsource
