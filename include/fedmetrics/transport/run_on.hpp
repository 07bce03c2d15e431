#pragma once
// Awaiting a coroutine that runs on another strand (a client's request on
// the client's strand, awaited from a loop's sync): the caller resumes on
// its own executor with the coroutine's value, and the caller's
// cancellation reaches the coroutine on its own strand.
//
// Not asio::co_spawn(strand, task, use_awaitable) from a coroutine that may
// be cancelled: Boost 1.81 forwards the caller's cancellation to the other
// strand as a post that holds a plain pointer into the caller's cancellation
// slot. When the coroutine has just ended, the caller resumes with its value
// and clears that slot before the post runs, which then emits a signal that
// is gone (a SIGSEGV in cancellation_signal::emit, seen when a lost Lease
// cancelled hundreds of syncs at once; later Asio releases hold that signal
// by a shared pointer, as run_on does).
//
// Heavy (Asio): include it only in .cpp files that run coroutines.
#include <utility>  // before Asio's awaitable.hpp with GCC 12 coroutines

#include <exception>
#include <memory>
#include <type_traits>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace fedmetrics::async {

// Runs `task` on `strand` and gives back its value, or rethrows what it
// threw, on the caller's executor. A cancellation of the caller is emitted
// on `strand`, where the task's operations run; the task decides what it
// means (the HTTPS client ends the request's current step with an error).
// The caller still waits for the task to end.
template <class T, class Strand>
boost::asio::awaitable<T> run_on(Strand strand, boost::asio::awaitable<T> task) {
  namespace asio = boost::asio;
  // Shared with the forwarding: it may reach `strand` after this frame ended.
  auto signal = std::make_shared<asio::cancellation_signal>();
  auto cancellation = co_await asio::this_coro::cancellation_state;
  auto slot = cancellation.slot();
  // The caller's slot holds this until the task's answer comes back (Asio
  // clears it then); the task is bound to `signal` alone.
  if (slot.is_connected())
    slot.assign([signal, strand](asio::cancellation_type type) {
      asio::dispatch(strand, [signal, type] { signal->emit(type); });
    });
  auto on_strand = asio::co_spawn(strand, std::move(task),
                                  asio::bind_cancellation_slot(signal->slot(), asio::as_tuple(asio::use_awaitable)));
  if constexpr (std::is_void_v<T>) {
    auto [failure] = co_await std::move(on_strand);
    if (failure) std::rethrow_exception(failure);
  } else {
    auto [failure, value] = co_await std::move(on_strand);
    if (failure) std::rethrow_exception(failure);
    co_return std::move(value);
  }
}

}  // namespace fedmetrics::async
