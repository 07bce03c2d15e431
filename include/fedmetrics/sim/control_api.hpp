#pragma once
// The simulator's own control endpoint: change a workload's offered load or
// replicas, a member's faults, or an external metric's value, at run time.
//
//   GET    /sim/v1/world                                      summary of the state
//   PUT    /sim/v1/namespaces/{ns}/workloads/{name}/load      {"cpu":"2","requestsPerSecond":"10"}
//   PUT    /sim/v1/namespaces/{ns}/workloads/{name}/replicas  {"replicas":4}
//   PUT    /sim/v1/namespaces/{ns}/workloads/{name}/members/{member}/load  {"cpu":"2"}
//          the member's pods alone share this load; DELETE returns them to the workload's
//   PUT    /sim/v1/members/{name}/faults                      {"latency":"200ms","errorRate":0.5,...} (replaces)
//   PATCH  /sim/v1/members/{name}/faults                      same fields, merged into the current faults
//   DELETE /sim/v1/members/{name}/faults                      clears them
//   PUT    /sim/v1/externalmetrics/{name}                     {"value":"42"}
//
// Pure: the answer and, for a change, the new federation value.
#include <optional>

#include "fedmetrics/k8s/time.hpp"
#include "fedmetrics/sim/federation.hpp"
#include "fedmetrics/transport/http_message.hpp"

namespace fedmetrics::sim {

struct ControlOutcome {
  transport::HttpResponse response;
  std::optional<Federation> updated;  // set when the request changed the state
};

ControlOutcome handle_control_request(const Federation& current, const transport::HttpRequest& request,
                                      k8s::Timestamp now);

// The summary served by GET /sim/v1/world.
nlohmann::json world_summary(const Federation& federation, k8s::Timestamp now);

}  // namespace fedmetrics::sim
