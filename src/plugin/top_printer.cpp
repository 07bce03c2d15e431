#include "fedmetrics/plugin/top_printer.hpp"

#include <cmath>
#include <algorithm>
#include <cstdint>
#include <set>
#include <tuple>
#include <utility>

#include <nlohmann/json.hpp>

#include "fedmetrics/aggregator/metrics_service.hpp"
#include "fedmetrics/aggregator/query.hpp"

namespace fedmetrics::plugin {

using k8s::Error;
using k8s::Expected;
using k8s::Quantity;
using nlohmann::json;

Expected<SortBy> parse_sort_by(std::string_view text) {
  if (text.empty()) return SortBy::Name;
  if (text == "cpu") return SortBy::Cpu;
  if (text == "memory") return SortBy::Memory;
  return Error{"--sort-by accepts only cpu or memory"};  // kubectl's Validate()
}

namespace {

std::size_t display_width(std::string_view text) {
  // Go's tabwriter counts runes: every byte that does not continue a UTF-8 sequence.
  return static_cast<std::size_t>(
      std::count_if(text.begin(), text.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

Quantity usage_of(const k8s::ResourceList& usage, std::string_view resource) {
  auto it = usage.find(resource);
  return it == usage.end() ? Quantity() : it->second;
}

// kubectl's getPodMetrics: the containers' usages added up.
k8s::ResourceList pod_usage(const k8s::PodMetrics& pod) {
  k8s::ResourceList total{{"cpu", Quantity()}, {"memory", Quantity()}};
  for (const auto& c : pod.containers)
    for (auto& [resource, sum] : total)
      if (auto added = sum.plus(usage_of(c.usage, resource))) sum = *added;
  return total;
}

// kubectl's sorters compare cpu by MilliValue and memory by Value, larger first.
// Ties (which Go's unstable sort.Sort leaves in any order) fall through to `tie`.
template <class Tie>
bool usage_before(SortBy sort_by, const k8s::ResourceList& a, const k8s::ResourceList& b, Tie tie) {
  if (sort_by == SortBy::Cpu) {
    auto x = usage_of(a, "cpu").milli_value(), y = usage_of(b, "cpu").milli_value();
    if (x != y) return x > y;
  } else if (sort_by == SortBy::Memory) {
    auto x = usage_of(a, "memory").value(), y = usage_of(b, "memory").value();
    if (x != y) return x > y;
  }
  return tie();
}

}  // namespace

std::string tabulate(const std::vector<std::vector<std::string>>& rows) {
  constexpr std::size_t kMinWidth = 6, kPadding = 3;
  std::vector<std::size_t> widths;
  for (const auto& row : rows) {
    if (widths.size() < row.size()) widths.resize(row.size(), kMinWidth);
    for (std::size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], display_width(row[i]) + kPadding);
  }
  std::string out;
  for (const auto& row : rows) {
    for (std::size_t i = 0; i < row.size(); ++i) {
      out += row[i];
      out.append(widths[i] - display_width(row[i]), ' ');
    }
    out += '\n';
  }
  return out;
}

std::string format_cpu(const Quantity& q) { return std::to_string(q.milli_value()) + "m"; }

std::string format_memory(const Quantity& q) { return std::to_string(q.value() / (1024 * 1024)) + "Mi"; }

std::string format_percent(const Quantity& usage, const Quantity& available) {
  double fraction = 0.0;
  if (!available.is_zero())
    fraction = static_cast<double>(usage.milli_value()) / static_cast<double>(available.milli_value()) * 100;
  // Go's int64(fraction) of a member's absurd numbers (infinite, NaN, past
  // int64) is a meaningless number; in C++ the conversion is undefined.
  if (!std::isfinite(fraction) || fraction >= 9.2e18 || fraction <= -9.2e18) return "<unknown>";
  return std::to_string(static_cast<std::int64_t>(fraction)) + "%";
}

std::string cluster_of(const k8s::ObjectMeta& meta) {
  auto it = meta.annotations.find(aggregator::kQueryFromClusterAnnotation);
  return it == meta.annotations.end() || it->second.empty() ? std::string(kNoCluster) : it->second;
}

std::string format_pod_table(std::vector<k8s::PodMetrics> pods, const PodTableOptions& options) {
  if (pods.empty()) return {};
  struct Row {
    k8s::PodMetrics pod;
    std::string cluster;
    k8s::ResourceList usage;
  };
  std::vector<Row> rows;
  rows.reserve(pods.size());
  for (auto& pod : pods) {
    std::string cluster = cluster_of(pod.metadata);
    k8s::ResourceList usage = pod_usage(pod);
    rows.push_back(Row{std::move(pod), std::move(cluster), std::move(usage)});
  }
  std::sort(rows.begin(), rows.end(), [&](const Row& a, const Row& b) {
    return usage_before(options.sort_by, a.usage, b.usage, [&] {
      // Namespaces first only with -A, as kubectl; then name; then the member.
      if (options.all_namespaces && a.pod.metadata.namespace_name != b.pod.metadata.namespace_name)
        return a.pod.metadata.namespace_name < b.pod.metadata.namespace_name;
      return std::tie(a.pod.metadata.name, a.cluster, a.pod.metadata.namespace_name) <
             std::tie(b.pod.metadata.name, b.cluster, b.pod.metadata.namespace_name);
    });
  });

  std::vector<std::vector<std::string>> table;
  if (!options.no_headers) {
    std::vector<std::string> header;
    if (options.all_namespaces) header.emplace_back("NAMESPACE");
    if (options.containers) header.emplace_back("POD");
    for (const char* column : {"NAME", "CLUSTER", "CPU(cores)", "MEMORY(bytes)"}) header.emplace_back(column);
    table.push_back(std::move(header));
  }
  for (auto& row : rows) {
    auto prefix = [&] {
      std::vector<std::string> cells;
      if (options.all_namespaces) cells.push_back(row.pod.metadata.namespace_name);
      return cells;
    };
    if (!options.containers) {
      auto cells = prefix();
      for (auto* cell : {&row.pod.metadata.name, &row.cluster}) cells.push_back(*cell);
      cells.push_back(format_cpu(usage_of(row.usage, "cpu")));
      cells.push_back(format_memory(usage_of(row.usage, "memory")));
      table.push_back(std::move(cells));
      continue;
    }
    // kubectl's ContainerMetricsSorter: by usage, else by container name.
    auto& containers = row.pod.containers;
    std::stable_sort(containers.begin(), containers.end(), [&](const auto& a, const auto& b) {
      return usage_before(options.sort_by, a.usage, b.usage, [&] { return a.name < b.name; });
    });
    for (const auto& c : containers) {
      auto cells = prefix();
      cells.push_back(row.pod.metadata.name);
      cells.push_back(c.name);
      cells.push_back(row.cluster);
      cells.push_back(format_cpu(usage_of(c.usage, "cpu")));
      cells.push_back(format_memory(usage_of(c.usage, "memory")));
      table.push_back(std::move(cells));
    }
  }
  return tabulate(table);
}

Expected<std::vector<NodeInfo>> node_list_from_json(const json& list) {
  if (!list.is_object()) return Error{"a NodeList: expected an object"};
  auto items = list.find("items");
  if (items == list.end() || items->is_null()) return std::vector<NodeInfo>{};
  if (!items->is_array()) return Error{"items: expected a list"};
  std::vector<NodeInfo> out;
  for (std::size_t i = 0; i < items->size(); ++i) {
    const json& item = (*items)[i];
    std::string where = "items[" + std::to_string(i) + "]";
    if (!item.is_object()) return Error{where + ": expected an object"};
    auto meta = k8s::object_meta_from_json(item.value("metadata", json::object()), where + ".metadata");
    if (!meta) return meta.error();
    NodeInfo node{meta->name, std::move(meta->labels), {}};
    const json status = item.value("status", json::object());
    const json allocatable = status.is_object() ? status.value("allocatable", json::object()) : json();
    if (!allocatable.is_object()) return Error{where + ".status.allocatable: expected an object"};
    for (const auto& [resource, value] : allocatable.items()) {
      auto q = k8s::quantity_from_json(value);
      if (!q) return q.error().at(where + ".status.allocatable." + resource);
      node.allocatable.emplace(resource, *q);
    }
    out.push_back(std::move(node));
  }
  return out;
}

std::string format_node_table(std::vector<k8s::NodeMetrics> metrics, const MemberNodes& nodes,
                              const NodeTableOptions& options) {
  if (metrics.empty()) return {};
  std::vector<std::pair<std::string, k8s::NodeMetrics>> rows;
  rows.reserve(metrics.size());
  for (auto& m : metrics) rows.emplace_back(cluster_of(m.metadata), std::move(m));
  std::sort(rows.begin(), rows.end(), [&](const auto& a, const auto& b) {
    return usage_before(options.sort_by, a.second.usage, b.second.usage, [&] {
      return std::tie(a.second.metadata.name, a.first) < std::tie(b.second.metadata.name, b.first);
    });
  });

  auto find_node = [&](const std::string& cluster, const std::string& name) -> const NodeInfo* {
    auto member = nodes.find(cluster);
    if (member == nodes.end() || !member->second) return nullptr;
    for (const auto& n : *member->second)
      if (n.name == name) return &n;
    return nullptr;
  };

  std::vector<std::vector<std::string>> table;
  if (!options.no_headers) table.push_back({"NAME", "CLUSTER", "CPU(cores)", "CPU(%)", "MEMORY(bytes)", "MEMORY(%)"});
  std::set<std::pair<std::string, std::string>> shown;  // (cluster, node)
  for (const auto& [cluster, m] : rows) {
    shown.emplace(cluster, m.metadata.name);
    const NodeInfo* node = find_node(cluster, m.metadata.name);
    std::vector<std::string> cells{m.metadata.name, cluster};
    for (std::string_view resource : {"cpu", "memory"}) {
      const Quantity usage = usage_of(m.usage, resource);
      cells.push_back(resource == "cpu" ? format_cpu(usage) : format_memory(usage));
      std::string share(kUnknown);
      if (node != nullptr)
        if (auto available = node->allocatable.find(resource); available != node->allocatable.end())
          share = format_percent(usage, available->second);
      cells.push_back(std::move(share));
    }
    table.push_back(std::move(cells));
  }

  // Listed nodes without metrics, as kubectl's printMissingMetricsNodeLine.
  std::vector<std::pair<std::string, std::string>> missing;  // (name, cluster)
  for (const auto& [cluster, listed] : nodes) {
    if (!listed) continue;
    for (const auto& n : *listed) {
      if (shown.contains({cluster, n.name})) continue;
      if (!options.name.empty()) {
        if (n.name != options.name) continue;
      } else {
        k8s::Labels labels = n.labels;
        labels[std::string(aggregator::kClusterLabel)] = cluster;
        if (!options.selector.matches(labels)) continue;
      }
      missing.emplace_back(n.name, cluster);
    }
  }
  std::sort(missing.begin(), missing.end());
  for (const auto& [name, cluster] : missing) {
    std::vector<std::string> cells{name, cluster};
    cells.resize(6, std::string(kUnknown));
    table.push_back(std::move(cells));
  }
  return tabulate(table);
}

}  // namespace fedmetrics::plugin
