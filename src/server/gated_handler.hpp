#pragma once
// The server's request handler as `fedmetrics serve` runs it: every request
// passes the RequestGate (authentication, authorization) before the
// ApiHandler answers it.
#include <memory>

#include "fedmetrics/transport/task.hpp"
#include "server/api_handler.hpp"
#include "server/http_types.hpp"
#include "server/request_gate.hpp"

namespace fedmetrics::server {

// What the gate answers itself (401, 403, a failed review's 500) is counted
// in the ApiHandler's request metrics too. Without a gate
// (--insecure-development-no-auth), the ApiHandler answers every request.
async::Task<HttpResponse> handle_gated(std::shared_ptr<const ApiHandler> handler, std::shared_ptr<RequestGate> gate,
                                       HttpRequest request);

}  // namespace fedmetrics::server
