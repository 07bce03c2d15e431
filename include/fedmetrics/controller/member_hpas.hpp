#pragma once
// Distributed mode's port to one member cluster's autoscaling/v2
// HorizontalPodAutoscalers (docs/distributed-mode.md): the calls the loop
// makes to create, update and delete the member HPAs and to read them back.
// Callback style, as ControlPlane. src/main implements it over HTTPS with the
// member's credentials or through the control plane's cluster proxy, as the
// metrics reads reach the member; tests implement it in memory.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fedmetrics/controller/control_plane.hpp"
#include "fedmetrics/k8s/label_selector.hpp"

namespace fedmetrics::controller {

class MemberHPAs {
 public:
  virtual ~MemberHPAs() = default;
  // The member's name, for errors and Events.
  [[nodiscard]] virtual const std::string& member() const = 0;
  // The HPAs of `namespace_name` (empty: every namespace) matching `selector`.
  virtual void list(const std::string& namespace_name, const k8s::LabelSelector& selector,
                    Done<std::vector<nlohmann::json>> done) = 0;
  // The HPA, or nullopt when the member has none of that name (404).
  virtual void get(const std::string& namespace_name, const std::string& name,
                   Done<std::optional<nlohmann::json>> done) = 0;
  // POSTs `hpa` to its metadata.namespace; the stored object comes back.
  virtual void create(nlohmann::json hpa, Done<nlohmann::json> done) = 0;
  // PUTs `hpa`, conditional on its metadata.resourceVersion (a conflict,
  // 409, is an error: read again and decide again at the next sync).
  virtual void update(nlohmann::json hpa, Done<nlohmann::json> done) = 0;
  // Whether the member has the scale target `target` in `namespace_name` (a
  // GET of it: true when it answers it, false on 404; any other answer is an
  // error). Distributed mode without a ResourceBinding places member HPAs on
  // every Ready member that has the target workload (docs/distributed-mode.md).
  virtual void has_target(const std::string& namespace_name, const autoscaler::CrossVersionObjectReference& target,
                          Done<bool> done) = 0;
  // true: deleted; false: it was not there (404). `uid` non-empty: only the
  // object with that metadata.uid (DeleteOptions.preconditions; another
  // object created under the name meanwhile is a conflict, 409, an error),
  // so that what the loop read is what it deletes.
  virtual void remove(const std::string& namespace_name, const std::string& name, const std::string& uid,
                      Done<bool> done) = 0;
};

}  // namespace fedmetrics::controller
