#include "kube/https_client_impl.hpp"

#include "fedmetrics/transport/async.hpp"

#include <fstream>
#include <limits>
#include <sstream>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/parser.hpp>
#include <nlohmann/json.hpp>

#include "fedmetrics/kube/retry_policy.hpp"
#include "fedmetrics/transport/async.hpp"
#include "fedmetrics/transport/gzip.hpp"
#include "fedmetrics/transport/run_on.hpp"
#include "fedmetrics/transport/tls_http.hpp"

// GCC 12 inlines Asio's coroutine frame allocation and then reports its own
// matching operator delete as mismatched: a false positive (see tls_server.cpp).
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

namespace fedmetrics::kube {

using asio::awaitable;

namespace {

std::string read_token_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string token = ss.str();
  while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back()))) token.pop_back();
  return token;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Whether the request was cancelled (its caller's cancellation, forwarded
// to the strand by async::run_on). Its current step then ends with an
// error, never with an exception between two steps (run() asks for that),
// and no further step starts.
bool cancelled(const asio::cancellation_state& state) { return state.cancelled() != asio::cancellation_type::none; }

Error cancelled_error(const HttpsClient::Impl& impl) {
  return error(Kind::Timeout, "request to " + impl.address() + " cancelled");
}

// One exchange on `stream`. Sets `reusable` when the connection may go back
// to the pool, and `answer_began` when any byte of the answer arrived (a
// failure after that may follow a request the peer acted on: never retried).
awaitable<HttpResult> exchange(HttpsClient::Impl& impl, Stream& stream, const OutgoingRequest& out, Deadline deadline,
                               bool& reusable, bool& answer_began) {
  reusable = false;
  answer_began = false;
  auto req = impl.build_request(out);
  stream.deadline().expires_at(deadline);
  auto wec = co_await write_request(stream, req);  // not in a condition (GCC 12)
  if (wec) co_return impl.connector.classify_error(wec, "write to");
  // A cancellation that came as the write completed found no operation to
  // end: seen here, before a read that may wait as long as the server does.
  const auto cancellation = co_await asio::this_coro::cancellation_state;
  if (cancelled(cancellation)) co_return cancelled_error(impl);
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.header_limit(kMaxResponseHeaderBytes);
  parser.body_limit(impl.options.max_response_bytes);
  parser.eager(true);
  if (req.method() == http::verb::head) parser.skip(true);
  auto rec =
      co_await transport::read_http(stream, buffer, parser, kMaxResponseHeaderBytes, [&] { return parser.is_done(); });
  if (rec) {
    answer_began = parser.got_some() || buffer.size() > 0;
    co_return impl.connector.classify_error(rec, "read from");
  }
  answer_began = true;
  // Bytes after the answer would be read as the next one's: not reusable
  // then. (The parser's keep_alive is false for a body ended by the close.)
  reusable = parser.keep_alive() && buffer.size() == 0;
  auto res = parser.release();
  // Inflated here when we asked for gzip, with the same size cap on the
  // inflated bytes (a small compressed body may be a bomb).
  const bool inflate = impl.asks_gzip(out) && (beast::iequals(res[http::field::content_encoding], "gzip") ||
                                               beast::iequals(res[http::field::content_encoding], "x-gzip"));
  if (inflate) {
    auto inflated = transport::gzip_decompress(res.body(), impl.options.max_response_bytes);
    if (!inflated) {
      if (inflated.failure() == transport::GzipFailure::too_large)
        co_return error(Kind::TooLarge,
                        "read from " + impl.address() + ": response larger than the size cap once inflated");
      co_return error(Kind::MalformedResponse, "read from " + impl.address() + ": " + inflated.error().message);
    }
    res.body() = std::move(*inflated);
  }
  HttpReply reply{static_cast<int>(res.result_int()), std::move(res.body()),
                  std::string(res[http::field::content_type])};
  if (out.want_headers) {
    for (const auto& field : res) {
      auto name = field.name();
      if (name == http::field::connection || name == http::field::keep_alive ||
          name == http::field::transfer_encoding || name == http::field::content_length || name == http::field::te ||
          name == http::field::trailer || name == http::field::upgrade || name == http::field::proxy_authenticate ||
          (inflate && name == http::field::content_encoding))
        continue;
      reply.headers.emplace_back(field.name_string(), field.value());
    }
  }
  co_return reply;
}

// A connection's place in the pool, given back however the request ends:
// with the connection for reuse, or freed (the connection dropped).
class PoolPlace {
 public:
  explicit PoolPlace(ConnectionPool& pool) : pool_(&pool) {}
  PoolPlace(const PoolPlace&) = delete;
  PoolPlace& operator=(const PoolPlace&) = delete;
  ~PoolPlace() {
    if (pool_ != nullptr) pool_->release(nullptr);
  }
  void give_back(std::unique_ptr<Stream> stream) { std::exchange(pool_, nullptr)->release(std::move(stream)); }

 private:
  ConnectionPool* pool_;
};

// One request on a pooled connection, sent once more on a new connection
// when retry_policy.hpp says so.
awaitable<HttpResult> send_pooled(HttpsClient::Impl& impl, const OutgoingRequest& out, Deadline deadline) {
  ++impl.requests;
  const auto cancellation = co_await asio::this_coro::cancellation_state;
  const bool replayable = is_replayable(out.method, out.replayable);
  bool fresh = false;  // the retry takes a new connection
  for (;;) {
    auto lease = co_await impl.pool.acquire(deadline, fresh);
    if (!lease) {
      if (cancelled(cancellation)) co_return cancelled_error(impl);
      co_return error(Kind::Timeout, "no free connection to " + impl.address() + " before the deadline");
    }
    PoolPlace place(impl.pool);
    std::unique_ptr<Stream> stream = std::move(*lease);
    const bool reused = stream != nullptr;
    if (!stream && !cancelled(cancellation)) {
      auto connected = co_await impl.connector.connect(deadline);
      if (auto* e = std::get_if<Error>(&connected)) co_return cancelled(cancellation) ? cancelled_error(impl) : *e;
      stream = std::move(std::get<std::unique_ptr<Stream>>(connected));
    }
    if (cancelled(cancellation)) {
      place.give_back(std::move(stream));  // unused: another request takes it
      co_return cancelled_error(impl);
    }
    bool reusable = false, answer_began = false;
    HttpResult result = co_await exchange(impl, *stream, out, deadline, reusable, answer_began);
    if (const auto* e = std::get_if<Error>(&result)) {
      if (cancelled(cancellation)) co_return cancelled_error(impl);
      // The connection is dropped and its place freed (`place`) before a retry.
      FailedAttempt attempt{reused, answer_began, e->kind, std::chrono::steady_clock::now() >= deadline};
      if (!fresh && retry_on_new_connection(attempt, replayable)) {
        ++impl.retries;
        fresh = true;
        continue;
      }
      co_return result;
    }
    place.give_back(reusable ? std::move(stream) : nullptr);
    co_return result;
  }
}

}  // namespace

HttpsClient::Impl::Impl(ClientRuntime::Impl& runtime, ClusterEndpoint e, ClientOptions o)
    : endpoint(std::move(e)),
      options(std::move(o)),
      strand(boost::asio::make_strand(runtime.io)),
      connector(endpoint,
                !options.peer_name.empty() ? options.peer_name
                : !endpoint.name.empty()   ? endpoint.name
                                           : "the server",
                runtime.liveness),
      pool(strand, options.max_connections, options.idle_connection_timeout),
      rate(options.qps, options.burst) {
  token = endpoint.token_file.empty() ? endpoint.token : read_token_file(endpoint.token_file);
}

void HttpsClient::Impl::begin() {
  std::lock_guard lock(mutex);
  ++in_flight;
}

HttpResult HttpsClient::Impl::end(HttpResult result, bool failed, std::optional<double> seconds) {
  if (failed) result = error(Kind::Internal, "internal error talking to " + address());
  const auto* e = std::get_if<Error>(&result);
  if (e != nullptr) ++failures;
  std::lock_guard lock(mutex);
  --in_flight;
  // An answer with an error status is an outcome of its own kind.
  std::string outcome =
      e ? std::string(k8s::to_string(e->kind)) : (std::get<HttpReply>(result).status < 400 ? "success" : "http_status");
  ++outcomes[outcome];
  if (outcome == "success") last_success = std::chrono::system_clock::now();
  if (!seconds) return result;
  for (std::size_t i = 0; i < kLatencyBuckets.size(); ++i)
    if (*seconds <= kLatencyBuckets[i]) ++latency_le[i];
  ++latency_count;
  latency_sum += *seconds;
  return result;
}

// With a token file, its modification time is checked at most once a
// second, and a changed file re-read: a rotated token (a projected
// ServiceAccount token) is used before any 401.
std::string HttpsClient::Impl::current_token() {
  if (!endpoint.token_file.empty()) {
    auto now = std::chrono::steady_clock::now();
    bool check = false;
    {
      std::lock_guard lock(mutex);
      if (now - token_checked >= std::chrono::seconds(1)) {
        token_checked = now;
        check = true;
      }
    }
    if (check) {
      std::error_code ec;
      auto mtime = std::filesystem::last_write_time(endpoint.token_file, ec);
      bool changed = false;
      {
        std::lock_guard lock(mutex);
        changed = !ec && mtime != token_mtime;
        if (changed) token_mtime = mtime;
      }
      if (changed) reload_token();
    }
  }
  std::lock_guard lock(mutex);
  return token;
}

void HttpsClient::Impl::reload_token() {
  if (endpoint.token_file.empty()) return;
  std::string fresh = read_token_file(endpoint.token_file);
  std::lock_guard lock(mutex);
  token = std::move(fresh);
}

http::request<http::string_body> HttpsClient::Impl::build_request(const OutgoingRequest& out) {
  http::request<http::string_body> req{http::string_to_verb(out.method), connector.base_path() + out.target, 11};
  if (req.method() == http::verb::unknown) req.method_string(out.method);
  req.set(http::field::host, connector.host_header());
  req.set(http::field::user_agent, options.user_agent);
  req.set(http::field::accept, "application/json");
  if (auto t = current_token(); !t.empty()) req.set(http::field::authorization, "Bearer " + t);
  for (const auto& [name, value] : out.headers) {
    if (beast::iequals(name, "accept") || beast::iequals(name, "user-agent")) req.set(name, value);
    else req.insert(name, value);
  }
  if (asks_gzip(out)) req.set(http::field::accept_encoding, "gzip");
  if (!out.body.empty() || out.method == "POST" || out.method == "PUT" || out.method == "PATCH") {
    if (!out.content_type.empty()) req.set(http::field::content_type, out.content_type);
    req.body() = out.body;
    req.prepare_payload();
  }
  req.keep_alive(true);
  return req;
}

bool HttpsClient::Impl::asks_gzip(const OutgoingRequest& out) const {
  if (!options.accept_gzip || endpoint.disable_compression) return false;
  for (const auto& header : out.headers)
    if (beast::iequals(header.first, "accept-encoding")) return false;  // the caller's own choice
  return true;
}

awaitable<boost::system::error_code> write_request(Stream& stream, const http::request<http::string_body>& req) {
  std::string wire;
  wire.reserve(512 + req.body().size());
  wire.append(req.method_string()).append(" ").append(req.target()).append(" HTTP/1.1\r\n");
  for (const auto& field : req) wire.append(field.name_string()).append(": ").append(field.value()).append("\r\n");
  wire.append("\r\n").append(req.body());
  if (auto ec = stream.write(wire.data(), wire.size())) co_return ec;
  co_return co_await stream.flush();
}

awaitable<HttpResult> HttpsClient::Impl::run(std::shared_ptr<Impl> impl, OutgoingRequest request, Deadline deadline) {
  // A cancellation ends the operation in progress (its error is reported
  // as the cancellation), never throws between two of them: whatever the
  // request holds (its place in the pool) is given back on every path.
  co_await asio::this_coro::throw_if_cancelled(false);
  const auto cancellation = co_await asio::this_coro::cancellation_state;
  // The rate limit first: wait for a token, or fail as throttled by the deadline.
  auto wait = impl->rate.reserve(std::chrono::steady_clock::now(), deadline);
  if (!wait)
    co_return error(Kind::Throttled,
                    "rate limit (--member-qps) for " + impl->address() + ": no token before the deadline");
  if (wait->count() > 0) {
    asio::steady_timer timer(co_await asio::this_coro::executor, *wait);
    co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
  }
  if (cancelled(cancellation)) co_return cancelled_error(*impl);
  HttpResult result = co_await send_pooled(*impl, request, deadline);
  if (auto* reply = std::get_if<HttpReply>(&result);
      reply && reply->status == 401 && !impl->endpoint.token_file.empty() && !cancelled(cancellation)) {
    impl->reload_token();  // a rotated token: re-read the file once and retry
    result = co_await send_pooled(*impl, request, deadline);
  }
  co_return result;
}

HttpsClient::HttpsClient(ClientRuntime& runtime, ClusterEndpoint endpoint, ClientOptions options)
    : impl_(std::make_shared<Impl>(runtime.impl(), std::move(endpoint), std::move(options))) {}

HttpsClient::~HttpsClient() = default;

awaitable<HttpResult> HttpsClient::Impl::request(std::shared_ptr<Impl> impl, OutgoingRequest request,
                                                 Deadline deadline) {
  impl->begin();
  const auto started = std::chrono::steady_clock::now();
  // On the client's strand, and back on the caller's executor with the
  // answer; the caller's cancellation ends it there (run()).
  auto on_strand = async::run_on(impl->strand, run(impl, std::move(request), deadline));
  HttpResult result;
  bool failed = false;
  try {
    result = co_await std::move(on_strand);
  } catch (const std::exception& e) {
    // The caller was cancelled before the request began, or run() threw (a bug).
    failed = !async::is_cancellation(e);
    result = cancelled_error(*impl);
  }
  co_return impl->end(std::move(result), failed, seconds_since(started));
}

awaitable<k8s::Expected<nlohmann::json>> HttpsClient::Impl::get_json(std::shared_ptr<Impl> impl, std::string path,
                                                                     Deadline deadline) {
  OutgoingRequest get;
  get.target = std::move(path);
  auto answer = request(std::move(impl), std::move(get), deadline);
  co_return json_of(co_await std::move(answer));
}

// Not coroutines themselves: the client is held by the coroutine's frame
// from the call on, so that *this may go before the task is awaited.
async::Task<HttpResult> HttpsClient::request(OutgoingRequest request, Deadline deadline) {
  return Impl::request(impl_, std::move(request), deadline);
}

async::Task<k8s::Expected<nlohmann::json>> HttpsClient::get_json(std::string path_and_query, Deadline deadline) {
  return Impl::get_json(impl_, std::move(path_and_query), deadline);
}

void HttpsClient::get(std::string path_and_query, Deadline deadline, HttpCallback done) {
  OutgoingRequest request;
  request.target = std::move(path_and_query);
  send(std::move(request), deadline, std::move(done));
}

void HttpsClient::send(OutgoingRequest request, Deadline deadline, HttpCallback done) {
  auto impl = impl_;  // keeps the client alive until the request completes
  impl->begin();
  const auto started = std::chrono::steady_clock::now();
  asio::co_spawn(impl->strand, Impl::run(impl, std::move(request), deadline),
                 [impl, started, done = std::move(done)](std::exception_ptr e, HttpResult result) {
                   done(impl->end(std::move(result), e != nullptr, seconds_since(started)));
                 });
}

void HttpsClient::schedule(std::chrono::milliseconds delay, std::function<void()> task) {
  auto timer = std::make_shared<asio::steady_timer>(impl_->strand, delay);
  timer->async_wait([timer, task = std::move(task)](const boost::system::error_code&) { task(); });
}

ClientStats HttpsClient::stats() const {
  const auto pool = impl_->pool.counts();
  std::lock_guard lock(impl_->mutex);
  ClientStats s;
  s.requests = impl_->requests.load();
  s.tls_handshakes = impl_->connector.handshakes();
  s.failures = impl_->failures.load();
  s.retries = impl_->retries.load();
  s.idle_closed = pool.idle_closed;
  s.open_connections = pool.open;
  s.idle_connections = pool.idle;
  s.in_flight = impl_->in_flight;
  s.outcomes = impl_->outcomes;
  s.latency_le = impl_->latency_le;
  s.latency_count = impl_->latency_count;
  s.latency_sum_seconds = impl_->latency_sum;
  s.last_success = impl_->last_success;
  return s;
}

const ClusterEndpoint& HttpsClient::endpoint() const { return impl_->endpoint; }

}  // namespace fedmetrics::kube
