#pragma once
// A watch of a simulated member's pods (GET /api/v1/pods?watch=true, or of
// one namespace), as the autoscaler's reflectors ask for it. The simulator
// keeps no log of its pods' changes: they follow from the federation and
// the time. So a watch carries no object: while the pods it watches stay as
// they were, it sends a BOOKMARK when the federation's resourceVersion moves
// (so that a watch resumed later starts from there); once they change (a
// pod created, deleted, started or Ready), it ends with an ERROR 410
// Expired, and the client lists them again. A watch from another
// resourceVersion than the current one, or while the pods are changing,
// expires at once. Internal to the sim module.
#include <cstddef>
#include <optional>

#include "fedmetrics/transport/http_message.hpp"

namespace fedmetrics::sim::detail {

struct Simulation;

// The answer to `request` when it is a watch of the member's pods (a
// stream, or a Status); nothing when it is another request.
std::optional<transport::HttpResponse> watch_member_pods(Simulation& sim, std::size_t member,
                                                         const transport::HttpRequest& request);

}  // namespace fedmetrics::sim::detail
