// Each worker's sessions as children it owns, and the graceful drain: the
// listener closes, idle kept-alive sessions are cancelled at once, the busy
// ones are awaited until the grace period ends and cancelled then.
#include "tls_server_impl.hpp"

#include <exception>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/system_error.hpp>
#include <spdlog/spdlog.h>

namespace fedmetrics::transport::server_detail {

namespace {
using Clock = std::chrono::steady_clock;
}  // namespace

struct SessionSet::State {
  explicit State(asio::io_context& io) : empty(io, Clock::time_point::max()) {}
  std::list<Session> sessions;  // stable addresses: a session's coroutine holds its entry
  std::size_t running = 0;
  asio::steady_timer empty;  // a wait on it ends when `running` drops to 0
  std::function<void()> on_empty;
};

namespace {

// Counts a session from its first step to the destruction of its frame
// (which also happens when the io_context is destroyed under it).
struct Ended {
  std::shared_ptr<SessionSet::State> state;
  ~Ended() {
    if (--state->running > 0) return;
    state->empty.cancel();
    if (auto then = std::exchange(state->on_empty, nullptr)) then();
  }
};

// A free function, not a lambda: a coroutine lambda's captures die with it.
asio::awaitable<void> run_session(std::shared_ptr<SessionSet::State> state, asio::awaitable<void> body) {
  Ended ended{std::move(state)};
  co_await std::move(body);
}

// How a session ended, logged unless by its cancellation (the server
// stopping): a session handles its own I/O errors, so anything else is a bug.
void report(const std::exception_ptr& e) {
  if (!e) return;
  try {
    std::rethrow_exception(e);
  } catch (const boost::system::system_error& failure) {
    if (failure.code() != asio::error::operation_aborted)
      spdlog::error("server: a connection failed: {}", failure.what());
  } catch (const std::exception& failure) {
    spdlog::error("server: a connection failed: {}", failure.what());
  } catch (...) {
    spdlog::error("server: a connection failed");
  }
}

}  // namespace

SessionSet::SessionSet(asio::io_context& io) : state_(std::make_shared<State>(io)) {}

// The sessions' frames may outlive the set (destroyed with the io_context):
// nothing of the set's owner runs then.
SessionSet::~SessionSet() { state_->on_empty = nullptr; }

SessionSet::Session& SessionSet::add() {
  auto& sessions = state_->sessions;
  auto it = sessions.emplace(sessions.end());
  it->self = it;
  ++state_->running;
  return *it;
}

void SessionSet::start(Session& session, asio::awaitable<void> body) {
  auto state = state_;
  auto it = session.self;
  asio::co_spawn(state->empty.get_executor(), run_session(state, std::move(body)),
                 asio::bind_cancellation_slot(session.cancel.slot(), [state, it](std::exception_ptr e) {
                   report(e);
                   // The finishing frame may still refer to the entry's signal: dropped after it.
                   asio::post(state->empty.get_executor(), [state, it] { state->sessions.erase(it); });
                 }));
}

void SessionSet::cancel_idle() {
  for (auto& session : state_->sessions)
    if (session.idle) session.cancel.emit(asio::cancellation_type::terminal);
}

void SessionSet::cancel_all() {
  for (auto& session : state_->sessions) session.cancel.emit(asio::cancellation_type::terminal);
}

std::size_t SessionSet::size() const { return state_->running; }

asio::awaitable<bool> SessionSet::wait_until_empty(Clock::time_point until) {
  auto state = state_;
  while (state->running > 0) {
    if (Clock::now() >= until) co_return false;
    state->empty.expires_at(until);
    co_await state->empty.async_wait(asio::as_tuple(asio::use_awaitable));
  }
  co_return true;
}

void SessionSet::when_empty(std::function<void()> then) {
  if (state_->running == 0) return then();
  state_->on_empty = std::move(then);
}

}  // namespace fedmetrics::transport::server_detail

namespace fedmetrics::transport {

namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;

namespace {

// On a worker's thread. Both phases are run on every worker before either
// waits, so that no worker's idle sessions wait for another worker's drain.
asio::awaitable<void> cancel_idle(TlsServer::Impl::Worker& worker) {
  worker.sessions.cancel_idle();
  co_return;
}

// On a worker's thread: waits for its sessions until `deadline`, then
// cancels those still running and waits for them to end. Returns how many
// were still running at the deadline.
asio::awaitable<std::size_t> finish(TlsServer::Impl::Worker& worker, Clock::time_point deadline) {
  const bool all_ended = co_await worker.sessions.wait_until_empty(deadline);
  if (all_ended) co_return 0;
  const std::size_t left = worker.sessions.size();
  worker.sessions.cancel_all();
  co_await worker.sessions.wait_until_empty(Clock::time_point::max());
  co_return left;
}

}  // namespace

asio::awaitable<std::size_t> TlsServer::Impl::drain(std::chrono::milliseconds grace) {
  const auto deadline = Clock::now() + grace;
  draining = true;
  close_listener();
  for (auto& worker : workers) co_await asio::co_spawn(worker->io, cancel_idle(*worker), asio::use_awaitable);
  std::size_t left = 0;
  for (auto& worker : workers)
    left += co_await asio::co_spawn(worker->io, finish(*worker, deadline), asio::use_awaitable);
  co_return left;
}

void TlsServer::Impl::Worker::halt() {
  sessions.cancel_all();
  sessions.when_empty([this] {
    guard.reset();
    io.stop();
  });
}

}  // namespace fedmetrics::transport
