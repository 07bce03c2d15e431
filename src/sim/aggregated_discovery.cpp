#include "sim/aggregated_discovery.hpp"

#include "fedmetrics/k8s/ascii.hpp"

namespace fedmetrics::sim::detail {

using nlohmann::json;

bool wants_aggregated_discovery(std::string_view accept) {
  // client-go's AcceptV2: "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,...".
  return accept.find("g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList") != std::string_view::npos;
}

namespace {

// responseKind: the resource's own group/version when it names one (a
// subresource of another group, as deployments/scale), else its list's.
json response_kind(const json& resource, const std::string& group, const std::string& version) {
  return {{"group", resource.value("group", group)},
          {"version", resource.value("version", version)},
          {"kind", resource.value("kind", "")}};
}

}  // namespace

json version_discovery(const json& resource_list, std::string_view version, bool fresh) {
  const std::string group_version = resource_list.value("groupVersion", std::string(version));
  const auto slash = group_version.find('/');
  const std::string group = slash == std::string::npos ? "" : group_version.substr(0, slash);
  const std::string gv_version = slash == std::string::npos ? group_version : group_version.substr(slash + 1);
  json resources = json::array();
  const auto& listed = resource_list.value("resources", json::array());
  for (const auto& r : listed) {
    const std::string name = r.value("name", "");
    if (name.empty() || name.find('/') != std::string::npos) continue;
    json out = {{"resource", name},
                {"responseKind", response_kind(r, group, gv_version)},
                {"scope", r.value("namespaced", false) ? "Namespaced" : "Cluster"},
                {"singularResource", r.value("singularName", "").empty() ? k8s::ascii_lowercase(r.value("kind", ""))
                                                                         : r.value("singularName", "")},
                {"verbs", r.value("verbs", json::array())}};
    for (const char* key : {"shortNames", "categories"})
      if (r.contains(key)) out[key] = r[key];
    json subresources = json::array();
    for (const auto& sub : listed) {
      const std::string sub_name = sub.value("name", "");
      if (!sub_name.starts_with(name + "/")) continue;
      subresources.push_back({{"subresource", sub_name.substr(name.size() + 1)},
                              {"responseKind", response_kind(sub, group, gv_version)},
                              {"verbs", sub.value("verbs", json::array())}});
    }
    if (!subresources.empty()) out["subresources"] = std::move(subresources);
    resources.push_back(std::move(out));
  }
  return {{"version", version}, {"resources", resources}, {"freshness", fresh ? "Current" : "Stale"}};
}

transport::HttpResponse aggregated_discovery(const std::vector<std::pair<std::string, std::vector<json>>>& groups) {
  json items = json::array();
  for (const auto& [name, versions] : groups)
    items.push_back({{"metadata", {{"name", name}, {"creationTimestamp", nullptr}}}, {"versions", versions}});
  json out = {{"kind", "APIGroupDiscoveryList"},
              {"apiVersion", "apidiscovery.k8s.io/v2"},
              {"metadata", json::object()},
              {"items", items}};
  return transport::HttpResponse{200, std::string(kAggregatedDiscoveryType), out.dump(), {}};
}

}  // namespace fedmetrics::sim::detail
