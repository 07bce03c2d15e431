#include "sim/table_json.hpp"

#include <memory>
#include <string>
#include <utility>

#include "sim/http_util.hpp"

namespace fedmetrics::sim::detail {

using nlohmann::json;

json column(const k8s::TableColumnDefinition& definition) {
  return json{{"name", definition.name},
              {"type", definition.type},
              {"format", definition.format},
              {"description", definition.description},
              {"priority", definition.priority}};
}

json table_document(json columns, json rows) {
  return json{{"kind", "Table"},
              {"apiVersion", k8s::group_version(k8s::TableVersion::V1)},
              {"metadata", json::object()},
              {"columnDefinitions", std::move(columns)},
              {"rows", std::move(rows)}};
}

k8s::Expected<std::optional<k8s::IncludeObject>> table_request(const transport::HttpRequest& request,
                                                               const k8s::RequestTarget& target) {
  if (header(request, "Accept").find("as=Table") == std::string_view::npos) return std::optional<k8s::IncludeObject>();
  auto include = k8s::parse_include_object(k8s::query_value(target.query, "includeObject"));
  if (!include) return include.error();
  return std::optional<k8s::IncludeObject>(*include);
}

namespace {

// The object a row carries. Items of a list may lack kind and apiVersion
// (kube-apiserver leaves them out); a row's object is encoded on its own, with both.
json row_object(const json& item, const json& doc, k8s::IncludeObject include) {
  const json& meta = item.contains("metadata") ? item["metadata"] : json::object();
  switch (include) {
    case k8s::IncludeObject::None: return nullptr;
    case k8s::IncludeObject::Metadata:
      return {{"kind", "PartialObjectMetadata"}, {"apiVersion", "meta.k8s.io/v1"}, {"metadata", meta}};
    case k8s::IncludeObject::Object: break;
  }
  json out = item;
  if (!out.contains("apiVersion") && doc.contains("apiVersion")) out["apiVersion"] = doc["apiVersion"];
  if (!out.contains("kind") && doc.value("kind", "").ends_with("List")) {
    const std::string list_kind = doc["kind"];
    out["kind"] = list_kind.substr(0, list_kind.size() - 4);
  }
  return out;
}

}  // namespace

void complete_table(json& table, const json& doc, k8s::IncludeObject include, bool no_headers) {
  const bool list = doc.contains("items") && doc["items"].is_array();
  auto& rows = table["rows"];
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const json& item = list ? doc["items"].at(i) : doc;
    rows[i]["object"] = row_object(item, doc, include);
  }
  // The TableConvertor's ListAccessor, else CommonAccessor; "" is left out (omitempty).
  json meta = json::object();
  const std::string rv = doc.contains("metadata") && doc["metadata"].is_object()
                             ? doc["metadata"].value("resourceVersion", "")
                             : std::string();
  if (!rv.empty()) meta["resourceVersion"] = rv;
  table["metadata"] = std::move(meta);
  if (no_headers) table["columnDefinitions"] = nullptr;  // Go's nil slice, a field without omitempty
}

std::function<json(const json&)> watch_tables(std::function<json(json&)> table_of, k8s::IncludeObject include) {
  return [table_of = std::move(table_of), include, first = std::make_shared<bool>(true)](const json& event_object) {
    json object = event_object;
    json table = table_of(object);
    complete_table(table, object, include, !*first);
    *first = false;
    return table;
  };
}

}  // namespace fedmetrics::sim::detail
