// The annotations of the distributed mode: the mode a FederatedHPA asks
// for, and the shares it was given, which the next sync reads back.
#include "fedmetrics/autoscaler/distributor.hpp"

#include <limits>
#include <utility>

#include <nlohmann/json.hpp>

namespace fedmetrics::autoscaler {

k8s::Expected<ScalingMode> parse_scaling_mode(std::optional<std::string_view> annotation) {
  if (!annotation || *annotation == "centralized") return ScalingMode::Centralized;
  if (*annotation == "distributed") return ScalingMode::Distributed;
  return k8s::Error{"annotation " + std::string(kModeAnnotation) + ": \"" + std::string(*annotation) +
                    "\" is neither \"distributed\" nor \"centralized\"; nothing is created"};
}

std::string distribution_annotation(const Shares& shares) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const auto& [name, share] : shares) {
    out[name] = {{"minReplicas", share.min_replicas}, {"maxReplicas", share.max_replicas}};
  }
  return out.dump();
}

k8s::Expected<Shares> parse_distribution_annotation(std::string_view text) {
  const nlohmann::json parsed = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  const std::string where(kDistributionAnnotation);
  if (parsed.is_discarded() || !parsed.is_object()) return k8s::Error{where + ": not a JSON object"};
  Shares shares;
  for (const auto& [name, value] : parsed.items()) {
    MemberShare share;
    const std::pair<const char*, std::int32_t*> fields[] = {{"minReplicas", &share.min_replicas},
                                                            {"maxReplicas", &share.max_replicas}};
    for (const auto& [key, field] : fields) {
      const auto it = value.is_object() ? value.find(key) : value.end();
      if (it == value.end() || !it->is_number_integer() || it->get<std::int64_t>() < 1 ||
          it->get<std::int64_t>() > std::numeric_limits<std::int32_t>::max()) {
        return k8s::Error{where + ": " + name + "." + key + ": must be a positive integer"};
      }
      *field = it->get<std::int32_t>();
    }
    shares.emplace(name, share);
  }
  return shares;
}

}  // namespace fedmetrics::autoscaler
