#include "kube/connection_pool.hpp"

#include <algorithm>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace fedmetrics::kube {

namespace asio = boost::asio;
using asio::awaitable;
using Clock = std::chrono::steady_clock;

struct ConnectionPool::State {
  struct Waiter {
    asio::steady_timer timer;
    std::unique_ptr<Stream> stream;  // a handed-over idle connection, or null with `granted` = open a new one
    bool granted = false;
    explicit Waiter(asio::any_io_executor ex) : timer(std::move(ex)) {}
  };
  struct IdleConnection {
    std::unique_ptr<Stream> stream;
    Clock::time_point since;  // back in the pool since
  };

  std::size_t max_connections;
  std::chrono::milliseconds idle_timeout;
  mutable std::mutex mutex;
  std::vector<IdleConnection> idle;  // the most recently used last
  std::size_t open = 0;
  std::deque<std::shared_ptr<Waiter>> waiters;
  std::uint64_t idle_closed = 0;
  // Closes idle connections once they have been idle for idle_timeout, so
  // that an idle client holds no descriptors the peer has long given up
  // (armed while any is idle).
  asio::steady_timer sweep_timer;
  bool sweep_armed = false;

  State(asio::any_io_executor executor, std::size_t max, std::chrono::milliseconds timeout)
      : max_connections(max), idle_timeout(timeout), sweep_timer(std::move(executor)) {}

  // Whether an idle connection may carry another request: not idle too
  // long, and neither closed nor written to by the peer meanwhile.
  bool reusable(IdleConnection& c, Clock::time_point now) const {
    return now - c.since < idle_timeout && c.stream->idle_and_open();
  }

  // Under `mutex`. The handler holds the state weakly: a pool destroyed
  // meanwhile cancels the timer, and its handler then finds nothing to sweep.
  static void arm_sweep(const std::shared_ptr<State>& self) {
    if (self->sweep_armed || self->idle.empty()) return;
    self->sweep_armed = true;
    self->sweep_timer.expires_at(self->idle.front().since + self->idle_timeout);
    self->sweep_timer.async_wait([weak = std::weak_ptr<State>(self)](const boost::system::error_code& ec) {
      if (ec == asio::error::operation_aborted) return;
      if (auto state = weak.lock()) sweep(state);
    });
  }

  // On the strand: closes the idle connections that expired or that the peer closed.
  static void sweep(const std::shared_ptr<State>& self) {
    std::lock_guard lock(self->mutex);
    self->sweep_armed = false;
    const auto now = Clock::now();
    const auto before = self->idle.size();
    std::erase_if(self->idle, [&](IdleConnection& c) { return !self->reusable(c, now); });
    const auto closed = before - self->idle.size();
    self->open -= closed;
    self->idle_closed += closed;
    arm_sweep(self);
  }
};

ConnectionPool::ConnectionPool(asio::any_io_executor executor, std::size_t max_connections,
                               std::chrono::milliseconds idle_timeout)
    : state_(std::make_shared<State>(std::move(executor), max_connections, idle_timeout)) {}

ConnectionPool::~ConnectionPool() = default;

awaitable<std::optional<std::unique_ptr<Stream>>> ConnectionPool::acquire(Deadline deadline, bool fresh) {
  auto executor = co_await asio::this_coro::executor;
  State& s = *state_;
  std::shared_ptr<State::Waiter> waiter;
  {
    std::lock_guard lock(s.mutex);
    const auto now = Clock::now();
    while (!s.idle.empty()) {
      auto c = std::move(s.idle.back());
      s.idle.pop_back();
      if (!fresh && s.reusable(c, now)) co_return std::optional<std::unique_ptr<Stream>>(std::move(c.stream));
      // Closed here (c goes out of scope). For a retry, every idle
      // connection goes: those idle as long as the one that failed are
      // likely closed too.
      --s.open;
      ++s.idle_closed;
    }
    if (s.open < s.max_connections) {
      ++s.open;
      co_return std::optional<std::unique_ptr<Stream>>(nullptr);
    }
    waiter = std::make_shared<State::Waiter>(executor);
    waiter->timer.expires_at(deadline);
    s.waiters.push_back(waiter);
  }
  co_await waiter->timer.async_wait(asio::as_tuple(asio::use_awaitable));  // cancelled when granted
  std::lock_guard lock(s.mutex);
  if (waiter->granted) co_return std::optional<std::unique_ptr<Stream>>(std::move(waiter->stream));
  std::erase(s.waiters, waiter);
  co_return std::nullopt;
}

void ConnectionPool::release(std::unique_ptr<Stream> stream) {
  State& s = *state_;
  std::lock_guard lock(s.mutex);
  while (!s.waiters.empty()) {
    auto w = s.waiters.front();
    s.waiters.pop_front();
    if (w->timer.expiry() <= Clock::now()) continue;  // about to time out anyway
    w->granted = true;
    w->stream = std::move(stream);  // null = the waiter opens a new connection in this slot
    w->timer.cancel();
    return;
  }
  if (stream) {
    stream->deadline().expires_never();
    s.idle.push_back(State::IdleConnection{std::move(stream), Clock::now()});
    State::arm_sweep(state_);
  } else {
    --s.open;
  }
}

ConnectionPool::Counts ConnectionPool::counts() const {
  std::lock_guard lock(state_->mutex);
  return Counts{state_->open, state_->idle.size(), state_->idle_closed};
}

}  // namespace fedmetrics::kube
