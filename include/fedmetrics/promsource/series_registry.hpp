#pragma once
// Discovery: from the series each rule's seriesQuery returned, which custom
// and external metrics exist and which series backs each
// (prometheus-adapter pkg/custom-provider/series_registry.go SetSeries,
// pkg/external-provider/external_series_registry.go). Built whole from one
// relist and never changed afterwards: the caller swaps the snapshot.
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fedmetrics/promsource/metric_namer.hpp"

namespace fedmetrics::promsource {

// One entry of custom.metrics.k8s.io discovery: "<group-resource>/<metric>".
struct CustomMetricInfo {
  GroupResource group_resource;
  bool namespaced = false;
  std::string metric;
  friend auto operator<=>(const CustomMetricInfo&, const CustomMetricInfo&) = default;
};

class SeriesRegistry {
 public:
  SeriesRegistry() = default;
  // `series[i]` is what rules[i]'s seriesQuery returned (unfiltered; rules
  // sharing a seriesQuery may share one answer). A series whose name
  // name.matches does not match is skipped, as the adapter skips it.
  // The registry keeps `rules` (shared by every relist's registry).
  SeriesRegistry(std::shared_ptr<const CompiledRules> rules, const std::vector<std::vector<Series>>& series,
                 const std::vector<std::vector<Series>>& external_series);

  // Sorted by group-resource, then metric. namespaces, nodes and
  // persistentvolumes metrics are never namespaced.
  [[nodiscard]] std::vector<CustomMetricInfo> custom_metrics() const;
  // Sorted names of external metrics.
  [[nodiscard]] std::vector<std::string> external_metrics() const;

  // nullopt: the metric is not known (NotFound); else the query or why none.
  [[nodiscard]] std::optional<k8s::Expected<std::string>> query_for_metric(const GroupResource& gr,
                                                                           std::string_view metric,
                                                                           std::string_view namespace_name,
                                                                           const k8s::LabelSelector& metric_selector,
                                                                           const std::vector<std::string>& names) const;
  [[nodiscard]] std::optional<k8s::Expected<std::string>> query_for_external_metric(
      std::string_view metric, std::string_view namespace_name, const k8s::LabelSelector& metric_selector) const;
  // The label holding names of `gr` for `metric` (to match answers to objects).
  [[nodiscard]] std::optional<std::string> label_for(const GroupResource& gr, std::string_view metric) const;

 private:
  struct Backing {
    std::string series_name;
    const MetricNamer* namer = nullptr;
  };
  // Keyed by (group-resource, metric); namespaced is kept beside it because
  // the request names the resource and metric, not the scope.
  std::map<std::pair<GroupResource, std::string>, std::pair<bool, Backing>, std::less<>> custom_;
  std::map<std::string, Backing, std::less<>> external_;
  std::shared_ptr<const CompiledRules> rules_;
};

}  // namespace fedmetrics::promsource
