#pragma once
// The one async style of fedmetrics outside the transport's own sessions:
// C++20 coroutines (Asio awaitables) on a strand, owned by a scope.
//
// - Job: a component's long-running coroutine (a loop, a poller, the
//   leader election) on a strand of its own; stop() cancels it and returns
//   once it has ended, so nothing of the component runs after its owner
//   stopped it.
// - TaskGroup: children of a coroutine (the syncs of one pass, the writes of
//   one leadership term) that are cancelled together and waited for.
// - when_all: children of a coroutine that run at once on its executor and
//   are all waited for (the aggregator's fan-out to the members).
// - OneShot: a value set once and awaited by any number of coroutines on
//   any strands (the answer of a fan-out several queries wait for, a test's
//   fake that answers when the test says so).
//
// There is no adapter from callbacks: every port is a coroutine.
//
// Cancellation is Asio's: a terminal cancellation makes the coroutine's
// next co_await throw boost::system::system_error(operation_aborted), so a
// cancelled scope stops before its next write.
//
// Heavy (Asio): include it only in .cpp files that run coroutines.
#include <utility>  // before Asio's awaitable.hpp with GCC 12 coroutines

#include <atomic>
#include <chrono>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/append.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "fedmetrics/k8s/expected.hpp"
#include "fedmetrics/transport/executor.hpp"
#include "fedmetrics/transport/task.hpp"

namespace fedmetrics::async {

namespace asio = boost::asio;
using Strand = asio::strand<asio::any_io_executor>;

struct Executor::Impl {
  asio::any_io_executor executor;
};
inline Executor wrap(asio::any_io_executor executor) {
  return Executor(std::make_shared<const Executor::Impl>(Executor::Impl{std::move(executor)}));
}
// A new strand on the executor's io_context.
Strand make_strand(const Executor& executor);

// Whether an exception is the cancellation of the coroutine that caught it.
bool is_cancellation(const std::exception& e);

// Throws the cancellation (operation_aborted) when the calling coroutine was
// cancelled: for what is not a co_await of an async operation (a write to
// shared memory, a fire-and-forget Event) and must not happen after it.
Task<void> throw_if_cancelled();

// Waits `duration`; false when the wait was cancelled (the caller decides
// whether that ends it: a cancelled coroutine's next co_await throws anyway).
Task<bool> sleep_for(std::chrono::steady_clock::duration duration);

// Wakes a coroutine's wait early (a periodic loop told that something
// changed). wait_for() is for the coroutine on `strand`; notify() for any
// thread. Notifications before a wait are kept (one for any number).
class Wakeup {
 public:
  explicit Wakeup(Strand strand);
  void notify();
  // Ends after `duration`, or at once after a notify(); false when cancelled.
  Task<bool> wait_for(std::chrono::steady_clock::duration duration);

 private:
  struct State;
  std::shared_ptr<State> state_;
};

// At most `limit` holders at a time (a pass's concurrent syncs). Strand-only.
class Semaphore {
 public:
  explicit Semaphore(std::size_t limit) : limit_(limit == 0 ? 1 : limit) {}
  // Waits for a place; throws the cancellation when cancelled while waiting.
  Task<void> acquire();
  void release();

 private:
  void wake_next();
  std::size_t limit_;
  std::size_t held_ = 0;
  std::deque<std::shared_ptr<asio::steady_timer>> waiting_;
};

// Children coroutines of one owner on one strand, cancelled together (a
// leadership term ends) and waited for (the owner stops). Strand-only,
// except that children hold the group's state, so a child outliving the
// group object is harmless.
class TaskGroup {
 public:
  explicit TaskGroup(Strand strand);
  TaskGroup(const TaskGroup&) = delete;
  TaskGroup& operator=(const TaskGroup&) = delete;
  // Starts `task` as a child. An exception other than the cancellation is logged with `what`.
  void spawn(Task<void> task, std::string what);
  // Terminal cancellation of every child running now (not of those spawned after).
  void cancel();
  // Until no child runs. When the awaiting coroutine is cancelled meanwhile,
  // the children are cancelled and still waited for: a parent never ends
  // before its children. Await it right after a co_await that would have
  // thrown the parent's cancellation (nothing in between suspends), so that
  // no child is left running unwaited.
  Task<void> join();
  [[nodiscard]] std::size_t size() const;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

// Runs `body()` on `strand` and blocks the calling thread until it has
// ended (start-up work that must be done before going on, a final drain at
// stop). Rethrows its exception. Never from a thread of the io_context.
// As for Job::start, `body` is a plain lambda returning the Task of a named
// coroutine (STYLE: never a capturing lambda as a coroutine).
void run_and_wait(const Strand& strand, std::function<Task<void>()> body);

// A component's coroutine: started once, stopped once.
class Job {
 public:
  Job() = default;
  ~Job() { stop(); }
  Job(const Job&) = delete;
  Job& operator=(const Job&) = delete;
  // Runs `body()` on `strand`. An exception other than the cancellation is logged with `name`.
  void start(Strand strand, std::string name, std::function<Task<void>()> body);
  // Cancels the coroutine (terminal) and returns once it has ended (at once
  // when it already has, or never started). Not from the coroutine itself.
  // The io_context must still run (the owner stops the runtime after it).
  void stop();
  [[nodiscard]] bool running() const;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

// Runs every task at once as a child of the calling coroutine, on its
// executor (a strand: the children take turns), and returns once each one
// has ended, in any order. Cancelling the caller cancels the children, and
// still waits for them. The first exception a child threw is rethrown then.
Task<void> when_all(std::vector<Task<void>> tasks);

// A value set once and awaited by any number of coroutines, each resuming
// on its own executor, whichever thread sets it. Copies share the value.
// A waiter cancelled before the value comes throws the cancellation at once
// (its place stays until set(), which then skips it). T is copied to each
// waiter: a shared pointer, typically.
template <class T>
class OneShot {
 public:
  OneShot() : state_(std::make_shared<State>()) {}
  // Sets the value and resumes every waiter; a second call is ignored.
  void set(T value) const {
    std::vector<std::shared_ptr<Waiter>> waiting;
    {
      std::lock_guard lock(state_->mutex);
      if (state_->value) return;
      state_->value.emplace(std::move(value));
      waiting.swap(state_->waiting);
    }
    for (auto& waiter : waiting) waiter->resume({}, *state_->value);
  }
  // The value, at once when it is set already.
  Task<T> wait() const {
    return asio::async_initiate<const asio::use_awaitable_t<>&, void(boost::system::error_code, T)>(
        [state = state_](auto handler) {
          auto slot = asio::get_associated_cancellation_slot(handler);
          std::unique_lock lock(state->mutex);
          if (state->value) {
            T value = *state->value;
            lock.unlock();
            asio::post(asio::append(std::move(handler), boost::system::error_code(), std::move(value)));
            return;
          }
          auto waiter = std::make_shared<WaiterOf<decltype(handler)>>(std::move(handler));
          if (slot.is_connected())
            slot.assign([waiter](asio::cancellation_type) { waiter->resume(asio::error::operation_aborted, T()); });
          state->waiting.push_back(std::move(waiter));
        },
        asio::use_awaitable);
  }

 private:
  struct Waiter {
    virtual ~Waiter() = default;
    // The first call resumes the coroutine (posted to its executor), any later one is ignored.
    void resume(boost::system::error_code error, const T& value) {
      if (!resumed.exchange(true)) post(error, value);
    }
    virtual void post(boost::system::error_code error, const T& value) = 0;
    std::atomic<bool> resumed{false};
  };
  template <class Handler>
  struct WaiterOf final : Waiter {
    explicit WaiterOf(Handler h) : handler(std::move(h)) {}
    void post(boost::system::error_code error, const T& value) override {
      asio::post(asio::append(std::move(handler), error, value));
    }
    Handler handler;
  };
  struct State {
    std::mutex mutex;
    std::optional<T> value;                        // guarded by mutex; never changes once set
    std::vector<std::shared_ptr<Waiter>> waiting;  // guarded by mutex
  };
  std::shared_ptr<State> state_;
};

}  // namespace fedmetrics::async
