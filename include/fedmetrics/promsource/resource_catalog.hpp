#pragma once
// The Kubernetes resources a rules file may name, standing in for the
// RESTMapper prometheus-adapter asks (pkg/naming/resource_converter.go
// normalizes every group-resource through it: "pod" and "pods" are both
// pods, "deployment" is deployments.apps). The built-in catalog holds the
// resources of a stock cluster; a member's own discovery may replace it.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fedmetrics/promsource/rules.hpp"

namespace fedmetrics::promsource {

struct ResourceInfo {
  GroupResource group_resource;  // plural: {"apps", "deployments"}
  std::string singular;          // "deployment"
  std::string version;           // "v1"
  std::string kind;              // "Deployment"
  bool namespaced = true;
};

class ResourceCatalog {
 public:
  explicit ResourceCatalog(std::vector<ResourceInfo> resources) : resources_(std::move(resources)) {}
  // pods, nodes, namespaces, services, deployments.apps, ... (the built-in resources of Kubernetes 1.30).
  static const ResourceCatalog& builtin();

  // RESTMapper.ResourceFor: `resource` plural or singular (any case); an
  // empty group matches any group, the core group first.
  [[nodiscard]] const ResourceInfo* find(const GroupResource& gr) const;

 private:
  std::vector<ResourceInfo> resources_;
};

}  // namespace fedmetrics::promsource
