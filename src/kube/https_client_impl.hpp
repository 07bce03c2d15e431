#pragma once
// The inside of HttpsClient, shared by its translation units: the request
// path (https_client.cpp) and the line streams (line_stream.cpp).
#include <utility>  // before Asio's awaitable.hpp (Boost + C++20 coroutines)

#include <array>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include "fedmetrics/kube/https_client.hpp"
#include "fedmetrics/kube/token_bucket.hpp"
#include "kube/connection_pool.hpp"
#include "kube/connector.hpp"

namespace fedmetrics::kube {

// Response headers larger than this are refused (kube-apiserver's are < 1 KiB).
constexpr std::uint32_t kMaxResponseHeaderBytes = 64 * 1024;

struct HttpsClient::Impl {
  Impl(ClientRuntime::Impl& runtime, ClusterEndpoint endpoint, ClientOptions options);

  ClusterEndpoint endpoint;
  ClientOptions options;
  // Every request of this client runs on this one strand: the pool, the
  // waiters and the pooled streams (whose timers are bound to the executor
  // that opened them) are never touched from two threads at once.
  boost::asio::strand<boost::asio::io_context::executor_type> strand;
  Connector connector;
  ConnectionPool pool;
  TokenBucket rate;  // used on the strand only

  mutable std::mutex mutex;
  std::string token;  // current bearer token (from the file when token_file is set)
  std::chrono::steady_clock::time_point token_checked{};
  std::filesystem::file_time_type token_mtime{};

  std::atomic<std::uint64_t> requests{0}, failures{0}, retries{0};
  // Outcome, latency and in-flight accounting (guarded by `mutex`).
  std::size_t in_flight = 0;
  std::map<std::string, std::uint64_t, std::less<>> outcomes;
  std::array<std::uint64_t, kLatencyBuckets.size()> latency_le{};
  std::uint64_t latency_count = 0;
  double latency_sum = 0;
  std::optional<std::chrono::system_clock::time_point> last_success;

  [[nodiscard]] std::string address() const { return connector.address(); }

  // A request starts and ends (in flight, outcome, latency).
  void begin();
  // `seconds` is left out of the latency histogram for streams, which last
  // as long as the server lets them. `failed`: its coroutine threw (a bug).
  HttpResult end(HttpResult result, bool failed, std::optional<double> seconds);

  std::string current_token();
  void reload_token();

  // The request as it goes on the wire: the base path, Host, User-Agent,
  // Accept, the bearer token, the caller's headers, gzip and the body.
  boost::beast::http::request<boost::beast::http::string_body> build_request(const OutgoingRequest& out);
  // Whether this request asks for gzip on the caller's behalf (and so inflates the answer).
  [[nodiscard]] bool asks_gzip(const OutgoingRequest& out) const;

  // Every request's coroutine, on the strand: the rate limit, the exchange
  // on a pooled connection with its one retry (retry_policy.hpp), one retry
  // with a re-read token after a 401. `impl` keeps the client alive until
  // the answer (STYLE: a named coroutine, its arguments copied into the frame).
  static boost::asio::awaitable<HttpResult> run(std::shared_ptr<Impl> impl, OutgoingRequest request, Deadline deadline);
  // HttpsClient::request and get_json: run() on the strand, awaited from the caller's executor.
  static boost::asio::awaitable<HttpResult> request(std::shared_ptr<Impl> impl, OutgoingRequest request,
                                                    Deadline deadline);
  static boost::asio::awaitable<k8s::Expected<nlohmann::json>> get_json(std::shared_ptr<Impl> impl, std::string path,
                                                                        Deadline deadline);
  // A line stream's coroutine (line_stream.cpp), likewise.
  struct LineStreamState;
  static boost::asio::awaitable<HttpResult> run_stream(std::shared_ptr<Impl> impl, OutgoingRequest request,
                                                       Deadline header_deadline, std::chrono::milliseconds idle_timeout,
                                                       std::shared_ptr<LineStreamState> state,
                                                       std::function<bool(std::string)> on_line);
  // HttpsClient::watch_lines: run_stream() on the strand, awaited from the caller's executor.
  static boost::asio::awaitable<HttpResult> watch_lines(std::shared_ptr<Impl> impl, OutgoingRequest request,
                                                        Deadline header_deadline,
                                                        std::chrono::milliseconds idle_timeout,
                                                        std::function<bool(std::string)> on_line);
};

// Sends `req` whole: one TLS write, one send().
boost::asio::awaitable<boost::system::error_code> write_request(
    Stream& stream, const boost::beast::http::request<boost::beast::http::string_body>& req);

}  // namespace fedmetrics::kube
