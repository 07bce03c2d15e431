// HttpsClient::stream_lines: a GET whose answer is read line by line as it
// arrives (a watch), on a connection of its own outside the pool.
#include "kube/https_client_impl.hpp"

#include <array>
#include <limits>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/parser.hpp>

#include "fedmetrics/transport/tls_http.hpp"

// GCC 12 inlines Asio's coroutine frame allocation and then reports its own
// matching operator delete as mismatched: a false positive (see tls_server.cpp).
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

namespace fedmetrics::kube {

using asio::awaitable;

// What cancel() shares with the stream's coroutine, whose frame owns the
// connection. Touched on the client's strand only.
struct HttpsClient::Impl::LineStreamState {
  bool cancelled = false;
  Stream* stream = nullptr;  // while connected
};

namespace {

// Ends the stream of `state` soon, from any thread.
void cancel_stream(const std::shared_ptr<HttpsClient::Impl>& impl,
                   const std::shared_ptr<HttpsClient::Impl::LineStreamState>& state) {
  asio::post(impl->strand, [state] {
    state->cancelled = true;
    // Closed, not only cancelled: an operation that starts after this
    // (the coroutine between two steps) fails at once too.
    if (state->stream != nullptr) state->stream->abort();
  });
}

class LineStreamHandle final : public LineStream {
 public:
  LineStreamHandle(std::weak_ptr<HttpsClient::Impl> client, std::shared_ptr<HttpsClient::Impl::LineStreamState> state)
      : client_(std::move(client)), state_(std::move(state)) {}
  void cancel() override {
    if (auto impl = client_.lock()) cancel_stream(impl, state_);
  }

 private:
  std::weak_ptr<HttpsClient::Impl> client_;
  std::shared_ptr<HttpsClient::Impl::LineStreamState> state_;
};

}  // namespace

awaitable<HttpResult> HttpsClient::Impl::run_stream(std::shared_ptr<Impl> impl, OutgoingRequest out,
                                                    Deadline header_deadline, std::chrono::milliseconds idle_timeout,
                                                    std::shared_ptr<LineStreamState> state,
                                                    std::function<bool(std::string)> on_line) {
  ++impl->requests;
  const std::string cancelled = "stream from " + impl->address() + " cancelled";
  auto connected = co_await impl->connector.connect(header_deadline);
  if (auto* e = std::get_if<Error>(&connected)) co_return *e;
  auto stream = std::move(std::get<std::unique_ptr<Stream>>(connected));
  if (state->cancelled) co_return error(Kind::Timeout, cancelled);
  state->stream = stream.get();
  struct Detach {
    LineStreamState& state;
    ~Detach() { state.stream = nullptr; }
  } detach{*state};
  auto fail = [&](const boost::system::error_code& ec, std::string_view phase) {
    if (state->cancelled) return error(Kind::Timeout, cancelled);
    return impl->connector.classify_error(ec, phase);
  };

  auto req = impl->build_request(out);
  stream->deadline().expires_at(header_deadline);
  auto wec = co_await write_request(*stream, req);
  if (wec || state->cancelled) co_return fail(wec, "write to");
  beast::flat_buffer buffer;
  http::response_parser<http::buffer_body> parser;
  parser.header_limit(kMaxResponseHeaderBytes);
  parser.body_limit((std::numeric_limits<std::uint64_t>::max)());  // a watch has no end; lines are capped instead
  auto hec = co_await transport::read_http(*stream, buffer, parser, kMaxResponseHeaderBytes,
                                           [&] { return parser.is_header_done(); });
  if (hec || state->cancelled) co_return fail(hec, "read from");
  const int status = static_cast<int>(parser.get().result_int());
  if (status != 200) {
    // A refusal (401, 403, 410, ...): its body is the Status, read whole.
    http::response_parser<http::string_body> whole{std::move(parser)};
    whole.body_limit(impl->options.max_response_bytes);
    auto rec =
        co_await transport::read_http(*stream, buffer, whole, kMaxResponseHeaderBytes, [&] { return whole.is_done(); });
    if (rec || state->cancelled) co_return fail(rec, "read from");
    auto res = whole.release();
    co_return HttpReply{status, std::move(res.body()), std::string(res[http::field::content_type])};
  }
  // Asked for identity: a compressed stream is not one we can split into lines.
  if (auto coding = parser.get()[http::field::content_encoding]; !coding.empty() && !beast::iequals(coding, "identity"))
    co_return error(Kind::MalformedResponse,
                    "read from " + impl->address() + ": a watch stream with Content-Encoding " + std::string(coding));
  std::array<char, 16 * 1024> chunk{};
  std::string pending;  // the start of a line not yet ended
  while (!parser.is_done()) {
    parser.get().body().data = chunk.data();
    parser.get().body().size = chunk.size();
    stream->deadline().expires_after(idle_timeout);
    // Back with whatever body has arrived (need_buffer: the chunk is full).
    auto rec = co_await transport::read_http(*stream, buffer, parser, kMaxResponseHeaderBytes, [&] {
      return parser.is_done() || parser.get().body().size < chunk.size();
    });
    if (rec == http::error::need_buffer) rec = {};
    if (rec) co_return fail(rec, "read from");
    if (state->cancelled) co_return error(Kind::Timeout, cancelled);
    pending.append(chunk.data(), chunk.size() - parser.get().body().size);
    std::size_t start = 0;
    for (auto end = pending.find('\n'); end != std::string::npos; end = pending.find('\n', start)) {
      if (end > start && !on_line(pending.substr(start, end - start))) co_return error(Kind::Timeout, cancelled);
      start = end + 1;
    }
    pending.erase(0, start);
    if (pending.size() > impl->options.max_response_bytes)
      co_return error(Kind::TooLarge, "read from " + impl->address() + ": a streamed line larger than the size cap");
  }
  if (!pending.empty()) on_line(std::move(pending));
  co_return HttpReply{200, {}, std::string(parser.get()[http::field::content_type])};
}

std::shared_ptr<LineStream> HttpsClient::stream_lines(std::string path_and_query, Deadline header_deadline,
                                                      std::chrono::milliseconds idle_timeout,
                                                      LineStreamCallbacks callbacks) {
  auto impl = impl_;
  auto state = std::make_shared<Impl::LineStreamState>();
  impl->begin();
  OutgoingRequest request;
  request.target = std::move(path_and_query);
  request.headers = {{"Accept-Encoding", "identity"}};  // lines are split as they arrive: never compressed
  asio::co_spawn(impl->strand,
                 Impl::run_stream(impl, std::move(request), header_deadline, idle_timeout, state,
                                  [on_line = std::move(callbacks.on_line)](std::string line) {
                                    on_line(std::move(line));
                                    return true;
                                  }),
                 [impl, on_end = std::move(callbacks.on_end)](std::exception_ptr e, HttpResult result) {
                   // No latency for a stream: it lasts as long as the server lets it.
                   on_end(impl->end(std::move(result), e != nullptr, std::nullopt));
                 });
  return std::make_shared<LineStreamHandle>(impl, std::move(state));
}

awaitable<HttpResult> HttpsClient::Impl::watch_lines(std::shared_ptr<Impl> impl, OutgoingRequest request,
                                                     Deadline header_deadline, std::chrono::milliseconds idle_timeout,
                                                     std::function<bool(std::string)> on_line) {
  auto state = std::make_shared<LineStreamState>();
  impl->begin();
  // The awaiting coroutine's cancellation closes the stream (a watch may be
  // silent for minutes). The stream's own coroutine is bound to no slot, so
  // that this handler stays the one the slot holds.
  auto cancellation = co_await asio::this_coro::cancellation_state;
  auto slot = cancellation.slot();
  if (slot.is_connected()) slot.assign([impl, state](asio::cancellation_type) { cancel_stream(impl, state); });
  auto on_strand = asio::co_spawn(
      impl->strand, run_stream(impl, std::move(request), header_deadline, idle_timeout, state, std::move(on_line)),
      asio::bind_cancellation_slot(asio::cancellation_slot(), asio::as_tuple(asio::use_awaitable)));
  auto [failure, result] = co_await std::move(on_strand);
  if (slot.is_connected()) slot.clear();
  // No latency for a stream: it lasts as long as the server lets it.
  co_return impl->end(std::move(result), failure != nullptr, std::nullopt);
}

// Not a coroutine itself: the client is held by the coroutine's frame from the call on.
async::Task<HttpResult> HttpsClient::watch_lines(std::string path_and_query, Deadline header_deadline,
                                                 std::chrono::milliseconds idle_timeout,
                                                 std::function<bool(std::string)> on_line) {
  OutgoingRequest request;
  request.target = std::move(path_and_query);
  request.headers = {{"Accept-Encoding", "identity"}};  // lines are split as they arrive: never compressed
  return Impl::watch_lines(impl_, std::move(request), header_deadline, idle_timeout, std::move(on_line));
}

}  // namespace fedmetrics::kube
