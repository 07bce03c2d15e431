#pragma once
// A watch of one autoscaling.karmada.io/v1alpha1 collection of the control
// plane (FederatedHPAs, CronFederatedHPAs): a reflector lists and watches
// it while this object lives, and calls `on_change` after each change.
#include <chrono>
#include <memory>
#include <string>

#include "fedmetrics/controller/watch.hpp"
#include "fedmetrics/k8s/label_selector.hpp"
#include "fedmetrics/kube/https_client.hpp"
#include "fedmetrics/kube/reflector.hpp"
#include "fedmetrics/transport/executor.hpp"

namespace fedmetrics::kubeclient {

class CollectionWatch final : public controller::Watch {
 public:
  // `what` names the collection in the log ("autoscaler: FederatedHPAs").
  CollectionWatch(std::shared_ptr<kube::HttpsClient> client, const async::Executor& executor,
                  const std::string& resource, std::string what, const k8s::LabelSelector& selector,
                  std::chrono::milliseconds timeout, kube::Reflector::OnChange on_change);
  // Stops the reflector: no callback runs once this returns.
  ~CollectionWatch() override;

  [[nodiscard]] const kube::Reflector& reflector() const { return *reflector_; }

 private:
  std::unique_ptr<kube::Reflector> reflector_;
};

}  // namespace fedmetrics::kubeclient
