#pragma once
// The autoscaling/v2 HorizontalPodAutoscaler as a member's kube-apiserver
// registers it: its ResourceType with the status subresource, the scheme's
// defaults (minReplicas 1; no metrics means CPU at 80% utilization) and the
// basic validation of pkg/apis/autoscaling/validation (422 Invalid with
// upstream wording), and the columns of `kubectl get hpa`. Pure.
#include <vector>

#include <nlohmann/json.hpp>

#include "fedmetrics/k8s/status.hpp"
#include "fedmetrics/k8s/time.hpp"
#include "fedmetrics/sim/object_store.hpp"

namespace fedmetrics::sim {

ResourceType horizontal_pod_autoscaler_type();

void default_horizontal_pod_autoscaler(nlohmann::json& hpa);
std::vector<k8s::StatusCause> validate_horizontal_pod_autoscaler(const nlohmann::json& hpa);

// A HorizontalPodAutoscaler or its list as the meta.k8s.io/v1 Table of
// kube-apiserver's printer: Name, Reference, Targets, MinPods, MaxPods, Replicas, Age.
nlohmann::json horizontal_pod_autoscaler_table(const nlohmann::json& doc, k8s::Timestamp now);

}  // namespace fedmetrics::sim
