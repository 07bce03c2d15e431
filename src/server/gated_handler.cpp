#include "server/gated_handler.hpp"

#include <chrono>
#include <string>
#include <utility>
#include <variant>

#include "fedmetrics/transport/async.hpp"

namespace fedmetrics::server {

namespace {

// The gate's verdict: the request it lets through, or its answer.
using Verdict = std::variant<HttpRequest, HttpResponse>;

// The one bridge to the gate's callback form, kept until its review client
// returns a coroutine: the gate answers from the review's thread when it
// asks the control plane. Cancelled first, the request is closed unanswered.
async::Task<Verdict> pass_gate(RequestGate& gate, HttpRequest request) {
  HttpResponse unanswered;
  unanswered.status = 0;
  Verdict cancelled = std::move(unanswered);
  co_return co_await async::await_callback_or<Verdict>(
      [&gate, &request](const std::function<void(Verdict)>& done) {
        gate.handle(
            std::move(request), [done](HttpResponse refusal) { done(std::move(refusal)); },
            [done](const HttpRequest& admitted, const std::function<void(HttpResponse)>&) { done(admitted); });
      },
      std::move(cancelled));
}

}  // namespace

async::Task<HttpResponse> handle_gated(std::shared_ptr<const ApiHandler> handler, std::shared_ptr<RequestGate> gate,
                                       HttpRequest request) {
  if (!gate) co_return co_await handler->handle(std::move(request));
  const auto started = std::chrono::steady_clock::now();
  HttpRequest counted;  // what the request metrics need of a refused request
  counted.method = request.method;
  counted.target = request.target;
  auto verdict = co_await pass_gate(*gate, std::move(request));
  if (auto* admitted = std::get_if<HttpRequest>(&verdict)) co_return co_await handler->handle(std::move(*admitted));
  auto& refusal = std::get<HttpResponse>(verdict);
  if (refusal.status == 0) co_await async::throw_if_cancelled();
  handler->count_unhandled(counted, refusal.status,
                           std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  co_return std::move(refusal);
}

}  // namespace fedmetrics::server
