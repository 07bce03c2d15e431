#pragma once
// The meta.k8s.io/v1 Tables the simulated API servers answer `kubectl get`
// with, as kube-apiserver's handlers finish them (endpoints/handlers/response.go
// asTable, handlers/watch.go, the printers' TableConvertor): each kind's
// printer makes the columns and cells; what the request asked of the rows'
// objects (includeObject), the resourceVersion kubectl watches from, and the
// Tables of a watch's events are the same for every kind and made here. Pure
// JSON. Internal to the sim module.
#include <functional>
#include <optional>

#include <nlohmann/json.hpp>

#include "fedmetrics/k8s/expected.hpp"
#include "fedmetrics/k8s/table.hpp"
#include "fedmetrics/k8s/url.hpp"
#include "fedmetrics/transport/http_message.hpp"

namespace fedmetrics::sim::detail {

// A printer's column, as k8s/table defines a column definition (name, type,
// format, description, priority), in a Table document.
nlohmann::json column(const k8s::TableColumnDefinition& definition);
// The Table document of a printer's column definitions and rows (each
// {"cells": [...]}), in k8s/table's meta.k8s.io/v1; complete_table adds the
// rows' objects and the metadata.
nlohmann::json table_document(nlohmann::json columns, nlohmann::json rows);

// nullopt when the request's Accept asks for no Table (kubectl get sends
// application/json;as=Table;v=v1;g=meta.k8s.io,...); else its includeObject
// (metav1.TableOptions), or the 400 message when that is not None, Metadata
// or Object.
k8s::Expected<std::optional<k8s::IncludeObject>> table_request(const transport::HttpRequest& request,
                                                               const k8s::RequestTarget& target);

// Completes `table`, made by a printer with one row per item of `doc` (a list,
// or one object) in their order: each row's object as `include` asks (null;
// the item's PartialObjectMetadata; the whole item with its kind and
// apiVersion), metadata.resourceVersion the list's or the object's (kubectl
// watches from it), and, with `no_headers`, columnDefinitions null.
void complete_table(nlohmann::json& table, const nlohmann::json& doc, k8s::IncludeObject include,
                    bool no_headers = false);

// What the events of one watch carry when it asked for a Table: `table_of`'s
// Table of the event's object (which it may first complete as the server
// shows it, such as a simulated status), completed as above. Only the first has
// columnDefinitions: kube-apiserver sets NoHeaders after it, and kubectl
// prints the later rows under the columns it has. Call it with the events of
// one watch in order (it counts them).
std::function<nlohmann::json(const nlohmann::json&)> watch_tables(
    std::function<nlohmann::json(nlohmann::json&)> table_of, k8s::IncludeObject include);

}  // namespace fedmetrics::sim::detail
