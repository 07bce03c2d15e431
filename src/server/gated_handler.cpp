#include "server/gated_handler.hpp"

#include <atomic>
#include <chrono>

namespace fedmetrics::server {

std::function<void(HttpRequest, Respond)> gated_handler(std::shared_ptr<ApiHandler> handler,
                                                        std::shared_ptr<RequestGate> gate) {
  return [handler, gate](HttpRequest request, Respond respond) {
    if (!gate) return handler->handle(request, std::move(respond));
    // Set when the gate passes the request on: then the handler counts it.
    auto passed = std::make_shared<std::atomic<bool>>(false);
    auto answered = [handler, passed, started = std::chrono::steady_clock::now(), method = request.method,
                     target = request.target, respond = std::move(respond)](HttpResponse r) {
      if (!passed->load()) {
        HttpRequest what;
        what.method = method;
        what.target = target;
        handler->count_unhandled(what, r.status,
                                 std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
      }
      respond(std::move(r));
    };
    gate->handle(std::move(request), std::move(answered),
                 [&handler = *handler, passed](const HttpRequest& r, Respond done) {
                   passed->store(true);
                   handler.handle(r, std::move(done));
                 });
  };
}

}  // namespace fedmetrics::server
