#include "fedmetrics/transport/tls_server.hpp"

#include <utility>  // before Asio's awaitable.hpp (Boost + C++20 coroutines)

#include <algorithm>
#include <array>
#include <atomic>
#include <mutex>
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
#include <boost/asio/ssl.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <openssl/pem.h>
#include <spdlog/spdlog.h>

#include "fedmetrics/transport/gzip.hpp"

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
         ec == asio::error::operation_aborted || ec == beast::error::timeout ||
         ec == asio::error::connection_reset || ec == asio::error::broken_pipe;
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
  TlsServerOptions options;
  RequestHandler handler;
  asio::io_context io;
  // Swapped whole by set_certificate; each connection keeps the one it started with.
  std::shared_ptr<ssl::context> tls;
  std::mutex tls_mutex;
  tcp::acceptor acceptor;
  asio::signal_set signals;
  std::atomic<std::size_t> connections{0};
  std::uint16_t bound_port = 0;
  std::atomic<bool> accepting{true};
  // Bumped when kept-alive connections must go (refusal, new certificate).
  std::atomic<std::uint64_t> generation{0};
  std::atomic<std::uint64_t> accept_epoch{0};  // the live accept loop's

  Impl(TlsServerOptions o, RequestHandler h)
      : options(std::move(o)),
        handler(std::move(h)),
        io(),
        tls(std::make_shared<ssl::context>(make_tls_context(options))),
        acceptor(io),
        signals(io, SIGINT, SIGTERM) {
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
      auto [ec, socket] = co_await acceptor.async_accept(asio::make_strand(io), use_tuple);
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
      asio::co_spawn(executor, session(std::move(socket)), asio::detached);
    }
  }

  // Delivers the handler's callback back onto the connection's executor.
  awaitable<HttpResponse> call_handler(HttpRequest request) {
    return asio::async_initiate<decltype(asio::use_awaitable), void(HttpResponse)>(
        [this, request = std::move(request)](auto completion) mutable {
          using Completion = decltype(completion);
          auto shared = std::make_shared<Completion>(std::move(completion));
          auto respond = [shared](HttpResponse response) {
            auto executor = asio::get_associated_executor(*shared);
            asio::post(executor, [shared, response = std::move(response)]() mutable {
              (*shared)(std::move(response));
            });
          };
          try {
            handler(std::move(request), respond);
          } catch (const std::exception& e) {
            // A bug, not a code path: answer 500 rather than lose the process.
            spdlog::error("request handler failed: {}", e.what());
            respond(internal_error_response());
          }
        },
        asio::use_awaitable);
  }

  // Like call_handler, but gives up (nullopt) when the client closes or sends
  // more before the handler answers. Everything here runs on the connection's
  // strand, so the flags need no lock.
  struct PendingResponse {
    explicit PendingResponse(const asio::any_io_executor& executor)
        : signal(executor, asio::steady_timer::time_point::max()) {}
    std::optional<HttpResponse> response;
    bool client_gone = false;
    asio::steady_timer signal;  // cancelled when either happens
  };

  awaitable<std::optional<HttpResponse>> call_handler_abandonable(HttpRequest request, tcp::socket& socket) {
    auto executor = co_await asio::this_coro::executor;
    auto pending = std::make_shared<PendingResponse>(executor);
    handler(std::move(request), [pending, executor](HttpResponse response) {
      asio::post(executor, [pending, response = std::move(response)]() mutable {
        if (pending->response || pending->client_gone) return;
        pending->response = std::move(response);
        pending->signal.cancel();
      });
    });
    socket.async_wait(tcp::socket::wait_read, [pending](const boost::system::error_code& ec) {
      if (ec || pending->response) return;
      pending->client_gone = true;
      pending->signal.cancel();
    });
    while (!pending->response && !pending->client_gone) co_await pending->signal.async_wait(use_tuple);
    boost::system::error_code ignored;
    if (pending->response) socket.cancel(ignored);  // stop watching; the wait handler sees operation_aborted
    co_return pending->client_gone ? std::nullopt : std::move(pending->response);
  }

  awaitable<void> session(tcp::socket socket) {
    struct Count {
      std::atomic<std::size_t>& n;
      explicit Count(std::atomic<std::size_t>& c) : n(c) { ++n; }
      ~Count() { --n; }
    } count(connections);

    auto tls_context = current_tls();
    const std::uint64_t started_generation = generation.load();
    beast::ssl_stream<beast::tcp_stream> stream(beast::tcp_stream(std::move(socket)), *tls_context);
    beast::get_lowest_layer(stream).expires_after(options.handshake_timeout);
    auto [hec] = co_await stream.async_handshake(ssl::stream_base::server, use_tuple);
    if (hec) {
      if (!harmless(hec)) spdlog::debug("TLS handshake failed: {}", hec.message());
      co_return;
    }
    const std::string peer_certificates =
        options.request_client_certificates ? peer_chain_pem(stream.native_handle()) : std::string();
    beast::flat_buffer buffer;
    bool first = true;
    for (;;) {
      http::request_parser<http::string_body> parser;
      parser.header_limit(static_cast<std::uint32_t>(options.max_header_bytes));
      parser.body_limit(options.max_body_bytes);
      // An idle keep-alive connection gets the idle timeout; a request being sent, the header timeout.
      beast::get_lowest_layer(stream).expires_after(first ? options.header_read_timeout : options.idle_timeout);
      first = false;
      auto [rec, bytes] = co_await http::async_read(stream, buffer, parser, use_tuple);
      (void)bytes;
      if (rec == http::error::header_limit || rec == http::error::body_limit) {
        co_await write_error(stream, rec == http::error::header_limit ? 431 : 413,
                             rec == http::error::header_limit ? "request header too large" : "request body too large");
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
      server_request.target = std::string(request.target());
      for (const auto& field : request) server_request.headers.emplace_back(field.name_string(), field.value());
      server_request.body = std::move(request.body());
      server_request.peer_certificates_pem = peer_certificates;
      HttpResponse response;
      if (options.abandon_when_client_closes) {
        beast::get_lowest_layer(stream).expires_never();
        auto answered = co_await call_handler_abandonable(std::move(server_request),
                                                          beast::get_lowest_layer(stream).socket());
        if (!answered) co_return;  // the client went away
        response = std::move(*answered);
      } else {
        response = co_await call_handler(std::move(server_request));
      }
      if (response.status == 0) co_return;  // close without answering
      if (response.stream) {
        co_await stream_response(stream, std::move(response), request.version());
        co_return;  // a streamed body ends the connection
      }
      // HEAD too: its headers (Content-Length, Content-Encoding) are GET's.
      if (options.compress_min_bytes > 0)
        compress_response(response, accept_encoding(request), options.compress_min_bytes);

      // A shared body (one encoded answer for many clients) is written from
      // its bytes in place; `response` keeps them alive through the write.
      const bool keep_alive = request.keep_alive();
      auto prepare = [&](auto& res) {
        res.set(http::field::server, "fedmetrics");
        res.set(http::field::content_type, response.content_type);
        res.set(http::field::cache_control, "no-cache, private");
        for (auto& [name, value] : response.headers) res.insert(name, value);
        res.keep_alive(keep_alive);
      };
      const bool head = request.method() == http::verb::head;
      beast::get_lowest_layer(stream).expires_after(options.write_timeout);
      boost::system::error_code wec;
      if (response.shared_body) {
        http::response<http::span_body<const char>> res{static_cast<http::status>(response.status), request.version()};
        prepare(res);
        const std::string& bytes = *response.shared_body;
        if (head) {
          res.content_length(bytes.size());
        } else {
          res.body() = http::span_body<const char>::value_type(bytes.data(), bytes.size());
          res.prepare_payload();
        }
        std::tie(wec, std::ignore) = co_await http::async_write(stream, res, use_tuple);
      } else {
        http::response<http::string_body> res{static_cast<http::status>(response.status), request.version()};
        prepare(res);
        if (head) {
          res.content_length(response.body.size());
        } else {
          res.body() = std::move(response.body);
          res.prepare_payload();
        }
        std::tie(wec, std::ignore) = co_await http::async_write(stream, res, use_tuple);
      }
      if (wec) {
        if (!harmless(wec)) spdlog::debug("writing response failed: {}", wec.message());
        co_return;
      }
      if (!keep_alive) break;
    }
    beast::get_lowest_layer(stream).expires_after(std::chrono::seconds(2));
    co_await stream.async_shutdown(use_tuple);
  }

  // Sends the headers, then every piece the producer writes as a chunk, until
  // it closes the body, the client goes away or a write fails. The client
  // sends nothing meanwhile; a read that completes means it closed.
  awaitable<void> stream_response(beast::ssl_stream<beast::tcp_stream>& stream, HttpResponse response,
                                  unsigned version) {
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

    http::response<http::empty_body> res{static_cast<http::status>(response.status), version};
    res.set(http::field::server, "fedmetrics");
    res.set(http::field::content_type, response.content_type);
    res.set(http::field::cache_control, "no-cache, private");
    for (auto& [name, value] : response.headers) res.insert(name, value);
    res.chunked(true);
    res.keep_alive(false);
    http::response_serializer<http::empty_body> serializer(res);
    beast::get_lowest_layer(stream).expires_after(options.write_timeout);
    auto [hec, header_bytes] = co_await http::async_write_header(stream, serializer, use_tuple);
    (void)header_bytes;
    if (hec) co_return;
    beast::get_lowest_layer(stream).expires_never();

    bool client_gone = false;
    std::array<char, 512> sink{};
    stream.async_read_some(asio::buffer(sink), [&client_gone, signal](const boost::system::error_code&, std::size_t) {
      client_gone = true;  // this coroutine outlives the read: it waits for it below
      signal->cancel();
    });
    // Everything here runs on the connection's strand, so no wake-up is lost
    // between take() finding nothing and the wait: the producer's posted
    // cancel runs only once this coroutine is suspended.
    for (;;) {
      auto pending = producer->take();
      if (!pending.pieces.empty()) {
        bool failed = false;
        for (auto& piece : pending.pieces) {
          if (piece.empty()) continue;  // an empty chunk would end the body
          beast::get_lowest_layer(stream).expires_after(options.write_timeout);
          auto [wec, n] = co_await asio::async_write(stream, http::make_chunk(asio::buffer(piece)), use_tuple);
          (void)n;
          if (wec) {
            failed = true;
            break;
          }
        }
        beast::get_lowest_layer(stream).expires_never();
        if (failed) break;
        continue;  // pieces written meanwhile woke nobody: look again before waiting
      }
      if (client_gone || pending.client_gone) break;
      if (pending.closed) {
        beast::get_lowest_layer(stream).expires_after(options.write_timeout);
        co_await asio::async_write(stream, http::make_chunk_last(), use_tuple);
        break;
      }
      signal->expires_at(asio::steady_timer::time_point::max());
      co_await signal->async_wait(use_tuple);
    }
    // The outstanding read must finish before `sink` and `client_gone` go away.
    if (!client_gone) {
      boost::system::error_code ignored;
      beast::get_lowest_layer(stream).socket().shutdown(tcp::socket::shutdown_both, ignored);
      beast::get_lowest_layer(stream).socket().cancel(ignored);
      while (!client_gone) {
        signal->expires_at(asio::steady_timer::time_point::max());
        co_await signal->async_wait(use_tuple);
      }
    }
  }

  awaitable<void> write_error(beast::ssl_stream<beast::tcp_stream>& stream, int status, std::string text) {
    http::response<http::string_body> res{static_cast<http::status>(status), 11};
    res.set(http::field::content_type, "text/plain; charset=utf-8");
    res.set(http::field::connection, "close");
    res.body() = std::move(text);
    res.prepare_payload();
    beast::get_lowest_layer(stream).expires_after(options.write_timeout);
    co_await http::async_write(stream, res, use_tuple);
  }
};

TlsServer::TlsServer(TlsServerOptions options, RequestHandler handler)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(handler))) {}

TlsServer::~TlsServer() = default;

std::uint16_t TlsServer::port() const { return impl_->bound_port; }

void TlsServer::run() {
  impl_->signals.async_wait([this](const boost::system::error_code& ec, int signal) {
    if (!ec) {
      spdlog::info("received signal {}, shutting down", signal);
      stop();
    }
  });
  asio::co_spawn(impl_->acceptor.get_executor(), impl_->accept_loop(impl_->accept_epoch), asio::detached);
  unsigned threads = impl_->options.threads != 0 ? impl_->options.threads : std::max(1U, std::thread::hardware_concurrency());
  std::vector<std::thread> pool;
  for (unsigned i = 1; i < threads; ++i) pool.emplace_back([this] { run_io(impl_->io); });
  run_io(impl_->io);
  for (auto& t : pool) t.join();
}

void TlsServer::stop() {
  asio::post(impl_->io, [this] {
    boost::system::error_code ignored;
    impl_->acceptor.close(ignored);
    impl_->signals.cancel(ignored);
    impl_->io.stop();
  });
}

void TlsServer::set_accepting(bool accepting) {
  bool was = impl_->accepting.exchange(accepting);
  if (was == accepting) return;
  if (!accepting) ++impl_->generation;
  asio::post(impl_->io, [this, accepting] {
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
  auto timer = std::make_shared<asio::steady_timer>(impl_->io, delay);
  timer->async_wait([timer, task = std::move(task)](const boost::system::error_code& ec) {
    if (!ec) task();
  });
}

bool valid_tls_min_version(const std::string& value) { return min_protocol(value) != 0; }

}  // namespace fedmetrics::transport
