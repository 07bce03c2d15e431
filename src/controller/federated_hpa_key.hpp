#pragma once
// Which FederatedHPA the loop's memory belongs to, and which workload a
// FederatedHPA scales. Pure; private to the controller module.
//
// What the loop remembers of a FederatedHPA (its recommendations and scale
// events for the behavior, the status of the current leadership term)
// belongs to one object, named by its metadata.uid: a FederatedHPA deleted
// and created again under the same name is a new object, synced at once and
// starting with no history, as kube-controller-manager's HPA controller
// drops an HPA's history when it is deleted.
#include <compare>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace fedmetrics::controller {

struct FederatedHPAKey {
  std::string namespace_name;
  std::string name;
  std::string uid;  // empty when the control plane sets none: the name alone then
  // "namespace/name", as logs, Events and upstream's messages name an HPA.
  [[nodiscard]] std::string str() const { return namespace_name + "/" + name; }
  [[nodiscard]] bool same_name(const FederatedHPAKey& other) const {
    return namespace_name == other.namespace_name && name == other.name;
  }
  auto operator<=>(const FederatedHPAKey&) const = default;
};

// The key of a FederatedHPA object; nullopt without a name.
std::optional<FederatedHPAKey> federated_hpa_key(const nlohmann::json& object);

// The workload a FederatedHPA's spec.scaleTargetRef names: its namespace,
// API group (not the version: apps/v1 and apps/v1beta2 name one object),
// kind and name.
struct ScaleTargetKey {
  std::string namespace_name;
  std::string group;
  std::string kind;
  std::string name;
  auto operator<=>(const ScaleTargetKey&) const = default;
};

// The target of a FederatedHPA object, read from the object as stored (the
// spec may be unusable otherwise: it still claims its target); nullopt when
// scaleTargetRef has no kind or name.
std::optional<ScaleTargetKey> scale_target_key(const nlohmann::json& object);

// The FederatedHPAs among `known` that scale `target`, as "namespace/name",
// sorted, each once. Two or more: the target is ambiguous, and
// kube-controller-manager lets none of them scale it (AmbiguousSelector).
std::vector<std::string> controllers_of(const ScaleTargetKey& target,
                                        const std::vector<std::pair<FederatedHPAKey, ScaleTargetKey>>& known);

// Upstream's words for it (horizontal.go, validateAndParseSelector):
// "pods by selector app=web are controlled by multiple HPAs: [shop/a shop/b]".
std::string ambiguous_selector_message(std::string_view selector, const std::vector<std::string>& controllers);
// The same where no selector was read (distributed mode): "pods of
// Deployment/web are controlled by multiple HPAs: [shop/a shop/b]".
std::string ambiguous_target_message(std::string_view kind, std::string_view name,
                                     const std::vector<std::string>& controllers);

}  // namespace fedmetrics::controller
