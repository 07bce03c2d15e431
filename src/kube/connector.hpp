#pragma once
// Opening one connection to an API server: the name looked up (on a thread
// of its own, so that a silent DNS server cannot hold up shutdown), TCP, the
// CONNECT tunnel of a proxy-url, then the TLS handshake with the server's
// name verified, each phase by the request's deadline. Every failure is a
// classified k8s::Error that names the peer.
#include <utility>  // before Asio's awaitable.hpp (Boost + C++20 coroutines)

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/error.hpp>
#include <openssl/x509_vfy.h>

#include "fedmetrics/transport/tls_socket.hpp"
#include "kube/client_runtime.hpp"

namespace fedmetrics::kube {

// The names the client's translation units use (this header is private to src/kube).
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using Kind = ErrorKind;

// A connection to the server: TLS straight on the socket (transport/tls_socket.hpp).
using Stream = transport::TlsSocket;

// An error of `kind` with no HTTP status.
inline Error error(ErrorKind kind, std::string message) { return Error{kind, std::move(message)}; }

// Maps a transport error to its kind. `phase` says what we were doing and
// `peer` names who is at `address` ("member2", "the control plane", "the proxy").
Error classify(const boost::system::error_code& ec, std::string_view phase, const std::string& address,
               long verify_result, const std::string& peer);

class Connector {
 public:
  // Throws std::runtime_error naming the endpoint when its server or
  // proxy-url is not a usable URL or its TLS material cannot be loaded.
  Connector(const ClusterEndpoint& endpoint, std::string peer, std::shared_ptr<ClientRuntime::Impl::Liveness> liveness);

  // A new connection, its TLS handshake done, by `deadline`.
  boost::asio::awaitable<std::variant<std::unique_ptr<Stream>, Error>> connect(Deadline deadline);

  // "host:port" of the server, for messages.
  [[nodiscard]] std::string address() const { return host_ + ":" + port_; }
  [[nodiscard]] const std::string& host_header() const { return host_header_; }
  // The server URL's path without its trailing '/', put before every request's target.
  [[nodiscard]] const std::string& base_path() const { return base_path_; }
  [[nodiscard]] std::uint64_t handshakes() const { return handshakes_.load(); }
  [[nodiscard]] Error classify_error(const boost::system::error_code& ec, std::string_view phase,
                                     long verify_result = X509_V_OK) const {
    return classify(ec, phase, address(), verify_result, peer_);
  }

 private:
  using Resolved = boost::asio::ip::tcp::resolver::results_type;
  void parse_proxy_url(const std::string& proxy_url, const std::string& endpoint_name);
  boost::asio::awaitable<std::variant<Resolved, Error>> resolve(const std::string& name, const std::string& service,
                                                                Deadline deadline);
  boost::asio::awaitable<std::optional<Error>> connect_tunnel(boost::beast::tcp_stream& socket);

  std::shared_ptr<ClientRuntime::Impl::Liveness> liveness_;
  boost::asio::ssl::context tls_{boost::asio::ssl::context::tls_client};
  bool insecure_skip_tls_verify_ = false;
  std::string host_, port_, host_header_, base_path_, verify_name_;
  std::string peer_;  // how errors name the server
  // proxy-url: an http:// proxy, reached in the clear, asked to CONNECT to
  // the server; the server's TLS runs inside that tunnel (client-go's
  // http.ProxyURL for https servers). User info becomes Proxy-Authorization.
  std::string proxy_host_, proxy_port_, proxy_authorization_;
  std::atomic<std::uint64_t> handshakes_{0};
};

}  // namespace fedmetrics::kube
