// One connection's life on its worker: the TLS handshake, then requests read
// and answered in turn (kept alive, pipelined), each phase with its deadline
// and each read with its limit; a streamed answer; Go's plain-text refusals.
#include "tls_server_impl.hpp"

#include <algorithm>
#include <exception>
#include <tuple>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/experimental/parallel_group.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <spdlog/spdlog.h>

#include "fedmetrics/transport/gzip.hpp"
#include "fedmetrics/transport/tls_http.hpp"

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
using server_detail::harmless;
using server_detail::internal_error_response;
using server_detail::peer_chain_pem;
using server_detail::SessionSet;
constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);

namespace server_detail {

// Errors that end a connection normally and are not worth a log line:
// the peer closed (end_of_stream, eof), closed TLS without close_notify
// (stream_truncated, common with HTTP/1.1 clients), or we shut down
// (operation_aborted), or a deadline passed on an idle connection (timeout).
bool harmless(const boost::system::error_code& ec) {
  return ec == http::error::end_of_stream || ec == asio::error::eof || ec == ssl::error::stream_truncated ||
         ec == asio::error::operation_aborted || ec == asio::error::timed_out || ec == asio::error::connection_reset ||
         ec == asio::error::broken_pipe;
}

HttpResponse internal_error_response() {
  return HttpResponse{
      500,
      "application/json",
      R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Internal error occurred: the request handler failed","reason":"InternalError","code":500})",
      {}};
}

}  // namespace server_detail

namespace {

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

// Every Accept-Encoding field line, joined into one list (RFC 9110 section 5.3).
std::string accept_encoding(const http::fields& fields) {
  std::string joined;
  for (auto [it, end] = fields.equal_range(http::field::accept_encoding); it != end; ++it) {
    if (!joined.empty()) joined += ", ";
    joined.append(it->value());
  }
  return joined;
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

// Whether the calling coroutine was cancelled (the server stops, the grace
// period of a drain passed, or the client left). Awaited into a named bool,
// never in a condition: GCC 12 miscompiles `if (!co_await ...)` (SIGILL).
awaitable<bool> cancelled() {
  auto state = co_await asio::this_coro::cancellation_state;
  co_return state.cancelled() != asio::cancellation_type::none;
}

// nullptr (and a log line) when OpenSSL cannot take one more connection.
std::unique_ptr<TlsSocket> make_tls_socket(tcp::socket socket, SSL_CTX* context) {
  try {
    return std::make_unique<TlsSocket>(std::move(socket), context);
  } catch (const std::exception& e) {
    spdlog::warn("dropping a connection: {}", e.what());
    return nullptr;
  }
}

// A handler that threw: a bug, not a code path, answered 500 rather than
// losing the process; unless the exception is this session's cancellation,
// which ends the session.
awaitable<std::optional<HttpResponse>> handler_failed(std::exception_ptr failure) {
  const bool ended_by_cancellation = co_await cancelled();
  if (ended_by_cancellation) std::rethrow_exception(failure);
  try {
    std::rethrow_exception(failure);
  } catch (const std::exception& e) {
    spdlog::error("request handler failed: {}", e.what());
  } catch (...) {
    spdlog::error("request handler failed");
  }
  co_return internal_error_response();
}

// An answer that will not be sent: its stream's producer learns it at once.
std::nullopt_t unsent(const HttpResponse& response) {
  if (response.stream) response.stream->abandon();
  return std::nullopt;
}

}  // namespace

// Runs the handler's coroutine on this connection's thread. With `watch`
// (abandon_when_client_closes), it races the client: when the client closes
// or sends more before the answer, the handler is cancelled and nullopt
// returned. The session's own cancellation reaches the handler either way,
// and then too the answer is nullopt: the connection closes unanswered.
awaitable<std::optional<HttpResponse>> TlsServer::Impl::call_handler(HttpRequest request, tcp::socket* watch) {
  std::exception_ptr failure;
  if (watch == nullptr) {
    std::optional<HttpResponse> response;
    try {
      response = co_await handler(std::move(request));
    } catch (...) {
      failure = std::current_exception();
    }
    if (failure) co_return co_await handler_failed(failure);
    // Cancelled meanwhile: whatever the handler made of it, nothing is sent.
    const bool ended_by_cancellation = co_await cancelled();
    if (ended_by_cancellation) co_return unsent(*response);
    co_return response;
  }
  auto executor = co_await asio::this_coro::executor;
  // Each completes when the other is cancelled, and both are waited for.
  auto [order, raised, response, ec] = co_await asio::experimental::make_parallel_group(
                                           asio::co_spawn(executor, handler(std::move(request)), asio::deferred),
                                           watch->async_wait(tcp::socket::wait_read, asio::deferred))
                                           .async_wait(asio::experimental::wait_for_one(), asio::use_awaitable);
  (void)ec;
  if (order[0] == 1) co_return unsent(response);  // the client went first
  if (raised) co_return co_await handler_failed(raised);
  const bool ended_by_cancellation = co_await cancelled();
  if (ended_by_cancellation) co_return unsent(response);
  co_return std::move(response);
}

// Writes a whole response: its head and the start of its body as one TLS
// record, the rest in records of their own, all sent together (in slices of
// at most kFlushBytes, so that a large answer is not copied whole). Small
// pieces (a merged list's items, ~350 bytes each) are gathered into records
// of kRecordBytes; a piece larger than a record goes out from where it is.
awaitable<boost::system::error_code> TlsServer::Impl::write_response(TlsSocket& tls, std::string& scratch,
                                                                     const ResponseHead& head,
                                                                     std::span<const std::string_view> body) {
  constexpr std::size_t kRecordBytes = 16 * 1024;
  constexpr std::size_t kFlushBytes = 64 * 1024;  // the most ciphertext a connection holds
  scratch.clear();
  append_response_head(scratch, head);
  for (std::string_view piece : body) {
    const std::size_t gathered = std::min(piece.size(), kRecordBytes - std::min(scratch.size(), kRecordBytes));
    scratch.append(piece.data(), gathered);
    piece.remove_prefix(gathered);
    if (piece.empty()) continue;
    // The record is full and more of this piece is left.
    if (auto ec = tls.write(scratch.data(), scratch.size())) co_return ec;
    scratch.clear();
    while (piece.size() >= kRecordBytes) {
      const std::size_t n = std::min(kFlushBytes, piece.size());
      if (auto ec = tls.write(piece.data(), n)) co_return ec;
      piece.remove_prefix(n);
      if (tls.pending_output() >= kFlushBytes)
        if (auto ec = co_await tls.flush()) co_return ec;
    }
    scratch.append(piece);
    if (tls.pending_output() >= kFlushBytes)
      if (auto ec = co_await tls.flush()) co_return ec;
  }
  if (!scratch.empty())
    if (auto ec = tls.write(scratch.data(), scratch.size())) co_return ec;
  co_return co_await tls.flush();
}

awaitable<void> TlsServer::Impl::session(tcp::socket socket, SessionSet::Session& entry) {
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
      entry.idle = true;  // a drain cancels the wait
      auto [ec, n] = co_await tls.read_some(static_cast<char*>(space.data()), space.size());
      entry.idle = false;
      if (ec) {
        if (!harmless(ec)) spdlog::debug("waiting for a request failed: {}", ec.message());
        break;
      }
      buffer.commit(n);
    }
    tls.deadline().expires_after(options.header_read_timeout);
    first = false;
    auto rec =
        co_await read_http(tls, buffer, parser, options.max_header_bytes, [&] { return parser.is_header_done(); });
    if (!rec) {
      if (auto refusal = refuse_head(parser.get())) {
        co_await write_error(tls, scratch, refusal->status, refusal->reason, parser.get().method() == http::verb::head);
        break;
      }
      // A GET or HEAD with a body (Content-Length over 0, or chunked) is
      // refused before any of it is read: no endpoint reads one, so reading
      // (or, as Go does, discarding up to 256 KiB of) it would only let an
      // unauthenticated client make us hold or spend bytes for nothing.
      const auto verb = parser.get().method();
      if (!parser.is_done() && (verb == http::verb::get || verb == http::verb::head)) {
        co_await write_error(tls, scratch, 400, "a GET or HEAD request must not have a body", verb == http::verb::head);
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
    auto answered =
        co_await call_handler(std::move(server_request), options.abandon_when_client_closes ? &tls.socket() : nullptr);
    if (!answered) co_return;  // the client went away, or the session was cancelled
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
      ResponseHead head{response.status,   request.version(), response.content_type,
                        &response.headers, std::nullopt,      false};
      tls.deadline().expires_after(options.write_timeout);
      const std::span<const std::string_view> no_body;
      if (auto wec = co_await write_response(tls, scratch, head, no_body); !wec) {
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
    const std::string_view one_piece = response.body_bytes();
    std::span<const std::string_view> body(&one_piece, 1);
    if (response.body_pieces) body = *response.body_pieces;
    ResponseHead head{response.status,   request.version(),    response.content_type,
                      &response.headers, response.body_size(), keep_alive};
    tls.deadline().expires_after(options.write_timeout);
    if (head_only) body = {};
    auto wec = co_await write_response(tls, scratch, head, body);
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
awaitable<void> TlsServer::Impl::stream_response(TlsSocket& tls, std::string& scratch, HttpResponse response,
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
  tls.socket().async_wait(tcp::socket::wait_read, [client_gone, watching, signal](const boost::system::error_code&) {
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
    const auto close_at = pending.close_at.value_or(asio::steady_timer::time_point::max());
    if (pending.closed || std::chrono::steady_clock::now() >= close_at) {
      tls.deadline().expires_after(options.write_timeout);
      if (!tls.write(kLastChunk.data(), kLastChunk.size())) co_await tls.flush();
      break;
    }
    // Until a wake-up, or the time the producer set for the body's end.
    signal->expires_at(close_at);
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
awaitable<void> TlsServer::Impl::write_error(TlsSocket& tls, std::string& scratch, int status, std::string_view why,
                                             bool head_only) {
  std::string text = std::to_string(status) + " " + std::string(reason_phrase(status));
  if (!why.empty()) text += ": " + std::string(why);
  const std::vector<std::pair<std::string, std::string>> fields{{"Date", http_date(std::chrono::system_clock::now())}};
  ResponseHead head{status, 11, "text/plain; charset=utf-8", &fields, text.size(), false};
  tls.deadline().expires_after(options.write_timeout);
  const std::string_view piece = text;
  std::span<const std::string_view> body(&piece, 1);
  if (head_only) body = {};
  co_await write_response(tls, scratch, head, body);
}
}  // namespace fedmetrics::transport
