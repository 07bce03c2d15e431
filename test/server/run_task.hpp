#pragma once
// Runs a coroutine of the server (a handler) on an io_context of its own, on
// the test's thread: the handlers are tested without a server.
#include <chrono>
#include <cstddef>
#include <exception>
#include <optional>
#include <utility>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>

#include "fedmetrics/transport/async.hpp"

namespace fedmetrics::server::testing {

// To its end.
template <class T>
T run(async::Task<T> task) {
  boost::asio::io_context io;
  std::optional<T> out;
  std::exception_ptr failure;
  boost::asio::co_spawn(io, std::move(task), [&](std::exception_ptr e, T value) {
    failure = e;
    out = std::move(value);
  });
  io.run();
  if (failure) std::rethrow_exception(failure);
  REQUIRE(out);
  return std::move(*out);
}

// Step by step, with a cancellation signal: for what a request does when it
// is cancelled while it waits.
template <class T>
class Stepped {
 public:
  explicit Stepped(async::Task<T> task) {
    boost::asio::co_spawn(io_, std::move(task),
                          boost::asio::bind_cancellation_slot(cancel_.slot(), [this](std::exception_ptr e, T) {
                            ended_ = true;
                            failure_ = e;
                          }));
  }
  // Runs what is ready, for up to 50 ms; how many handlers ran.
  std::size_t step() {
    io_.restart();
    return io_.run_for(std::chrono::milliseconds(50));
  }
  void cancel() { cancel_.emit(boost::asio::cancellation_type::terminal); }
  [[nodiscard]] bool ended() const { return ended_; }
  // Ended by its cancellation (the exception Asio's cancellation throws).
  [[nodiscard]] bool ended_by_cancellation() const {
    if (!ended_ || !failure_) return false;
    try {
      std::rethrow_exception(failure_);
    } catch (const std::exception& e) {
      return async::is_cancellation(e);
    }
  }

 private:
  boost::asio::io_context io_;
  boost::asio::cancellation_signal cancel_;
  bool ended_ = false;
  std::exception_ptr failure_;
};

}  // namespace fedmetrics::server::testing
