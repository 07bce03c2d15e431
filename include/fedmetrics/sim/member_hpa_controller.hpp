#pragma once
// The HPA controller of one simulated member, as kube-controller-manager runs
// it there: each resync takes every HorizontalPodAutoscaler the member stores,
// reads the member's own pods and pod metrics from the federation snapshot
// (not through fedmetrics), and runs the product's pure autoscaler::sync on
// them. Its answer is what the shell must do: write each HPA's status, and
// set the member's replica count of a workload within the HPA's min/max. The
// recommendations and scale events it remembers between resyncs (the
// stabilization window) are its own, per HPA uid, shared with nothing else.
// Pure: no I/O, the clock is passed in.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fedmetrics/autoscaler/autoscaler.hpp"
#include "fedmetrics/k8s/time.hpp"
#include "fedmetrics/sim/federation.hpp"

namespace fedmetrics::sim {

struct MemberHpaAction {
  std::string namespace_name;
  std::string name;
  nlohmann::json status;  // the HPA's new status (autoscaling/v2 shape)
  // The workload to scale in this member (index into World::workloads) and to how many.
  std::optional<std::pair<std::size_t, std::int32_t>> scale;
  std::string scale_reason;  // the SuccessfulRescale event's message
};

class MemberHpaController {
 public:
  explicit MemberHpaController(autoscaler::ControllerConfig config = {}) : config_(config) {}

  // One resync of `member`: `hpas` is the member's HorizontalPodAutoscalerList as stored.
  std::vector<MemberHpaAction> sync(const Federation& federation, std::size_t member, const nlohmann::json& hpas,
                                    k8s::Timestamp now);

 private:
  struct Memory {
    autoscaler::FederatedHPAStatus status;
    autoscaler::ScalingHistory history;
  };
  autoscaler::ControllerConfig config_;
  std::map<std::string, Memory> memory_;  // by HPA uid; forgotten when the HPA is gone
};

}  // namespace fedmetrics::sim
