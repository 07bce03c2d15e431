#pragma once
// The FederatedHPAs as the loops read them (autoscaling.karmada.io/v1alpha1):
// the objects as stored, decoded by the loop (autoscaler::parse_federated_hpa).
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fedmetrics/controller/watch.hpp"
#include "fedmetrics/k8s/expected.hpp"
#include "fedmetrics/k8s/label_selector.hpp"
#include "fedmetrics/transport/task.hpp"

namespace fedmetrics::controller {

class FederatedHPAStore {
 public:
  virtual ~FederatedHPAStore() = default;
  // Every FederatedHPA (all namespaces) matching `selector`: from the watch's
  // cache while a watch of that selector has listed, else from the server.
  virtual async::Task<k8s::Expected<std::vector<nlohmann::json>>> list(const k8s::LabelSelector& selector) = 0;
  // The same list read from the server, never from a cache (which can lag):
  // for decisions that delete on what the list lacks.
  virtual async::Task<k8s::Expected<std::vector<nlohmann::json>>> list_from_server(
      const k8s::LabelSelector& selector) = 0;
  // One FederatedHPA as stored.
  virtual async::Task<k8s::Expected<nlohmann::json>> get(const std::string& namespace_name,
                                                         const std::string& name) = 0;
  // Serves list(selector) from a watch (one list, then events) while the
  // returned Watch lives, and calls `on_changed` (from any thread) with each
  // FederatedHPA not seen before (all of them at the first list, then each
  // one created) and each one changed, as it is now, so that the loop syncs
  // a new or edited one at once rather than when it is next due. May return
  // null: then the loop sees them at its lists, at least every sync period.
  virtual std::unique_ptr<Watch> watch(const k8s::LabelSelector& selector,
                                       std::function<void(nlohmann::json)> on_changed) = 0;
};

}  // namespace fedmetrics::controller
