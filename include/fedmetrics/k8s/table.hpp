#pragma once
// meta.k8s.io Table, the form `kubectl get` asks for (Accept:
// application/json;as=Table;v=v1;g=meta.k8s.io), for PodMetrics and
// NodeMetrics. Pure: values in, JSON text out.
//
// The columns and cells are metrics-server's (pkg/api/table.go): Name (format
// "name"), one column per resource of the usage, named as the resource
// ("cpu", "memory", sorted; format "quantity"), Window (format "duration");
// a pod's usage is the sum of its containers' (Quantity addition), every cell
// the canonical Quantity or Go's Duration.String(). Extra columns taken from
// an annotation of each item follow (fedmetrics' Cluster).
//
// The document is shaped as kube-apiserver's generic handler writes it
// (endpoints/handlers/response.go asTable): the list's metadata, the column
// definitions, and per row its cells and its object as includeObject says:
// None (null), Metadata (the default: a PartialObjectMetadata in the Table's
// group version) or Object (the whole object with kind and apiVersion).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fedmetrics/k8s/expected.hpp"
#include "fedmetrics/k8s/metrics_types.hpp"

namespace fedmetrics::k8s {

// meta.k8s.io/v1 or meta.k8s.io/v1beta1: the same document, another apiVersion.
enum class TableVersion { V1, V1beta1 };
std::string_view group_version(TableVersion version);

// metav1.IncludeObjectPolicy.
enum class IncludeObject { None, Metadata, Object };

// The `includeObject` query parameter (metav1.TableOptions): empty is
// Metadata; anything but None, Metadata or Object is an error whose message is
// kube-apiserver's 400 ("Unable to convert to Table as requested: ...").
Expected<IncludeObject> parse_include_object(std::string_view text);

struct TableOptions {
  TableVersion version = TableVersion::V1;
  IncludeObject include_object = IncludeObject::Metadata;
};

// A column whose cell is the value of an annotation of each item, "<none>"
// when the item has none (kubectl's word for an empty value).
struct AnnotationColumn {
  std::string name;         // "Cluster"
  std::string description;  // columnDefinitions[].description
  std::string annotation;   // "resource.karmada.io/query-from-cluster"
};

struct TableColumnDefinition {
  std::string name;
  std::string type;  // OpenAPI type: "string"
  std::string format;
  std::string description;
  int priority = 0;  // 0: shown by default; higher only with -o wide
  friend bool operator==(const TableColumnDefinition&, const TableColumnDefinition&) = default;
};

struct TableRow {
  std::vector<std::string> cells;  // every cell of these tables is a string
  // The row's object as JSON text, as includeObject chose; nullopt is null.
  std::optional<std::string> object;
};

struct Table {
  TableVersion version = TableVersion::V1;
  std::vector<TableColumnDefinition> column_definitions;
  std::vector<TableRow> rows;
};

// One row per item, in the items' order. A get by name is a table of one row.
Table pod_metrics_table(const std::vector<PodMetrics>& items, const TableOptions& options,
                        const std::vector<AnnotationColumn>& extra_columns = {});
Table node_metrics_table(const std::vector<NodeMetrics>& items, const TableOptions& options,
                         const std::vector<AnnotationColumn>& extra_columns = {});

// The Table document. Its metadata is the list's (the metrics lists carry no
// resourceVersion or continue, so it is `{}`, as metrics-server's).
std::string encode_table(const Table& table);

}  // namespace fedmetrics::k8s
