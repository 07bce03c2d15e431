#include "fedmetrics/transport/tls_server.hpp"

#include <utility>  // before Asio's awaitable.hpp (Boost + C++20 coroutines)

#include <algorithm>
#include <array>
#include <atomic>
#include <future>
#include <mutex>
#include <set>
#include <optional>
#include <stdexcept>
#include <thread>
#include <tuple>
#include <vector>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <openssl/pem.h>
#include <spdlog/spdlog.h>

#include "fedmetrics/transport/gzip.hpp"
#include "fedmetrics/transport/http_head.hpp"
#include "fedmetrics/transport/tls_http.hpp"
#include "fedmetrics/transport/tls_socket.hpp"

// GCC 12 inlines Asio's coroutine frame allocation (aligned_alloc behind
// awaitable_frame_base::operator new) into session() and then reports the
// matching awaitable_frame_base::operator delete as mismatched: a false
// positive, the pair is Asio's own.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

namespace fedmetrics::transport {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using asio::awaitable;
constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);

namespace {

// Errors that end a connection normally and are not worth a log line:
// the peer closed (end_of_stream, eof), closed TLS without close_notify
// (stream_truncated, common with HTTP/1.1 clients), or we shut down
// (operation_aborted), or a deadline passed on an idle connection (timeout).
bool harmless(const boost::system::error_code& ec) {
  return ec == http::error::end_of_stream || ec == asio::error::eof || ec == ssl::error::stream_truncated ||
         ec == asio::error::operation_aborted || ec == asio::error::timed_out ||
         ec == asio::error::connection_reset || ec == asio::error::broken_pipe;
}

// Beast's parse errors: the request is malformed and gets a 400 (as Go's
// net/http does), unlike the peer closing or a deadline passing.
bool malformed(const boost::system::error_code& ec) {
  if (!ec || ec.category() != http::make_error_code(http::error::bad_target).category()) return false;
  return ec != http::error::end_of_stream && ec != http::error::partial_message && ec != http::error::need_more &&
         ec != http::error::header_limit && ec != http::error::body_limit;
}

// The checks Beast does not make (refuse_request_head), on its parsed head.
std::optional<HeadRefusal> refuse_head(const http::request<http::string_body>& request) {
  std::vector<std::pair<std::string, std::string>> fields;
  fields.reserve(static_cast<std::size_t>(std::distance(request.begin(), request.end())));
  for (const auto& field : request) fields.emplace_back(field.name_string(), field.value());
  return refuse_request_head(request.method_string(), request.target(), request.version(), fields);
}

int min_protocol(const std::string& v) {
  if (v == "VersionTLS12") return TLS1_2_VERSION;
  if (v == "VersionTLS13") return TLS1_3_VERSION;
  return 0;
}

ssl::context make_tls_context(const TlsServerOptions& options) {
  ssl::context ctx(ssl::context::tls_server);
  ctx.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                  ssl::context::single_dh_use);
  int min = min_protocol(options.tls_min_version);
  if (min == 0) throw std::runtime_error("--tls-min-version: unsupported value \"" + options.tls_min_version +
                                         "\" (use VersionTLS12 or VersionTLS13)");
  SSL_CTX_set_min_proto_version(ctx.native_handle(), min);
  // No renegotiation (Go's servers refuse it too); so a write never needs a read.
  SSL_CTX_set_options(ctx.native_handle(), SSL_OP_NO_RENEGOTIATION);
  // The server's order decides, as in Go's crypto/tls (every Kubernetes API
  // server): AES-128-GCM first, then ChaCha20, then AES-256-GCM. OpenSSL
  // would otherwise follow the client, and OpenSSL clients ask for AES-256
  // first, which costs them and us a third more per byte for no gain here.
  SSL_CTX_set_options(ctx.native_handle(), SSL_OP_CIPHER_SERVER_PREFERENCE);
  SSL_CTX_set_ciphersuites(ctx.native_handle(),
                           "TLS_AES_128_GCM_SHA256:TLS_CHACHA20_POLY1305_SHA256:TLS_AES_256_GCM_SHA384");
  // Read whole records, and what follows them, in one recv() instead of a
  // header read and a body read per record.
  SSL_CTX_set_read_ahead(ctx.native_handle(), 1);
  // TLS 1.2: forward-secret AEAD suites only (Go's default secure set); TLS 1.3 suites are all modern.
  SSL_CTX_set_cipher_list(ctx.native_handle(),
                          "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
                          "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
                          "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305");
  boost::system::error_code ec;
  ctx.use_certificate_chain_file(options.cert_file, ec);
  if (ec) throw std::runtime_error("--tls-cert-file " + options.cert_file + ": cannot load certificate: " + ec.message());
  ctx.use_private_key_file(options.key_file, ssl::context::pem, ec);
  if (ec) throw std::runtime_error("--tls-private-key-file " + options.key_file + ": cannot load key: " + ec.message());
  if (SSL_CTX_check_private_key(ctx.native_handle()) != 1)
    throw std::runtime_error("--tls-private-key-file " + options.key_file + " does not match --tls-cert-file " +
                             options.cert_file);
  if (options.request_client_certificates) {
    // Request, accept whatever comes; no CA list is sent, so that Go clients
    // present their first certificate (crypto/tls getClientCertificate).
    SSL_CTX_set_verify(ctx.native_handle(), SSL_VERIFY_PEER, [](int, X509_STORE_CTX*) { return 1; });
    // With SSL_VERIFY_PEER, OpenSSL refuses resumed TLS 1.2 sessions unless a session id context is set.
    static const unsigned char kSessionContext[] = "fedmetrics";
    SSL_CTX_set_session_id_context(ctx.native_handle(), kSessionContext, sizeof(kSessionContext) - 1);
  }
  return ctx;
}

// The client's chain as PEM, leaf first ("" when it sent none).
std::string peer_chain_pem(SSL* ssl) {
  std::string pem;
  auto append = [&pem](X509* cert) {
    BIO* bio = BIO_new(BIO_s_mem());
    if (bio == nullptr) return;
    if (PEM_write_bio_X509(bio, cert) == 1) {
      char* data = nullptr;
      long size = BIO_get_mem_data(bio, &data);
      if (size > 0) pem.append(data, static_cast<std::size_t>(size));
    }
    BIO_free(bio);
  };
  X509* leaf = SSL_get1_peer_certificate(ssl);
  if (leaf == nullptr) return pem;
  append(leaf);
  // On the server side the peer chain does not include the leaf.
  if (STACK_OF(X509)* chain = SSL_get_peer_cert_chain(ssl); chain != nullptr)
    for (int i = 0; i < sk_X509_num(chain); ++i)
      if (X509* cert = sk_X509_value(chain, i); X509_cmp(cert, leaf) != 0) append(cert);
  X509_free(leaf);
  return pem;
}

// Every Accept-Encoding field line, joined into one list (RFC 9110 section 5.3).
std::string accept_encoding(const http::fields& fields) {
  std::string joined;
  for (auto [it, end] = fields.equal_range(http::field::accept_encoding); it != end; ++it) {
    if (!joined.empty()) joined += ", ";
    joined.append(it->value());
  }
  return joined;
}

HttpResponse internal_error_response() {
  return HttpResponse{500, "application/json",
                      R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Internal error occurred: the request handler failed","reason":"InternalError","code":500})",
                      {}};
}

// Runs an io_context on this thread; a handler that throws is logged, not fatal.
void run_io(asio::io_context& io) {
  for (;;) {
    try {
      io.run();
      return;
    } catch (const std::exception& e) {
      spdlog::error("server: a handler failed: {}", e.what());
    }
  }
}

// Wakes a streaming session when its producer writes; safe to call after
// the session ended (then it does nothing).
struct StreamWakeup {
  std::mutex mutex;
  bool alive = true;
  std::function<void()> wake;  // posts to the session's executor
  void operator()() {
    std::lock_guard lock(mutex);
    if (alive && wake) wake();
  }
  void end() {
    std::lock_guard lock(mutex);
    alive = false;
    wake = nullptr;
  }
};

}  // namespace

struct TlsServer::Impl {
  // One io_context per thread: a connection lives on one thread, so it needs
  // no strand and never contends with the other threads for a scheduler lock.
  struct Worker {
    asio::io_context io{1};
    asio::executor_work_guard<asio::io_context::executor_type> guard = asio::make_work_guard(io);
    // Connections of this thread waiting for their next request (kept
    // alive); touched on this thread only. shutdown() ends them.
    std::set<TlsSocket*> idle;
  };

  TlsServerOptions options;
  RequestHandler handler;
  std::vector<std::unique_ptr<Worker>> workers;
  std::size_t next_worker = 0;  // the accept loop's round robin
  // Swapped whole by set_certificate; each connection keeps the one it started with.
  std::shared_ptr<ssl::context> tls;
  std::mutex tls_mutex;
  tcp::acceptor acceptor;  // on workers[0], like the signals and schedule()
  std::optional<asio::signal_set> signals;  // run() only: start() leaves signals to its caller
  std::vector<std::thread> threads;         // start()'s
  // shutdown() began: no connection is kept alive past its current request.
  std::atomic<bool> draining{false};
  std::atomic<std::size_t> connections{0};
  std::uint16_t bound_port = 0;
  std::atomic<bool> accepting{true};
  // Bumped when kept-alive connections must go (refusal, new certificate).
  std::atomic<std::uint64_t> generation{0};
  std::atomic<std::uint64_t> accept_epoch{0};  // the live accept loop's

  static std::vector<std::unique_ptr<Worker>> make_workers(unsigned threads) {
    if (threads == 0) threads = std::max(1U, std::thread::hardware_concurrency());
    std::vector<std::unique_ptr<Worker>> made;
    for (unsigned i = 0; i < threads; ++i) made.push_back(std::make_unique<Worker>());
    return made;
  }

  Impl(TlsServerOptions o, RequestHandler h)
      : options(std::move(o)),
        handler(std::move(h)),
        workers(make_workers(options.threads)),
        tls(std::make_shared<ssl::context>(make_tls_context(options))),
        acceptor(workers.front()->io) {
    boost::system::error_code ec;
    auto address = asio::ip::make_address(options.bind_address, ec);
    if (ec) throw std::runtime_error("--bind-address: \"" + options.bind_address + "\" is not an IP address");
    tcp::endpoint endpoint(address, options.port);
    acceptor.open(endpoint.protocol(), ec);
    if (!ec) acceptor.set_option(asio::socket_base::reuse_address(true), ec);
    if (!ec) acceptor.bind(endpoint, ec);
    if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
    if (ec)
      throw std::runtime_error("cannot listen on " + options.bind_address + ":" + std::to_string(options.port) + ": " +
                               ec.message() + " (is --secure-port in use?)");
    bound_port = acceptor.local_endpoint().port();
  }

  asio::io_context& main_io() { return workers.front()->io; }

  std::shared_ptr<ssl::context> current_tls() {
    std::lock_guard lock(tls_mutex);
    return tls;
  }

  // Reopens the listening socket on the port it had (after set_accepting(false)).
  void reopen() {
    boost::system::error_code ec;
    tcp::endpoint endpoint(asio::ip::make_address(options.bind_address), bound_port);
    acceptor.open(endpoint.protocol(), ec);
    if (!ec) acceptor.set_option(asio::socket_base::reuse_address(true), ec);
    if (!ec) acceptor.bind(endpoint, ec);
    if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) {
      spdlog::error("cannot listen again on {}:{}: {}", options.bind_address, bound_port, ec.message());
      acceptor.close(ec);
      return;
    }
    asio::co_spawn(acceptor.get_executor(), accept_loop(++accept_epoch), asio::detached);
  }

  awaitable<void> accept_loop(std::uint64_t epoch) {
    // After a failed accept (out of file descriptors, most often), wait before
    // the next: the pending connection keeps the listener readable, so an
    // immediate retry would spin a core and flood the log until a descriptor
    // frees up. 5 ms, doubling to 1 s; logged once per streak.
    constexpr auto kFirstBackoff = std::chrono::milliseconds(5);
    constexpr auto kMaxBackoff = std::chrono::seconds(1);
    std::chrono::milliseconds backoff{0};
    std::uint64_t failures = 0;
    asio::steady_timer pause(acceptor.get_executor());
    for (;;) {
      // Each connection goes to the next thread's io_context.
      Worker& worker = *workers[next_worker];
      asio::io_context& target = worker.io;
      auto [ec, socket] = co_await acceptor.async_accept(target, use_tuple);
      if (ec == asio::error::operation_aborted || epoch != accept_epoch || !acceptor.is_open()) co_return;
      if (ec) {
        backoff = backoff.count() == 0 ? kFirstBackoff
                                       : std::min<std::chrono::milliseconds>(backoff * 2, kMaxBackoff);
        if (failures++ == 0)
          spdlog::warn("accept failed: {}; retrying with backoff (up to {} ms) until it succeeds", ec.message(),
                       std::chrono::milliseconds(kMaxBackoff).count());
        pause.expires_after(backoff);
        co_await pause.async_wait(use_tuple);
        if (epoch != accept_epoch || !acceptor.is_open()) co_return;
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
      auto executor = socket.get_executor();
      ++connections;  // counted here, not when the session starts: a burst cannot overshoot the limit
      asio::co_spawn(executor, session(std::move(socket), worker), asio::detached);
    }
  }

  // What the handler's respond callback shares with the session waiting for
  // it. The callback may be kept past the session and past the server: a
  // member request still in flight at shutdown completes on the member
  // client's threads, after this server's io_contexts are gone. So it holds
  // no I/O object of the server (the session owns its timer) and, once the
  // session has ended (closed), a late response is dropped.
  struct ResponseSlot {
    std::mutex mutex;
    bool open = true;                     // the session still waits; `executor` and `signal` are usable
    asio::any_io_executor executor;       // the session's
    asio::steady_timer* signal = nullptr;  // the session's; cancelled, on its executor, when something happened
    std::optional<HttpResponse> response;
    bool client_gone = false;  // abandon_when_client_closes: the client closed or sent more first
  };

  // Calls the handler and waits for its response, which may come from any
  // thread. With `watch` (abandon_when_client_closes), gives up (nullopt)
  // when the client closes or sends more before the handler answers.
  awaitable<std::optional<HttpResponse>> call_handler(HttpRequest request, tcp::socket* watch) {
    auto executor = co_await asio::this_coro::executor;
    asio::steady_timer signal(executor, asio::steady_timer::time_point::max());
    auto slot = std::make_shared<ResponseSlot>();
    slot->executor = executor;
    slot->signal = &signal;
    struct Close {  // however this coroutine ends (its frame destroyed at shutdown too)
      std::shared_ptr<ResponseSlot> slot;
      ~Close() {
        std::lock_guard lock(slot->mutex);
        slot->open = false;
        slot->signal = nullptr;
      }
    } close{slot};
    // Wakes the session; the lambda runs on the session's thread, where the
    // session may have ended meanwhile (then the slot is closed).
    auto wake = [](const std::shared_ptr<ResponseSlot>& s) {
      asio::post(s->executor, [s] {
        std::lock_guard lock(s->mutex);
        if (s->open) s->signal->cancel();
      });
    };
    auto respond = [slot, wake](HttpResponse response) {
      std::lock_guard lock(slot->mutex);
      if (!slot->open || slot->response) return;
      slot->response = std::move(response);
      wake(slot);
    };
    try {
      handler(std::move(request), respond);
    } catch (const std::exception& e) {
      // A bug, not a code path: answer 500 rather than lose the process.
      spdlog::error("request handler failed: {}", e.what());
      respond(internal_error_response());
    }
    bool watching = false;
    if (watch != nullptr) {
      std::lock_guard lock(slot->mutex);
      watching = !slot->response;
    }
    if (watching)
      watch->async_wait(tcp::socket::wait_read, [slot, wake](const boost::system::error_code& ec) {
        std::lock_guard lock(slot->mutex);
        if (ec || !slot->open || slot->response) return;
        slot->client_gone = true;
        wake(slot);
      });
    for (;;) {
      {
        std::lock_guard lock(slot->mutex);
        if (slot->response || slot->client_gone) break;
      }
      co_await signal.async_wait(use_tuple);
    }
    boost::system::error_code ignored;
    if (watching) watch->cancel(ignored);  // stop watching; the wait handler sees operation_aborted
    std::lock_guard lock(slot->mutex);
    if (slot->client_gone) co_return std::nullopt;
    co_return std::move(slot->response);
  }

  // Writes a whole response: its head and the start of its body as one TLS
  // record, the rest in records of their own, all sent together (in slices of
  // at most kFlushBytes, so that a large answer is not copied whole).
  awaitable<boost::system::error_code> write_response(TlsSocket& tls, std::string& scratch, const ResponseHead& head,
                                                      std::string_view body) {
    constexpr std::size_t kRecordBytes = 16 * 1024;
    constexpr std::size_t kFlushBytes = 64 * 1024;  // the most ciphertext a connection holds
    scratch.clear();
    append_response_head(scratch, head);
    const std::size_t first = std::min(body.size(), scratch.size() < kRecordBytes ? kRecordBytes - scratch.size() : 0);
    scratch.append(body.data(), first);
    if (auto ec = tls.write(scratch.data(), scratch.size())) co_return ec;
    for (std::size_t offset = first; offset < body.size();) {
      const std::size_t n = std::min(kFlushBytes, body.size() - offset);
      if (auto ec = tls.write(body.data() + offset, n)) co_return ec;
      offset += n;
      if (tls.pending_output() >= kFlushBytes)
        if (auto ec = co_await tls.flush()) co_return ec;
    }
    co_return co_await tls.flush();
  }

  // nullptr (and a log line) when OpenSSL cannot take one more connection.
  static std::unique_ptr<TlsSocket> make_tls_socket(tcp::socket socket, SSL_CTX* context) {
    try {
      return std::make_unique<TlsSocket>(std::move(socket), context);
    } catch (const std::exception& e) {
      spdlog::warn("dropping a connection: {}", e.what());
      return nullptr;
    }
  }

  awaitable<void> session(tcp::socket socket, Worker& worker) {
    struct Uncount {  // the accept loop counted this connection
      std::atomic<std::size_t>& n;
      ~Uncount() { --n; }
    } uncount{connections};

    auto tls_context = current_tls();
    const std::uint64_t started_generation = generation.load();
    auto owned = make_tls_socket(std::move(socket), tls_context->native_handle());
    if (!owned) co_return;
    TlsSocket& tls = *owned;
    tls.deadline().expires_after(options.handshake_timeout);
    if (auto hec = co_await tls.handshake()) {
      if (!harmless(hec)) spdlog::debug("TLS handshake failed: {}", hec.message());
      co_return;
    }
    const std::string peer_certificates =
        options.request_client_certificates ? peer_chain_pem(tls.native_handle()) : std::string();
    beast::flat_buffer buffer;
    std::string scratch;  // each response's head (and first record), reused
    bool first = true;
    for (;;) {
      http::request_parser<http::string_body> parser;
      parser.header_limit(static_cast<std::uint32_t>(options.max_header_bytes));
      parser.body_limit(options.max_body_bytes);
      // The head alone first: it is checked before a byte of body is taken.
      parser.eager(false);
      // An idle keep-alive connection gets the idle timeout until the next
      // request's first bytes; a request being sent, the header timeout (as
      // Go's IdleTimeout and ReadHeaderTimeout): a next request dribbled in
      // cannot hold the connection for the whole idle timeout.
      if (!first && buffer.size() == 0) {
        if (draining.load()) break;
        tls.deadline().expires_after(options.idle_timeout);
        auto space = buffer.prepare(16 * 1024);
        worker.idle.insert(&tls);  // shutdown() aborts the wait
        auto [ec, n] = co_await tls.read_some(static_cast<char*>(space.data()), space.size());
        worker.idle.erase(&tls);
        if (ec) {
          if (!harmless(ec)) spdlog::debug("waiting for a request failed: {}", ec.message());
          break;
        }
        buffer.commit(n);
      }
      tls.deadline().expires_after(options.header_read_timeout);
      first = false;
      auto rec = co_await read_http(tls, buffer, parser, options.max_header_bytes,
                                    [&] { return parser.is_header_done(); });
      if (!rec) {
        if (auto refusal = refuse_head(parser.get())) {
          co_await write_error(tls, scratch, refusal->status, refusal->reason,
                               parser.get().method() == http::verb::head);
          break;
        }
        // A GET or HEAD with a body (Content-Length over 0, or chunked) is
        // refused before any of it is read: no endpoint reads one, so reading
        // (or, as Go does, discarding up to 256 KiB of) it would only let an
        // unauthenticated client make us hold or spend bytes for nothing.
        const auto verb = parser.get().method();
        if (!parser.is_done() && (verb == http::verb::get || verb == http::verb::head)) {
          co_await write_error(tls, scratch, 400, "a GET or HEAD request must not have a body",
                               verb == http::verb::head);
          break;
        }
        parser.eager(true);
        rec = co_await read_http(tls, buffer, parser, options.max_header_bytes, [&] { return parser.is_done(); });
      }
      if (rec == http::error::header_limit || rec == http::error::body_limit) {
        // Go's bodies: "431 Request Header Fields Too Large", "413 Request Entity Too Large".
        co_await write_error(tls, scratch, rec == http::error::header_limit ? 431 : 413, {});
        break;
      }
      if (malformed(rec)) {
        // Go's net/http answers a request it cannot parse with
        // "400 Bad Request" and closes; a silent close leaves the client guessing.
        co_await write_error(tls, scratch, 400, rec.message());
        break;
      }
      if (rec) {
        if (!harmless(rec)) spdlog::debug("reading request failed: {}", rec.message());
        break;
      }
      // Refusing or re-certified since this connection began: close it unanswered,
      // so that the client's retry meets the listener's new state.
      if (!accepting.load() || generation.load() != started_generation) co_return;
      auto request = parser.release();
      HttpRequest server_request;
      server_request.method = std::string(request.method_string());
      server_request.target = origin_form(request.target());
      for (const auto& field : request) server_request.headers.emplace_back(field.name_string(), field.value());
      server_request.body = std::move(request.body());
      server_request.peer_certificates_pem = peer_certificates;
      tls.deadline().expires_never();  // the handler takes what it takes
      auto answered = co_await call_handler(std::move(server_request),
                                            options.abandon_when_client_closes ? &tls.socket() : nullptr);
      if (!answered) co_return;  // the client went away
      HttpResponse response = std::move(*answered);
      if (response.status == 0) co_return;  // close without answering
      response.headers.emplace_back("Date", http_date(std::chrono::system_clock::now()));
      const bool head_only = request.method() == http::verb::head;
      if (response.stream && !head_only) {
        co_await stream_response(tls, scratch, std::move(response), request.version());
        co_return;  // a streamed body ends the connection
      }
      if (response.stream) {  // HEAD: the head a GET would get, no body; the producer learns the client is gone
        response.stream->abandon();
        ResponseHead head{response.status, request.version(), response.content_type, &response.headers,
                          std::nullopt, false};
        tls.deadline().expires_after(options.write_timeout);
        if (auto wec = co_await write_response(tls, scratch, head, {}); !wec) {
          tls.deadline().expires_after(std::chrono::seconds(2));
          co_await tls.shutdown();
        }
        co_return;
      }
      // HEAD too: its headers (Content-Length, Content-Encoding) are GET's.
      if (options.compress_min_bytes > 0)
        compress_response(response, accept_encoding(request), options.compress_min_bytes);

      // A shared body (one encoded answer for many clients) is written from
      // its bytes in place; `response` keeps them alive through the write.
      // Shutting down: this answer is the connection's last (Go's Shutdown
      // lets active connections finish their request, then closes them).
      const bool keep_alive = request.keep_alive() && !draining.load();
      const std::string& body = response.body_bytes();
      ResponseHead head{response.status, request.version(), response.content_type, &response.headers, body.size(),
                        keep_alive};
      tls.deadline().expires_after(options.write_timeout);
      auto wec = co_await write_response(tls, scratch, head, head_only ? std::string_view() : std::string_view(body));
      if (wec) {
        if (!harmless(wec)) spdlog::debug("writing response failed: {}", wec.message());
        co_return;
      }
      if (!keep_alive) break;
    }
    tls.deadline().expires_after(std::chrono::seconds(2));
    co_await tls.shutdown();
  }

  // Sends the headers, then every piece the producer writes as a chunk, until
  // it closes the body, the client goes away or a write fails. The client
  // sends nothing meanwhile; the socket turning readable means it closed.
  awaitable<void> stream_response(TlsSocket& tls, std::string& scratch, HttpResponse response, unsigned version) {
    auto executor = co_await asio::this_coro::executor;
    auto producer = response.stream;
    auto signal = std::make_shared<asio::steady_timer>(executor, asio::steady_timer::time_point::max());
    auto wakeup = std::make_shared<StreamWakeup>();
    wakeup->wake = [signal, executor] { asio::post(executor, [signal] { signal->cancel(); }); };
    struct End {  // whatever ends this coroutine (even the server's shutdown) ends the stream
      std::shared_ptr<StreamWakeup> wakeup;
      std::shared_ptr<ResponseStream> producer;
      ~End() {
        wakeup->end();
        producer->abandon();
      }
    } end{wakeup, producer};
    producer->set_wakeup([wakeup] { (*wakeup)(); });

    ResponseHead head{response.status, version, response.content_type, &response.headers, std::nullopt, false};
    scratch.clear();
    append_response_head(scratch, head);
    tls.deadline().expires_after(options.write_timeout);
    if (tls.write(scratch.data(), scratch.size())) co_return;
    if (auto ec = co_await tls.flush()) co_return;
    tls.deadline().expires_never();

    // Shared with the readiness wait, which may complete after this coroutine returns.
    auto client_gone = std::make_shared<bool>(false);
    auto watching = std::make_shared<bool>(true);
    tls.socket().async_wait(tcp::socket::wait_read,
                            [client_gone, watching, signal](const boost::system::error_code&) {
                              *watching = false;
                              *client_gone = true;
                              signal->cancel();
                            });
    // Everything here runs on the connection's thread, so no wake-up is lost
    // between take() finding nothing and the wait: the producer's posted
    // cancel runs only once this coroutine is suspended.
    for (;;) {
      auto pending = producer->take();
      if (!pending.pieces.empty()) {
        scratch.clear();
        for (const auto& piece : pending.pieces) append_chunk(scratch, piece);
        tls.deadline().expires_after(options.write_timeout);
        bool failed = static_cast<bool>(tls.write(scratch.data(), scratch.size()));
        if (!failed) {
          auto ec = co_await tls.flush();
          failed = static_cast<bool>(ec);
        }
        tls.deadline().expires_never();
        if (failed) break;
        continue;  // pieces written meanwhile woke nobody: look again before waiting
      }
      if (*client_gone || pending.client_gone) break;
      if (pending.closed) {
        tls.deadline().expires_after(options.write_timeout);
        if (!tls.write(kLastChunk.data(), kLastChunk.size())) co_await tls.flush();
        break;
      }
      signal->expires_at(asio::steady_timer::time_point::max());
      co_await signal->async_wait(use_tuple);
    }
    // Stop the readiness wait before the socket goes away.
    if (*watching) {
      boost::system::error_code ignored;
      tls.socket().cancel(ignored);
    }
  }

  // Go's answer to a request it will not serve: "<code> <reason>: <why>" as
  // plain text, with Connection: close (net/http's conn.serve).
  // A HEAD request's answer has the head only (RFC 9110 section 9.3.2).
  awaitable<void> write_error(TlsSocket& tls, std::string& scratch, int status, std::string_view why,
                              bool head_only = false) {
    std::string text = std::to_string(status) + " " + std::string(reason_phrase(status));
    if (!why.empty()) text += ": " + std::string(why);
    const std::vector<std::pair<std::string, std::string>> fields{{"Date", http_date(std::chrono::system_clock::now())}};
    ResponseHead head{status, 11, "text/plain; charset=utf-8", &fields, text.size(), false};
    tls.deadline().expires_after(options.write_timeout);
    co_await write_response(tls, scratch, head, head_only ? std::string_view() : std::string_view(text));
  }
};

TlsServer::TlsServer(TlsServerOptions options, RequestHandler handler)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(handler))) {}

TlsServer::~TlsServer() {
  if (impl_->threads.empty()) return;
  stop();
  join();
}

std::uint16_t TlsServer::port() const { return impl_->bound_port; }

void TlsServer::run() {
  impl_->signals.emplace(impl_->main_io(), SIGINT, SIGTERM);
  impl_->signals->async_wait([this](const boost::system::error_code& ec, int signal) {
    if (!ec) {
      spdlog::info("received signal {}, shutting down", signal);
      stop();
    }
  });
  asio::co_spawn(impl_->acceptor.get_executor(), impl_->accept_loop(impl_->accept_epoch), asio::detached);
  std::vector<std::thread> pool;
  for (std::size_t i = 1; i < impl_->workers.size(); ++i)
    pool.emplace_back([this, i] { run_io(impl_->workers[i]->io); });
  run_io(impl_->main_io());
  for (auto& t : pool) t.join();
}

void TlsServer::start() {
  asio::co_spawn(impl_->acceptor.get_executor(), impl_->accept_loop(impl_->accept_epoch), asio::detached);
  for (auto& worker : impl_->workers) impl_->threads.emplace_back([&io = worker->io] { run_io(io); });
}

std::size_t TlsServer::shutdown(std::chrono::milliseconds grace) {
  impl_->draining = true;
  auto closed = std::make_shared<std::promise<void>>();
  asio::post(impl_->main_io(), [this, closed] {
    ++impl_->accept_epoch;
    boost::system::error_code ignored;
    impl_->acceptor.close(ignored);
    closed->set_value();
  });
  // The listener is closed once this returns (a connect is refused), unless
  // the server's threads are not running: then there is nothing to drain.
  if (closed->get_future().wait_for(std::chrono::seconds(5)) != std::future_status::ready) return 0;
  // Kept-alive connections between requests go now; one in a request
  // closes after its answer (draining).
  for (auto& worker : impl_->workers)
    asio::post(worker->io, [w = worker.get()] {
      for (auto* tls : w->idle) tls->abort();
    });
  const auto deadline = std::chrono::steady_clock::now() + grace;
  while (impl_->connections.load() > 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return impl_->connections.load();
}

void TlsServer::join() {
  for (auto& t : impl_->threads)
    if (t.joinable()) t.join();
  impl_->threads.clear();
}

void TlsServer::stop() {
  asio::post(impl_->main_io(), [this] {
    boost::system::error_code ignored;
    impl_->acceptor.close(ignored);
    if (impl_->signals) impl_->signals->cancel(ignored);
    for (auto& worker : impl_->workers) {
      worker->guard.reset();
      worker->io.stop();
    }
  });
}

void TlsServer::set_accepting(bool accepting) {
  bool was = impl_->accepting.exchange(accepting);
  if (was == accepting) return;
  if (!accepting) ++impl_->generation;
  asio::post(impl_->main_io(), [this, accepting] {
    boost::system::error_code ignored;
    if (!accepting) {
      ++impl_->accept_epoch;
      impl_->acceptor.close(ignored);
    } else if (!impl_->acceptor.is_open()) {
      impl_->reopen();
    }
  });
}

void TlsServer::set_certificate(const std::string& cert_file, const std::string& key_file) {
  TlsServerOptions options = impl_->options;
  options.cert_file = cert_file;
  options.key_file = key_file;
  auto context = std::make_shared<ssl::context>(make_tls_context(options));
  {
    std::lock_guard lock(impl_->tls_mutex);
    impl_->tls = std::move(context);
  }
  ++impl_->generation;
}

void TlsServer::schedule(std::chrono::nanoseconds delay, std::function<void()> task) {
  auto timer = std::make_shared<asio::steady_timer>(impl_->main_io(), delay);
  timer->async_wait([timer, task = std::move(task)](const boost::system::error_code& ec) {
    if (!ec) task();
  });
}

bool valid_tls_min_version(const std::string& value) { return min_protocol(value) != 0; }

}  // namespace fedmetrics::transport
