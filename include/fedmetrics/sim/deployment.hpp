#pragma once
// A workload's Deployment as the simulated control plane and members show
// it: the pod template Karmada propagates unchanged to every member, its
// pod-template-hash, and the columns of kube-apiserver's Deployment Table
// (pkg/printers/internalversion printDeployment). Pure.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fedmetrics/sim/world.hpp"

namespace fedmetrics::sim {

// spec.template of the workload's Deployment: the same object in the control
// plane and in every member.
nlohmann::json pod_template(const WorkloadSpec& workload);
// The pod-template-hash of that template: the same in every member, as the
// Deployment controller computes one hash for one template.
std::string pod_template_hash(const WorkloadSpec& workload);

// The Table columns after NAME: READY, UP-TO-DATE, AVAILABLE (priority 0),
// and after AGE the ones `-o wide` adds: CONTAINERS, IMAGES, SELECTOR (priority 1).
std::vector<nlohmann::json> deployment_columns();
std::vector<nlohmann::json> deployment_wide_columns();
std::vector<nlohmann::json> deployment_cells(const nlohmann::json& deployment);
std::vector<nlohmann::json> deployment_wide_cells(const nlohmann::json& deployment);

}  // namespace fedmetrics::sim
