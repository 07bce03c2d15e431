#pragma once
// A single-threaded run loop with fake time for the loops' tests: the
// io_context runs on the test's own thread, only when the test polls it, and
// time moves only when the test advances its FakeClock. So a test sees
// exactly what a loop does at each moment, with no runtime thread, no sleep
// and no wait against the wall clock:
//
//   RunLoop loop;
//   HpaController controller(loop.executor(), ..., options with loop.clock);
//   controller.start();
//   loop.poll();                        // everything due now has run
//   loop.advance(std::chrono::seconds(15));  // the next period, and what it wakes
//   loop.run(controller.shutdown());    // a coroutine awaited to its end
#include <utility>  // before Asio's awaitable.hpp (GCC 12)

#include <chrono>
#include <exception>
#include <memory>
#include <optional>
#include <stdexcept>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include "fedmetrics/transport/async.hpp"
#include "support/fake_clock.hpp"

namespace fedmetrics::testing {

class RunLoop {
 public:
  RunLoop() = default;
  RunLoop(const RunLoop&) = delete;
  RunLoop& operator=(const RunLoop&) = delete;

  // The monotonic clock of the loops under test (ControllerOptions::monotonic and the like).
  std::shared_ptr<FakeClock> clock = std::make_shared<FakeClock>();

  [[nodiscard]] async::Executor executor() { return async::wrap(context_.get_executor()); }

  // Runs every handler that is ready, and those they make ready, until none
  // is; time does not move. Returns how many ran.
  std::size_t poll() {
    context_.restart();
    return context_.poll();
  }

  // Moves the clock on by `duration` one wakeup at a time (a loop woken at
  // its deadline runs, and may sleep again, before time moves further), and
  // polls after each.
  void advance(controller::Clock::Duration duration) {
    poll();
    const auto until = clock->now() + duration;
    for (;;) {
      const auto next = clock->next_deadline();
      if (!next || *next > until) break;
      clock->advance(*next - clock->now());
      poll();
    }
    clock->advance(until - clock->now());
    poll();
  }

  // Starts `task` on the loop; the flag turns true when it has ended.
  template <class T>
  std::shared_ptr<bool> spawn(async::Task<T> task) {
    auto ended = std::make_shared<bool>(false);
    auto error = error_;
    boost::asio::co_spawn(context_, std::move(task), [ended, error](std::exception_ptr e, auto&&...) {
      *ended = true;
      if (e && !*error) *error = e;
    });
    return ended;
  }

  // Runs `task` to its end without moving time; throws what it threw, or
  // when it cannot end without time passing (it waits for something else).
  template <class T>
  T run(async::Task<T> task) {
    auto result = std::make_shared<std::optional<T>>();
    auto ended = spawn(store(std::move(task), result));
    poll();
    rethrow();
    if (!*ended) throw std::logic_error("RunLoop::run: the task waits for something that never comes");
    return std::move(**result);
  }
  void run(async::Task<void> task) {
    auto ended = spawn(std::move(task));
    poll();
    rethrow();
    if (!*ended) throw std::logic_error("RunLoop::run: the task waits for something that never comes");
  }

  // Throws the first exception a spawned task ended with.
  void rethrow() {
    if (*error_) std::rethrow_exception(std::exchange(*error_, nullptr));
  }

 private:
  template <class T>
  static async::Task<void> store(async::Task<T> task, std::shared_ptr<std::optional<T>> result) {
    *result = co_await std::move(task);
  }

  boost::asio::io_context context_{1};
  std::shared_ptr<std::exception_ptr> error_ = std::make_shared<std::exception_ptr>();
};

}  // namespace fedmetrics::testing
