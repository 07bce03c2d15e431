#pragma once
// core/v1 Events of the control plane, written as the EventRecorder decides
// (POST a new one, merge-PATCH the count of an existing one).
#include <chrono>
#include <memory>

#include "fedmetrics/controller/event_correlator.hpp"
#include "fedmetrics/kube/https_client.hpp"

namespace fedmetrics::kubeclient {

class RestEventWriter final : public controller::EventWriter {
 public:
  RestEventWriter(std::shared_ptr<kube::HttpsClient> client, std::chrono::milliseconds timeout)
      : client_(std::move(client)), timeout_(timeout) {}
  void create_event(const controller::Event& e, Done done) override;
  void patch_event(const controller::Event& e, Done done) override;

 private:
  std::shared_ptr<kube::HttpsClient> client_;
  std::chrono::milliseconds timeout_;
};

}  // namespace fedmetrics::kubeclient
