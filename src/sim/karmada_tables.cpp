// The Tables `kubectl get` shows for the simulated control plane's kinds.
#include <functional>
#include <string>
#include <vector>

#include "fedmetrics/k8s/ascii.hpp"
#include "fedmetrics/sim/deployment.hpp"
#include "sim/http_util.hpp"
#include "sim/table_json.hpp"
#include "sim/karmada_call.hpp"

namespace fedmetrics::sim::detail {

using nlohmann::json;

namespace {

std::string text_of(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "<none>";
  return v.dump();
}

}  // namespace

json ready_condition_of(const json& object, std::string_view type) {
  const auto& status = object.value("status", json::object());
  if (!status.is_object()) return json::object();
  for (const auto& c : status.value("conditions", json::array()))
    if (c.is_object() && c.value("type", "") == type) return c;
  return json::object();
}

namespace {

json ready_condition(const json& object) { return ready_condition_of(object, "Ready"); }

}  // namespace

// The columns `kubectl get` shows for each kind: the built-in printers' and,
// for Karmada's CRDs, their additionalPrinterColumns.
json karmada_table(const json& doc, const ResourceType& type, k8s::Timestamp now) {
  bool list = doc.contains("items");
  json items = list ? doc["items"] : json::array({doc});
  auto age = [&](const json& item) {
    auto created = k8s::parse_time(item["metadata"].value("creationTimestamp", ""));
    return created ? human_duration(now - *created) : std::string("<unknown>");
  };
  std::vector<json> columns{column("Name", "string", 0, "name")};
  std::function<std::vector<json>(const json&)> cells = [](const json&) { return std::vector<json>{}; };
  // The columns after AGE (priority 1: `-o wide`).
  std::vector<json> wide_columns;
  std::function<std::vector<json>(const json&)> wide_cells = cells;
  const std::string& kind = type.kind;
  if (kind == "FederatedHPA") {
    for (auto* c : {"Reference-Kind", "Reference-Name", "MinPods", "MaxPods", "Replicas"})
      columns.push_back(column(c, "string", 0));
    cells = [](const json& o) {
      const auto& spec = o.value("spec", json::object());
      const auto& ref = spec.value("scaleTargetRef", json::object());
      return std::vector<json>{text_of(ref.value("kind", json())), text_of(ref.value("name", json())),
                               spec.value("minReplicas", 1), spec.value("maxReplicas", 0),
                               o.value("status", json::object()).value("currentReplicas", 0)};
    };
  } else if (kind == "CronFederatedHPA") {
    // Karmada's CRD printer columns: the target, then AGE.
    for (auto* c : {"Reference-Kind", "Reference-Name"}) columns.push_back(column(c, "string", 0));
    cells = [](const json& o) {
      const auto& ref = o.value("spec", json::object()).value("scaleTargetRef", json::object());
      return std::vector<json>{text_of(ref.value("kind", json())), text_of(ref.value("name", json()))};
    };
  } else if (kind == "Deployment") {
    for (auto& c : deployment_columns()) columns.push_back(std::move(c));
    wide_columns = deployment_wide_columns();
    cells = deployment_cells;
    wide_cells = deployment_wide_cells;
  } else if (kind == "Cluster") {
    for (auto* c : {"Version", "Mode", "Ready"}) columns.push_back(column(c, "string", 0));
    cells = [](const json& o) {
      return std::vector<json>{text_of(o["status"].value("kubernetesVersion", json())),
                               text_of(o["spec"].value("syncMode", json())),
                               text_of(ready_condition(o).value("status", json("Unknown")))};
    };
  } else if (kind == "Lease") {
    columns.push_back(column("Holder", "string", 0));
    cells = [](const json& o) {
      return std::vector<json>{text_of(o.value("spec", json::object()).value("holderIdentity", json("")))};
    };
  } else if (kind == "APIService") {
    for (auto* c : {"Service", "Available"}) columns.push_back(column(c, "string", 0));
    cells = [](const json& o) {
      const auto& svc = o["spec"].value("service", json());
      std::string service = svc.is_object() ? svc.value("namespace", "") + "/" + svc.value("name", "") : "Local";
      auto available = ready_condition_of(o, "Available");
      std::string shown = available.value("status", svc.is_object() ? "Unknown" : "True");
      if (shown == "False") shown += " (" + available.value("reason", "") + ")";
      return std::vector<json>{service, shown};
    };
  } else if (kind == "Secret") {
    for (auto* c : {"Type", "Data"}) columns.push_back(column(c, "string", 0));
    cells = [](const json& o) {
      return std::vector<json>{o.value("type", "Opaque"), o.value("data", json::object()).size()};
    };
  } else if (kind == "Namespace") {
    columns.push_back(column("Status", "string", 0));
    cells = [](const json&) { return std::vector<json>{"Active"}; };
  } else if (kind == "Event") {
    for (auto* c : {"Type", "Reason", "Object", "Message"}) columns.push_back(column(c, "string", 0));
    cells = [](const json& o) {
      const auto& ref = o.contains("regarding") ? o["regarding"] : o.value("involvedObject", json::object());
      return std::vector<json>{o.value("type", ""), o.value("reason", ""),
                               k8s::ascii_lowercase(ref.value("kind", "")) + "/" + ref.value("name", ""),
                               o.contains("note") ? o.value("note", "") : o.value("message", "")};
    };
  }
  columns.push_back(column("Age", "string", 0));
  for (auto& c : wide_columns) columns.push_back(std::move(c));
  json rows = json::array();
  for (const auto& item : items) {
    json row_cells = json::array({item["metadata"].value("name", "")});
    for (auto& c : cells(item)) row_cells.push_back(std::move(c));
    row_cells.push_back(age(item));
    for (auto& c : wide_cells(item)) row_cells.push_back(std::move(c));
    rows.push_back({{"cells", row_cells}});
  }
  // The rows' objects and the metadata: detail::complete_table.
  return table_document(std::move(columns), std::move(rows));
}

}  // namespace fedmetrics::sim::detail
