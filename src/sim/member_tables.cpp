// The Tables `kubectl get` shows for a simulated member's core kinds.
#include "fedmetrics/sim/deployment.hpp"
#include "sim/http_util.hpp"
#include "sim/table_json.hpp"
#include "sim/member_responder.hpp"

namespace fedmetrics::sim::detail {

using k8s::GroupResource;
using k8s::Status;
using nlohmann::json;
using transport::HttpResponse;

// A core list or object as the meta.k8s.io/v1 Table that `kubectl get` asks
// for, with the columns of kube-apiserver's printers (pkg/printers/internalversion).
// nullopt for kinds that have no table here.
std::optional<json> member_table(const json& doc, k8s::Timestamp now) {
  if (!doc.is_object() || !doc.contains("kind")) return std::nullopt;
  std::string kind = doc["kind"];
  bool list = kind.size() > 4 && kind.ends_with("List");
  if (list) kind = kind.substr(0, kind.size() - 4);
  json items = list ? doc["items"] : json::array({doc});
  auto age = [&](const json& item) {
    auto created = k8s::parse_time(item["metadata"].value("creationTimestamp", ""));
    return created ? human_duration(now - *created) : std::string("<unknown>");
  };
  json columns, rows = json::array();
  if (kind == "Pod") {
    columns = {column("Name", "string", 0, "name"),
               column("Ready", "string", 0),
               column("Status", "string", 0),
               column("Restarts", "string", 0),
               column("Age", "string", 0),
               column("IP", "string", 1),
               column("Node", "string", 1),
               column("Nominated Node", "string", 1),
               column("Readiness Gates", "string", 1)};
    for (const auto& p : items) {
      int ready = 0, total = 0;
      for (const auto& c : p["status"]["containerStatuses"]) {
        ++total;
        if (c.value("ready", false)) ++ready;
      }
      std::string status = p["metadata"].contains("deletionTimestamp") ? "Terminating" : p["status"].value("phase", "");
      rows.push_back({{"cells",
                       {p["metadata"]["name"], std::to_string(ready) + "/" + std::to_string(total), status, "0", age(p),
                        p["status"].value("podIP", ""), p["spec"].value("nodeName", ""), "<none>", "<none>"}}});
    }
  } else if (kind == "Node") {
    columns = {column("Name", "string", 0, "name"),   column("Status", "string", 0),
               column("Roles", "string", 0),          column("Age", "string", 0),
               column("Version", "string", 0),        column("Internal-IP", "string", 1),
               column("External-IP", "string", 1),    column("OS-Image", "string", 1),
               column("Kernel-Version", "string", 1), column("Container-Runtime", "string", 1)};
    for (const auto& n : items) {
      const auto& info = n["status"]["nodeInfo"];
      rows.push_back({{"cells",
                       {n["metadata"]["name"], "Ready", "<none>", age(n), info["kubeletVersion"],
                        n["status"]["addresses"][0]["address"], "<none>", info["osImage"], info["kernelVersion"],
                        info["containerRuntimeVersion"]}}});
    }
  } else if (kind == "Namespace") {
    columns = {column("Name", "string", 0, "name"), column("Status", "string", 0), column("Age", "string", 0)};
    for (const auto& n : items) rows.push_back({{"cells", {n["metadata"]["name"], n["status"]["phase"], age(n)}}});
  } else if (kind == "Deployment") {
    columns = json::array({column("Name", "string", 0, "name")});
    for (auto& c : deployment_columns()) columns.push_back(std::move(c));
    columns.push_back(column("Age", "string", 0));
    for (auto& c : deployment_wide_columns()) columns.push_back(std::move(c));
    for (const auto& d : items) {
      json cells = json::array({d["metadata"]["name"]});
      for (auto& c : deployment_cells(d)) cells.push_back(std::move(c));
      cells.push_back(age(d));
      for (auto& c : deployment_wide_cells(d)) cells.push_back(std::move(c));
      rows.push_back({{"cells", cells}});
    }
  } else {
    return std::nullopt;
  }
  // The rows' objects and the metadata: detail::complete_table.
  return detail::table_document(std::move(columns), std::move(rows));
}
}  // namespace fedmetrics::sim::detail
