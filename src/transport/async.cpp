#include "fedmetrics/transport/async.hpp"

#include <condition_variable>
#include <list>

#include <boost/asio/deferred.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/experimental/parallel_group.hpp>
#include <boost/system/system_error.hpp>

namespace fedmetrics::async {

// Logged from another translation unit (async_log.cpp): spdlog here changes
// GCC 12's inlining of the coroutine frames enough to raise a false
// -Wmismatched-new-delete inside Asio (as in the member client).
void report_coroutine_failure(const std::string& what, const char* error);

namespace {

// How a spawned coroutine ended, logged unless it ended well or by its cancellation.
void report_unless_cancelled(const std::string& what, const std::exception_ptr& e) {
  if (!e) return;
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& failure) {
    if (!is_cancellation(failure)) report_coroutine_failure(what, failure.what());
  } catch (...) {
    report_coroutine_failure(what, "unknown exception");
  }
}

}  // namespace

Strand make_strand(const Executor& executor) { return asio::make_strand(executor.impl()->executor); }

bool is_cancellation(const std::exception& e) {
  const auto* system = dynamic_cast<const boost::system::system_error*>(&e);
  return system != nullptr && system->code() == asio::error::operation_aborted;
}

Task<void> throw_if_cancelled() {
  auto state = co_await asio::this_coro::cancellation_state;
  if (state.cancelled() != asio::cancellation_type::none)
    throw boost::system::system_error(asio::error::operation_aborted, "cancelled");
}

Task<bool> sleep_for(std::chrono::steady_clock::duration duration) {
  asio::steady_timer timer(co_await asio::this_coro::executor, duration);
  auto [ec] = co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
  co_return !ec;
}

Task<void> when_all(std::vector<Task<void>> tasks) {
  if (tasks.empty()) co_return;
  const auto executor = co_await asio::this_coro::executor;
  using Spawned = decltype(asio::co_spawn(executor, std::declval<Task<void>>(), asio::deferred));
  std::vector<Spawned> children;
  children.reserve(tasks.size());
  for (auto& task : tasks) children.push_back(asio::co_spawn(executor, std::move(task), asio::deferred));
  auto group = asio::experimental::make_parallel_group(std::move(children));
  auto [order, failures] = co_await group.async_wait(asio::experimental::wait_for_all(), asio::use_awaitable);
  for (const auto& failure : failures)
    if (failure) std::rethrow_exception(failure);
}

// ---- Wakeup

struct Wakeup::State {
  explicit State(Strand s) : strand(std::move(s)), timer(strand) {}
  Strand strand;
  asio::steady_timer timer;  // on the strand only
  bool notified = false;     // on the strand only
};

Wakeup::Wakeup(Strand strand) : state_(std::make_shared<State>(std::move(strand))) {}

void Wakeup::notify() {
  asio::post(state_->strand, [state = state_] {
    state->notified = true;
    state->timer.cancel();
  });
}

Task<bool> Wakeup::wait_for(std::chrono::steady_clock::duration duration) {
  auto state = state_;
  if (!state->notified) {
    state->timer.expires_after(duration);
    auto [ec] = co_await state->timer.async_wait(asio::as_tuple(asio::use_awaitable));
    (void)ec;
  }
  state->notified = false;
  auto cancellation = co_await asio::this_coro::cancellation_state;
  co_return cancellation.cancelled() == asio::cancellation_type::none;
}

// ---- Semaphore

Task<void> Semaphore::acquire() {
  while (held_ >= limit_) {
    auto timer =
        std::make_shared<asio::steady_timer>(co_await asio::this_coro::executor, asio::steady_timer::time_point::max());
    waiting_.push_back(timer);
    // Woken by release() (the timer cancelled), or cancelled itself.
    auto [ec] = co_await timer->async_wait(asio::as_tuple(asio::use_awaitable));
    (void)ec;
    std::erase(waiting_, timer);
    auto cancellation = co_await asio::this_coro::cancellation_state;
    if (cancellation.cancelled() != asio::cancellation_type::none) {
      // A release() may have woken this waiter just as it was cancelled: the
      // place it would have taken goes to the next one.
      if (held_ < limit_) wake_next();
      co_await throw_if_cancelled();
    }
  }
  ++held_;
}

void Semaphore::release() {
  if (held_ > 0) --held_;
  wake_next();
}

void Semaphore::wake_next() {
  if (waiting_.empty()) return;
  waiting_.front()->cancel();
  waiting_.pop_front();
}

// ---- TaskGroup

struct TaskGroup::State {
  explicit State(Strand s) : strand(std::move(s)), idle(strand, asio::steady_timer::time_point::max()) {}
  Strand strand;
  std::list<asio::cancellation_signal> signals;  // one per running child; stable addresses
  std::size_t running = 0;
  asio::steady_timer idle;  // cancelled when `running` drops to 0 (join waits on it)
};

namespace {

// Counts a child from its first step to the destruction of its frame, which
// also happens when the io_context is destroyed under it.
struct ChildGuard {
  std::shared_ptr<void> keep;
  std::size_t* running;
  asio::steady_timer* idle;
  ~ChildGuard() {
    if (--*running == 0) idle->cancel();
  }
};

// A free function, not a lambda: GCC 12 miscompiles coroutine lambdas
// started more than once (their frames were resumed uninitialised).
Task<void> run_child(std::shared_ptr<void> keep, std::size_t* running, asio::steady_timer* idle, Task<void> task) {
  ChildGuard guard{std::move(keep), running, idle};
  co_await std::move(task);
}

}  // namespace

TaskGroup::TaskGroup(Strand strand) : state_(std::make_shared<State>(std::move(strand))) {}

void TaskGroup::spawn(Task<void> task, std::string what) {
  auto state = state_;
  auto signal = state->signals.emplace(state->signals.end());
  ++state->running;
  asio::co_spawn(
      state->strand, run_child(state, &state->running, &state->idle, std::move(task)),
      asio::bind_cancellation_slot(signal->slot(), [state, signal, what = std::move(what)](std::exception_ptr e) {
        report_unless_cancelled(what, e);
        // The signal may still be referenced by the finishing frame: dropped after it.
        asio::post(state->strand, [state, signal] { state->signals.erase(signal); });
      }));
}

void TaskGroup::cancel() {
  for (auto& signal : state_->signals) signal.emit(asio::cancellation_type::terminal);
}

Task<void> TaskGroup::join() {
  auto state = state_;
  co_await asio::this_coro::throw_if_cancelled(false);
  bool children_cancelled = false;
  while (state->running > 0) {
    state->idle.expires_at(asio::steady_timer::time_point::max());
    // Ends when the last child ends, or when this coroutine is cancelled.
    auto [ec] = co_await state->idle.async_wait(asio::as_tuple(asio::use_awaitable));
    (void)ec;
    auto cancellation = co_await asio::this_coro::cancellation_state;
    if (!children_cancelled && cancellation.cancelled() != asio::cancellation_type::none) {
      cancel();
      children_cancelled = true;
    }
  }
  co_await asio::this_coro::throw_if_cancelled(true);
}

std::size_t TaskGroup::size() const { return state_->running; }

// The condition variables here (run_and_wait's and Job::stop's) block the
// owner's thread only: in `serve` and `sim`, the main thread stopping the
// runtime's components in order (Runtime::stop), and, at start-up, building
// the Karmada member source (its first poll), while the runtime's threads
// run what it waits for. No runtime thread ever waits on them.
void run_and_wait(const Strand& strand, std::function<Task<void>()> body) {
  struct Outcome {
    std::mutex mutex;
    std::condition_variable cv;
    bool ended = false;
    std::exception_ptr error;
  };
  auto outcome = std::make_shared<Outcome>();
  asio::co_spawn(strand, std::move(body)(), [outcome](std::exception_ptr e) {
    std::lock_guard lock(outcome->mutex);
    outcome->error = e;
    outcome->ended = true;
    outcome->cv.notify_all();
  });
  std::unique_lock lock(outcome->mutex);
  outcome->cv.wait(lock, [&] { return outcome->ended; });
  if (outcome->error) std::rethrow_exception(outcome->error);
}

// ---- Job

struct Job::State {
  explicit State(Strand s) : strand(std::move(s)) {}
  Strand strand;
  asio::cancellation_signal signal;  // touched on the strand only
  std::mutex mutex;
  std::condition_variable ended_cv;
  bool ended = false;
  bool stop_asked = false;
};

namespace {

struct EndGuard {
  std::function<void()> on_end;
  ~EndGuard() { on_end(); }
};

// `body` is kept in this frame while its coroutine runs: a coroutine lambda
// reads its captures from the closure object.
Task<void> run_job(std::function<void()> on_end, std::function<Task<void>()> body) {
  // Ends the job also when the frame is destroyed without completing (the io_context went first).
  EndGuard guard{std::move(on_end)};
  co_await body();
}

}  // namespace

void Job::start(Strand strand, std::string name, std::function<Task<void>()> body) {
  auto state = std::make_shared<State>(std::move(strand));
  state_ = state;
  auto on_end = [state] {
    std::lock_guard lock(state->mutex);
    state->ended = true;
    state->ended_cv.notify_all();
  };
  asio::co_spawn(state->strand, run_job(std::move(on_end), std::move(body)),
                 asio::bind_cancellation_slot(state->signal.slot(), [name = std::move(name)](std::exception_ptr e) {
                   report_unless_cancelled(name, e);
                 }));
}

void Job::stop() {
  auto state = state_;
  if (!state) return;
  {
    std::lock_guard lock(state->mutex);
    if (state->ended) return;
    if (!state->stop_asked) {
      state->stop_asked = true;
      asio::post(state->strand, [state] { state->signal.emit(asio::cancellation_type::terminal); });
    }
  }
  std::unique_lock lock(state->mutex);
  state->ended_cv.wait(lock, [&] { return state->ended; });
}

bool Job::running() const {
  if (!state_) return false;
  std::lock_guard lock(state_->mutex);
  return !state_->ended;
}

}  // namespace fedmetrics::async
