#include "fedmetrics/k8s/table.hpp"

#include <algorithm>

#include "k8s/json_writer.hpp"

namespace fedmetrics::k8s {
namespace {

constexpr std::string_view kNone = "<none>";

// metrics-server's column definitions (pkg/api/table.go): the name column is
// the only one with a description; the others have none, and priority 0.
std::vector<TableColumnDefinition> columns_for(const ResourceList& first_usage,
                                               const std::vector<AnnotationColumn>& extra_columns) {
  std::vector<TableColumnDefinition> out;
  out.push_back({"Name", "string", "name", "Name of the resource", 0});
  // ResourceList is ordered by name, bytewise: Go's sort.Strings.
  for (const auto& [resource, quantity] : first_usage) out.push_back({resource, "string", "quantity", "", 0});
  out.push_back({"Window", "string", "duration", "", 0});
  for (const auto& extra : extra_columns) out.push_back({extra.name, "string", "", extra.description, 0});
  return out;
}

// A pod's usage: its containers' summed per resource with Quantity addition,
// which keeps the first addend's format (Go's Add on a zero Quantity).
ResourceList pod_usage(const PodMetrics& pod) {
  ResourceList usage;
  for (const auto& container : pod.containers) {
    for (const auto& [resource, quantity] : container.usage) {
      auto [it, inserted] = usage.try_emplace(resource, quantity);
      if (inserted) continue;
      // Beyond 2^127 nano-units (about 1.7e11 E) the sum cannot be held;
      // the cell then shows the sum so far rather than a wrong number.
      if (auto sum = it->second.plus(quantity)) it->second = *sum;
    }
  }
  return usage;
}

std::string partial_object_metadata(const ObjectMeta& meta, TableVersion version) {
  std::string out;
  JsonWriter w(out);
  w.begin_object();
  w.key("kind");
  w.string("PartialObjectMetadata");
  w.key("apiVersion");
  w.string(group_version(version));
  w.key("metadata");
  w.raw(to_json(meta).dump());
  w.end_object();
  return out;
}

// The cells after the name: each column's resource ("0" when the item lacks
// it: Go prints the zero Quantity so), the window, the annotations.
template <class Item>
TableRow make_row(const Item& item, const ResourceList& usage, const std::vector<TableColumnDefinition>& columns,
                  const std::vector<AnnotationColumn>& extra_columns, const TableOptions& options,
                  std::string (*encode_object)(const Item&)) {
  TableRow row;
  row.cells.reserve(columns.size());
  row.cells.push_back(item.metadata.name);
  // The resource columns sit between Name and Window.
  for (std::size_t i = 1; i + 1 + extra_columns.size() < columns.size(); ++i) {
    auto it = usage.find(columns[i].name);
    row.cells.push_back(it == usage.end() ? Quantity().to_string() : it->second.to_string());
  }
  row.cells.push_back(format_duration(item.window));
  for (const auto& extra : extra_columns) {
    auto it = item.metadata.annotations.find(extra.annotation);
    row.cells.push_back(it == item.metadata.annotations.end() || it->second.empty() ? std::string(kNone) : it->second);
  }
  switch (options.include_object) {
    case IncludeObject::None: break;
    case IncludeObject::Metadata: row.object = partial_object_metadata(item.metadata, options.version); break;
    case IncludeObject::Object: row.object = encode_object(item); break;
  }
  return row;
}

// metrics-server takes the resource columns from the first item whose usage
// has any (a pod without containers has none); every row then has a cell for
// each of them, so that rows always match the column definitions.
template <class Item, class Usage>
Table make_table(const std::vector<Item>& items, const TableOptions& options,
                 const std::vector<AnnotationColumn>& extra_columns, Usage usage_of,
                 std::string (*encode_object)(const Item&)) {
  std::vector<ResourceList> usages;
  usages.reserve(items.size());
  for (const auto& item : items) usages.push_back(usage_of(item));
  auto first = std::find_if(usages.begin(), usages.end(), [](const ResourceList& u) { return !u.empty(); });
  Table table;
  table.version = options.version;
  table.column_definitions = columns_for(first == usages.end() ? ResourceList{} : *first, extra_columns);
  table.rows.reserve(items.size());
  for (std::size_t i = 0; i < items.size(); ++i)
    table.rows.push_back(
        make_row(items[i], usages[i], table.column_definitions, extra_columns, options, encode_object));
  return table;
}

}  // namespace

std::string_view group_version(TableVersion version) {
  return version == TableVersion::V1 ? "meta.k8s.io/v1" : "meta.k8s.io/v1beta1";
}

Expected<IncludeObject> parse_include_object(std::string_view text) {
  if (text.empty() || text == "Metadata") return IncludeObject::Metadata;
  if (text == "None") return IncludeObject::None;
  if (text == "Object") return IncludeObject::Object;
  // apimachinery's ValidateTableOptions: field.NotSupported on includeObject.
  std::string quoted;
  JsonWriter::escape(quoted, text);
  return Error{"Unable to convert to Table as requested: includeObject: Unsupported value: \"" + quoted +
               "\": supported values: \"Metadata\", \"None\", \"Object\""};
}

Table pod_metrics_table(const std::vector<PodMetrics>& items, const TableOptions& options,
                        const std::vector<AnnotationColumn>& extra_columns) {
  return make_table(items, options, extra_columns, pod_usage, &encode_pod_metrics);
}

Table node_metrics_table(const std::vector<NodeMetrics>& items, const TableOptions& options,
                         const std::vector<AnnotationColumn>& extra_columns) {
  return make_table(
      items, options, extra_columns, [](const NodeMetrics& node) { return node.usage; }, &encode_node_metrics);
}

std::string encode_table(const Table& table) {
  std::string out;
  std::size_t bytes = 256;
  for (const auto& row : table.rows) bytes += 64 + (row.object ? row.object->size() : 0);
  out.reserve(bytes);
  JsonWriter w(out);
  // Keys in the order of Go's struct fields, as kube-apiserver writes them.
  w.begin_object();
  w.key("kind");
  w.string("Table");
  w.key("apiVersion");
  w.string(group_version(table.version));
  w.key("metadata");
  w.begin_object();
  w.end_object();
  w.key("columnDefinitions");
  w.begin_array();
  for (const auto& c : table.column_definitions) {
    w.begin_object();
    w.key("name");
    w.string(c.name);
    w.key("type");
    w.string(c.type);
    w.key("format");
    w.string(c.format);
    w.key("description");
    w.string(c.description);
    w.key("priority");
    w.raw(std::to_string(c.priority));
    w.end_object();
  }
  w.end_array();
  // Never null, unlike metrics-server's empty table: a client reading rows
  // (or columns) needs no case for an empty answer.
  w.key("rows");
  w.begin_array();
  for (const auto& row : table.rows) {
    w.begin_object();
    w.key("cells");
    w.begin_array();
    for (const auto& cell : row.cells) w.string(cell);
    w.end_array();
    // A RawExtension without an object is written as null (includeObject=None).
    w.key("object");
    if (row.object) w.raw(*row.object);
    else w.null();
    w.end_object();
  }
  w.end_array();
  w.end_object();
  return out;
}

}  // namespace fedmetrics::k8s
