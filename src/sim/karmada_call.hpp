#pragma once
// One request to the simulated Karmada control plane while it is answered,
// and what its API groups' files share: karmada_api.cpp (authentication,
// authorization, the generic REST of the stored types), karmada_discovery.cpp,
// karmada_apps.cpp (Deployments, their scale and ResourceBindings),
// karmada_cluster.cpp (cluster.karmada.io and its proxy),
// karmada_aggregation.cpp (apiregistration.k8s.io and the aggregation
// layer), karmada_seed.cpp (a fresh control plane's objects),
// karmada_tables.cpp (what `kubectl get` shows). Internal to the sim module.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "fedmetrics/auth/request_attributes.hpp"
#include "fedmetrics/k8s/status.hpp"
#include "fedmetrics/k8s/table.hpp"
#include "fedmetrics/k8s/time.hpp"
#include "fedmetrics/k8s/url.hpp"
#include "fedmetrics/sim/federation.hpp"
#include "fedmetrics/sim/karmada_api.hpp"
#include "fedmetrics/sim/object_store.hpp"
#include "fedmetrics/transport/http_message.hpp"
#include "sim/access.hpp"

namespace fedmetrics::sim::detail {

inline constexpr std::string_view kClusterGroup = "cluster.karmada.io";
inline constexpr std::string_view kClusterNamespace = "karmada-cluster";
// A template with this label "true" leaves each member's replica count to the
// member (an HPA there scales it); Karmada's replicas syncer keeps the
// template's spec.replicas at the members' sum.
inline constexpr std::string_view kRetainReplicasLabel = "resourcetemplate.karmada.io/retain-replicas";

// karmada_tables.cpp: a condition of an object's status by type ({} when none).
nlohmann::json ready_condition_of(const nlohmann::json& object, std::string_view type);
// The Table `kubectl get` shows for a list or an object of `type`: the
// built-in printers' columns and, for Karmada's CRDs, their additionalPrinterColumns.
nlohmann::json karmada_table(const nlohmann::json& doc, const ResourceType& type, k8s::Timestamp now);

// karmada_apps.cpp: a workload's Deployment as Karmada's template holds it.
nlohmann::json deployment_for(const WorkloadSpec& w, std::int32_t replicas);
// Keeps every workload's ResourceBinding on its current placement, writing only what changed.
void sync_bindings(ObjectStore& store, const Federation& federation);
// An object or list of `type` as read (Deployments get their status from the simulated pods).
void as_read(nlohmann::json& doc, const ResourceType& type, const Federation& federation, k8s::Timestamp now);

// karmada_aggregation.cpp: where an APIService's Service is reached, or why it cannot be.
std::variant<Upstream, std::string> resolve_apiservice(const ObjectStore& store, const nlohmann::json& apiservice);

// What a call comes to: the answer, or the request the shell forwards.
using Outcome = std::variant<transport::HttpResponse, ForwardedRequest>;

struct KarmadaCall {
  ObjectStore& store;
  const KarmadaHooks& hooks;
  std::shared_ptr<const Federation> federation;
  const UserInfo& user;
  transport::HttpRequest& request;
  const k8s::RequestTarget& target;
  // What the request asks, in authorizer terms. Its name may be a list's
  // fieldSelector's; what the path names is `name`.
  const auth::RequestAttributes& info;
  std::string name;               // the object the path names; empty: the collection
  std::vector<std::string> rest;  // the path after the subresource (a proxy's path)

  [[nodiscard]] static transport::HttpResponse fail(const k8s::Status& s);
  [[nodiscard]] std::optional<std::size_t> workload_of(std::string_view ns, std::string_view object_name) const {
    return federation->world.workload_index(ns, object_name);
  }

  // karmada_api.cpp: the generic REST of a stored type.
  [[nodiscard]] transport::HttpResponse resource();
  [[nodiscard]] bool namespace_exists(const std::string& ns) const;
  // `table`: what the request asked of a Table (table_request).
  [[nodiscard]] transport::HttpResponse answered(StoreResult result, const ResourceType& type,
                                                 std::optional<k8s::IncludeObject> table, int success = 200) const;
  [[nodiscard]] std::function<nlohmann::json(const nlohmann::json&)> watch_object(
      const ResourceType& type, std::optional<k8s::IncludeObject> table) const;

  // karmada_apps.cpp
  void overlay_deployment(nlohmann::json& d) const;
  [[nodiscard]] nlohmann::json scale_of(const nlohmann::json& deployment) const;
  [[nodiscard]] transport::HttpResponse scale(const ResourceType& type);
  void after_deployment_change(const ResourceType& type, const StoreResult& result) const;

  // karmada_cluster.cpp
  [[nodiscard]] Outcome cluster_proxy();

  // karmada_aggregation.cpp: nullopt when no APIService's server answers the request.
  [[nodiscard]] std::optional<Outcome> aggregated();
};

}  // namespace fedmetrics::sim::detail
