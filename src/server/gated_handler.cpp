#include "server/gated_handler.hpp"

#include <chrono>
#include <string>
#include <utility>
#include <variant>

namespace fedmetrics::server {

async::Task<HttpResponse> handle_gated(std::shared_ptr<const ApiHandler> handler, std::shared_ptr<RequestGate> gate,
                                       HttpRequest request) {
  if (!gate) co_return co_await handler->handle(std::move(request));
  const auto started = std::chrono::steady_clock::now();
  HttpRequest counted;  // what the request metrics need of a refused request
  counted.method = request.method;
  counted.target = request.target;
  // Cancelled while a review is out, the gate ends with the cancellation:
  // the request is closed unanswered.
  auto admitted = gate->admit(std::move(request));
  auto verdict = co_await std::move(admitted);
  if (auto* pass = std::get_if<HttpRequest>(&verdict)) co_return co_await handler->handle(std::move(*pass));
  auto& refusal = std::get<HttpResponse>(verdict);
  handler->count_unhandled(counted, refusal.status,
                           std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  co_return std::move(refusal);
}

}  // namespace fedmetrics::server
