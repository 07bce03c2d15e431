// The simulated control plane's discovery documents.
#include <algorithm>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "fedmetrics/k8s/discovery.hpp"
#include "fedmetrics/k8s/status.hpp"
#include "fedmetrics/sim/karmada_api.hpp"
#include "sim/aggregated_discovery.hpp"
#include "sim/http_util.hpp"
#include "sim/store_rest.hpp"

namespace fedmetrics::sim {

using detail::header;
using detail::json_response;
using detail::status_response;
using k8s::Status;
using nlohmann::json;
using transport::HttpResponse;

// The discovery documents of the control plane (kube-apiserver's and
// kube-aggregator's): /, /version, /api, /apis, each group and
// group-version, aggregated discovery, the OpenAPI v3 index. Groups in
// registration order, then the aggregated ones.
std::optional<HttpResponse> KarmadaApi::discovery(const transport::HttpRequest& request,
                                                  const k8s::RequestTarget& target) const {
  const auto& s = target.segments;
  if (s.empty()) {
    json paths = json::array({"/api", "/api/v1", "/apis", "/healthz", "/livez", "/readyz", "/version"});
    return json_response(json{{"paths", paths}}.dump());
  }
  if (s[0] == "version" && s.size() == 1)
    return json_response(
        json{{"major", "1"}, {"minor", "31"}, {"gitVersion", "v1.31.0-karmada-sim"}, {"platform", "linux/amd64"}}
            .dump());
  const bool aggregated_discovery = s.size() == 1 && (s[0] == "api" || s[0] == "apis") &&
                                    detail::wants_aggregated_discovery(header(request, "Accept"));
  if (s[0] == "api" && s.size() == 1 && !aggregated_discovery)
    return json_response(
        json{{"kind", "APIVersions"},
             {"versions", {"v1"}},
             {"serverAddressByClientCIDRs", {{{"clientCIDR", "0.0.0.0/0"}, {"serverAddress", "127.0.0.1"}}}}}
            .dump());
  auto types = store_->types();
  // Discovery: groups in registration order, then the aggregated ones.
  auto resource_list = [&](const std::string& group, const std::string& version) {
    k8s::APIResourceList list{group.empty() ? version : group + "/" + version, {}};
    json extra = json::array();
    for (const auto& t : types) {
      if (t.group != group || t.version != version) continue;
      list.resources.push_back({t.resource, "", t.namespaced, t.kind, t.verbs});
    }
    auto doc = k8s::to_json(list);
    for (auto& r : doc["resources"]) {
      for (const auto& t : types)
        if (t.group == group && t.version == version && t.resource == r["name"] && !t.short_names.empty())
          r["shortNames"] = t.short_names;
    }
    for (const auto& t : types) {
      if (t.group != group || t.version != version) continue;
      if (t.status_subresource)
        doc["resources"].push_back({{"name", t.resource + "/status"},
                                    {"singularName", ""},
                                    {"namespaced", t.namespaced},
                                    {"kind", t.kind},
                                    {"verbs", {"get", "patch", "update"}}});
      if (t.group == "apps" && t.resource == "deployments")
        doc["resources"].push_back({{"name", "deployments/scale"},
                                    {"singularName", ""},
                                    {"namespaced", true},
                                    {"group", "autoscaling"},
                                    {"version", "v1"},
                                    {"kind", "Scale"},
                                    {"verbs", {"get", "patch", "update"}}});
    }
    // The create-only kinds (kube-apiserver's discovery of them), and TokenRequest as serviceaccounts/token.
    auto create_only = [&](const char* name, const char* kind) {
      doc["resources"].push_back(
          {{"name", name}, {"singularName", ""}, {"namespaced", false}, {"kind", kind}, {"verbs", {"create"}}});
    };
    if (group == "authentication.k8s.io") {
      create_only("selfsubjectreviews", "SelfSubjectReview");
      create_only("tokenreviews", "TokenReview");
    }
    if (group == "authorization.k8s.io") {
      create_only("selfsubjectaccessreviews", "SelfSubjectAccessReview");
      create_only("subjectaccessreviews", "SubjectAccessReview");
    }
    if (group.empty())
      doc["resources"].push_back({{"name", "serviceaccounts/token"},
                                  {"singularName", ""},
                                  {"namespaced", true},
                                  {"group", "authentication.k8s.io"},
                                  {"version", "v1"},
                                  {"kind", "TokenRequest"},
                                  {"verbs", {"create"}}});
    return doc;
  };
  std::vector<std::pair<std::string, std::vector<std::string>>> groups;
  std::set<std::string> remote;
  auto add_group = [&](const std::string& group, const std::string& version) {
    for (auto& [g, versions] : groups)
      if (g == group) {
        if (std::find(versions.begin(), versions.end(), group + "/" + version) == versions.end())
          versions.push_back(group + "/" + version);
        return;
      }
    groups.push_back({group, {group + "/" + version}});
  };
  for (const auto& t : types)
    if (!t.group.empty()) add_group(t.group, t.version);
  add_group("authentication.k8s.io", "v1");
  add_group("authorization.k8s.io", "v1");
  {
    // APIServices that point at a Service, ordered by versionPriority (higher first).
    // Their group-versions (`remote`) are served by another server.
    const auto* apiservices = store_->find_type("apiregistration.k8s.io", "v1", "apiservices");
    auto list = store_->list(*apiservices, "", {}, {});
    if (auto* doc = std::get_if<json>(&list)) {
      std::vector<json> items((*doc)["items"].begin(), (*doc)["items"].end());
      std::stable_sort(items.begin(), items.end(), [](const json& a, const json& b) {
        return a["spec"].value("versionPriority", 0) > b["spec"].value("versionPriority", 0);
      });
      for (const auto& a : items)
        if (a["spec"].value("service", json()).is_object()) {
          add_group(a["spec"].value("group", ""), a["spec"].value("version", ""));
          remote.insert(a["spec"].value("group", "") + "/" + a["spec"].value("version", ""));
        }
    }
  }
  if (aggregated_discovery) {
    // kube-aggregator's discovery manager: an aggregated group-version as its
    // server last described it, Stale while it could not be asked.
    std::vector<std::pair<std::string, std::vector<json>>> out;
    if (s[0] == "api") out.push_back({"", {detail::version_discovery(resource_list("", "v1"), "v1", true)}});
    for (const auto& [g, versions] : groups) {
      if (s[0] == "api") break;
      std::vector<json> listed;
      for (const auto& gv : versions) {
        const std::string version = gv.substr(g.size() + 1);
        if (!remote.contains(gv)) {
          listed.push_back(detail::version_discovery(resource_list(g, version), version, true));
          continue;
        }
        auto served = discovered(version + "." + g);
        listed.push_back(detail::version_discovery(served.value_or(json::object()), version, served.has_value()));
      }
      out.push_back({g, std::move(listed)});
    }
    return detail::aggregated_discovery(out);
  }
  if (s[0] == "api" && s.size() == 2 && s[1] == "v1") return json_response(resource_list("", "v1").dump());
  if (s[0] == "openapi") return detail::openapi_v3(s, types, groups);
  if (s[0] == "apis" && s.size() == 1) {
    std::vector<k8s::APIGroup> out;
    for (const auto& [g, versions] : groups) out.push_back(k8s::make_api_group(g, versions));
    return json_response(k8s::api_group_list_to_json(out).dump());
  }
  if (s[0] == "apis" && s.size() == 2) {
    for (const auto& [g, versions] : groups)
      if (g == s[1]) return json_response(k8s::to_json(k8s::make_api_group(g, versions)).dump());
    return status_response(Status::not_found_resource());
  }
  if (s[0] == "apis" && s.size() == 3) {
    bool known = std::any_of(groups.begin(), groups.end(), [&](const auto& g) {
      return g.first == s[1] && std::find(g.second.begin(), g.second.end(), s[1] + "/" + s[2]) != g.second.end();
    });
    if (!known) return status_response(Status::not_found_resource());
    return json_response(resource_list(s[1], s[2]).dump());
  }
  return std::nullopt;
}

}  // namespace fedmetrics::sim
