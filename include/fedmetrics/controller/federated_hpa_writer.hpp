#pragma once
// The loops' writes to a FederatedHPA: its status subresource, and for
// scheduled scaling and distributed mode the fields fedmetrics owns.
// Each is a merge patch of those fields alone; `true` when written.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fedmetrics/k8s/expected.hpp"
#include "fedmetrics/transport/task.hpp"

namespace fedmetrics::controller {

class FederatedHPAWriter {
 public:
  virtual ~FederatedHPAWriter() = default;
  // The status subresource (a FederatedHPAStatus as JSON); the fields it
  // leaves out are cleared.
  virtual async::Task<k8s::Expected<bool>> update_status(const std::string& namespace_name, const std::string& name,
                                                         const nlohmann::json& status) = 0;
  // spec.minReplicas and spec.maxReplicas in one write, conditional on
  // `resource_version` (a conflict is an error: read again, decide again).
  virtual async::Task<k8s::Expected<bool>> update_replicas(const std::string& namespace_name, const std::string& name,
                                                           std::int32_t min_replicas, std::int32_t max_replicas,
                                                           const std::string& resource_version) = 0;
  // metadata.finalizers set to `finalizers` (the list as read, with
  // fedmetrics' own added or removed), conditional on `resource_version`.
  virtual async::Task<k8s::Expected<bool>> set_finalizers(const std::string& namespace_name, const std::string& name,
                                                          const std::vector<std::string>& finalizers,
                                                          const std::string& resource_version) = 0;
  // The autoscaling.fedmetrics.io/distribution annotation set to `value`
  // (autoscaler::distribution_annotation), or removed (nullopt).
  virtual async::Task<k8s::Expected<bool>> set_distribution_annotation(const std::string& namespace_name,
                                                                       const std::string& name,
                                                                       const std::optional<std::string>& value) = 0;
  // The annotation `key` set to `value`, or removed (nullopt); the others stay.
  virtual async::Task<k8s::Expected<bool>> set_annotation(const std::string& namespace_name, const std::string& name,
                                                          const std::string& key,
                                                          const std::optional<std::string>& value) = 0;
};

}  // namespace fedmetrics::controller
