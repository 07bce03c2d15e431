#pragma once
// HTTPS/1.1 to one Kubernetes API server (a member cluster's, or the control
// plane's), behind a thin header (no Beast here). Keep-alive connections are
// pooled, checked before reuse and closed when idle too long; every request
// carries a deadline applied to every phase (connect, TLS handshake, write,
// read); every failure comes back as a classified k8s::Error, never an
// exception and never later than the deadline.
#include <array>
#include <atomic>
#include <map>
#include <optional>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "fedmetrics/k8s/expected.hpp"
#include "fedmetrics/kube/kubeconfig.hpp"
#include "fedmetrics/transport/executor.hpp"
#include "fedmetrics/transport/task.hpp"

namespace fedmetrics::transport {
class Runtime;
}

namespace fedmetrics::kube {

// When a request must have its answer.
using Deadline = std::chrono::steady_clock::time_point;
using k8s::Error;
using k8s::ErrorKind;

struct HttpReply {
  int status = 0;
  std::string body;
  std::string content_type;
  // Every header but the hop-by-hop ones, when the request asked for them.
  std::vector<std::pair<std::string, std::string>> headers = {};
};

// Any request, for the callers that are not plain GETs of JSON (the
// simulator's aggregation proxy, TokenReview and SubjectAccessReview).
struct OutgoingRequest {
  std::string method = "GET";
  std::string target;                                             // path and query, already escaped
  std::vector<std::pair<std::string, std::string>> headers = {};  // added as given (Accept overrides the default)
  std::string body = {};
  std::string content_type = {};  // with a body
  bool want_headers = false;      // fill HttpReply::headers
  // Sending it twice does no harm, so it may be retried on a new connection
  // when a reused one turns out to be closed (retry_policy.hpp). GET and
  // HEAD are replayable whatever this says.
  bool replayable = false;
};

using HttpResult = std::variant<HttpReply, Error>;

// The document of a 2xx answer, or why there is none: the transport's
// Error as it is; an error status as HttpStatus with the code and the
// server's Status when it sent one ("HTTP 403: secrets ... is forbidden");
// a body that is not JSON as MalformedResponse.
k8s::Expected<nlohmann::json> json_of(const HttpResult& result);

// For logs and errors: the Error's message, or "HTTP 403" with the
// Status message of the body when it has one ("HTTP 403: secrets ... is forbidden").
std::string describe(const HttpResult& result);
using HttpCallback = std::function<void(HttpResult)>;

// The I/O threads every member client runs on: the process's runtime's
// (transport/runtime.hpp), or threads of its own for a client alone (tests,
// the plugin, the simulator's forwarding).
class ClientRuntime {
 public:
  explicit ClientRuntime(unsigned threads = 1);
  // On `runtime`'s threads, which it owns and joins as the last step of its
  // stop order; it outlives this.
  explicit ClientRuntime(transport::Runtime& runtime);
  ~ClientRuntime();
  ClientRuntime(const ClientRuntime&) = delete;
  ClientRuntime& operator=(const ClientRuntime&) = delete;
  // Stops and joins the threads: no callback runs after it returns. The
  // clients made on this runtime may still be destroyed afterwards (the
  // io_context lives until the runtime itself goes).
  void stop();
  // Where the loops' coroutines run (transport/async.hpp): the same threads.
  [[nodiscard]] async::Executor executor();

  struct Impl;
  Impl& impl() { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

struct ClientOptions {
  std::size_t max_connections = 8;               // open connections per member (the pool bound)
  std::size_t max_response_bytes = 64ULL << 20;  // --max-member-response-bytes
  std::string user_agent = "fedmetrics/v0.1.0";
  double qps = 0;  // --member-qps: requests per second to this member, shared by all callers; 0 = unlimited
  int burst = 10;  // --member-burst
  // Ask for gzip (Accept-Encoding: gzip) and inflate what comes compressed,
  // as client-go does unless DisableCompression (kubeconfig
  // disable-compression) is set. A request whose caller sets Accept-Encoding
  // itself gets the body as the member sent it.
  bool accept_gzip = true;
  // An idle pooled connection is closed after this long. Shorter than the
  // 90 s after which kube-apiserver (Go's http.Server IdleTimeout) closes an
  // idle connection itself, so that we close first and never write a request
  // into a connection the server is closing at that moment. (A connection
  // the peer closed sooner is caught by the check before reuse.)
  std::chrono::milliseconds idle_connection_timeout{std::chrono::seconds(45)};
  // How errors name the peer: "member2", "the control plane". Empty: the
  // endpoint's name (a member's context or Cluster name).
  std::string peer_name = {};
};

// Latency histogram bounds, seconds: up to 60 s, as a member deadline may be that long.
inline constexpr std::array<double, 13> kLatencyBuckets = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                                                           1,     2.5,  5,     10,   30,  60};

struct ClientStats {
  std::uint64_t requests = 0;
  std::uint64_t tls_handshakes = 0;  // new connections; requests - handshakes were served on reused ones
  std::uint64_t failures = 0;
  std::uint64_t retries = 0;      // requests sent again after a reused connection failed (retry_policy.hpp)
  std::uint64_t idle_closed = 0;  // idle connections closed: expired, or found closed by the peer before reuse
  std::size_t open_connections = 0;
  std::size_t idle_connections = 0;
  std::size_t in_flight = 0;
  // Completed requests by outcome: "success" or an error kind name (k8s::to_string).
  std::map<std::string, std::uint64_t, std::less<>> outcomes;
  // Cumulative counts per kLatencyBuckets bound (Prometheus "le"), plus the total.
  std::array<std::uint64_t, kLatencyBuckets.size()> latency_le{};
  std::uint64_t latency_count = 0;
  double latency_sum_seconds = 0;
  std::optional<std::chrono::system_clock::time_point> last_success;
};

// A GET whose answer is read as it arrives: a ?watch=true stream of
// newline-delimited JSON events.
struct LineStreamCallbacks {
  // Each complete line, without its '\n', in order, on the client's strand
  // (keep it short: the client's other requests wait behind it).
  std::function<void(std::string line)> on_line;
  // Exactly once, last (unless the ClientRuntime stops first: then never):
  // HttpReply{200} with an empty body when the member
  // ended the stream (its timeoutSeconds passed), HttpReply with the member's
  // status and body when it refused the request, or the Error that ended
  // it (after cancel(): Kind::Timeout, "cancelled").
  HttpCallback on_end;
};

class LineStream {
 public:
  virtual ~LineStream() = default;
  // Ends the stream soon; on_end still comes, once. Thread-safe.
  virtual void cancel() = 0;
};

class HttpsClient {
 public:
  // Throws std::runtime_error naming the member when its TLS material
  // (CA, client certificate or key) cannot be loaded or its server URL is not https.
  HttpsClient(ClientRuntime& runtime, ClusterEndpoint endpoint, ClientOptions options = {});
  ~HttpsClient();
  HttpsClient(const HttpsClient&) = delete;
  HttpsClient& operator=(const HttpsClient&) = delete;

  // The coroutine API: `request` on the client's strand, the answer back on
  // the caller's executor by `deadline` at the latest. The client may be
  // destroyed once the call returned, even before the task is awaited (the
  // task holds what it needs). The same rules
  // as send(): the rate limit, one retry on a new connection when a reused
  // one failed and the request is replayable, one after a 401 with a token file.
  async::Task<HttpResult> request(OutgoingRequest request, Deadline deadline);
  // GET of a JSON document (json_of).
  async::Task<k8s::Expected<nlohmann::json>> get_json(std::string path_and_query, Deadline deadline);

  // The callback API, for the callers not yet written as coroutines.
  // GET `path_and_query` (already escaped), calling `done` exactly once, on an
  // I/O thread, by `deadline` at the latest.
  void get(std::string path_and_query, Deadline deadline, HttpCallback done);
  // Any method. A request that fails on a reused connection before its
  // answer began is sent once more on a new connection when it is
  // replayable (retry_policy.hpp); any request is retried once after a 401
  // with a token file (a 401 means it was not applied).
  void send(OutgoingRequest request, Deadline deadline, HttpCallback done);

  // Opens `path_and_query` on a connection of its own (outside the pool: a
  // watch holds it for minutes) and reads the body line by line. The
  // connection, TLS handshake and response header must come by
  // `header_deadline`; after that, each read must bring something within
  // `idle_timeout` (ask the server for a timeoutSeconds below it). A line
  // longer than the response size cap ends the stream as TooLarge.
  std::shared_ptr<LineStream> stream_lines(std::string path_and_query, Deadline header_deadline,
                                           std::chrono::milliseconds idle_timeout, LineStreamCallbacks callbacks);

  // The same as a coroutine: `on_line` gets each line as stream_lines'
  // does, and ends the stream by returning false (the task then ends with
  // Kind::Timeout, "cancelled"); the task ends with what on_end would get.
  // Cancelling the awaiting coroutine closes the stream at once.
  async::Task<HttpResult> watch_lines(std::string path_and_query, Deadline header_deadline,
                                      std::chrono::milliseconds idle_timeout,
                                      std::function<bool(std::string line)> on_line);

  // Calls `task` on this client's strand after `delay` (retry backoff for its
  // users); never after the runtime stopped.
  void schedule(std::chrono::milliseconds delay, std::function<void()> task);

  [[nodiscard]] ClientStats stats() const;
  [[nodiscard]] const ClusterEndpoint& endpoint() const;

  struct Impl;

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace fedmetrics::kube
