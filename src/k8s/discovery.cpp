#include "fedmetrics/k8s/discovery.hpp"

#include "k8s/json_decode.hpp"

namespace fedmetrics::k8s {

using nlohmann::json;

APIGroup make_api_group(std::string_view name, const std::vector<std::string>& versions) {
  APIGroup group;
  group.name = std::string(name);
  for (const auto& gv : versions) {
    auto slash = gv.find('/');
    group.versions.push_back({gv, slash == std::string::npos ? gv : gv.substr(slash + 1)});
  }
  if (!group.versions.empty()) group.preferred_version = group.versions.front();
  return group;
}

namespace {
json to_json(const GroupVersionForDiscovery& gv) {
  return json{{"groupVersion", gv.group_version}, {"version", gv.version}};
}

Expected<GroupVersionForDiscovery> group_version_from_json(const ObjectReader& r) {
  auto gv = r.string("groupVersion", Need::Required);
  if (!gv) return gv.error();
  auto v = r.string("version", Need::Required);
  if (!v) return v.error();
  return GroupVersionForDiscovery{std::move(*gv), std::move(*v)};
}

Expected<APIGroup> api_group_from_json(const json& in, const std::string& path) {
  ObjectReader r(in, path);
  if (!r.ok()) return r.error();
  APIGroup group;
  auto name = r.string("name", Need::Required);
  if (!name) return name.error();
  group.name = std::move(*name);
  auto versions = r.array("versions", Need::Required);
  if (!versions) return versions.error();
  for (std::size_t i = 0; i < (*versions)->size(); ++i) {
    ObjectReader v((**versions)[i], index_path(r.path_of("versions"), i));
    if (!v.ok()) return v.error();
    auto gv = group_version_from_json(v);
    if (!gv) return gv.error();
    group.versions.push_back(std::move(*gv));
  }
  auto preferred = r.object("preferredVersion", Need::Optional);
  if (!preferred) return preferred.error();
  if (preferred->present()) {
    auto gv = group_version_from_json(*preferred);
    if (!gv) return gv.error();
    group.preferred_version = std::move(*gv);
  } else if (!group.versions.empty()) {
    group.preferred_version = group.versions.front();
  }
  return group;
}
}  // namespace

json to_json(const APIGroup& group, bool as_list_item) {
  json out = json::object();
  if (!as_list_item) {
    out["kind"] = "APIGroup";
    out["apiVersion"] = "v1";
  }
  out["name"] = group.name;
  json versions = json::array();
  for (const auto& v : group.versions) versions.push_back(to_json(v));
  out["versions"] = std::move(versions);
  out["preferredVersion"] = to_json(group.preferred_version);
  return out;
}

json api_group_list_to_json(const std::vector<APIGroup>& groups) {
  json out{{"kind", "APIGroupList"}, {"apiVersion", "v1"}, {"groups", json::array()}};
  for (const auto& g : groups) out["groups"].push_back(to_json(g, true));
  return out;
}

json to_json(const APIResourceList& list) {
  json out{{"kind", "APIResourceList"},
           {"apiVersion", "v1"},
           {"groupVersion", list.group_version},
           {"resources", json::array()}};
  for (const auto& r : list.resources) {
    out["resources"].push_back(json{{"name", r.name},
                                    {"singularName", r.singular_name},
                                    {"namespaced", r.namespaced},
                                    {"kind", r.kind},
                                    {"verbs", r.verbs}});
  }
  return out;
}

Expected<std::vector<APIGroup>> api_group_list_from_json(const json& in) {
  ObjectReader r(in, "");
  if (!r.ok()) return r.error();
  auto groups = r.array("groups", Need::Required);
  if (!groups) return groups.error();
  std::vector<APIGroup> out;
  for (std::size_t i = 0; i < (*groups)->size(); ++i) {
    auto g = api_group_from_json((**groups)[i], index_path("groups", i));
    if (!g) return g.error();
    out.push_back(std::move(*g));
  }
  return out;
}

Expected<APIResourceList> api_resource_list_from_json(const json& in) {
  ObjectReader r(in, "");
  if (!r.ok()) return r.error();
  APIResourceList out;
  auto gv = r.string("groupVersion", Need::Required);
  if (!gv) return gv.error();
  out.group_version = std::move(*gv);
  auto resources = r.array("resources", Need::Optional);
  if (!resources) return resources.error();
  for (std::size_t i = 0; i < (*resources)->size(); ++i) {
    ObjectReader item((**resources)[i], index_path("resources", i));
    if (!item.ok()) return item.error();
    APIResource res;
    auto name = item.string("name", Need::Required);
    if (!name) return name.error();
    res.name = std::move(*name);
    auto singular = item.string("singularName", Need::Optional);
    if (!singular) return singular.error();
    res.singular_name = std::move(*singular);
    auto namespaced = item.boolean("namespaced", Need::Optional);
    if (!namespaced) return namespaced.error();
    res.namespaced = *namespaced;
    auto kind = item.string("kind", Need::Optional);
    if (!kind) return kind.error();
    res.kind = std::move(*kind);
    auto verbs = item.array("verbs", Need::Optional);
    if (!verbs) return verbs.error();
    for (std::size_t v = 0; v < (*verbs)->size(); ++v) {
      const auto& verb = (**verbs)[v];
      if (!verb.is_string()) return Error{"expected a string"}.at(index_path(item.path_of("verbs"), v));
      res.verbs.push_back(verb.get<std::string>());
    }
    out.resources.push_back(std::move(res));
  }
  return out;
}

}  // namespace fedmetrics::k8s
