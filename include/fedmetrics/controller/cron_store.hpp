#pragma once
// The CronFederatedHPAs (docs/cron.md) as the cron loop reads and writes them.
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

class CronStore {
 public:
  virtual ~CronStore() = default;
  // Every CronFederatedHPA (all namespaces) matching `selector`, read from
  // the server: a run is decided on the status as stored, never on a cache
  // that may lag a change of leader.
  virtual async::Task<k8s::Expected<std::vector<nlohmann::json>>> list(const k8s::LabelSelector& selector) = 0;
  // Writes the status subresource (executionHistories).
  virtual async::Task<k8s::Expected<bool>> update_status(const std::string& namespace_name, const std::string& name,
                                                         const nlohmann::json& status) = 0;
  // Calls `on_change` (from any thread) after each change a watch of the
  // CronFederatedHPAs matching `selector` sees, while the returned Watch
  // lives, so that the loop looks again at once. May return null (no watch:
  // the loop looks at each object when it is due only).
  virtual std::unique_ptr<Watch> watch(const k8s::LabelSelector& selector, std::function<void()> on_change) = 0;
};

}  // namespace fedmetrics::controller
