#pragma once
// Distributed mode's port to one member cluster's autoscaling/v2
// HorizontalPodAutoscalers (docs/distributed-mode.md): the calls the loop
// makes to create, update and delete the member HPAs and to read them back.
// src/main implements it over HTTPS with the member's credentials or through
// the control plane's cluster proxy, as the metrics reads reach the member;
// tests use the fake in test/support.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fedmetrics/autoscaler/hpa_spec.hpp"
#include "fedmetrics/k8s/expected.hpp"
#include "fedmetrics/k8s/label_selector.hpp"
#include "fedmetrics/transport/task.hpp"

namespace fedmetrics::controller {

class MemberHPAs {
 public:
  explicit MemberHPAs(std::string member) : member_(std::move(member)) {}
  virtual ~MemberHPAs() = default;
  // The member's name, for logs and Events.
  [[nodiscard]] const std::string& member() const { return member_; }
  // The HPAs of `namespace_name` (empty: every namespace) matching `selector`.
  virtual async::Task<k8s::Expected<std::vector<nlohmann::json>>> list(const std::string& namespace_name,
                                                                       const k8s::LabelSelector& selector) = 0;
  // The HPA, or nullopt when the member has none of that name (404).
  virtual async::Task<k8s::Expected<std::optional<nlohmann::json>>> get(const std::string& namespace_name,
                                                                        const std::string& name) = 0;
  // POSTs `hpa` to its metadata.namespace; the stored object comes back.
  virtual async::Task<k8s::Expected<nlohmann::json>> create(const nlohmann::json& hpa) = 0;
  // PUTs `hpa`, conditional on its metadata.resourceVersion (a conflict,
  // 409, is an error: read again and decide again at the next sync).
  virtual async::Task<k8s::Expected<nlohmann::json>> update(const nlohmann::json& hpa) = 0;
  // Whether the member has the scale target `target` in `namespace_name` (a
  // GET of it: true when it answers it, false on 404; any other answer is an
  // error). Distributed mode without a ResourceBinding places member HPAs on
  // every Ready member that has the target workload (docs/distributed-mode.md).
  virtual async::Task<k8s::Expected<bool>> has_target(const std::string& namespace_name,
                                                      const autoscaler::CrossVersionObjectReference& target) = 0;
  // true: deleted; false: it was not there (404). `uid` non-empty: only the
  // object with that metadata.uid (DeleteOptions.preconditions; another
  // object created under the name meanwhile is a conflict, 409, an error),
  // so that what the loop read is what it deletes.
  virtual async::Task<k8s::Expected<bool>> remove(const std::string& namespace_name, const std::string& name,
                                                  const std::string& uid) = 0;

 private:
  std::string member_;
};

}  // namespace fedmetrics::controller
