#pragma once
// `kubectl fedmetrics top pod|node`: the table, as kubectl top prints it
// (kubectl pkg/metricsutil/metrics_printer.go, metrics_sorter.go), with the
// member each row came from in a CLUSTER column after NAME (where karmadactl
// top puts it) and, for nodes, CPU(%) and MEMORY(%) from the member's own
// Node objects. Pure: values in, text out.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fedmetrics/k8s/expected.hpp"
#include "fedmetrics/k8s/label_selector.hpp"
#include "fedmetrics/k8s/metrics_types.hpp"

namespace fedmetrics::plugin {

// --sort-by: none sorts by name (namespace first with -A), as kubectl.
enum class SortBy { Name, Cpu, Memory };
// "" -> Name; anything but cpu or memory is kubectl's error text.
k8s::Expected<SortBy> parse_sort_by(std::string_view text);

// Go's text/tabwriter as kubectl configures it (printers.GetNewTabWriter:
// minwidth 6, padding 3, space padded): every cell is tab-terminated, so
// every column, the last one included, is padded to max(6, widest + 3);
// widths count UTF-8 code points.
std::string tabulate(const std::vector<std::vector<std::string>>& rows);

// kubectl's cells: CPU as "{MilliValue}m", memory as "{Value / 2^20}Mi"
// (integer division), a share as "{trunc(usage milli / available milli * 100)}%"
// (0% when the available quantity is zero).
std::string format_cpu(const k8s::Quantity& q);
std::string format_memory(const k8s::Quantity& q);
std::string format_percent(const k8s::Quantity& usage, const k8s::Quantity& available);

inline constexpr std::string_view kUnknown = "<unknown>";
// The CLUSTER cell of an item the aggregator did not annotate (a plain
// metrics-server answering).
inline constexpr std::string_view kNoCluster = "<none>";

// The member an item came from: the aggregator's annotation.
std::string cluster_of(const k8s::ObjectMeta& meta);

struct PodTableOptions {
  bool all_namespaces = false;  // a NAMESPACE column first
  bool containers = false;      // one row per container, under a POD column
  bool no_headers = false;
  SortBy sort_by = SortBy::Name;
};

// NAMESPACE (with -A), POD (with --containers), NAME, CLUSTER, CPU(cores),
// MEMORY(bytes). A pod's usage is the sum over its containers (a container
// without a resource counts 0). Sorted as kubectl sorts (descending by
// usage with --sort-by), ties broken by namespace, name and cluster, so
// that the same pod name in two members always prints in the same order.
// Empty when there are no pods (kubectl prints nothing, not even headers).
std::string format_pod_table(std::vector<k8s::PodMetrics> pods, const PodTableOptions& options);

// One Node of a member as `GET /api/v1/nodes` lists it.
struct NodeInfo {
  std::string name;
  k8s::Labels labels;
  k8s::ResourceList allocatable;  // status.allocatable
};
// A NodeList document; errors name the item and field.
k8s::Expected<std::vector<NodeInfo>> node_list_from_json(const nlohmann::json& list);

// What was learnt of one member's Nodes: nullopt when they could not be read.
using MemberNodes = std::map<std::string, std::optional<std::vector<NodeInfo>>, std::less<>>;

struct NodeTableOptions {
  bool no_headers = false;
  SortBy sort_by = SortBy::Name;
  // Which Nodes without metrics get a row of <unknown>s (kubectl prints the
  // nodes it listed that have no metrics): the named one, or those matching
  // the selector, their labels plus fedmetrics/cluster=<member>.
  std::string name;
  k8s::LabelSelector selector;
};

// NAME, CLUSTER, CPU(cores), CPU(%), MEMORY(bytes), MEMORY(%). The shares
// come from the node of that name in that member; a member whose Nodes
// could not be read, or that has no such node, prints <unknown> shares.
// After the rows with metrics (sorted as kubectl), the listed nodes of the
// members in `nodes` that have none, all <unknown>, by name and cluster.
// Empty when there are no node metrics.
std::string format_node_table(std::vector<k8s::NodeMetrics> metrics, const MemberNodes& nodes,
                              const NodeTableOptions& options);

}  // namespace fedmetrics::plugin
