#pragma once
// The scale target's replicas: its scale subresource, and the
// resourcetemplate.karmada.io/retain-replicas label on its template.
#include <cstdint>
#include <string>

#include "fedmetrics/autoscaler/hpa_spec.hpp"
#include "fedmetrics/k8s/expected.hpp"
#include "fedmetrics/transport/task.hpp"

namespace fedmetrics::controller {

// autoscaling/v1 Scale, as far as the controller reads it.
struct Scale {
  std::int32_t spec_replicas = 0;
  std::int32_t status_replicas = 0;
  std::string selector;  // status.selector, a label selector string
  std::string resource_version;
};

class ScaleClient {
 public:
  virtual ~ScaleClient() = default;
  virtual async::Task<k8s::Expected<Scale>> get_scale(const std::string& namespace_name,
                                                      const autoscaler::CrossVersionObjectReference& target) = 0;
  // Sets spec.replicas, conditional on `resource_version` (a conflict is an error).
  virtual async::Task<k8s::Expected<Scale>> update_scale(const std::string& namespace_name,
                                                         const autoscaler::CrossVersionObjectReference& target,
                                                         std::int32_t replicas,
                                                         const std::string& resource_version) = 0;
  // Whether the target template carries the retain-replicas label (a write
  // of its replica count then does not take effect: Karmada keeps the
  // members' counts and the template follows their sum).
  virtual async::Task<k8s::Expected<bool>> get_retain_replicas(
      const std::string& namespace_name, const autoscaler::CrossVersionObjectReference& target) = 0;
  // Sets (retain) or removes (!retain) that label, a merge patch of it
  // alone: with it Karmada leaves each member's replica count to the
  // member's HPA (distributed mode). Removing it from a target that no
  // longer exists is `false`, not an error.
  virtual async::Task<k8s::Expected<bool>> set_retain_replicas(const std::string& namespace_name,
                                                               const autoscaler::CrossVersionObjectReference& target,
                                                               bool retain) = 0;
};

// The plural resource and API group of a scale target's kind
// (Deployment -> deployments in apps), from its apiVersion and kind.
struct TargetResource {
  std::string group;
  std::string version;
  std::string resource;
};
TargetResource target_resource(const autoscaler::CrossVersionObjectReference& target);

}  // namespace fedmetrics::controller
