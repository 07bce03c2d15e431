#include "kube/connector.hpp"

#include <stdexcept>
#include <thread>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <boost/url/parse.hpp>

#include "fedmetrics/k8s/base64.hpp"

// GCC 12 inlines Asio's coroutine frame allocation and then reports its own
// matching operator delete as mismatched: a false positive (see tls_server.cpp).
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

namespace fedmetrics::kube {

namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using asio::awaitable;
constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);

namespace {

// Digits only, 1 to 65535: what std::stoi and the endpoint can take without surprise.
bool valid_port(const std::string& port) {
  if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos) return false;
  const int value = std::stoi(port);
  return value >= 1 && value <= 65535;
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
      if (ec)
        throw std::runtime_error("member " + e.name +
                                 ": certificate-authority is not a PEM certificate: " + ec.message());
    }
  }
  if (!e.client_cert_pem.empty()) {
    ctx.use_certificate_chain(asio::buffer(e.client_cert_pem), ec);
    if (ec) throw std::runtime_error("member " + e.name + ": client-certificate cannot be loaded: " + ec.message());
    ctx.use_private_key(asio::buffer(e.client_key_pem), ssl::context::pem, ec);
    if (ec) throw std::runtime_error("member " + e.name + ": client-key cannot be loaded: " + ec.message());
  }
}

// A host name lookup in progress: the request waits on `timer`, which the
// lookup's thread cancels when it finishes first.
struct Lookup {
  asio::steady_timer timer;
  bool finished = false;  // on the strand
  boost::system::error_code error;
  tcp::resolver::results_type results;
  explicit Lookup(const asio::any_io_executor& ex) : timer(ex) {}
};

}  // namespace

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

Connector::Connector(const ClusterEndpoint& endpoint, std::string peer,
                     std::shared_ptr<ClientRuntime::Impl::Liveness> liveness)
    : liveness_(std::move(liveness)),
      insecure_skip_tls_verify_(endpoint.insecure_skip_tls_verify),
      peer_(std::move(peer)) {
  auto url = boost::urls::parse_uri(endpoint.server);
  if (!url || url->scheme() != "https")
    throw std::runtime_error("member " + endpoint.name + ": server \"" + endpoint.server + "\" is not an https:// URL");
  if (!endpoint.proxy_url.empty()) parse_proxy_url(endpoint.proxy_url, endpoint.name);
  host_ = url->host_address();
  host_header_ = std::string(url->encoded_host_and_port());
  if (host_.size() > 1 && host_.front() == '[') host_ = host_.substr(1, host_.size() - 2);
  port_ = url->has_port() ? std::string(url->port()) : "443";
  if (!valid_port(port_))
    throw std::runtime_error("member " + endpoint.name + ": server \"" + endpoint.server +
                             "\": the port must be a number from 1 to 65535");
  base_path_ = std::string(url->encoded_path());
  while (!base_path_.empty() && base_path_.back() == '/') base_path_.pop_back();
  verify_name_ = endpoint.tls_server_name.empty() ? host_ : endpoint.tls_server_name;
  SSL_CTX_set_min_proto_version(tls_.native_handle(), TLS1_2_VERSION);
  // A server asking to renegotiate would make a write wait for a read; Go's clients refuse too.
  SSL_CTX_set_options(tls_.native_handle(), SSL_OP_NO_RENEGOTIATION);
  load_pem_into(tls_, endpoint);
}

void Connector::parse_proxy_url(const std::string& proxy_url, const std::string& endpoint_name) {
  auto proxy = boost::urls::parse_uri(proxy_url);
  const std::string what = "member " + endpoint_name + ": proxy-url \"" + proxy_url + "\"";
  if (!proxy) throw std::runtime_error(what + " is not a URL");
  if (proxy->scheme() != "http")
    throw std::runtime_error(what + ": only http:// proxies (HTTP CONNECT) are supported, not " +
                             std::string(proxy->scheme()) + "://");
  proxy_host_ = proxy->host_address();
  if (proxy_host_.size() > 1 && proxy_host_.front() == '[') proxy_host_ = proxy_host_.substr(1, proxy_host_.size() - 2);
  if (proxy_host_.empty()) throw std::runtime_error(what + " has no host");
  proxy_port_ = proxy->has_port() ? std::string(proxy->port()) : "80";
  if (!valid_port(proxy_port_)) throw std::runtime_error(what + ": the port must be a number from 1 to 65535");
  if (proxy->has_userinfo())
    proxy_authorization_ =
        "Basic " + k8s::base64_encode(std::string(proxy->user()) + ":" + std::string(proxy->password()));
}

// The addresses of `name`: an IP address needs no lookup; a host name goes
// to getaddrinfo, which blocks and cannot be interrupted (a DNS server
// that does not answer holds it for resolv.conf's timeout x attempts, 10 s
// by default). So it runs on a detached thread of its own, and the request
// waits on a timer that the lookup cancels when it finishes first: at the
// deadline the request fails, the lookup ends later on its own. (Not
// Asio's resolver: its thread is joined when the runtime stops, which
// would hold up shutdown for as long as the lookup hangs.)
awaitable<std::variant<Connector::Resolved, Error>> Connector::resolve(const std::string& name,
                                                                       const std::string& service, Deadline deadline) {
  boost::system::error_code literal_error;
  auto literal = asio::ip::make_address(name, literal_error);
  if (!literal_error)
    co_return tcp::resolver::results_type::create(
        tcp::endpoint(literal, static_cast<unsigned short>(std::stoi(service))), name, service);
  auto lookup = std::make_shared<Lookup>(co_await asio::this_coro::executor);
  lookup->timer.expires_at(deadline);
  // The thread holds no Asio object of the runtime's (it may outlive it):
  // only a weak reference to the waiting request, taken under the liveness
  // lock, so that it is released while the runtime still exists.
  std::thread([waiting = std::weak_ptr<Lookup>(lookup), name, service, liveness = liveness_] {
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
  if (lookup->error) co_return classify(lookup->error, "resolve", name + ":" + service, X509_V_OK, peer_);
  co_return lookup->results;
}

// Opens the tunnel on a socket connected to the proxy. nullopt on success.
awaitable<std::optional<Error>> Connector::connect_tunnel(beast::tcp_stream& socket) {
  const std::string proxy = proxy_host_ + ":" + proxy_port_;
  // The authority form with the port always (RFC 9110 9.3.6), even when the server URL leaves it out.
  const std::string authority = (host_.find(':') != std::string::npos ? "[" + host_ + "]" : host_) + ":" + port_;
  http::request<http::empty_body> req{http::verb::connect, authority, 11};
  req.set(http::field::host, authority);
  if (!proxy_authorization_.empty()) req.set(http::field::proxy_authorization, proxy_authorization_);
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
  if (buffer.size() != 0) co_return error(Kind::Network, "proxy " + proxy + " sent data before the TLS handshake");
  co_return std::nullopt;
}

awaitable<std::variant<std::unique_ptr<Stream>, Error>> Connector::connect(Deadline deadline) {
  auto executor = co_await asio::this_coro::executor;
  // Through a proxy, the TCP connection goes to the proxy and the server's
  // name is resolved by it.
  const bool proxied = !proxy_host_.empty();
  // (Not `c ? co_await a : co_await b`: GCC 12 miscompiles co_await in a conditional.)
  const std::string& connect_host = proxied ? proxy_host_ : host_;
  const std::string& connect_port = proxied ? proxy_port_ : port_;
  auto resolved = co_await resolve(connect_host, connect_port, deadline);
  if (auto* e = std::get_if<Error>(&resolved)) co_return *e;
  Resolved results = std::get<Resolved>(resolved);
  // TCP (and the proxy's tunnel) on a Beast stream for its connect with a
  // deadline; TLS then runs on the bare socket.
  beast::tcp_stream tcp_stream(executor);
  tcp_stream.expires_at(deadline);
  auto [cec, ep] = co_await tcp_stream.async_connect(results, use_tuple);
  (void)ep;
  if (cec)
    co_return classify(cec, proxied ? "connect to proxy" : "connect",
                       proxied ? proxy_host_ + ":" + proxy_port_ : address(), X509_V_OK,
                       proxied ? std::string("the proxy") : peer_);
  if (proxied) {
    // Not in the if's condition: GCC 12 miscompiles a co_await there (transport/async.hpp).
    auto tunnel_error = co_await connect_tunnel(tcp_stream);
    if (tunnel_error) co_return *tunnel_error;
  }
  tcp_stream.expires_never();
  // Requests are written whole: no Nagle delay waiting for the server's ACK.
  boost::system::error_code nodelay_error;
  tcp_stream.socket().set_option(tcp::no_delay(true), nodelay_error);
  std::unique_ptr<Stream> stream;
  try {
    stream = std::make_unique<Stream>(tcp_stream.release_socket(), tls_.native_handle(), transport::TlsRole::client);
  } catch (const std::exception& e) {
    co_return error(Kind::Tls, "TLS " + address() + ": " + e.what());
  }
  SSL* ssl = stream->native_handle();
  boost::system::error_code not_ip;
  asio::ip::make_address(verify_name_, not_ip);
  if (not_ip && !SSL_set_tlsext_host_name(ssl, verify_name_.c_str()))
    co_return error(Kind::Tls, "TLS " + address() + ": cannot set server name");
  if (!insecure_skip_tls_verify_) {
    // The certificate must name the server: its DNS name, or its IP address (RFC 6125).
    const int named = not_ip ? SSL_set1_host(ssl, verify_name_.c_str())
                             : X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), verify_name_.c_str());
    if (named != 1) co_return error(Kind::Tls, "TLS " + address() + ": cannot set the name to verify");
  }
  stream->deadline().expires_at(deadline);
  auto hec = co_await stream->handshake();
  if (hec)
    co_return classify_error(hec, "TLS handshake with",
                             insecure_skip_tls_verify_ ? X509_V_OK : SSL_get_verify_result(ssl));
  ++handshakes_;
  co_return std::move(stream);
}

}  // namespace fedmetrics::kube
