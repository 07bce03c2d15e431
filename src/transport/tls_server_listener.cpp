// The listening socket and its accept loop, on the first worker's thread:
// each connection accepted goes to the next worker, whose session set owns it.
#include "tls_server_impl.hpp"

#include <algorithm>
#include <stdexcept>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <spdlog/spdlog.h>

namespace fedmetrics::transport {

namespace asio = boost::asio;
using server_detail::tcp;

void TlsServer::Impl::listen(std::uint16_t port) {
  boost::system::error_code ec;
  auto address = asio::ip::make_address(options.bind_address, ec);
  if (ec) throw std::runtime_error("--bind-address: \"" + options.bind_address + "\" is not an IP address");
  tcp::endpoint endpoint(address, port);
  acceptor->open(endpoint.protocol(), ec);
  if (!ec) acceptor->set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor->bind(endpoint, ec);
  if (!ec) acceptor->listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    boost::system::error_code ignored;
    acceptor->close(ignored);
    throw std::runtime_error("cannot listen on " + options.bind_address + ":" + std::to_string(port) + ": " +
                             ec.message() + " (is --secure-port in use?)");
  }
  bound_port = acceptor->local_endpoint().port();
}

// Reopens the listening socket on the port it had (after set_accepting(false)).
void TlsServer::Impl::reopen() {
  try {
    listen(bound_port);
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return;
  }
  start_accepting(++accept_epoch);
}

void TlsServer::Impl::close_listener() {
  ++accept_epoch;
  boost::system::error_code ignored;
  acceptor->close(ignored);
}

// The accept loop is a child of the first worker's session set: stop() ends
// it with the sessions, and nothing of it runs once the worker has stopped.
void TlsServer::Impl::start_accepting(std::uint64_t epoch) {
  auto& sessions = workers.front()->sessions;
  auto& entry = sessions.add();
  sessions.start(entry, accept_loop(epoch));
}

asio::awaitable<void> TlsServer::Impl::accept_loop(std::uint64_t epoch) {
  constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);
  // After a failed accept (out of file descriptors, most often), wait before
  // the next: the pending connection keeps the listener readable, so an
  // immediate retry would spin a core and flood the log until a descriptor
  // frees up. 5 ms, doubling to 1 s; logged once per streak.
  constexpr auto kFirstBackoff = std::chrono::milliseconds(5);
  constexpr auto kMaxBackoff = std::chrono::seconds(1);
  std::chrono::milliseconds backoff{0};
  std::uint64_t failures = 0;
  asio::steady_timer pause(acceptor->get_executor());
  for (;;) {
    // Each connection goes to the next thread's io_context.
    Worker& worker = *workers[next_worker];
    auto [ec, socket] = co_await acceptor->async_accept(worker.io, use_tuple);
    if (ec == asio::error::operation_aborted || epoch != accept_epoch || !acceptor->is_open()) co_return;
    if (ec) {
      backoff = backoff.count() == 0 ? kFirstBackoff : std::min<std::chrono::milliseconds>(backoff * 2, kMaxBackoff);
      if (failures++ == 0)
        spdlog::warn("accept failed: {}; retrying with backoff (up to {} ms) until it succeeds", ec.message(),
                     std::chrono::milliseconds(kMaxBackoff).count());
      pause.expires_after(backoff);
      co_await pause.async_wait(use_tuple);
      if (epoch != accept_epoch || !acceptor->is_open()) co_return;
      continue;
    }
    next_worker = (next_worker + 1) % workers.size();
    if (failures > 0) {
      spdlog::info("accepting connections again after {} failed accepts", failures);
      failures = 0;
      backoff = std::chrono::milliseconds(0);
    }
    if (connections.load() >= options.max_connections) {
      spdlog::warn("refusing connection: {} connections open (max {})", connections.load(), options.max_connections);
      continue;  // the socket closes as it goes out of scope
    }
    // Responses are written whole; without TCP_NODELAY, Nagle's algorithm
    // holds the tail of each until the client's delayed ACK (~40 ms).
    boost::system::error_code nodelay_error;
    socket.set_option(tcp::no_delay(true), nodelay_error);
    ++connections;  // counted here, not when the session starts: a burst cannot overshoot the limit
    // The worker's session set is its thread's alone: the session joins it there.
    asio::post(worker.io, [this, &worker, socket = std::move(socket)]() mutable {
      auto& entry = worker.sessions.add();
      worker.sessions.start(entry, session(std::move(socket), entry));
    });
  }
}

}  // namespace fedmetrics::transport
