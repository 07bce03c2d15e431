#pragma once
// What a simulated member's kube-apiserver stores besides the simulated
// pods: autoscaling/v2 HorizontalPodAutoscalers (create, get, list, update,
// patch, delete, the status subresource, watch), in an ObjectStore of the
// member's own, apart from the Karmada control plane's and from fedmetrics.
// MemberApi answers the rest (and lists autoscaling/v2 in discovery); the
// shell sends a request here when handles() says so. Thread-safe.
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>

#include "fedmetrics/k8s/time.hpp"
#include "fedmetrics/sim/federation.hpp"
#include "fedmetrics/sim/object_store.hpp"
#include "fedmetrics/transport/http_message.hpp"

namespace fedmetrics::sim {

class MemberObjects {
 public:
  MemberObjects(std::function<k8s::Timestamp()> clock, std::size_t watch_history);

  // Requests for the stored types (below /apis/autoscaling/v2/) and the
  // OpenAPI index kubectl create/apply read.
  [[nodiscard]] static bool handles(const transport::HttpRequest& request);

  // Authenticates as MemberApi does, applies the errorRate fault with
  // `fault_draw`, then serves (a watch as a streamed answer).
  [[nodiscard]] transport::HttpResponse handle(const Federation& federation, std::size_t member,
                                               const transport::HttpRequest& request, double fault_draw);

  [[nodiscard]] ObjectStore& store() { return *store_; }
  [[nodiscard]] const ResourceType& hpa_type() const { return *hpa_; }

 private:
  std::shared_ptr<ObjectStore> store_;
  const ResourceType* hpa_ = nullptr;
  std::function<k8s::Timestamp()> clock_;
};

}  // namespace fedmetrics::sim
