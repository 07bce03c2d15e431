// HttpsClient against a TlsServer in process that closes kept-alive
// connections the way API servers do: after an idle timeout (kube-apiserver:
// 90 s, here a few hundred milliseconds), and at the moment a request
// arrives on an old connection (here: set_certificate, which closes every
// kept-alive connection when its next request comes, unanswered). A
// connection the peer closed is never handed out, and a request that meets
// one anyway is sent again only when it is replayable (retry_policy.hpp).
#include <catch2/catch.hpp>

#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <future>
#include <memory>
#include <string>
#include <thread>

#include "fedmetrics/kube/https_client.hpp"
#include "fedmetrics/transport/self_signed.hpp"
#include "fedmetrics/transport/tls_server.hpp"
#include "kubeclient/rest_json.hpp"

using namespace fedmetrics;
using namespace fedmetrics::kube;
using namespace std::chrono_literals;
using Kind = k8s::ErrorKind;

namespace {

// A server on 127.0.0.1 that counts the requests its handler saw and
// answers each with 200 and a JSON object naming the request's method.
class ClosingServer {
 public:
  explicit ClosingServer(std::chrono::milliseconds idle_timeout) {
    char name[] = "/tmp/fedmetrics-reuse-test-XXXXXX";
    if (::mkdtemp(name) == nullptr) throw std::runtime_error("mkdtemp failed");
    dir_ = name;
    certs_ = transport::ensure_self_signed_certificate(dir_, {"localhost"}, {"127.0.0.1"});
    transport::TlsServerOptions o;
    o.bind_address = "127.0.0.1";
    o.port = 0;
    o.cert_file = certs_.cert_file;
    o.key_file = certs_.key_file;
    o.threads = 1;
    o.idle_timeout = idle_timeout;
    server_ = std::make_unique<transport::TlsServer>(
        o, [this](transport::HttpRequest request) { return answer(std::move(request)); });
    runner_ = std::thread([this] { server_->run(); });
  }
  ~ClosingServer() {
    server_->stop();
    runner_.join();
    server_.reset();
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  ClosingServer(const ClosingServer&) = delete;
  ClosingServer& operator=(const ClosingServer&) = delete;

  // Every kept-alive connection is closed when its next request arrives, unanswered.
  void close_kept_alive_on_next_request() { server_->set_certificate(certs_.cert_file, certs_.key_file); }
  [[nodiscard]] int handled() const { return handled_.load(); }

  [[nodiscard]] ClusterEndpoint endpoint() const {
    ClusterEndpoint e;
    e.name = "member2";
    e.server = "https://127.0.0.1:" + std::to_string(server_->port());
    e.ca_pem = read(certs_.cert_file);
    return e;
  }

 private:
  static std::string read(const std::string& path) {
    std::ifstream in(path);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }
  // The handler: 200 and a JSON object naming the request's method.
  async::Task<transport::HttpResponse> answer(transport::HttpRequest request) {
    ++handled_;
    transport::HttpResponse r;
    r.status = 200;
    r.content_type = "application/json";
    r.body = "{\"method\":\"" + request.method + "\"}";
    co_return r;
  }
  std::string dir_;
  transport::CertificatePaths certs_;
  std::unique_ptr<transport::TlsServer> server_;
  std::thread runner_;
  std::atomic<int> handled_{0};
};

HttpResult send_sync(HttpsClient& client, const std::string& method, bool replayable) {
  OutgoingRequest request;
  request.method = method;
  request.target = "/apis/authorization.k8s.io/v1/subjectaccessreviews";
  if (method != "GET") {
    request.body = "{}";
    request.content_type = "application/json";
  }
  request.replayable = replayable;
  std::promise<HttpResult> p;
  client.send(std::move(request), std::chrono::steady_clock::now() + 3s,
              [&p](HttpResult r) { p.set_value(std::move(r)); });
  return p.get_future().get();
}

void require_ok(const HttpResult& r) {
  if (const auto* e = std::get_if<k8s::Error>(&r)) FAIL("expected 200, got: " << e->message);
  REQUIRE(std::get<HttpReply>(r).status == 200);
}

// A client of "the control plane" with one kept-alive connection in its
// pool, which the server closes, unanswered, when the next request arrives.
struct ClosingUnderNextRequest {
  ClosingUnderNextRequest() {
    require_ok(send_sync(client, "GET", false));
    REQUIRE(server.handled() == 1);
    server.close_kept_alive_on_next_request();
  }
  static ClientOptions control_plane() {
    ClientOptions options;
    options.peer_name = "the control plane";
    return options;
  }
  ClosingServer server{10s};
  ClientRuntime rt{1};
  HttpsClient client{rt, server.endpoint(), control_plane()};
};

}  // namespace

TEST_CASE("HttpsClient: a connection the server closed while idle is never reused", "[integration][kube]") {
  ClosingServer server(300ms);
  ClientRuntime rt(1);
  HttpsClient client(rt, server.endpoint());
  // A POST nobody marked replayable: it must not meet the dead connection at all.
  require_ok(send_sync(client, "POST", false));
  std::this_thread::sleep_for(800ms);  // the server closed the idle connection (close_notify, FIN)
  require_ok(send_sync(client, "POST", false));
  require_ok(send_sync(client, "POST", false));
  auto stats = client.stats();
  CHECK(stats.tls_handshakes == 2);
  CHECK(stats.retries == 0);
  CHECK(stats.idle_closed == 1);
  CHECK(stats.failures == 0);
  CHECK(server.handled() == 3);
}

TEST_CASE("HttpsClient: idle connections are closed after the client's idle timeout", "[integration][kube]") {
  ClosingServer server(10s);
  ClientRuntime rt(1);
  ClientOptions options;
  options.idle_connection_timeout = 200ms;
  HttpsClient client(rt, server.endpoint(), options);
  require_ok(send_sync(client, "GET", false));
  CHECK(client.stats().idle_connections == 1);
  std::this_thread::sleep_for(700ms);
  // Closed by the client's own timer, with no request to find it.
  auto stats = client.stats();
  CHECK(stats.idle_connections == 0);
  CHECK(stats.open_connections == 0);
  CHECK(stats.idle_closed == 1);
  require_ok(send_sync(client, "GET", false));
  CHECK(client.stats().tls_handshakes == 2);
}

TEST_CASE("HttpsClient: a request that meets a connection closing under it is retried only when replayable",
          "[integration][kube]") {
  ClosingUnderNextRequest closing;
  auto& [server, rt, client] = closing;

  SECTION("a replayable POST (a SubjectAccessReview) is sent again on a new connection") {
    require_ok(send_sync(client, "POST", true));
    CHECK(client.stats().retries == 1);
    CHECK(client.stats().tls_handshakes == 2);
    CHECK(server.handled() == 2);  // the first attempt never reached the handler
  }
  SECTION("a GET is replayable by its method") {
    require_ok(send_sync(client, "GET", false));
    CHECK(client.stats().retries == 1);
  }
  SECTION("a POST nobody marked replayable is not sent twice, and the error names the peer") {
    auto r = send_sync(client, "POST", false);
    const auto* e = std::get_if<k8s::Error>(&r);
    REQUIRE(e != nullptr);
    CHECK(e->kind == Kind::Refused);
    CHECK(e->message.find("connection closed by the control plane") != std::string::npos);
    CHECK(e->message.find("the member") == std::string::npos);
    CHECK(client.stats().retries == 0);
    CHECK(server.handled() == 1);
  }
}

TEST_CASE("HttpsClient: a member's errors name the member", "[integration][kube]") {
  ClosingServer server(10s);
  ClientRuntime rt(1);
  HttpsClient client(rt, server.endpoint());
  require_ok(send_sync(client, "GET", false));
  server.close_kept_alive_on_next_request();
  auto r = send_sync(client, "PUT", false);
  const auto* e = std::get_if<k8s::Error>(&r);
  REQUIRE(e != nullptr);
  CHECK(e->message.find("connection closed by member2") != std::string::npos);
}

// Which control-plane and member-HPA writes are sent twice (kubeclient/rest_json.cpp):
// only a merge PATCH, which sets the same fields again. A PUT carries the
// resourceVersion it read, so a replay of one the server applied would fail
// with 409 and report a scale, a Lease renewal or a member HPA update as
// failed when it was not; a POST would create a second Event or Lease; a
// DELETE answered 404 the second time. Each request meets a kept-alive
// connection that the server closes when the request arrives, unanswered.
TEST_CASE("send_json: only a merge PATCH is sent again when the control plane closes the connection under it",
          "[integration][kube]") {
  const auto [method, replayed] =
      GENERATE(table<std::string, bool>({{"PATCH", true}, {"PUT", false}, {"POST", false}, {"DELETE", false}}));
  CAPTURE(method);
  ClosingUnderNextRequest closing;
  auto& [server, rt, client] = closing;

  std::promise<kubeclient::JsonReply> answered;
  auto scale = ResourcePath::in_group("apps", "v1", "deployments", "default", "nginx");
  scale.subresource = "scale";
  kubeclient::send_json(client, method, scale, "application/json",
                        R"({"metadata":{"resourceVersion":"7"},"spec":{"replicas":3}})",
                        std::chrono::steady_clock::now() + 3s,
                        [&answered](kubeclient::JsonReply reply) { answered.set_value(std::move(reply)); });
  auto [status, doc] = answered.get_future().get();
  if (replayed) {
    REQUIRE(doc);
    CHECK(status == 200);
    CHECK((*doc)["method"] == method);
    CHECK(client.stats().retries == 1);
    CHECK(server.handled() == 2);  // the GET, then the PATCH once, on a new connection
  } else {
    REQUIRE_FALSE(doc);
    CHECK(status == 0);
    CHECK(doc.error().message.find(method + " /apis/apps/v1/namespaces/default/deployments/nginx/scale: ") == 0);
    CHECK(client.stats().retries == 0);
    CHECK(server.handled() == 1);  // never sent a second time
  }
}
