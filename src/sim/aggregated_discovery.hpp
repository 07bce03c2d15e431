#pragma once
// Aggregated discovery (apidiscovery.k8s.io/v2), the one-request discovery
// kube-apiserver serves at /api and /apis since 1.26 (GA in 1.30) to a client
// whose Accept asks for it, as kubectl does. A group-version an aggregated
// server serves with no resources is listed with none (client-go takes it as
// it is), where legacy discovery's empty APIResourceList is an error to
// client-go ("received empty response for"); a version whose server could not
// be asked is "Stale" (an error for that group-version only). Internal to the
// sim module.
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "fedmetrics/transport/http_message.hpp"

namespace fedmetrics::sim::detail {

inline constexpr std::string_view kAggregatedDiscoveryType =
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

[[nodiscard]] bool wants_aggregated_discovery(std::string_view accept);

// One APIVersionDiscovery from a legacy APIResourceList document: resources
// named "parent/sub" become the parent's subresources. `fresh` false: Stale.
nlohmann::json version_discovery(const nlohmann::json& resource_list, std::string_view version, bool fresh);

// The APIGroupDiscoveryList answer; each group is {name, versions} in preference order.
transport::HttpResponse aggregated_discovery(
    const std::vector<std::pair<std::string, std::vector<nlohmann::json>>>& groups);

}  // namespace fedmetrics::sim::detail
