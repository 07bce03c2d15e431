#pragma once
// Legacy JSON discovery documents (metav1 APIGroupList, APIGroup,
// APIResourceList, apimachinery pkg/apis/meta/v1). All carry apiVersion "v1".
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "fedmetrics/k8s/expected.hpp"

namespace fedmetrics::k8s {

struct GroupVersionForDiscovery {
  std::string group_version;  // "metrics.k8s.io/v1beta1"
  std::string version;        // "v1beta1"
  friend bool operator==(const GroupVersionForDiscovery&, const GroupVersionForDiscovery&) = default;
};

struct APIGroup {
  std::string name;
  std::vector<GroupVersionForDiscovery> versions;  // in preference order
  GroupVersionForDiscovery preferred_version;
  friend bool operator==(const APIGroup&, const APIGroup&) = default;
};

struct APIResource {
  std::string name;  // "pods", or "pods/http_requests" for custom metrics
  std::string singular_name;
  bool namespaced = false;
  std::string kind;
  std::vector<std::string> verbs;
  friend bool operator==(const APIResource&, const APIResource&) = default;
};

struct APIResourceList {
  std::string group_version;
  std::vector<APIResource> resources;
  friend bool operator==(const APIResourceList&, const APIResourceList&) = default;
};

// `versions` as "group/version" strings in preference order; the first is preferred.
APIGroup make_api_group(std::string_view name, const std::vector<std::string>& versions);

nlohmann::json to_json(const APIGroup& group, bool as_list_item = false);
nlohmann::json api_group_list_to_json(const std::vector<APIGroup>& groups);
nlohmann::json to_json(const APIResourceList& list);

Expected<std::vector<APIGroup>> api_group_list_from_json(const nlohmann::json& in);
Expected<APIResourceList> api_resource_list_from_json(const nlohmann::json& in);

}  // namespace fedmetrics::k8s
