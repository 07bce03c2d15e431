#pragma once
// The TLS server's parts, shared by its translation units and private to
// them (an Asio and Beast header):
//   tls_server.cpp          the public class: threads, start, stop, settings
//   tls_server_context.cpp  the TLS material (OpenSSL context, peer chain)
//   tls_server_listener.cpp the listening socket and its accept loop
//   tls_server_session.cpp  one connection's request/response loop
//   tls_server_drain.cpp    each worker's sessions, and the graceful drain
#include <utility>  // before Asio's awaitable.hpp (Boost + C++20 coroutines)

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/system/error_code.hpp>

#include "fedmetrics/transport/http_head.hpp"
#include "fedmetrics/transport/tls_server.hpp"
#include "fedmetrics/transport/tls_socket.hpp"

namespace fedmetrics::transport::server_detail {

namespace asio = boost::asio;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;

// Errors that end a connection normally and are not worth a log line (the
// one list, tls_server_session.cpp says why each is there).
bool harmless(const boost::system::error_code& ec);

// tls_server_context.cpp: the server's OpenSSL context (throws
// std::runtime_error naming the flag at fault), and the client's chain.
int min_protocol(const std::string& version);
ssl::context make_tls_context(const TlsServerOptions& options);
std::string peer_chain_pem(SSL* ssl);

// tls_server_session.cpp: the answer to a handler that threw.
HttpResponse internal_error_response();

// The sessions of one worker thread, each a child coroutine with a
// cancellation signal of its own, so that the drain can end the idle ones at
// once and the others when the grace period has passed, and the worker can
// wait until every one of them has ended. Touched on the worker's thread
// only (its io_context has one thread, so no strand is needed). The
// children hold the set's state: a child outliving the set is harmless.
class SessionSet {
 public:
  struct Session {
    asio::cancellation_signal cancel;
    // Waiting for the next request on a kept-alive connection, with nothing
    // of it received: the drain cancels it at once.
    bool idle = false;
    std::list<Session>::iterator self;
  };

  explicit SessionSet(asio::io_context& io);
  ~SessionSet();
  SessionSet(const SessionSet&) = delete;
  SessionSet& operator=(const SessionSet&) = delete;

  // A new session's entry, counted from now; start() runs its coroutine.
  Session& add();
  void start(Session& session, asio::awaitable<void> body);
  // Terminal cancellation of the idle sessions, or of every session.
  void cancel_idle();
  void cancel_all();
  // Sessions whose coroutine has not ended.
  [[nodiscard]] std::size_t size() const;
  // Until every session has ended (true) or `until` passed (false).
  asio::awaitable<bool> wait_until_empty(std::chrono::steady_clock::time_point until);
  // `then` runs once no session runs: at once, or when the last one ends.
  void when_empty(std::function<void()> then);

  struct State;

 private:
  std::shared_ptr<State> state_;
};

}  // namespace fedmetrics::transport::server_detail

namespace fedmetrics::transport {

struct TlsServer::Impl {
  using tcp = server_detail::tcp;

  // One io_context per thread: a connection lives on one thread, so it needs
  // no strand and never contends with the other threads for a scheduler lock.
  struct Worker {
    boost::asio::io_context io{1};
    boost::asio::executor_work_guard<boost::asio::io_context::executor_type> guard = boost::asio::make_work_guard(io);
    server_detail::SessionSet sessions{io};
    // stop(): cancels every session and stops the thread once they ended.
    void halt();
  };

  Impl(TlsServerOptions options, RequestHandler handler);
  ~Impl();

  boost::asio::io_context& main_io() { return workers.front()->io; }
  std::shared_ptr<boost::asio::ssl::context> current_tls();

  // tls_server_listener.cpp (on main_io)
  void listen(std::uint16_t port);
  void reopen();
  void start_accepting(std::uint64_t epoch);
  boost::asio::awaitable<void> accept_loop(std::uint64_t epoch);
  void close_listener();

  // tls_server_session.cpp (on the connection's worker)
  boost::asio::awaitable<void> session(tcp::socket socket, server_detail::SessionSet::Session& entry);
  boost::asio::awaitable<std::optional<HttpResponse>> call_handler(HttpRequest request, tcp::socket* watch);
  // The body is `body`'s pieces one after the other (one piece, or a merged
  // list's HttpResponse::body_pieces).
  boost::asio::awaitable<boost::system::error_code> write_response(TlsSocket& tls, std::string& scratch,
                                                                   const ResponseHead& head,
                                                                   std::span<const std::string_view> body);
  boost::asio::awaitable<void> stream_response(TlsSocket& tls, std::string& scratch, HttpResponse response,
                                               unsigned version);
  boost::asio::awaitable<void> write_error(TlsSocket& tls, std::string& scratch, int status, std::string_view why,
                                           bool head_only = false);

  // tls_server_drain.cpp (on main_io)
  boost::asio::awaitable<std::size_t> drain(std::chrono::milliseconds grace);

  TlsServerOptions options;
  RequestHandler handler;
  std::vector<std::unique_ptr<Worker>> workers;
  std::size_t next_worker = 0;  // the accept loop's round robin
  // Swapped whole by set_certificate; each connection keeps the one it started with.
  std::shared_ptr<boost::asio::ssl::context> tls;
  std::mutex tls_mutex;
  std::optional<tcp::acceptor> acceptor;           // on workers[0], like the signals and schedule()
  std::optional<boost::asio::signal_set> signals;  // run() only: start() leaves signals to its caller
  std::vector<std::thread> threads;                // start()'s
  // The workers' threads run (run() or start()): shutdown() has someone to drain.
  std::atomic<bool> serving{false};
  // shutdown() began: no connection is kept alive past its current request.
  std::atomic<bool> draining{false};
  std::atomic<std::size_t> connections{0};
  std::uint16_t bound_port = 0;
  std::atomic<bool> accepting{true};
  // Bumped when kept-alive connections must go (refusal, new certificate).
  std::atomic<std::uint64_t> generation{0};
  std::atomic<std::uint64_t> accept_epoch{0};  // the live accept loop's
};

}  // namespace fedmetrics::transport
