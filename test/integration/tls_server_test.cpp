// TlsServer in process on 127.0.0.1, against real TLS clients (blocking
// OpenSSL on POSIX sockets, tls_test_client.hpp). These tests pin the
// server's observable behaviour through its public header only, as a safety
// net for rewriting its TLS stream: framing, keep-alive, limits, every
// deadline, connection caps, streaming, abandonment, client certificates and
// protocol versions. Every limit and timeout is small and every client read
// is bounded, so each case takes well under 5 s and none can hang.
#define CATCH_CONFIG_ENABLE_OPTIONAL_STRINGMAKER  // print std::optional values in failed checks
#include <catch2/catch.hpp>

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "fedmetrics/transport/async.hpp"
#include "fedmetrics/transport/certificate_authority.hpp"
#include "fedmetrics/transport/http_message.hpp"
#include "fedmetrics/transport/runtime.hpp"
#include "fedmetrics/transport/self_signed.hpp"
#include "fedmetrics/transport/tls_server.hpp"
#include "tls_test_client.hpp"

using namespace fedmetrics::transport;
using namespace fedmetrics::testing::tls;
using namespace std::chrono_literals;

namespace {

// A fresh directory under /tmp with the server's self-signed certificate,
// removed with everything in it when the test ends.
class CertDir {
 public:
  CertDir() {
    char name[] = "/tmp/fedmetrics-tls-server-test-XXXXXX";
    if (::mkdtemp(name) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = name;
    paths_ = ensure_self_signed_certificate(path_, {"localhost"}, {"127.0.0.1"});
  }
  ~CertDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  CertDir(const CertDir&) = delete;
  CertDir& operator=(const CertDir&) = delete;

  [[nodiscard]] const std::string& path() const { return path_; }
  [[nodiscard]] const CertificatePaths& certificate() const { return paths_; }

 private:
  std::string path_;
  CertificatePaths paths_;
};

// A TlsServer running on its own thread for one test.
class TestServer {
 public:
  explicit TestServer(const std::function<void(TlsServerOptions&)>& configure = {}) {
    options_.bind_address = "127.0.0.1";
    options_.port = 0;
    options_.cert_file = certs_.certificate().cert_file;
    options_.key_file = certs_.certificate().key_file;
    options_.threads = 2;  // exercise the multi-threaded paths, as in production
    // Not the defaults (10 s and more): a case that does not test a deadline
    // still cannot wait long on one.
    options_.handshake_timeout = 2s;
    options_.header_read_timeout = 2s;
    options_.idle_timeout = 2s;
    options_.write_timeout = 2s;
    if (configure) configure(options_);
  }

  ~TestServer() { destroy(); }

  // Stops the server and destroys it (its threads, io_contexts and connections).
  void destroy() {
    if (server_) {
      server_->stop();
      if (runner_.joinable()) runner_.join();
    }
    server_.reset();
  }
  TestServer(const TestServer&) = delete;
  TestServer& operator=(const TestServer&) = delete;

  void start(RequestHandler handler) {
    server_ = std::make_unique<TlsServer>(options_, std::move(handler));
    runner_ = std::thread([this] { server_->run(); });
  }
  // As `fedmetrics serve` runs it: on threads of its own, signals left to the caller.
  void start_threads(RequestHandler handler) {
    server_ = std::make_unique<TlsServer>(options_, std::move(handler));
    server_->start();
  }

  [[nodiscard]] TlsServer& server() { return *server_; }
  [[nodiscard]] std::uint16_t port() const { return server_->port(); }
  [[nodiscard]] const TlsServerOptions& options() const { return options_; }
  [[nodiscard]] const std::string& dir() const { return certs_.path(); }
  // Clients verify the server's certificate (the self-signed one is its own CA).
  [[nodiscard]] ClientOptions client_options() const {
    ClientOptions o;
    o.ca_file = options_.cert_file;
    return o;
  }

 private:
  CertDir certs_;  // first: outlives the server
  TlsServerOptions options_;
  std::unique_ptr<TlsServer> server_;
  std::thread runner_;
};

// Hands values from the server's threads to the test's.
template <class T>
class Mailbox {
 public:
  void put(T value) {
    {
      std::lock_guard lock(mutex_);
      items_.push_back(std::move(value));
    }
    ready_.notify_all();
  }
  std::optional<T> take(std::chrono::milliseconds within = 3s) {
    std::unique_lock lock(mutex_);
    if (!ready_.wait_for(lock, within, [this] { return !items_.empty(); })) return std::nullopt;
    T value = std::move(items_.front());
    items_.pop_front();
    return value;
  }

 private:
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<T> items_;
};

std::string request(std::string_view method, std::string_view target, std::string_view extra_headers = {},
                    std::string_view body = {}, std::string_view version = "HTTP/1.1") {
  std::string r;
  r.append(method).append(" ").append(target).append(" ").append(version).append("\r\nHost: localhost\r\n");
  r.append(extra_headers);  // each line with its CRLF
  if (!body.empty() || method == "POST") r += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  r.append("\r\n").append(body);
  return r;
}

HttpResponse text(int status, std::string body) {
  HttpResponse r;
  r.status = status;
  r.content_type = "text/plain";
  r.body = std::move(body);
  return r;
}

// Answers "<METHOD> <target>" at once.
fedmetrics::async::Task<HttpResponse> echo(HttpRequest request) {
  co_return text(200, request.method + " " + request.target);
}
// The same after `delay`, waited on the connection's thread.
fedmetrics::async::Task<HttpResponse> echo_after(std::chrono::milliseconds delay, HttpRequest request) {
  co_await fedmetrics::async::sleep_for(delay);
  co_return text(200, request.method + " " + request.target);
}
// A response made before the coroutine (the handlers below are plain lambdas
// that compute it: a capturing lambda is never a coroutine).
fedmetrics::async::Task<HttpResponse> answered(HttpResponse response) { co_return response; }

// Bytes that differ from position to position, so that a lost, repeated or
// reordered block shows up.
std::string pattern(std::size_t size, std::uint32_t seed) {
  std::string s(size, '\0');
  std::uint32_t x = seed;
  for (auto& c : s) {
    x = x * 1664525U + 1013904223U;
    c = static_cast<char>('a' + (x >> 24) % 26);
  }
  return s;
}

// Where two long strings first differ (npos if equal), so that a failing
// check prints an offset rather than megabytes.
std::size_t first_difference(const std::string& a, const std::string& b) {
  auto [ia, ib] = std::mismatch(a.begin(), a.end(), b.begin(), b.end());
  if (ia == a.end() && ib == b.end()) return std::string::npos;
  return static_cast<std::size_t>(ia - a.begin());
}

std::string header_value(const HttpRequest& request, std::string_view name) {
  for (const auto& [n, v] : request.headers)
    if (iequals(n, name)) return v;
  return {};
}

void require_connect(Client& client, std::uint16_t port, const ClientOptions& options) {
  auto result = client.connect(port, options);
  INFO("connect: " << client.error());
  REQUIRE(result == Client::Connect::ok);
}

void require_connect(Client& client, const TestServer& server) {
  require_connect(client, server.port(), server.client_options());
}

Response require_response(Client& client, bool head_request = false) {
  auto r = client.read_response(head_request);
  INFO("read_response: " << client.error());
  REQUIRE(r);
  return *r;
}

// One request on a new connection.
Response get_once(const TestServer& server, std::string_view target) {
  Client client;
  require_connect(client, server);
  REQUIRE(client.write(request("GET", target)));
  return require_response(client);
}

// Whether the listener is there: refused (nothing listens), closed (the TCP
// connection or the handshake was cut, or the request went unanswered), or
// answered with a response.
enum class Probe { refused, closed, answered };

Probe probe(const TestServer& server) {
  Client client;
  ClientOptions options = server.client_options();
  options.receive_timeout = 1s;
  switch (client.connect(server.port(), options)) {
    case Client::Connect::refused: return Probe::refused;
    case Client::Connect::handshake_failed: return Probe::closed;
    case Client::Connect::ok: break;
  }
  if (!client.write(request("GET", "/probe"))) return Probe::closed;
  return client.read_response() ? Probe::answered : Probe::closed;
}

// Polls `condition` every 20 ms until it holds or `within` passes.
bool eventually(const std::function<bool()>& condition, std::chrono::milliseconds within = 2s) {
  const auto deadline = Clock::now() + within;
  for (;;) {
    if (condition()) return true;
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(20ms);
  }
}

}  // namespace

TEST_CASE("TlsServer answers a GET with standard headers and an intact body", "[integration][tls_server]") {
  const std::string tiny = "{\"ok\":true}";
  const std::string medium = pattern(37 * 1024, 1);
  const auto large = std::make_shared<const std::string>(pattern(5 << 20, 2));
  TestServer server;
  server.start([&](const HttpRequest& request) {
    HttpResponse response;
    response.content_type = "application/json";
    if (request.target == "/tiny") {
      response.body = tiny;
      response.headers = {{"Warning", "299 - \"member a: timeout\""}, {"Warning", "299 - \"member b: refused\""}};
    } else if (request.target == "/medium") {
      response.body = medium;
    } else {
      response.shared_body = large;  // written from the shared bytes, not `body`
    }
    return answered(std::move(response));
  });
  Client client;
  require_connect(client, server);

  auto check = [&](std::string_view target, const std::string& expected) {
    REQUIRE(client.write(request("GET", target)));
    Response r = require_response(client);
    INFO(r.raw_head);
    CHECK(r.status_line == "HTTP/1.1 200 OK");
    CHECK(r.header("Server") == "fedmetrics");
    CHECK(r.header("Content-Type") == "application/json");
    CHECK(r.header("Cache-Control") == "no-cache, private");
    CHECK(r.header("Content-Length") == std::to_string(expected.size()));
    CHECK_FALSE(r.header("Transfer-Encoding"));
    CHECK(r.body.size() == expected.size());
    CHECK(first_difference(r.body, expected) == std::string::npos);
    return r;
  };

  SECTION("a tiny body, with two extra Warning headers in order") {
    Response r = check("/tiny", tiny);
    CHECK(r.headers_named("Warning") ==
          std::vector<std::string>{"299 - \"member a: timeout\"", "299 - \"member b: refused\""});
  }
  SECTION("a 37 KB body (several TLS records)") { check("/medium", medium); }
  SECTION("a 5 MiB shared_body") { check("/large", *large); }
}

TEST_CASE("TlsServer answers HEAD with the Content-Length of GET and no body", "[integration][tls_server]") {
  const std::string plain = pattern(37 * 1024, 3);
  const auto shared = std::make_shared<const std::string>(pattern(100 * 1024, 4));
  TestServer server;
  server.start([&](const HttpRequest& request) {
    HttpResponse response;
    if (request.target == "/shared") response.shared_body = shared;
    else response.body = plain;
    return answered(std::move(response));
  });
  Client client;
  require_connect(client, server);

  for (std::string target : {"/plain", "/shared"}) {
    INFO(target);
    const std::string& expected = target == "/shared" ? *shared : plain;
    REQUIRE(client.write(request("GET", target)));
    Response get = require_response(client);
    CHECK(get.header("Content-Length") == std::to_string(expected.size()));

    REQUIRE(client.write(request("HEAD", target)));
    Response head = require_response(client, /*head_request=*/true);
    CHECK(head.status == 200);
    CHECK(head.header("Content-Length") == std::to_string(expected.size()));
    CHECK(head.header("Content-Type") == get.header("Content-Type"));

    // Had the server sent HEAD's body, this response would start inside it.
    REQUIRE(client.write(request("GET", "/after-head")));
    Response after = require_response(client);
    CHECK(after.status_line == "HTTP/1.1 200 OK");
    CHECK(first_difference(after.body, plain) == std::string::npos);
  }
}

TEST_CASE("TlsServer keeps a connection alive across sequential and pipelined requests", "[integration][tls_server]") {
  Mailbox<HttpRequest> seen;
  TestServer server;
  server.start([&](const HttpRequest& request) {
    seen.put(request);
    if (request.target == "/first") {
      // Answered last: the responses must still come in request order.
      return echo_after(100ms, request);
    }
    return echo(request);
  });
  Client client;
  require_connect(client, server);

  SECTION("three sequential requests, and the handler sees method, target, headers and body") {
    REQUIRE(client.write(request("GET", "/one?x=1")));
    CHECK(require_response(client).body == "GET /one?x=1");
    REQUIRE(client.write(
        request("POST", "/two", "X-Test-Header: hello there\r\nContent-Type: text/plain\r\n", "payload=1&more=2")));
    CHECK(require_response(client).body == "POST /two");
    REQUIRE(client.write(request("GET", "/three")));
    CHECK(require_response(client).body == "GET /three");

    auto one = seen.take(), two = seen.take(), three = seen.take();
    REQUIRE(one);
    REQUIRE(two);
    REQUIRE(three);
    CHECK(one->method == "GET");
    CHECK(one->target == "/one?x=1");
    CHECK(one->body.empty());
    CHECK(header_value(*one, "Host") == "localhost");
    CHECK(two->method == "POST");
    CHECK(two->target == "/two");
    CHECK(header_value(*two, "X-Test-Header") == "hello there");
    CHECK(header_value(*two, "Content-Type") == "text/plain");
    CHECK(two->body == "payload=1&more=2");
    CHECK(three->target == "/three");
  }

  SECTION("two requests in one write get two responses, in order") {
    REQUIRE(client.write(request("GET", "/first") + request("GET", "/second")));
    CHECK(require_response(client).body == "GET /first");
    CHECK(require_response(client).body == "GET /second");
    // And the connection is still usable.
    REQUIRE(client.write(request("GET", "/third")));
    CHECK(require_response(client).body == "GET /third");
  }
}

TEST_CASE("TlsServer closes the connection after answering HTTP/1.0 or Connection close", "[integration][tls_server]") {
  TestServer server;
  server.start(echo);
  Client client;
  require_connect(client, server);

  SECTION("HTTP/1.0 without keep-alive") {
    REQUIRE(client.write(request("GET", "/old", "", "", "HTTP/1.0")));
    Response r = require_response(client);
    CHECK(r.status == 200);
    CHECK(r.body == "GET /old");
  }
  SECTION("HTTP/1.1 with Connection: close") {
    REQUIRE(client.write(request("GET", "/bye", "Connection: close\r\n")));
    Response r = require_response(client);
    CHECK(r.status == 200);
    CHECK(r.body == "GET /bye");
    CHECK(lowercase(r.header("Connection").value_or("")) == "close");
  }
  auto closed = client.wait_for_close(1s);
  CHECK(closed.status == ReadStatus::closed);
  CHECK(closed.bytes == 0);
}

TEST_CASE("TlsServer answers 431 to a header over max_header_bytes and 413 to a body over max_body_bytes",
          "[integration][tls_server]") {
  std::atomic<int> handled{0};
  TestServer server([](TlsServerOptions& o) {
    o.max_header_bytes = 4096;
    o.max_body_bytes = 1024;
  });
  server.start([&](const HttpRequest& request) {
    ++handled;
    return echo(request);
  });
  Client client;
  require_connect(client, server);

  SECTION("an 8 KB header") {
    REQUIRE(client.write(request("GET", "/", "X-Big: " + std::string(8192, 'a') + "\r\n")));
    Response r = require_response(client);
    CHECK(r.status == 431);
  }
  SECTION("a Content-Length over the limit") {
    // Only the head: the limit is known from Content-Length, before any body.
    REQUIRE(client.write("POST /upload HTTP/1.1\r\nHost: localhost\r\nContent-Length: 4096\r\n\r\n"));
    Response r = require_response(client);
    CHECK(r.status == 413);
  }
  auto closed = client.wait_for_close(1s);
  CHECK(closed.status == ReadStatus::closed);
  CHECK(handled == 0);
}

TEST_CASE("TlsServer closes connections after its handshake and header-read and idle timeouts",
          "[integration][tls_server]") {
  // Each deadline is 300 ms; the others stay long (5 s), so that only the one
  // under test can close within the 3 s we allow.
  SECTION("header-read timeout: half a request line, then nothing") {
    TestServer server([](TlsServerOptions& o) {
      o.handshake_timeout = o.idle_timeout = 5s;
      o.header_read_timeout = 300ms;
    });
    server.start(echo);
    Client client;
    require_connect(client, server);
    REQUIRE(client.write("GET /slow HT"));
    auto closed = client.wait_for_close(3s);
    CHECK(closed.status == ReadStatus::closed);
    CHECK(closed.elapsed >= 200ms);
  }
  SECTION("idle timeout: one request and response, then nothing") {
    TestServer server([](TlsServerOptions& o) {
      o.handshake_timeout = o.header_read_timeout = 5s;
      o.idle_timeout = 300ms;
    });
    server.start(echo);
    Client client;
    require_connect(client, server);
    REQUIRE(client.write(request("GET", "/once")));
    CHECK(require_response(client).status == 200);
    auto closed = client.wait_for_close(3s);
    CHECK(closed.status == ReadStatus::closed);
    CHECK(closed.bytes == 0);
    CHECK(closed.elapsed >= 200ms);
  }
  SECTION("header-read timeout on a kept-alive connection: a next request begun, then nothing") {
    // The idle timeout waits for a next request; once its first bytes came,
    // the rest of its header has the header-read timeout, as for the first
    // (Go's ReadHeaderTimeout): a client cannot dribble a header for as long
    // as the idle timeout.
    TestServer server([](TlsServerOptions& o) {
      o.handshake_timeout = o.idle_timeout = 5s;
      o.header_read_timeout = 300ms;
    });
    server.start(echo);
    Client client;
    require_connect(client, server);
    REQUIRE(client.write(request("GET", "/once")));
    CHECK(require_response(client).status == 200);
    std::this_thread::sleep_for(500ms);  // idle longer than the header-read timeout: still open
    REQUIRE(client.write(request("GET", "/twice")));
    CHECK(require_response(client).status == 200);
    REQUIRE(client.write("GET /slow HT"));
    auto closed = client.wait_for_close(3s);
    CHECK(closed.status == ReadStatus::closed);
    CHECK(closed.elapsed >= 200ms);
    CHECK(closed.elapsed < 2s);
  }
  SECTION("handshake timeout: a TCP connection that sends nothing") {
    TestServer server([](TlsServerOptions& o) {
      o.header_read_timeout = o.idle_timeout = 5s;
      o.handshake_timeout = 300ms;
    });
    server.start(echo);
    int fd = tcp_connect(server.port());
    REQUIRE(fd >= 0);
    auto closed = tcp_wait_for_close(fd, 3s);
    ::close(fd);
    CHECK(closed.status == ReadStatus::closed);
    CHECK(closed.bytes == 0);
    CHECK(closed.elapsed >= 200ms);
  }
}

TEST_CASE("TlsServer with max_connections 2 turns a third connection away until one closes",
          "[integration][tls_server]") {
  TestServer server([](TlsServerOptions& o) {
    o.max_connections = 2;
    o.handshake_timeout = o.header_read_timeout = o.idle_timeout = 5s;  // the held two must stay
  });
  server.start(echo);
  Client first, second;
  require_connect(first, server);
  require_connect(second, server);
  REQUIRE(first.write(request("GET", "/held-1")));
  CHECK(require_response(first).status == 200);

  {
    // The third: cut before or after its handshake, and never answered.
    Client third;
    ClientOptions options = server.client_options();
    options.receive_timeout = 2s;
    auto connected = third.connect(server.port(), options);
    INFO("third connection: " << third.error());
    CHECK(connected != Client::Connect::refused);  // the listener itself stays open
    if (connected == Client::Connect::ok) {
      third.write(request("GET", "/third"));
      auto closed = third.wait_for_close(2s);
      CHECK(closed.status == ReadStatus::closed);
      CHECK(closed.bytes == 0);
    }
  }

  // The held connections are unaffected.
  REQUIRE(second.write(request("GET", "/held-2")));
  CHECK(require_response(second).body == "GET /held-2");

  // Once one of them closes, a new connection is served (the server notices
  // the close asynchronously, hence the polling).
  first.shutdown_sending();
  first.close();
  CHECK(eventually([&] { return probe(server) == Probe::answered; }));
}

namespace {

// A coroutine handler: /late answers after a 100 ms wait of its own, /silent
// with status 0, /throw throws; anything else is echoed.
fedmetrics::async::Task<HttpResponse> varied(HttpRequest request) {
  if (request.target == "/late") {
    co_await fedmetrics::async::sleep_for(100ms);
    co_return text(200, "late answer");
  }
  if (request.target == "/silent") {
    HttpResponse r;
    r.status = 0;
    co_return r;
  }
  if (request.target == "/throw") throw std::runtime_error("handler bug");
  co_return co_await echo(std::move(request));
}

}  // namespace

TEST_CASE("TlsServer handles late answers and status 0 and a throwing handler", "[integration][tls_server]") {
  TestServer server;
  server.start(varied);
  Client client;
  require_connect(client, server);

  SECTION("an answer the handler waited 100 ms for") {
    const auto start = Clock::now();
    REQUIRE(client.write(request("GET", "/late")));
    Response r = require_response(client);
    CHECK(r.status == 200);
    CHECK(r.body == "late answer");
    CHECK(elapsed_since(start) >= 90ms);
    REQUIRE(client.write(request("GET", "/next")));  // still kept alive
    CHECK(require_response(client).body == "GET /next");
  }
  SECTION("status 0 closes the connection without writing anything") {
    REQUIRE(client.write(request("GET", "/silent")));
    auto closed = client.wait_for_close(2s);
    CHECK(closed.status == ReadStatus::closed);
    CHECK(closed.bytes == 0);
  }
  SECTION("a handler that throws gives 500 with a Status body") {
    REQUIRE(client.write(request("GET", "/throw")));
    Response r = require_response(client);
    CHECK(r.status == 500);
    CHECK(r.header("Content-Type") == "application/json");
    INFO(r.body);
    auto status = nlohmann::json::parse(r.body);
    CHECK(status["kind"] == "Status");
    CHECK(status["apiVersion"] == "v1");
    CHECK(status["status"] == "Failure");
    CHECK(status["code"] == 500);
    // The server lives on.
    CHECK(get_once(server, "/after").body == "GET /after");
  }
}

TEST_CASE("TlsServer: a handler that throws before its coroutine starts gives 500 too", "[integration][tls_server]") {
  TestServer server;
  server.start([](const HttpRequest& request) {
    if (request.target == "/throw") throw std::runtime_error("handler bug");
    return echo(request);
  });
  Response r = get_once(server, "/throw");
  CHECK(r.status == 500);
  CHECK(r.header("Content-Type") == "application/json");
  CHECK(get_once(server, "/after").body == "GET /after");
}

namespace {

// A handler that answers with a stream, handing the producer's end to the test.
auto streaming_handler(Mailbox<std::shared_ptr<ResponseStream>>& streams,
                       std::vector<std::pair<std::string, std::string>> headers = {}) {
  return [&streams, headers](const HttpRequest&) {
    HttpResponse response;
    response.stream = std::make_shared<ResponseStream>();
    response.headers = headers;
    streams.put(response.stream);
    return answered(std::move(response));
  };
}

}  // namespace

TEST_CASE("TlsServer streams a ResponseStream as HTTP chunks", "[integration][tls_server]") {
  Mailbox<std::shared_ptr<ResponseStream>> streams;
  TestServer server;
  server.start(streaming_handler(streams, {{"X-Stream", "yes"}}));
  Client client;
  require_connect(client, server);
  REQUIRE(client.write(request("GET", "/watch")));
  auto head = client.read_head();
  INFO("read_head: " << client.error());
  REQUIRE(head);
  INFO(head->raw_head);
  CHECK(head->status == 200);
  CHECK(lowercase(head->header("Transfer-Encoding").value_or("")) == "chunked");
  CHECK_FALSE(head->header("Content-Length"));
  CHECK(head->header("X-Stream") == "yes");
  CHECK(head->header("Server") == "fedmetrics");
  auto producer = streams.take();
  REQUIRE(producer);

  SECTION("pieces arrive one by one, in order, then the last chunk after close") {
    // The test thread is the producer: each piece must reach the client
    // before the next is written, i.e. without waiting for more.
    const std::vector<std::string> pieces = {"{\"type\":\"ADDED\"}\n", pattern(100 * 1024, 5), "third\n"};
    for (const auto& piece : pieces) {
      REQUIRE((*producer)->write(piece));
      auto chunk = client.read_chunk();
      INFO("read_chunk: " << client.error());
      REQUIRE(chunk);
      CHECK(chunk->size() == piece.size());
      CHECK(first_difference(*chunk, piece) == std::string::npos);
    }
    // An empty piece must not end the body (a 0-size chunk would).
    REQUIRE((*producer)->write(""));
    REQUIRE((*producer)->write("after empty\n"));
    CHECK(client.read_chunk() == "after empty\n");
    (*producer)->close();
    auto last = client.read_chunk();
    INFO("read_chunk: " << client.error());
    CHECK(last == "");
  }
  SECTION("the client closing mid-stream makes write return false") {
    REQUIRE((*producer)->write("first\n"));
    REQUIRE(client.read_chunk() == "first\n");
    client.close();
    CHECK(eventually([&] { return !(*producer)->write("tick\n"); }, 2s));
  }
}

namespace {

// A server answering with streams, and a client connected to it.
struct Streaming {
  Mailbox<std::shared_ptr<ResponseStream>> streams;
  TestServer server;
  Client client;
  Streaming() {
    server.start(streaming_handler(streams));
    require_connect(client, server);
  }
};

}  // namespace

TEST_CASE("TlsServer ends a ResponseStream at its close_after time and tells the producer when it is done",
          "[integration][tls_server]") {
  Streaming streaming;
  auto& [streams, server, client] = streaming;
  REQUIRE(client.write(request("GET", "/watch")));
  REQUIRE(client.read_head());
  auto producer = streams.take();
  REQUIRE(producer);
  auto done = std::make_shared<std::atomic<int>>(0);
  (*producer)->on_abandon([done] { ++*done; });
  REQUIRE((*producer)->write("first\n"));
  REQUIRE(client.read_chunk() == "first\n");
  CHECK(done->load() == 0);  // still streaming

  SECTION("the body ends by itself at close_after's time, with the last chunk") {
    const auto began = Clock::now();
    (*producer)->close_after(300ms);
    auto last = client.read_chunk();
    INFO("read_chunk: " << client.error());
    CHECK(last == "");
    CHECK(elapsed_since(began) >= 250ms);
    CHECK(elapsed_since(began) < 2s);
  }
  SECTION("the client leaves first") { client.close(); }
  // Either way the producer hears it once, and writes are refused from then on.
  REQUIRE(eventually([&] { return done->load() == 1; }));
  CHECK_FALSE((*producer)->write("after\n"));
  auto late = std::make_shared<std::atomic<int>>(0);
  (*producer)->on_abandon([late] { ++*late; });  // given after the end: runs at once
  CHECK(late->load() == 1);
  server.destroy();
  CHECK(done->load() == 1);
}

TEST_CASE("TlsServer answers HEAD to a streamed response with its head only", "[integration][tls_server]") {
  Mailbox<std::shared_ptr<ResponseStream>> streams;
  TestServer server;
  server.start(streaming_handler(streams));
  Client client;
  require_connect(client, server);
  REQUIRE(client.write(request("HEAD", "/watch")));
  auto head = client.read_head();
  INFO("read_head: " << client.error());
  REQUIRE(head);
  CHECK(head->status == 200);
  CHECK(lowercase(head->header("Transfer-Encoding").value_or("")) == "chunked");
  // No chunk follows: the connection ends right after the head, and the
  // producer hears at once that nobody reads.
  auto closed = client.wait_for_close(2s);
  CHECK(closed.status != ReadStatus::timeout);
  CHECK(closed.bytes == 0);
  auto producer = streams.take();
  REQUIRE(producer);
  CHECK_FALSE((*producer)->write("ignored\n"));
}

namespace {

// Holds the request for 1 s unless cancelled first; says when it ended, and how.
fedmetrics::async::Task<HttpResponse> hold_for_a_second(std::shared_ptr<std::atomic<int>> ended) {
  const bool slept = co_await fedmetrics::async::sleep_for(1s);
  *ended = slept ? 1 : 2;  // 2: cancelled
  co_return text(200, "too late");
}

}  // namespace

TEST_CASE("TlsServer with abandon_when_client_closes drops a held request whose client left",
          "[integration][tls_server]") {
  auto ended = std::make_shared<std::atomic<int>>(0);
  TestServer server([](TlsServerOptions& o) { o.abandon_when_client_closes = true; });
  server.start([ended](const HttpRequest& request) {
    if (request.target == "/held") return hold_for_a_second(ended);
    return echo(request);
  });
  Client client;
  require_connect(client, server);
  REQUIRE(client.write(request("GET", "/held")));
  std::this_thread::sleep_for(100ms);
  const auto left = Clock::now();

  SECTION("the client closes: the held handler is cancelled") { client.close(); }
  SECTION("the client closes its sending side: the server ends the connection unanswered") {
    client.shutdown_sending();
    auto closed = client.wait_for_close(2s);
    CHECK(closed.status == ReadStatus::closed);
    CHECK(closed.bytes == 0);  // not the held answer
  }
  REQUIRE(eventually([&] { return ended->load() != 0; }, 3s));
  CHECK(ended->load() == 2);  // cancelled when the client left, not after its second
  CHECK(elapsed_since(left) < 800ms);
  CHECK(get_once(server, "/fresh").body == "GET /fresh");
}

TEST_CASE("TlsServer gives up on a client that stops reading after write_timeout and serves others meanwhile",
          "[integration][tls_server]") {
  const auto huge = std::make_shared<const std::string>(pattern(20 << 20, 6));
  TestServer server([](TlsServerOptions& o) {
    o.write_timeout = 300ms;
    o.idle_timeout = 5s;  // so that only the write timeout can end the connection within the 3 s drain
  });
  server.start([&](const HttpRequest& request) {
    if (request.target == "/huge") {
      HttpResponse response;
      response.shared_body = huge;
      return answered(std::move(response));
    } else {
      return echo(request);
    }
  });
  ClientOptions stalled_options = server.client_options();
  stalled_options.receive_buffer = 16 * 1024;  // a small window: the server's send buffer fills soon
  Client stalled;
  require_connect(stalled, server.port(), stalled_options);
  REQUIRE(stalled.write(request("GET", "/huge")));
  const auto sent = Clock::now();
  REQUIRE(stalled.read_until("\r\n"));
  CHECK(stalled.buffer().rfind("HTTP/1.1 200 OK\r\n", 0) == 0);

  // Meanwhile, another client is served.
  CHECK(get_once(server, "/other").body == "GET /other");

  // Read nothing until well after the write timeout, then drain: a server that
  // gave up ends the connection before the whole body; one still waiting would
  // send it all and keep the connection (then wait_for_close times out).
  std::this_thread::sleep_until(sent + 1500ms);
  auto drained = stalled.wait_for_close(3s);
  INFO("received " << drained.bytes << " of " << huge->size() << " body bytes");
  CHECK(drained.status == ReadStatus::closed);
  CHECK(drained.bytes < huge->size());
  CHECK(get_once(server, "/after").body == "GET /after");
}

TEST_CASE("TlsServer set_accepting refuses new connections and accepts again on the same port",
          "[integration][tls_server]") {
  TestServer server;
  server.start(echo);
  const std::uint16_t port = server.port();
  Client kept;
  require_connect(kept, server);
  REQUIRE(kept.write(request("GET", "/before")));
  CHECK(require_response(kept).status == 200);

  server.server().set_accepting(false);
  CHECK(eventually([&] { return probe(server) != Probe::answered; }));
  CHECK(probe(server) == Probe::refused);  // the listening socket is closed, not just unanswered

  // A kept-alive connection's next request is not answered: the connection closes.
  REQUIRE(kept.write(request("GET", "/while-refusing")));
  auto closed = kept.wait_for_close(2s);
  CHECK(closed.status == ReadStatus::closed);
  CHECK(closed.bytes == 0);

  server.server().set_accepting(true);
  CHECK(server.port() == port);
  CHECK(eventually([&] { return probe(server) == Probe::answered; }));
}

TEST_CASE("TlsServer with request_client_certificates passes the client chain to the handler",
          "[integration][tls_server]") {
  bool request_certificates = true;
  SECTION("not requested") { request_certificates = false; }
  SECTION("requested") {}

  Mailbox<std::string> chains;
  TestServer server([&](TlsServerOptions& o) { o.request_client_certificates = request_certificates; });
  server.start([&](const HttpRequest& request) {
    chains.put(request.peer_certificates_pem);
    return echo(request);
  });
  auto ca = CertificateAuthority::create("fedmetrics test client CA");
  const std::string cert_file = server.dir() + "/client.crt", key_file = server.dir() + "/client.key";
  ca.issue_client_certificate(cert_file, key_file, "alice", {"developers"});
  std::stringstream leaf;
  leaf << std::ifstream(cert_file).rdbuf();
  REQUIRE(leaf.str().rfind("-----BEGIN CERTIFICATE-----", 0) == 0);

  auto chain_seen = [&](int tls_version, bool with_certificate) {
    ClientOptions options = server.client_options();
    options.tls_version = tls_version;
    if (with_certificate) {
      options.cert_file = cert_file;
      options.key_file = key_file;
    }
    Client client;
    require_connect(client, server.port(), options);
    REQUIRE(client.write(request("GET", "/whoami")));
    CHECK(require_response(client).status == 200);
    auto chain = chains.take();
    REQUIRE(chain);
    return *chain;
  };

  for (int version : {TLS1_3_VERSION, TLS1_2_VERSION}) {
    INFO("TLS version 0x" << std::hex << version);
    const std::string with = chain_seen(version, true);
    if (request_certificates) {
      CHECK(with.rfind("-----BEGIN CERTIFICATE-----", 0) == 0);
      CHECK(with.rfind(leaf.str(), 0) == 0);  // the leaf first
    } else {
      CHECK(with.empty());
    }
    CHECK(chain_seen(version, false).empty());
  }
}

TEST_CASE("TlsServer does not let a CR LF in a header value inject a header", "[integration][tls_server]") {
  TestServer server;
  server.start([](const HttpRequest&) {
    HttpResponse response = text(200, "body");
    // A member's error text ends up in a Warning: it must not split the header.
    response.headers = {{"Warning", "299 - \"member a: a\r\nX-Injected: 1\""},
                        {"Warning", "299 - \"member b: b\nX-Injected-LF: 1\""}};
    return answered(std::move(response));
  });
  Client client;
  require_connect(client, server);
  REQUIRE(client.write(request("GET", "/")));
  auto r = client.read_response();
  INFO("read_response: " << client.error());
  REQUIRE(r);
  INFO(r->raw_head);
  CHECK_FALSE(r->header("X-Injected"));
  CHECK_FALSE(r->header("X-Injected-LF"));
  // Also no line (even one a lenient client splits at a bare LF) starts with it.
  CHECK(lowercase(r->raw_head).find("\nx-injected") == std::string::npos);
}

TEST_CASE("TlsServer enforces tls_min_version", "[integration][tls_server]") {
  // A handshake at exactly `version`, then one request. Returns the client's
  // error text ("" when the handshake succeeded).
  auto handshake = [](const TestServer& server, int version) {
    ClientOptions options = server.client_options();
    options.tls_version = version;
    Client client;
    if (client.connect(server.port(), options) != Client::Connect::ok) return client.error();
    CHECK(SSL_version(client.ssl()) == version);
    REQUIRE(client.write(request("GET", "/tls")));
    CHECK(require_response(client).body == "GET /tls");
    return std::string();
  };
  // The server's protocol_version alert (RFC 8446 appendix D, RFC 5246 appendix
  // E.1), not a failure of our own client before it sent anything.
  const auto refused = Catch::Matchers::Contains("alert protocol version");

  SECTION("VersionTLS12: TLS 1.3 and 1.2 work, TLS 1.1 is refused") {
    TestServer server([](TlsServerOptions& o) { o.tls_min_version = "VersionTLS12"; });
    server.start(echo);
    CHECK(handshake(server, TLS1_3_VERSION) == "");
    CHECK(handshake(server, TLS1_2_VERSION) == "");
    CHECK_THAT(handshake(server, TLS1_1_VERSION), refused);
  }
  SECTION("VersionTLS13: TLS 1.2 is refused") {
    TestServer server([](TlsServerOptions& o) { o.tls_min_version = "VersionTLS13"; });
    server.start(echo);
    CHECK(handshake(server, TLS1_3_VERSION) == "");
    CHECK_THAT(handshake(server, TLS1_2_VERSION), refused);
  }
}

TEST_CASE("TlsServer constructor rejects bad options with runtime_error", "[integration][tls_server]") {
  CHECK(valid_tls_min_version("VersionTLS12"));
  CHECK(valid_tls_min_version("VersionTLS13"));
  CHECK_FALSE(valid_tls_min_version("VersionTLS11"));

  TestServer running;
  running.start(echo);
  TlsServerOptions options = running.options();
  auto construct = [&] { TlsServer server(options, echo); };

  SECTION("an unknown tls_min_version") { options.tls_min_version = "VersionTLS11"; }
  SECTION("a missing certificate file") { options.cert_file = running.dir() + "/missing.crt"; }
  SECTION("a key that does not match the certificate") {
    write_self_signed_certificate(running.dir() + "/other.crt", running.dir() + "/other.key", "other", {"localhost"},
                                  {"127.0.0.1"});
    options.key_file = running.dir() + "/other.key";
  }
  SECTION("a port in use") { options.port = running.port(); }
  CHECK_THROWS_AS(construct(), std::runtime_error);
}

TEST_CASE("TlsServer set_certificate serves the new certificate to new connections", "[integration][tls_server]") {
  TestServer server;
  server.start(echo);
  Client kept;
  require_connect(kept, server);
  REQUIRE(kept.write(request("GET", "/before")));
  CHECK(require_response(kept).status == 200);

  const std::string cert_file = server.dir() + "/next.crt", key_file = server.dir() + "/next.key";
  write_self_signed_certificate(cert_file, key_file, "next", {"localhost"}, {"127.0.0.1"});
  server.server().set_certificate(cert_file, key_file);

  // A client that trusts only the old certificate fails; one that trusts the new one is served.
  Client old_trust;
  CHECK(old_trust.connect(server.port(), server.client_options()) == Client::Connect::handshake_failed);
  ClientOptions new_trust = server.client_options();
  new_trust.ca_file = cert_file;
  Client fresh;
  require_connect(fresh, server.port(), new_trust);
  REQUIRE(fresh.write(request("GET", "/after")));
  CHECK(require_response(fresh).body == "GET /after");

  // The kept-alive connection's next request is not answered.
  REQUIRE(kept.write(request("GET", "/kept")));
  auto closed = kept.wait_for_close(2s);
  CHECK(closed.status == ReadStatus::closed);
  CHECK(closed.bytes == 0);

  // Files that cannot be loaded: an exception, and the current certificate stays.
  CHECK_THROWS_AS(server.server().set_certificate(server.dir() + "/missing.crt", key_file), std::runtime_error);
  Client again;
  require_connect(again, server.port(), new_trust);
}

TEST_CASE("TlsServer answers a malformed request with 400 and Connection close, as Go's net/http",
          "[integration][tls_server]") {
  // Each of these was closed unanswered before: the client could not tell a
  // refusal from a crash.
  struct Case {
    const char* name;
    std::string bytes;
  };
  const std::vector<Case> cases = {
      {"Content-Length and Transfer-Encoding",
       "POST /upload HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"},
      {"two different Content-Lengths",
       "POST /upload HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab"},
      {"a Content-Length that is not a number",
       "POST /upload HTTP/1.1\r\nHost: localhost\r\nContent-Length: x\r\n\r\n"},
      {"a bad chunk size",
       "POST /upload HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n"},
      {"bare LF line endings", "GET / HTTP/1.1\nHost: localhost\n\n"},
      {"NUL inside a header value", std::string("GET / HTTP/1.1\r\nHost: localhost\r\nX-A: a\0b\r\n\r\n", 45)},
      {"CR inside a header value", "GET / HTTP/1.1\r\nHost: localhost\r\nX-A: a\rb\r\n\r\n"},
      {"HTTP/0.9", "GET /\r\n\r\n"},
      {"HTTP/1.1 without Host", "GET / HTTP/1.1\r\n\r\n"},
      {"a target without a leading slash", "GET apis/metrics.k8s.io HTTP/1.1\r\nHost: localhost\r\n\r\n"},
      {"a space in the target", "GET /a b HTTP/1.1\r\nHost: localhost\r\n\r\n"},
  };
  std::atomic<int> handled{0};
  TestServer server;
  server.start([&](const HttpRequest& request) {
    ++handled;
    return echo(request);
  });
  for (const auto& c : cases) {
    INFO(c.name);
    Client client;
    require_connect(client, server);
    REQUIRE(client.write(c.bytes));
    Response r = require_response(client);
    CHECK(r.status == 400);
    CHECK(r.header("Connection") == std::optional<std::string>("close"));
    CHECK(r.header("Date").has_value());
    CHECK(r.body.rfind("400 Bad Request", 0) == 0);
    CHECK(client.wait_for_close(1s).status == ReadStatus::closed);
  }
  CHECK(handled == 0);

  // What is well formed still passes: HTTP/1.0 needs no Host, OPTIONS may ask for *.
  Client client;
  require_connect(client, server);
  REQUIRE(client.write("GET /old HTTP/1.0\r\n\r\n"));
  CHECK(require_response(client).status == 200);
  require_connect(client, server);
  REQUIRE(client.write("OPTIONS * HTTP/1.1\r\nHost: localhost\r\n\r\n"));
  CHECK(require_response(client).body == "OPTIONS *");
}

TEST_CASE("TlsServer answers 431 to a 70 KiB header line, which Beast's 16-bit field sizes cannot hold",
          "[integration][tls_server]") {
  const std::string token(70 * 1024, 'a');  // a long bearer token
  auto big_request = "GET /apis HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer " + token + "\r\n\r\n";
  SECTION("past the default limit (64 KiB)") {
    TestServer server;
    CHECK(server.options().max_header_bytes == 64 * 1024);
    server.start(echo);
    Client client;
    require_connect(client, server);
    REQUIRE(client.write(big_request));
    Response r = require_response(client);
    CHECK(r.status == 431);
    CHECK(r.body == "431 Request Header Fields Too Large");
    CHECK(r.header("Connection") == std::optional<std::string>("close"));
  }
  SECTION("under a larger limit: still an answer, not a dropped connection") {
    TestServer server([](TlsServerOptions& o) { o.max_header_bytes = 1 << 20; });
    server.start(echo);
    Client client;
    require_connect(client, server);
    REQUIRE(client.write(big_request));
    CHECK(require_response(client).status == 431);
    // The server lives on: many short fields adding up to more than 64 KiB are fine.
    std::string fields;
    for (int i = 0; i < 40; ++i) fields += "X-F" + std::to_string(i) + ": " + std::string(2000, 'b') + "\r\n";
    require_connect(client, server);
    REQUIRE(client.write(request("GET", "/many", fields)));
    CHECK(require_response(client).status == 200);
  }
}

TEST_CASE("TlsServer refuses a GET or HEAD with a body at once, before reading any of it",
          "[integration][tls_server]") {
  std::atomic<int> handled{0};
  TestServer server;  // max_body_bytes 3 MiB: the refusal is not the body limit's
  server.start([&](const HttpRequest& request) {
    ++handled;
    return echo(request);
  });
  for (const char* method : {"GET", "HEAD"}) {
    for (const char* framing : {"Content-Length: 3145728\r\n", "Transfer-Encoding: chunked\r\n"}) {
      INFO(method << " with " << framing);
      Client client;
      require_connect(client, server);
      // Only the head: an answer that waited for the 3 MiB would never come.
      REQUIRE(client.write(std::string(method) + " /apis HTTP/1.1\r\nHost: localhost\r\n" + framing + "\r\n"));
      const auto started = Clock::now();
      Response r = require_response(client, std::string_view(method) == "HEAD");
      CHECK(elapsed_since(started) < 1s);
      CHECK(r.status == 400);
      CHECK(r.header("Connection") == std::optional<std::string>("close"));
      auto closed = client.wait_for_close(1s);
      CHECK(closed.status == ReadStatus::closed);
      if (std::string_view(method) == "HEAD") CHECK(closed.bytes == 0);  // no body after HEAD's head
    }
  }
  CHECK(handled == 0);
  // Content-Length 0 is no body.
  Client client;
  require_connect(client, server);
  REQUIRE(client.write("GET /empty HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\n\r\n"));
  CHECK(require_response(client).status == 200);
}

TEST_CASE("TlsServer with max_body_bytes 0 (fedmetrics serve) reads no body at all", "[integration][tls_server]") {
  std::atomic<int> handled{0};
  TestServer server([](TlsServerOptions& o) { o.max_body_bytes = 0; });
  server.start([&](const HttpRequest& request) {
    ++handled;
    return echo(request);
  });
  Client client;
  require_connect(client, server);
  REQUIRE(client.write("POST /apis HTTP/1.1\r\nHost: localhost\r\nContent-Length: 3145728\r\n\r\n"));
  CHECK(require_response(client).status == 413);
  require_connect(client, server);
  REQUIRE(client.write(request("POST", "/apis", "", "")));  // Content-Length: 0
  CHECK(require_response(client).status == 200);
  CHECK(handled == 1);
}

TEST_CASE("TlsServer puts an IMF-fixdate Date on every answer", "[integration][tls_server]") {
  TestServer server;
  server.start(echo);
  Response r = get_once(server, "/dated");
  auto date = r.header("Date");
  REQUIRE(date);
  // "Tue, 24 Nov 2026 20:40:51 GMT"
  CHECK(date->size() == 29);
  CHECK(date->substr(date->size() - 4) == " GMT");
  CHECK(date->at(3) == ',');
}

namespace {

// Awaits a 10 s wait on another io_context's threads (as a proxied request
// awaits the kube client's), counting in `cut_short` a wait that ended early.
fedmetrics::async::Task<HttpResponse> await_elsewhere(fedmetrics::async::Executor clients,
                                                      std::shared_ptr<std::atomic<bool>> entered,
                                                      std::shared_ptr<std::atomic<int>> cut_short) {
  entered->store(true);
  auto on_clients =
      boost::asio::co_spawn(clients.impl()->executor, fedmetrics::async::sleep_for(10s), boost::asio::use_awaitable);
  const bool slept = co_await std::move(on_clients);
  if (!slept) ++*cut_short;
  co_return text(200, "too late");
}

}  // namespace

TEST_CASE("TlsServer: a handler awaiting another runtime's work when the server goes is cancelled and waited for",
          "[integration][tls_server]") {
  // A request in flight at shutdown awaits work on the client threads,
  // which outlive the server's io_contexts: the server cancels it and waits
  // for its end before its io_contexts go (under ASan, an answer coming back
  // later would touch a session of a destroyed io_context).
  bool abandonable = false;
  SECTION("plain") {}
  SECTION("abandon_when_client_closes") { abandonable = true; }
  Runtime clients;  // the client threads
  auto entered = std::make_shared<std::atomic<bool>>(false);
  auto cut_short = std::make_shared<std::atomic<int>>(0);
  std::optional<TestServer> server;
  server.emplace([&](TlsServerOptions& o) { o.abandon_when_client_closes = abandonable; });
  server->start([executor = clients.executor(), entered, cut_short](const HttpRequest&) {
    return await_elsewhere(executor, entered, cut_short);
  });
  Client client;
  require_connect(client, *server);
  REQUIRE(client.write(request("GET", "/held")));
  REQUIRE(eventually([&] { return entered->load(); }, 2s));
  const auto began = Clock::now();
  server->destroy();
  CHECK(elapsed_since(began) < 2s);  // the 10 s wait was cancelled, not waited out
  CHECK(cut_short->load() == 1);     // and had ended when destroy() returned
  server.reset();
  CHECK(client.wait_for_close(2s).status == ReadStatus::closed);
}

namespace {

// /slow answers after a 800 ms wait of its own; anything else is echoed.
fedmetrics::async::Task<HttpResponse> slow_or_echo(HttpRequest request) {
  if (request.target != "/slow") co_return co_await echo(std::move(request));
  co_await fedmetrics::async::sleep_for(800ms);
  co_return text(200, "finished");
}

// Waits 10 s, far past any grace period of these tests; counts in
// `cut_short` a wait that ended early (cancelled).
fedmetrics::async::Task<HttpResponse> outlast(std::shared_ptr<std::atomic<int>> cut_short) {
  const bool slept = co_await fedmetrics::async::sleep_for(10s);
  if (!slept) ++*cut_short;
  co_return text(200, "too late");
}

}  // namespace

TEST_CASE("TlsServer::shutdown refuses new connections, closes idle ones, and lets requests in flight finish",
          "[integration][tls_server]") {
  TestServer server;  // two threads: the idle connections below are on both
  server.start_threads(slow_or_echo);
  std::vector<std::unique_ptr<Client>> idle;
  for (int i = 0; i < 3; ++i) {
    idle.push_back(std::make_unique<Client>());
    require_connect(*idle.back(), server);
    REQUIRE(idle.back()->write(request("GET", "/before")));
    CHECK(require_response(*idle.back()).header("Connection") != "close");
  }
  Client busy;
  require_connect(busy, server);
  REQUIRE(busy.write(request("GET", "/slow")));
  std::this_thread::sleep_for(50ms);  // the slow request is with the handler

  const auto began = Clock::now();
  std::size_t left = 99;
  std::thread shutting_down([&] { left = server.server().shutdown(5s); });
  // The kept-alive connections between requests are closed unanswered, at
  // once: they do not wait for the busy one.
  for (auto& client : idle) CHECK(client->wait_for_close(2s).status == ReadStatus::closed);
  CHECK(elapsed_since(began) < 600ms);
  // The request in flight gets its answer, the connection's last.
  Response finished = require_response(busy);
  CHECK(finished.status == 200);
  CHECK(finished.body == "finished");
  CHECK(finished.header("Connection") == "close");
  busy.close();  // the server's close need not wait for ours
  shutting_down.join();
  CHECK(left == 0);
  CHECK(elapsed_since(began) >= 700ms);  // it waited for the request
  CHECK(elapsed_since(began) < 4s);      // and no longer
  CHECK(probe(server) == Probe::refused);
}

TEST_CASE("TlsServer::shutdown gives up on a request still unanswered after the grace period",
          "[integration][tls_server]") {
  auto cut_short = std::make_shared<std::atomic<int>>(0);
  TestServer server;
  // A handler that waits longer than the grace period.
  server.start_threads([cut_short](const HttpRequest&) { return outlast(cut_short); });
  Client client;
  require_connect(client, server);
  REQUIRE(client.write(request("GET", "/never")));
  std::this_thread::sleep_for(50ms);  // the request is with the handler
  const auto began = Clock::now();
  CHECK(server.server().shutdown(300ms) == 1);
  CHECK(elapsed_since(began) >= 300ms);
  CHECK(elapsed_since(began) < 2s);
  // Cancelled then: the connection closes unanswered, before the server stops.
  auto closed = client.wait_for_close(1s);
  CHECK(closed.status == ReadStatus::closed);
  CHECK(closed.bytes == 0);
  CHECK(cut_short->load() == 1);  // the handler saw its cancellation
  server.destroy();
}

TEST_CASE("TlsServer serves an absolute-form request target on its path, as Go's net/http",
          "[integration][tls_server]") {
  TestServer server;
  server.start(echo);
  Client client;
  require_connect(client, server);
  REQUIRE(client.write("GET https://fedmetrics:6443/apis/metrics.k8s.io?x=1 HTTP/1.1\r\nHost: fedmetrics\r\n\r\n"));
  Response r = require_response(client);
  CHECK(r.status == 200);
  CHECK(r.body == "GET /apis/metrics.k8s.io?x=1");
}

namespace {

// Answers once a 300 ms wait on the runtime's threads has ended, as a
// request answered by a member client does.
fedmetrics::async::Task<HttpResponse> answer_through(fedmetrics::async::Executor clients,
                                                     std::shared_ptr<std::atomic<bool>> entered) {
  entered->store(true);
  auto on_clients =
      boost::asio::co_spawn(clients.impl()->executor, fedmetrics::async::sleep_for(300ms), boost::asio::use_awaitable);
  const bool slept = co_await std::move(on_clients);
  co_return text(200, slept ? "answered" : "cut short");
}

}  // namespace

TEST_CASE("Runtime: a stop while a request is in flight answers it, then stops the loops before the clients",
          "[integration][tls_server][runtime]") {
  using fedmetrics::transport::Runtime;
  using fedmetrics::transport::Stage;
  Runtime runtime;
  std::mutex mutex;
  std::vector<std::string> stopped;
  auto note = [&](const std::string& what) {
    std::lock_guard lock(mutex);
    stopped.push_back(what);
  };
  TestServer server;
  auto entered = std::make_shared<std::atomic<bool>>(false);
  std::size_t left = 99;
  runtime.start(Stage::clients, "clients", {}, [&] { note("clients"); });
  runtime.start(
      Stage::server, "server",
      [&, clients = runtime.executor()] {
        server.start_threads([clients, entered](const HttpRequest&) { return answer_through(clients, entered); });
      },
      [&] {
        note("server draining");
        left = server.server().shutdown(5s);
        server.server().stop();
        server.server().join();
        note("server");
      });
  runtime.start(Stage::loops, "loops", {}, [&] { note("loops"); });

  Client client;
  require_connect(client, server);
  REQUIRE(client.write(request("GET", "/through-the-clients")));
  const auto until = Clock::now() + 2s;
  while (!entered->load() && Clock::now() < until) std::this_thread::sleep_for(5ms);
  REQUIRE(entered->load());  // the request is with the handler, waiting on the runtime's threads

  std::thread owner([&runtime] {
    runtime.request_stop();
    runtime.wait();
    runtime.stop();
  });
  Response answered = require_response(client);
  CHECK(answered.status == 200);
  CHECK(answered.body == "answered");  // the clients still ran while the server drained
  CHECK(answered.header("Connection") == "close");
  client.close();
  owner.join();
  CHECK(left == 0);
  CHECK(stopped == std::vector<std::string>{"loops", "server draining", "server", "clients"});
  CHECK_FALSE(runtime.liveness()->running);
}
