#pragma once
// The server's request path: the request gate in front of the handler. What
// the gate answers itself (401, 403, a failed review's 500) is counted in
// the request metrics here (ApiHandler::count_unhandled), what it passes on
// is counted by the handler, so that refusals are seen as well as answers.
#include <functional>
#include <memory>

#include "server/api_handler.hpp"
#include "server/request_gate.hpp"

namespace fedmetrics::server {

// The TLS server's request handler (transport::RequestHandler); without a
// gate (--insecure-development-no-auth) the handler answers every request.
std::function<void(HttpRequest, Respond)> gated_handler(std::shared_ptr<ApiHandler> handler,
                                                        std::shared_ptr<RequestGate> gate);

}  // namespace fedmetrics::server
