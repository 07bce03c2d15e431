#include "fedmetrics/kube/https_client.hpp"
#include "fedmetrics/kube/retry_policy.hpp"
#include "fedmetrics/kube/token_bucket.hpp"
#include "fedmetrics/k8s/base64.hpp"
#include "fedmetrics/transport/gzip.hpp"
#include "fedmetrics/transport/tls_http.hpp"
#include "fedmetrics/transport/tls_socket.hpp"
#include "fedmetrics/transport/async.hpp"

#include <utility>  // before Asio's awaitable.hpp (Boost + C++20 coroutines)

#include <deque>
#include <fstream>
#include <limits>
#include <filesystem>
#include <mutex>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/url/parse.hpp>

namespace fedmetrics::kube {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using asio::awaitable;
using Kind = Error::Kind;
constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);

struct ClientRuntime::Impl {
  // Whether handlers may still be posted to `io`: host-name lookups run on
  // detached threads that may outlive the runtime (see HttpsClient::Impl::resolve).
  struct Liveness {
    std::mutex mutex;
    bool running = true;
  };
  std::shared_ptr<Liveness> liveness = std::make_shared<Liveness>();
  asio::io_context io;
  asio::executor_work_guard<asio::io_context::executor_type> work{io.get_executor()};
  std::vector<std::thread> threads;
};

// Logs from another translation unit: including spdlog here changes GCC 12's
// inlining of the coroutine frames enough to raise a false
// -Wmismatched-new-delete inside Asio.
void report_handler_failure(const char* what);

ClientRuntime::ClientRuntime(unsigned threads) : impl_(std::make_unique<Impl>()) {
  for (unsigned i = 0; i < std::max(1U, threads); ++i)
    impl_->threads.emplace_back([this] {
      // A callback that throws must not take the process down: log it and go on.
      for (;;) {
        try {
          impl_->io.run();
          return;
        } catch (const std::exception& e) {
          report_handler_failure(e.what());
        } catch (...) {
          report_handler_failure("unknown exception");
        }
      }
    });
}

void ClientRuntime::stop() {
  {
    std::lock_guard lock(impl_->liveness->mutex);
    impl_->liveness->running = false;
  }
  impl_->work.reset();
  impl_->io.stop();
  for (auto& t : impl_->threads)
    if (t.joinable()) t.join();
}

ClientRuntime::~ClientRuntime() { stop(); }

async::Executor ClientRuntime::executor() { return async::wrap(impl_->io.get_executor()); }

namespace {

// A member connection: TLS straight on the socket (transport/tls_socket.hpp).
using Stream = transport::TlsSocket;

Error error(Kind kind, std::string message) { return Error{kind, std::move(message), 0, std::nullopt}; }

// Maps a transport error to its class. `phase` says what we were doing.
// Digits only, 1 to 65535: what std::stoi and the endpoint can take without surprise.
bool valid_port(const std::string& port) {
  if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos) return false;
  const int value = std::stoi(port);
  return value >= 1 && value <= 65535;
}

// `peer` names who is at `address` ("member2", "the control plane", "the proxy").
Error classify(const boost::system::error_code& ec, std::string_view phase, const std::string& address,
                     long verify_result, const std::string& peer) {
  std::string where = std::string(phase) + " " + address + ": ";
  if (ec == beast::error::timeout || ec == asio::error::timed_out || ec == asio::error::operation_aborted)
    return error(Kind::Timeout, where + "deadline exceeded");
  if (ec == asio::error::connection_refused) return error(Kind::Refused, where + "connection refused");
  if (ec == asio::error::connection_reset || ec == asio::error::eof || ec == http::error::end_of_stream ||
      ec == ssl::error::stream_truncated || ec == asio::error::broken_pipe)
    return error(Kind::Refused, where + "connection closed by " + peer);
  if (ec == http::error::body_limit) return error(Kind::TooLarge, where + "response larger than the size cap");
  if (ec.category() == asio::error::get_ssl_category() || verify_result != X509_V_OK) {
    std::string reason = verify_result != X509_V_OK ? X509_verify_cert_error_string(verify_result) : ec.message();
    return error(Kind::Tls, where + "TLS: " + reason);
  }
  return error(Kind::Network, where + ec.message());
}

std::string read_token_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string token = ss.str();
  while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back()))) token.pop_back();
  return token;
}

void load_pem_into(ssl::context& ctx, const ClusterEndpoint& e) {
  boost::system::error_code ec;
  if (e.insecure_skip_tls_verify) {
    ctx.set_verify_mode(ssl::verify_none);
  } else {
    ctx.set_verify_mode(ssl::verify_peer);
    if (e.ca_pem.empty()) {
      ctx.set_default_verify_paths(ec);
    } else {
      ctx.add_certificate_authority(asio::buffer(e.ca_pem), ec);
      if (ec) throw std::runtime_error("member " + e.name + ": certificate-authority is not a PEM certificate: " + ec.message());
    }
  }
  if (!e.client_cert_pem.empty()) {
    ctx.use_certificate_chain(asio::buffer(e.client_cert_pem), ec);
    if (ec) throw std::runtime_error("member " + e.name + ": client-certificate cannot be loaded: " + ec.message());
    ctx.use_private_key(asio::buffer(e.client_key_pem), ssl::context::pem, ec);
    if (ec) throw std::runtime_error("member " + e.name + ": client-key cannot be loaded: " + ec.message());
  }
}

}  // namespace

// Response headers larger than this are refused (kube-apiserver's are < 1 KiB).
constexpr std::uint32_t kMaxResponseHeaderBytes = 64 * 1024;

struct HttpsClient::Impl : std::enable_shared_from_this<HttpsClient::Impl> {
  ClientRuntime::Impl& runtime;
  ClusterEndpoint endpoint;
  ClientOptions options;
  TokenBucket rate;  // used on the strand only
  ssl::context tls{ssl::context::tls_client};
  std::string host, port, host_header, base_path, verify_name;

  // The pool: idle connections, how many are open, and requests waiting for one.
  struct Waiter {
    asio::steady_timer timer;
    std::unique_ptr<Stream> stream;  // a handed-over idle connection, or null with `slot` = open a new one
    bool granted = false;
    explicit Waiter(asio::any_io_executor ex) : timer(std::move(ex)) {}
  };
  mutable std::mutex mutex;
  struct IdleConnection {
    std::unique_ptr<Stream> stream;
    std::chrono::steady_clock::time_point since;  // back in the pool since
  };
  std::vector<IdleConnection> idle;  // the most recently used last
  std::size_t open = 0;
  std::deque<std::shared_ptr<Waiter>> waiters;
  std::string token;  // current bearer token (from the file when token_file is set)
  std::chrono::steady_clock::time_point token_checked{};
  std::filesystem::file_time_type token_mtime{};

  std::atomic<std::uint64_t> requests{0}, handshakes{0}, failures{0}, retries{0}, idle_closed{0};
  // Outcome, latency and in-flight accounting (guarded by `mutex`).
  std::size_t in_flight = 0;
  std::map<std::string, std::uint64_t, std::less<>> outcomes;
  std::array<std::uint64_t, kLatencyBuckets.size()> latency_le{};
  std::uint64_t latency_count = 0;
  double latency_sum = 0;
  std::optional<std::chrono::system_clock::time_point> last_success;

  // `seconds` is left out of the latency histogram for streams, which last as long as the server lets them.
  void record(const HttpResult& result, std::optional<double> seconds) {
    std::lock_guard lock(mutex);
    --in_flight;
    const auto* e = std::get_if<Error>(&result);
    // An answer with an error status is an outcome of its own kind.
    std::string outcome = e ? std::string(k8s::to_string(e->kind))
                            : (std::get<HttpReply>(result).status < 400 ? "success" : "http_status");
    ++outcomes[outcome];
    if (outcome == "success") last_success = std::chrono::system_clock::now();
    if (!seconds) return;
    for (std::size_t i = 0; i < kLatencyBuckets.size(); ++i)
      if (*seconds <= kLatencyBuckets[i]) ++latency_le[i];
    ++latency_count;
    latency_sum += *seconds;
  }

  // Every request of this client runs on this one strand: the pool, the
  // waiters and the pooled streams (whose timers are bound to the executor
  // that opened them) are never touched from two threads at once.
  asio::strand<asio::io_context::executor_type> strand;
  // Closes idle connections once they have been idle for
  // options.idle_connection_timeout, so that an idle client holds no
  // descriptors the peer has long given up (armed while any is idle).
  asio::steady_timer sweep_timer{strand};
  bool sweep_armed = false;  // under `mutex`
  std::string peer;          // how errors name the peer

  Impl(ClientRuntime::Impl& rt, ClusterEndpoint e, ClientOptions o)
      : runtime(rt),
        endpoint(std::move(e)),
        options(std::move(o)),
        rate(options.qps, options.burst),
        strand(asio::make_strand(rt.io)) {
    auto url = boost::urls::parse_uri(endpoint.server);
    if (!url || url->scheme() != "https")
      throw std::runtime_error("member " + endpoint.name + ": server \"" + endpoint.server + "\" is not an https:// URL");
    if (!endpoint.proxy_url.empty()) parse_proxy_url();
    host = url->host_address();
    host_header = std::string(url->encoded_host_and_port());
    if (host.size() > 1 && host.front() == '[') host = host.substr(1, host.size() - 2);
    port = url->has_port() ? std::string(url->port()) : "443";
    if (!valid_port(port))
      throw std::runtime_error("member " + endpoint.name + ": server \"" + endpoint.server +
                               "\": the port must be a number from 1 to 65535");
    base_path = std::string(url->encoded_path());
    while (!base_path.empty() && base_path.back() == '/') base_path.pop_back();
    verify_name = endpoint.tls_server_name.empty() ? host : endpoint.tls_server_name;
    SSL_CTX_set_min_proto_version(tls.native_handle(), TLS1_2_VERSION);
    // A member asking to renegotiate would make a write wait for a read; Go's clients refuse too.
    SSL_CTX_set_options(tls.native_handle(), SSL_OP_NO_RENEGOTIATION);
    load_pem_into(tls, endpoint);
    token = endpoint.token_file.empty() ? endpoint.token : read_token_file(endpoint.token_file);
    peer = !options.peer_name.empty() ? options.peer_name : !endpoint.name.empty() ? endpoint.name : "the server";
  }

  std::string address() const { return host + ":" + port; }

  Error classify_error(const boost::system::error_code& ec, std::string_view phase, long verify_result = X509_V_OK) const {
    return classify(ec, phase, address(), verify_result, peer);
  }

  // proxy-url: an http:// proxy, reached in the clear, asked to CONNECT to the
  // member; the member's TLS runs inside that tunnel (client-go's
  // http.ProxyURL for https servers). User info becomes Proxy-Authorization.
  std::string proxy_host, proxy_port, proxy_authorization;

  void parse_proxy_url() {
    auto proxy = boost::urls::parse_uri(endpoint.proxy_url);
    const std::string what = "member " + endpoint.name + ": proxy-url \"" + endpoint.proxy_url + "\"";
    if (!proxy) throw std::runtime_error(what + " is not a URL");
    if (proxy->scheme() != "http")
      throw std::runtime_error(what + ": only http:// proxies (HTTP CONNECT) are supported, not " +
                               std::string(proxy->scheme()) + "://");
    proxy_host = proxy->host_address();
    if (proxy_host.size() > 1 && proxy_host.front() == '[') proxy_host = proxy_host.substr(1, proxy_host.size() - 2);
    if (proxy_host.empty()) throw std::runtime_error(what + " has no host");
    proxy_port = proxy->has_port() ? std::string(proxy->port()) : "80";
    if (!valid_port(proxy_port)) throw std::runtime_error(what + ": the port must be a number from 1 to 65535");
    if (proxy->has_userinfo())
      proxy_authorization = "Basic " + k8s::base64_encode(std::string(proxy->user()) + ":" + std::string(proxy->password()));
  }

  // The addresses of `name`: an IP address needs no lookup; a host name goes
  // to getaddrinfo, which blocks and cannot be interrupted (a DNS server
  // that does not answer holds it for resolv.conf's timeout x attempts, 10 s
  // by default). So it runs on a detached thread of its own, and the request
  // waits on a timer that the lookup cancels when it finishes first: at the
  // deadline the request fails, the lookup ends later on its own. (Not
  // Asio's resolver: its thread is joined when the runtime stops, which
  // would hold up shutdown for as long as the lookup hangs.)
  struct Lookup {
    asio::steady_timer timer;
    bool finished = false;  // on the strand
    boost::system::error_code error;
    tcp::resolver::results_type results;
    explicit Lookup(const asio::any_io_executor& ex) : timer(ex) {}
  };

  awaitable<std::variant<tcp::resolver::results_type, Error>> resolve(const std::string& name,
                                                                            const std::string& service,
                                                                            Deadline deadline) {
    boost::system::error_code literal_error;
    auto literal = asio::ip::make_address(name, literal_error);
    if (!literal_error)
      co_return tcp::resolver::results_type::create(tcp::endpoint(literal, static_cast<unsigned short>(std::stoi(service))),
                                                    name, service);
    auto lookup = std::make_shared<Lookup>(co_await asio::this_coro::executor);
    lookup->timer.expires_at(deadline);
    // The thread holds no Asio object of the runtime's (it may outlive it):
    // only a weak reference to the waiting request, taken under the liveness
    // lock, so that it is released while the runtime still exists.
    std::thread([waiting = std::weak_ptr<Lookup>(lookup), name, service, liveness = runtime.liveness] {
      asio::io_context local;
      tcp::resolver resolver(local);
      boost::system::error_code ec;
      auto results = resolver.resolve(name, service, ec);
      std::lock_guard lock(liveness->mutex);
      if (!liveness->running) return;  // the runtime stopped meanwhile: nobody is waiting
      auto l = waiting.lock();
      if (!l) return;  // the request gave up at its deadline
      asio::post(l->timer.get_executor(), [l, ec, results = std::move(results)]() mutable {
        l->finished = true;
        l->error = ec;
        l->results = std::move(results);
        l->timer.cancel();
      });
    }).detach();
    co_await lookup->timer.async_wait(use_tuple);
    if (!lookup->finished) co_return error(Kind::Timeout, "resolve " + name + ":" + service + ": deadline exceeded");
    if (lookup->error) co_return classify(lookup->error, "resolve", name + ":" + service, X509_V_OK, peer);
    co_return lookup->results;
  }

  // Opens the tunnel on a socket connected to the proxy. nullopt on success.
  awaitable<std::optional<Error>> connect_tunnel(beast::tcp_stream& socket) {
    const std::string proxy = proxy_host + ":" + proxy_port;
    // The authority form with the port always (RFC 9110 9.3.6), even when the server URL leaves it out.
    const std::string authority = (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + port;
    http::request<http::empty_body> req{http::verb::connect, authority, 11};
    req.set(http::field::host, authority);
    if (!proxy_authorization.empty()) req.set(http::field::proxy_authorization, proxy_authorization);
    auto [wec, written] = co_await http::async_write(socket, req, use_tuple);
    (void)written;
    if (wec) co_return classify(wec, "CONNECT through proxy", proxy, X509_V_OK, "the proxy");
    beast::flat_buffer buffer;
    http::response_parser<http::empty_body> parser;
    parser.skip(true);  // a 2xx answer to CONNECT has no body: the tunnel follows
    auto [rec, read] = co_await http::async_read_header(socket, buffer, parser, use_tuple);
    (void)read;
    if (rec) co_return classify(rec, "CONNECT through proxy", proxy, X509_V_OK, "the proxy");
    const unsigned status = parser.get().result_int();
    if (status / 100 != 2)
      co_return error(Kind::Network, "proxy " + proxy + " refused CONNECT " + authority + ": HTTP " +
                                         std::to_string(status) + " " + std::string(parser.get().reason()));
    if (buffer.size() != 0)
      co_return error(Kind::Network, "proxy " + proxy + " sent data before the TLS handshake");
    co_return std::nullopt;
  }

  // With a token file, its modification time is checked at most once a
  // second, and a changed file re-read: a rotated token (a projected
  // ServiceAccount token) is used before any 401.
  std::string current_token() {
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

  void reload_token() {
    if (endpoint.token_file.empty()) return;
    std::string fresh = read_token_file(endpoint.token_file);
    std::lock_guard lock(mutex);
    token = std::move(fresh);
  }

  // Whether an idle connection may carry another request: not idle too
  // long, and neither closed nor written to by the peer meanwhile.
  bool reusable_idle(IdleConnection& c, std::chrono::steady_clock::time_point now) const {
    return now - c.since < options.idle_connection_timeout && c.stream->idle_and_open();
  }

  // A connection for one request: an idle one that is still open (unless
  // `fresh`: a retry must not meet another connection as old as the one
  // that failed), a new slot (null stream), or a wait until one frees up or
  // the deadline passes (nullopt).
  awaitable<std::optional<std::unique_ptr<Stream>>> acquire(Deadline deadline, bool fresh) {
    auto executor = co_await asio::this_coro::executor;
    std::shared_ptr<Waiter> waiter;
    {
      std::lock_guard lock(mutex);
      const auto now = std::chrono::steady_clock::now();
      while (!idle.empty()) {
        auto c = std::move(idle.back());
        idle.pop_back();
        if (!fresh && reusable_idle(c, now)) co_return std::optional<std::unique_ptr<Stream>>(std::move(c.stream));
        // Closed here (c goes out of scope). For a retry, every idle
        // connection goes: those idle as long as the one that failed are
        // likely closed too.
        --open;
        ++idle_closed;
      }
      if (open < options.max_connections) {
        ++open;
        co_return std::optional<std::unique_ptr<Stream>>(nullptr);
      }
      waiter = std::make_shared<Waiter>(executor);
      waiter->timer.expires_at(deadline);
      waiters.push_back(waiter);
    }
    co_await waiter->timer.async_wait(use_tuple);  // cancelled when granted
    std::lock_guard lock(mutex);
    if (waiter->granted) co_return std::optional<std::unique_ptr<Stream>>(std::move(waiter->stream));
    std::erase(waiters, waiter);
    co_return std::nullopt;
  }

  // Returns a connection to the pool (or, when `stream` is null, frees its slot).
  void release(std::unique_ptr<Stream> stream) {
    std::lock_guard lock(mutex);
    while (!waiters.empty()) {
      auto w = waiters.front();
      waiters.pop_front();
      if (w->timer.expiry() <= std::chrono::steady_clock::now()) continue;  // about to time out anyway
      w->granted = true;
      w->stream = std::move(stream);  // null = the waiter opens a new connection in this slot
      w->timer.cancel();
      return;
    }
    if (stream) {
      stream->deadline().expires_never();
      idle.push_back(IdleConnection{std::move(stream), std::chrono::steady_clock::now()});
      arm_sweep();
    } else {
      --open;
    }
  }

  // Under `mutex`.
  void arm_sweep() {
    if (sweep_armed || idle.empty()) return;
    sweep_armed = true;
    sweep_timer.expires_at(idle.front().since + options.idle_connection_timeout);
    sweep_timer.async_wait([weak = weak_from_this()](const boost::system::error_code& ec) {
      if (ec == asio::error::operation_aborted) return;
      if (auto self = weak.lock()) self->sweep();
    });
  }

  // On the strand: closes the idle connections that expired or that the peer closed.
  void sweep() {
    std::lock_guard lock(mutex);
    sweep_armed = false;
    const auto now = std::chrono::steady_clock::now();
    const auto before = idle.size();
    std::erase_if(idle, [&](IdleConnection& c) { return !reusable_idle(c, now); });
    const auto closed = before - idle.size();
    open -= closed;
    idle_closed += closed;
    arm_sweep();
  }

  awaitable<std::variant<std::unique_ptr<Stream>, Error>> connect(Deadline deadline) {
    auto executor = co_await asio::this_coro::executor;
    // Through a proxy, the TCP connection goes to the proxy and the member's
    // name is resolved by it.
    const bool proxied = !proxy_host.empty();
    // (Not `c ? co_await a : co_await b`: GCC 12 miscompiles co_await in a conditional.)
    const std::string& connect_host = proxied ? proxy_host : host;
    const std::string& connect_port = proxied ? proxy_port : port;
    auto resolved = co_await resolve(connect_host, connect_port, deadline);
    if (auto* e = std::get_if<Error>(&resolved)) co_return *e;
    tcp::resolver::results_type results = std::get<tcp::resolver::results_type>(resolved);
    // TCP (and the proxy's tunnel) on a Beast stream for its connect with a
    // deadline; TLS then runs on the bare socket.
    beast::tcp_stream tcp_stream(executor);
    tcp_stream.expires_at(deadline);
    auto [cec, ep] = co_await tcp_stream.async_connect(results, use_tuple);
    (void)ep;
    if (cec) co_return classify(cec, proxied ? "connect to proxy" : "connect",
                                proxied ? proxy_host + ":" + proxy_port : address(), X509_V_OK,
                                proxied ? std::string("the proxy") : peer);
    if (proxied) {
      // Not in the if's condition: GCC 12 miscompiles a co_await there (transport/async.hpp).
      auto tunnel_error = co_await connect_tunnel(tcp_stream);
      if (tunnel_error) co_return *tunnel_error;
    }
    tcp_stream.expires_never();
    // Requests are written whole: no Nagle delay waiting for the member's ACK.
    boost::system::error_code nodelay_error;
    tcp_stream.socket().set_option(tcp::no_delay(true), nodelay_error);
    std::unique_ptr<Stream> stream;
    try {
      stream = std::make_unique<Stream>(tcp_stream.release_socket(), tls.native_handle(), transport::TlsRole::client);
    } catch (const std::exception& e) {
      co_return error(Kind::Tls, "TLS " + address() + ": " + e.what());
    }
    SSL* ssl = stream->native_handle();
    boost::system::error_code not_ip;
    asio::ip::make_address(verify_name, not_ip);
    if (not_ip && !SSL_set_tlsext_host_name(ssl, verify_name.c_str()))
      co_return error(Kind::Tls, "TLS " + address() + ": cannot set server name");
    if (!endpoint.insecure_skip_tls_verify) {
      // The certificate must name the server: its DNS name, or its IP address (RFC 6125).
      const int named = not_ip ? SSL_set1_host(ssl, verify_name.c_str())
                               : X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), verify_name.c_str());
      if (named != 1) co_return error(Kind::Tls, "TLS " + address() + ": cannot set the name to verify");
    }
    stream->deadline().expires_at(deadline);
    auto hec = co_await stream->handshake();
    if (hec)
      co_return classify_error(hec, "TLS handshake with",
                               endpoint.insecure_skip_tls_verify ? X509_V_OK : SSL_get_verify_result(ssl));
    ++handshakes;
    co_return std::move(stream);
  }

  // One exchange on `stream`. Sets `reusable` when the connection may go back to the pool.
  http::request<http::string_body> build_request(const OutgoingRequest& out) {
    http::request<http::string_body> req{http::string_to_verb(out.method), base_path + out.target, 11};
    if (req.method() == http::verb::unknown) req.method_string(out.method);
    req.set(http::field::host, host_header);
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

  // Whether this request asks for gzip on the caller's behalf (and so inflates the answer).
  bool asks_gzip(const OutgoingRequest& out) const {
    if (!options.accept_gzip || endpoint.disable_compression) return false;
    for (const auto& header : out.headers)
      if (beast::iequals(header.first, "accept-encoding")) return false;  // the caller's own choice
    return true;
  }

  // Sends `req` whole: one TLS write, one send().
  static awaitable<boost::system::error_code> write_request(Stream& stream, const http::request<http::string_body>& req) {
    std::string wire;
    wire.reserve(512 + req.body().size());
    wire.append(req.method_string()).append(" ").append(req.target()).append(" HTTP/1.1\r\n");
    for (const auto& field : req) wire.append(field.name_string()).append(": ").append(field.value()).append("\r\n");
    wire.append("\r\n").append(req.body());
    if (auto ec = stream.write(wire.data(), wire.size())) co_return ec;
    co_return co_await stream.flush();
  }

  // `answer_began`: whether any byte of the answer arrived (a failure after
  // that may follow a request the peer acted on: never retried).
  awaitable<HttpResult> exchange(Stream& stream, const OutgoingRequest& out, Deadline deadline, bool& reusable,
                                 bool& answer_began) {
    reusable = false;
    answer_began = false;
    auto req = build_request(out);
    stream.deadline().expires_at(deadline);
    auto wec = co_await write_request(stream, req);  // not in a condition (GCC 12)
    if (wec) co_return classify_error(wec, "write to");
    beast::flat_buffer buffer;
    http::response_parser<http::string_body> parser;
    parser.header_limit(kMaxResponseHeaderBytes);
    parser.body_limit(options.max_response_bytes);
    parser.eager(true);
    if (req.method() == http::verb::head) parser.skip(true);
    auto rec = co_await transport::read_http(stream, buffer, parser, kMaxResponseHeaderBytes,
                                             [&] { return parser.is_done(); });
    if (rec) {
      answer_began = parser.got_some() || buffer.size() > 0;
      co_return classify_error(rec, "read from");
    }
    answer_began = true;
    // Bytes after the answer would be read as the next one's: not reusable
    // then. (The parser's keep_alive is false for a body ended by the close.)
    reusable = parser.keep_alive() && buffer.size() == 0;
    auto res = parser.release();
    // Inflated here when we asked for gzip, with the same size cap on the
    // inflated bytes (a small compressed body may be a bomb).
    const bool inflate = asks_gzip(out) && (beast::iequals(res[http::field::content_encoding], "gzip") ||
                                            beast::iequals(res[http::field::content_encoding], "x-gzip"));
    if (inflate) {
      auto inflated = transport::gzip_decompress(res.body(), options.max_response_bytes);
      if (!inflated) {
        if (inflated.failure() == transport::GzipFailure::too_large)
          co_return error(Kind::TooLarge, "read from " + address() + ": response larger than the size cap once inflated");
        co_return error(Kind::MalformedResponse, "read from " + address() + ": " + inflated.error().message);
      }
      res.body() = std::move(*inflated);
    }
    HttpReply reply{static_cast<int>(res.result_int()), std::move(res.body()), std::string(res[http::field::content_type])};
    if (out.want_headers) {
      for (const auto& field : res) {
        auto name = field.name();
        if (name == http::field::connection || name == http::field::keep_alive || name == http::field::transfer_encoding ||
            name == http::field::content_length || name == http::field::te || name == http::field::trailer ||
            name == http::field::upgrade || name == http::field::proxy_authenticate ||
            (inflate && name == http::field::content_encoding))
          continue;
        reply.headers.emplace_back(field.name_string(), field.value());
      }
    }
    co_return reply;
  }

  // One line stream's state, on the strand: cancel() reaches the read in progress through it.
  struct LineStreamState final : LineStream, std::enable_shared_from_this<LineStreamState> {
    std::weak_ptr<Impl> client;
    bool cancelled = false;
    Stream* stream = nullptr;  // while connected
    void cancel() override {
      auto impl = client.lock();
      if (!impl) return;
      asio::post(impl->strand, [self = shared_from_this()] {
        self->cancelled = true;
        // Closed, not only cancelled: an operation that starts after this
        // (the coroutine between two steps) fails at once too.
        if (self->stream != nullptr) self->stream->abort();
      });
    }
  };

  awaitable<HttpResult> stream_lines(OutgoingRequest out, Deadline header_deadline, std::chrono::milliseconds idle_timeout,
                                     std::shared_ptr<LineStreamState> state,
                                     const std::function<void(std::string)>& on_line) {
    ++requests;
    auto connected = co_await connect(header_deadline);
    if (auto* e = std::get_if<Error>(&connected)) co_return *e;
    auto stream = std::move(std::get<std::unique_ptr<Stream>>(connected));
    if (state->cancelled) co_return error(Kind::Timeout, "stream from " + address() + " cancelled");
    state->stream = stream.get();
    struct Detach {
      LineStreamState& state;
      ~Detach() { state.stream = nullptr; }
    } detach{*state};
    auto fail = [&](const boost::system::error_code& ec, std::string_view phase) {
      if (state->cancelled) return error(Kind::Timeout, "stream from " + address() + " cancelled");
      return classify_error(ec, phase);
    };

    auto req = build_request(out);
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
      whole.body_limit(options.max_response_bytes);
      auto rec = co_await transport::read_http(*stream, buffer, whole, kMaxResponseHeaderBytes,
                                               [&] { return whole.is_done(); });
      if (rec || state->cancelled) co_return fail(rec, "read from");
      auto res = whole.release();
      co_return HttpReply{status, std::move(res.body()), std::string(res[http::field::content_type])};
    }
    // Asked for identity: a compressed stream is not one we can split into lines.
    if (auto coding = parser.get()[http::field::content_encoding]; !coding.empty() && !beast::iequals(coding, "identity"))
      co_return error(Kind::MalformedResponse, "read from " + address() + ": a watch stream with Content-Encoding " +
                                                   std::string(coding));
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
      if (state->cancelled) co_return error(Kind::Timeout, "stream from " + address() + " cancelled");
      pending.append(chunk.data(), chunk.size() - parser.get().body().size);
      std::size_t start = 0;
      for (auto end = pending.find('\n'); end != std::string::npos; end = pending.find('\n', start)) {
        if (end > start) on_line(pending.substr(start, end - start));
        start = end + 1;
      }
      pending.erase(0, start);
      if (pending.size() > options.max_response_bytes)
        co_return error(Kind::TooLarge, "read from " + address() + ": a streamed line larger than the size cap");
    }
    if (!pending.empty()) on_line(std::move(pending));
    co_return HttpReply{200, {}, std::string(parser.get()[http::field::content_type])};
  }

  awaitable<HttpResult> send(const OutgoingRequest& out, Deadline deadline) {
    ++requests;
    const bool replayable = is_replayable(out.method, out.replayable);
    bool fresh = false;  // the retry takes a new connection
    for (;;) {
      auto lease = co_await acquire(deadline, fresh);
      if (!lease) co_return error(Kind::Timeout, "no free connection to " + address() + " before the deadline");
      std::unique_ptr<Stream> stream = std::move(*lease);
      const bool reused = stream != nullptr;
      if (!stream) {
        auto connected = co_await connect(deadline);
        if (auto* e = std::get_if<Error>(&connected)) {
          release(nullptr);
          co_return *e;
        }
        stream = std::move(std::get<std::unique_ptr<Stream>>(connected));
      }
      bool reusable = false, answer_began = false;
      HttpResult result = co_await exchange(*stream, out, deadline, reusable, answer_began);
      if (const auto* e = std::get_if<Error>(&result)) {
        release(nullptr);  // the connection is dropped, its slot freed
        FailedAttempt attempt{reused, answer_began, e->kind, std::chrono::steady_clock::now() >= deadline};
        if (!fresh && retry_on_new_connection(attempt, replayable)) {
          ++retries;
          fresh = true;
          continue;
        }
        co_return result;
      }
      if (reusable) release(std::move(stream));
      else release(nullptr);
      co_return result;
    }
  }

  // HttpsClient::send's coroutine: the rate limit, the exchange, one retry
  // with a re-read token after a 401. A named coroutine with its arguments
  // copied into the frame (STYLE: never a capturing lambda as a coroutine).
  static awaitable<HttpResult> rate_limited_send(std::shared_ptr<Impl> impl, OutgoingRequest request, Deadline deadline) {
    // The rate limit first: wait for a token, or fail as throttled by the deadline.
    auto wait = impl->rate.reserve(std::chrono::steady_clock::now(), deadline);
    if (!wait) co_return error(Kind::Throttled, "rate limit (--member-qps) for " + impl->address() + ": no token before the deadline");
    if (wait->count() > 0) {
      auto executor = co_await asio::this_coro::executor;
      asio::steady_timer timer(executor, *wait);
      co_await timer.async_wait(use_tuple);
    }
    HttpResult result = co_await impl->send(request, deadline);
    if (auto* reply = std::get_if<HttpReply>(&result); reply && reply->status == 401 && !impl->endpoint.token_file.empty()) {
      impl->reload_token();  // a rotated token: re-read the file once and retry
      result = co_await impl->send(request, deadline);
    }
    co_return result;
  }

  // HttpsClient::stream_lines's coroutine, likewise.
  static awaitable<HttpResult> line_stream(std::shared_ptr<Impl> impl, OutgoingRequest request, Deadline header_deadline,
                                           std::chrono::milliseconds idle_timeout, std::shared_ptr<LineStreamState> state,
                                           std::shared_ptr<std::function<void(std::string)>> on_line) {
    // The operation built first: its by-value arguments are not temporaries of the co_await (GCC 12).
    auto streaming = impl->stream_lines(std::move(request), header_deadline, idle_timeout, state, *on_line);
    auto result = co_await std::move(streaming);
    co_return result;
  }
};

HttpsClient::HttpsClient(ClientRuntime& runtime, ClusterEndpoint endpoint, ClientOptions options)
    : impl_(std::make_shared<Impl>(runtime.impl(), std::move(endpoint), std::move(options))) {}

HttpsClient::~HttpsClient() = default;

void HttpsClient::get(std::string path_and_query, Deadline deadline, HttpCallback done) {
  OutgoingRequest request;
  request.target = std::move(path_and_query);
  send(std::move(request), deadline, std::move(done));
}

void HttpsClient::send(OutgoingRequest request, Deadline deadline, HttpCallback done) {
  auto impl = impl_;  // keeps the client alive until the request completes
  {
    std::lock_guard lock(impl->mutex);
    ++impl->in_flight;
  }
  auto started = std::chrono::steady_clock::now();
  asio::co_spawn(
      impl->strand, Impl::rate_limited_send(impl, std::move(request), deadline),
      [impl, started, done = std::move(done)](std::exception_ptr e, HttpResult result) {
        if (e) result = error(Kind::Network, "internal error talking to " + impl->address());
        if (std::holds_alternative<Error>(result)) ++impl->failures;
        impl->record(result, std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
        done(std::move(result));
      });
}

std::shared_ptr<LineStream> HttpsClient::stream_lines(std::string path_and_query, Deadline header_deadline,
                                                      std::chrono::milliseconds idle_timeout,
                                                      LineStreamCallbacks callbacks) {
  auto impl = impl_;
  auto state = std::make_shared<Impl::LineStreamState>();
  state->client = impl;
  {
    std::lock_guard lock(impl->mutex);
    ++impl->in_flight;
  }
  OutgoingRequest request;
  request.target = std::move(path_and_query);
  request.headers = {{"Accept-Encoding", "identity"}};  // lines are split as they arrive: never compressed
  auto on_line = std::make_shared<std::function<void(std::string)>>(std::move(callbacks.on_line));
  asio::co_spawn(
      impl->strand, Impl::line_stream(impl, std::move(request), header_deadline, idle_timeout, state, on_line),
      [impl, on_end = std::move(callbacks.on_end)](std::exception_ptr e, HttpResult result) {
        if (e) result = error(Kind::Network, "internal error streaming from " + impl->address());
        if (std::holds_alternative<Error>(result)) ++impl->failures;
        impl->record(result, std::nullopt);
        on_end(std::move(result));
      });
  return state;
}

void HttpsClient::schedule(std::chrono::milliseconds delay, std::function<void()> task) {
  auto timer = std::make_shared<asio::steady_timer>(impl_->strand, delay);
  timer->async_wait([timer, task = std::move(task)](const boost::system::error_code&) { task(); });
}

ClientStats HttpsClient::stats() const {
  std::lock_guard lock(impl_->mutex);
  ClientStats s;
  s.requests = impl_->requests.load();
  s.tls_handshakes = impl_->handshakes.load();
  s.failures = impl_->failures.load();
  s.retries = impl_->retries.load();
  s.idle_closed = impl_->idle_closed.load();
  s.open_connections = impl_->open;
  s.idle_connections = impl_->idle.size();
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
