#pragma once
// An HTTPS/1.1 server on Beast and Asio, behind a thin header so that its
// users never compile Beast. Each connection is a coroutine that owns its
// stream; every phase has a deadline and every read a size limit, so that a
// slow or hostile client cannot hold the server.
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "fedmetrics/transport/http_message.hpp"
#include "fedmetrics/transport/task.hpp"

namespace fedmetrics::transport {

// The request handler: a coroutine from a request to its response, run on
// the connection's thread (so a handler that computes for long holds the
// connections of that thread). A response with status 0 closes the
// connection without writing anything; an exception is answered with 500.
// The handler is cancelled (Asio's terminal cancellation) when the server
// stops, when shutdown()'s grace period has passed, or, with
// abandon_when_client_closes, when the client leaves first: it must then end
// soon (every co_await of an Asio operation ends at once), and what it
// answers is not sent. The server's stop waits for its handlers to end.
using RequestHandler = std::function<async::Task<HttpResponse>(HttpRequest)>;

struct TlsServerOptions {
  std::string bind_address = "0.0.0.0";
  std::uint16_t port = 6443;                     // 0 = any free port
  std::string cert_file;                         // PEM chain
  std::string key_file;                          // PEM private key
  std::string tls_min_version = "VersionTLS12";  // Kubernetes' --tls-min-version values
  // The request line and header fields together; past it, 431. 64 KiB (Envoy's
  // default max_request_headers_kb is 60) rather than Go's 1 MiB: Beast 1.81
  // cannot hold a field line of 64 KiB or more anyway (16-bit lengths in
  // basic_fields), and a connection's memory before authentication is bounded
  // by this (see README, "Memory budget").
  std::size_t max_header_bytes = 64 << 10;
  // Read (and buffered whole) before the handler, so before authentication:
  // set it per server. 3 MiB (apiserver's MaxRequestBodyBytes order) for the
  // simulator's control plane; `fedmetrics serve` reads no bodies and sets 0.
  // A GET or HEAD with a body is refused with 400 whatever this says.
  std::size_t max_body_bytes = 3 << 20;
  std::chrono::milliseconds handshake_timeout{10'000};
  std::chrono::milliseconds header_read_timeout{10'000};
  std::chrono::milliseconds idle_timeout{90'000};
  std::chrono::milliseconds write_timeout{60'000};
  std::size_t max_connections = 10'000;
  unsigned threads = 0;  // 0 = one per core
  // When set, a client that closes its end (or sends more bytes) while its
  // request is still with the handler ends the connection at once, and the
  // handler is cancelled. For handlers that hold requests for
  // long (the simulator's black hole), so that held connections do not pile up.
  bool abandon_when_client_closes = false;
  // Ask every client for a certificate without requiring one (Go's
  // RequestClientCert): the front proxy presents one, kubectl users come with
  // tokens. The chain reaches the handler unverified in
  // HttpRequest::peer_certificates_pem; the authenticator verifies it.
  bool request_client_certificates = false;
  // gzip a 200 answer of at least this many bytes when the request's
  // Accept-Encoding admits gzip (compress_response in gzip.hpp; streamed
  // bodies never); 0 = never. kube-apiserver compresses bodies over 128 KiB
  // (the APIResponseCompression feature, on by default). Compression runs on
  // the connection's thread: about 10 ms per MiB of JSON at level 1.
  std::size_t compress_min_bytes = 0;
};

class TlsServer {
 public:
  // Throws std::runtime_error with a clear message when the certificate or
  // key cannot be loaded or the address cannot be bound.
  TlsServer(TlsServerOptions options, RequestHandler handler);
  ~TlsServer();
  TlsServer(const TlsServer&) = delete;
  TlsServer& operator=(const TlsServer&) = delete;

  // The bound port (useful when options.port was 0).
  [[nodiscard]] std::uint16_t port() const;
  // Serves until stop() is called or SIGINT/SIGTERM arrives; blocks.
  void run();
  // Serves on threads of its own and returns at once; signals are the
  // caller's (`fedmetrics serve` terminates gracefully, see shutdown()).
  void start();
  // Graceful termination, as Go's http.Server.Shutdown: closes the listener
  // (a connection attempt is refused from then on), closes at once the
  // kept-alive connections waiting for their next request, lets the ones in
  // a request finish it (its answer says Connection: close), and waits up to
  // `grace` for them; those still in a request then are cancelled (closed
  // unanswered) and waited for. Completes with how many connections were
  // still in a request when the grace period ended. stop() follows.
  async::Task<std::size_t> drain(std::chrono::milliseconds grace);
  // drain(), blocking the calling thread until it completes (not one of the
  // server's threads). Returns at once (0) when the server is not serving.
  std::size_t shutdown(std::chrono::milliseconds grace);
  // Stops serving: every connection is cancelled (its handler too) and
  // closed unanswered. Returns at once; run() returns, and join() waits for
  // start()'s threads, once every connection has ended.
  void stop();
  void join();

  // Refusing: closes the listening socket, so that new connections are
  // refused, and closes kept-alive connections when their next request
  // arrives, unanswered. Accepting again listens on the same port.
  void set_accepting(bool accepting);
  // Serves a new certificate to new connections; kept-alive connections are
  // closed when their next request arrives, unanswered. Throws like the
  // constructor when the files cannot be loaded.
  void set_certificate(const std::string& cert_file, const std::string& key_file);
  // Runs `task` on the server's threads after `delay` (dropped if the server stops first).
  void schedule(std::chrono::nanoseconds delay, std::function<void()> task);

  struct Impl;  // the parts (private to the server's translation units)

 private:
  std::unique_ptr<Impl> impl_;
};

// Tells whether a --tls-min-version value is one we accept.
bool valid_tls_min_version(const std::string& value);

}  // namespace fedmetrics::transport
