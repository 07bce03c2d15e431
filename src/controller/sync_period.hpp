#pragma once
// A FederatedHPA's own sync period: the annotation
// autoscaling.fedmetrics.io/sync-period, a Go duration ("5s", "1m30s") of at
// least 3 s (the floor KEP-6003 proposes for the HPA's syncPeriodSeconds).
// Pure; private to the controller.
#include <chrono>
#include <string_view>

#include <nlohmann/json.hpp>

#include "fedmetrics/k8s/expected.hpp"

namespace fedmetrics::controller {

inline constexpr std::string_view kSyncPeriodAnnotation = "autoscaling.fedmetrics.io/sync-period";
inline constexpr std::chrono::seconds kMinSyncPeriod{3};

// The period `object` (a FederatedHPA as stored) is synced at: its
// annotation's, or `global` without one. An annotation that is not a
// duration, or is under the floor, is an error whose message names the
// value and the rule (the InvalidSyncPeriod condition's); the caller then
// keeps `global`.
k8s::Expected<std::chrono::nanoseconds> sync_period_of(const nlohmann::json& object, std::chrono::nanoseconds global);

}  // namespace fedmetrics::controller
