#include "fedmetrics/promsource/series_registry.hpp"

namespace fedmetrics::promsource {

SeriesRegistry::SeriesRegistry(std::shared_ptr<const CompiledRules> rules,
                               const std::vector<std::vector<Series>>& series,
                               const std::vector<std::vector<Series>>& external_series)
    : rules_(std::move(rules)) {
  static const GroupResource cluster_scoped[] = {{"", "namespaces"}, {"", "nodes"}, {"", "persistentvolumes"}};
  for (std::size_t i = 0; i < rules_->rules.size() && i < series.size(); ++i) {
    const MetricNamer& namer = rules_->rules[i];
    for (const auto& s : namer.filter_series(series[i])) {
      auto name = namer.metric_name_for_series(s.name);
      if (!name) continue;
      auto [resources, namespaced] = namer.resources().resources_for_series(s.labels);
      for (const auto& gr : resources) {
        bool scoped = namespaced;
        for (const auto& c : cluster_scoped) scoped = scoped && gr != c;
        // A later series of the same metric replaces an earlier one, as the
        // adapter's map assignment does.
        custom_[{gr, *name}] = {scoped, Backing{s.name, &namer}};
      }
    }
  }
  for (std::size_t i = 0; i < rules_->external_rules.size() && i < external_series.size(); ++i) {
    const MetricNamer& namer = rules_->external_rules[i];
    for (const auto& s : namer.filter_series(external_series[i])) {
      if (auto name = namer.metric_name_for_series(s.name)) external_[*name] = Backing{s.name, &namer};
    }
  }
}

std::vector<CustomMetricInfo> SeriesRegistry::custom_metrics() const {
  std::vector<CustomMetricInfo> out;
  for (const auto& [key, value] : custom_) out.push_back({key.first, value.first, key.second});
  return out;
}

std::vector<std::string> SeriesRegistry::external_metrics() const {
  std::vector<std::string> out;
  for (const auto& [name, backing] : external_) out.push_back(name);
  return out;
}

std::optional<k8s::Expected<std::string>> SeriesRegistry::query_for_metric(
    const GroupResource& gr, std::string_view metric, std::string_view namespace_name,
    const k8s::LabelSelector& metric_selector, const std::vector<std::string>& names) const {
  auto it = custom_.find(std::pair{gr, std::string(metric)});
  if (it == custom_.end()) return std::nullopt;
  const Backing& b = it->second.second;
  return b.namer->query_for_series(b.series_name, gr, namespace_name, metric_selector, names);
}

std::optional<k8s::Expected<std::string>> SeriesRegistry::query_for_external_metric(
    std::string_view metric, std::string_view namespace_name, const k8s::LabelSelector& metric_selector) const {
  auto it = external_.find(metric);
  if (it == external_.end()) return std::nullopt;
  return it->second.namer->query_for_external_series(it->second.series_name, namespace_name, metric_selector);
}

std::optional<std::string> SeriesRegistry::label_for(const GroupResource& gr, std::string_view metric) const {
  auto it = custom_.find(std::pair{gr, std::string(metric)});
  if (it == custom_.end()) return std::nullopt;
  auto label = it->second.second.namer->resources().label_for_resource(gr);
  if (!label) return std::nullopt;
  return *label;
}

}  // namespace fedmetrics::promsource
