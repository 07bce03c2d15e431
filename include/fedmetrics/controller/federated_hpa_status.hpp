#pragma once
// The status a FederatedHPA object carries, read back as the "previous"
// status of a sync. Kubernetes' HPA controller never keeps the status in
// memory: each reconcile starts from the object's .status (a deep copy of the
// informer's object), so a restarted or newly elected controller keeps
// lastScaleTime, the conditions' lastTransitionTime and desiredReplicas.
// Pure.
#include <nlohmann/json.hpp>

#include "fedmetrics/autoscaler/autoscaler.hpp"

namespace fedmetrics::controller {

struct ObservedStatus {
  autoscaler::FederatedHPAStatus status;
  // The object said how many replicas it wanted (status.desiredReplicas is
  // present): false for an object no controller has written a status for yet.
  bool has_desired_replicas = false;
};

// What `object` (a FederatedHPA) says in .status. Fields that are missing or
// malformed are left at their zero value: a status some other writer broke
// must not stop the loop. currentMetrics is not read back: every sync
// measures them again.
ObservedStatus observed_status(const nlohmann::json& object);

}  // namespace fedmetrics::controller
