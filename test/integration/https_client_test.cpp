// The member-cluster client against the simulated member clusters, over real
// TLS on loopback: keep-alive reuse, every fault mode's classification,
// deadlines, token rotation, discovery, and the kubeconfig and Karmada member sources.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <mutex>
#include <regex>
#include <thread>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_future.hpp>
#include <nlohmann/json.hpp>

#include "child_process.hpp"
#include "fedmetrics/kube/https_client.hpp"
#include "fedmetrics/clusterclient/karmada_cluster_source.hpp"
#include "fedmetrics/clusterclient/kubeconfig_member_source.hpp"
#include "fedmetrics/clusterclient/rest_member_cluster.hpp"
#include "fedmetrics/transport/async.hpp"

using namespace fedmetrics;
using namespace fedmetrics::clusterclient;
using namespace fedmetrics::kube;
using namespace std::chrono_literals;
using Kind = k8s::ErrorKind;

namespace {

// One simulated world for the whole test program (starting it takes well under a second).
struct World {
  std::filesystem::path dir;
  std::unique_ptr<testing::ChildProcess> sim;
  std::map<std::string, ClusterEndpoint> members;

  World() {
    dir = std::filesystem::temp_directory_path() / ("fedmetrics-it-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir);
    sim = std::make_unique<testing::ChildProcess>(
        std::vector<std::string>{FEDMETRICS_BINARY, "sim", "--world",
                                 FEDMETRICS_SOURCE_DIR "/test/integration/faults.world.yaml", "--out-dir", dir.string(),
                                 // Every answer over 256 bytes gzipped (kube-apiserver: over 128 KiB), so
                                 // that every test here also goes through the client's inflation.
                                 "--compress-min-bytes", "256"});
    sim->read_until("world ready", 10s);
    auto loaded = load_kubeconfig((dir / "members.kubeconfig").string());
    if (!loaded) throw std::runtime_error(loaded.error().message);
    for (auto& e : *loaded) members[e.name] = e;
  }
  ~World() {
    sim.reset();
    std::filesystem::remove_all(dir);
  }
  static World& get() {
    static World world;
    return world;
  }
};

// Each test has its own client threads, joined when the test ends: a runtime
// that lived until exit would end its threads after OpenSSL's own atexit
// cleanup, leaking their per-thread error state (LeakSanitizer reports it).

HttpResult get_sync(HttpsClient& client, const std::string& path, std::chrono::milliseconds timeout) {
  std::promise<HttpResult> p;
  client.get(path, std::chrono::steady_clock::now() + timeout, [&p](HttpResult r) { p.set_value(std::move(r)); });
  return p.get_future().get();
}

// Runs a coroutine on the runtime's io_context (not the client's strand) and
// waits for its value.
template <class T>
T run_sync(ClientRuntime& rt, async::Task<T> task) {
  return boost::asio::co_spawn(rt.executor().impl()->executor, std::move(task), boost::asio::use_future).get();
}

// `count` requests in turn, each awaited before the next is sent.
async::Task<std::vector<HttpResult>> requests_in_turn(HttpsClient& client, std::string path, int count) {
  std::vector<HttpResult> results;
  for (int i = 0; i < count; ++i) {
    OutgoingRequest get;
    get.target = path;
    results.push_back(co_await client.request(std::move(get), std::chrono::steady_clock::now() + 2s));
  }
  co_return results;
}

// get_json's answer (in an optional: a co_spawned coroutine's value must be
// default-constructible).
async::Task<std::optional<k8s::Expected<nlohmann::json>>> json_from(HttpsClient& client, std::string path) {
  co_return co_await client.get_json(std::move(path), std::chrono::steady_clock::now() + 2s);
}

// A member call's result, in an optional as json_from's.
template <class T>
async::Task<std::optional<T>> optional_of(async::Task<T> task) {
  co_return co_await std::move(task);
}

const k8s::Error& expect_error(const HttpResult& r) {
  const auto* e = std::get_if<k8s::Error>(&r);
  if (!e) FAIL("expected an error, got HTTP " << std::get<HttpReply>(r).status);
  return *e;
}

}  // namespace

TEST_CASE("HttpsClient: keep-alive, one TLS handshake for many requests", "[integration][clusterclient]") {
  ClientRuntime rt(2);
  HttpsClient client(rt, World::get().members.at("healthy"));
  for (int i = 0; i < 20; ++i) {
    auto r = get_sync(client, "/apis/metrics.k8s.io/v1beta1/pods", 2s);
    REQUIRE(std::holds_alternative<HttpReply>(r));
    CHECK(std::get<HttpReply>(r).status == 200);
  }
  auto stats = client.stats();
  CHECK(stats.requests == 20);
  CHECK(stats.tls_handshakes == 1);
  CHECK(stats.idle_connections == 1);
}

TEST_CASE("HttpsClient: the member's certificate must name the server", "[integration][clusterclient]") {
  // The simulator's member certificates name localhost, the member and 127.0.0.1.
  ClientRuntime rt(1);
  auto endpoint = World::get().members.at("healthy");
  auto get = [&](const ClusterEndpoint& e) {
    HttpsClient client(rt, e);
    return get_sync(client, "/apis/metrics.k8s.io/v1beta1/pods", 3s);
  };
  SECTION("by IP address, as the kubeconfig says") { CHECK(std::holds_alternative<HttpReply>(get(endpoint))); }
  SECTION("by a DNS name the certificate has (tls-server-name)") {
    endpoint.tls_server_name = "healthy";
    CHECK(std::holds_alternative<HttpReply>(get(endpoint)));
  }
  SECTION("by a DNS name it does not have") {
    endpoint.tls_server_name = "someone-else.example";
    const auto r = get(endpoint);
    const auto& e = expect_error(r);
    CHECK(e.kind == Kind::Tls);
    CHECK(e.message.find("hostname mismatch") != std::string::npos);
  }
  SECTION("by an IP address it does not have") {
    endpoint.tls_server_name = "127.0.0.2";
    const auto r = get(endpoint);
    const auto& e = expect_error(r);
    CHECK(e.kind == Kind::Tls);
    CHECK(e.message.find("IP address mismatch") != std::string::npos);
  }
  SECTION("unless verification is off") {
    endpoint.tls_server_name = "someone-else.example";
    endpoint.insecure_skip_tls_verify = true;
    endpoint.ca_pem.clear();
    CHECK(std::holds_alternative<HttpReply>(get(endpoint)));
  }
}

TEST_CASE("HttpsClient: parallel requests share a bounded pool", "[integration][clusterclient]") {
  ClientRuntime rt(2);
  ClientOptions options;
  options.max_connections = 3;
  HttpsClient client(rt, World::get().members.at("healthy"), options);
  std::vector<std::promise<HttpResult>> promises(30);
  for (auto& p : promises)
    client.get("/apis/metrics.k8s.io/v1beta1/nodes", std::chrono::steady_clock::now() + 5s,
               [&p](HttpResult r) { p.set_value(std::move(r)); });
  for (auto& p : promises) {
    auto r = p.get_future().get();
    REQUIRE(std::holds_alternative<HttpReply>(r));
  }
  CHECK(client.stats().tls_handshakes <= 3);
  CHECK(client.stats().open_connections <= 3);
}

TEST_CASE("HttpsClient::request: a coroutine's requests share the pool, the statistics and the error kinds",
          "[integration][kube]") {
  ClientRuntime rt(2);
  auto& world = World::get();
  HttpsClient client(rt, world.members.at("healthy"));
  auto results = run_sync(rt, requests_in_turn(client, "/apis/metrics.k8s.io/v1beta1/nodes", 5));
  REQUIRE(results.size() == 5);
  for (const auto& r : results) {
    REQUIRE(std::holds_alternative<HttpReply>(r));
    CHECK(std::get<HttpReply>(r).status == 200);
  }
  auto stats = client.stats();
  CHECK(stats.requests == 5);
  CHECK(stats.tls_handshakes == 1);  // kept alive between the awaits
  CHECK(stats.in_flight == 0);
  CHECK(stats.outcomes["success"] == 5);
  CHECK(stats.latency_count == 5);

  HttpsClient refusing(rt, world.members.at("refusing"));
  auto refused = run_sync(rt, requests_in_turn(refusing, "/apis/metrics.k8s.io/v1beta1/nodes", 1));
  CHECK(expect_error(refused.at(0)).kind == Kind::Refused);
  CHECK(refusing.stats().failures == 1);
}

TEST_CASE("HttpsClient::request: the task holds the client, which may go before it is awaited", "[integration][kube]") {
  ClientRuntime rt(1);
  auto client = std::make_unique<HttpsClient>(rt, World::get().members.at("healthy"));
  OutgoingRequest get;
  get.target = "/apis/metrics.k8s.io/v1beta1/nodes";
  auto task = client->request(std::move(get), std::chrono::steady_clock::now() + 2s);
  client.reset();
  auto r = run_sync(rt, std::move(task));
  REQUIRE(std::holds_alternative<HttpReply>(r));
  CHECK(std::get<HttpReply>(r).status == 200);
}

TEST_CASE("HttpsClient::get_json: the document, or an error of its kind", "[integration][kube]") {
  ClientRuntime rt(2);
  auto& world = World::get();
  auto get_json = [&](const char* member) {
    HttpsClient client(rt, world.members.at(member));
    return *run_sync(rt, json_from(client, "/apis/metrics.k8s.io/v1beta1/nodes"));
  };
  auto healthy = get_json("healthy");
  REQUIRE(healthy.ok());
  CHECK(healthy->at("kind") == "NodeMetricsList");

  auto expired = get_json("expired");
  REQUIRE_FALSE(expired.ok());
  CHECK(expired.error().kind == Kind::HttpStatus);
  CHECK(expired.error().http_status == 401);
  REQUIRE(expired.error().status.has_value());
  CHECK(expired.error().status->reason == "Unauthorized");
  CHECK(expired.error().message.rfind("HTTP 401: ", 0) == 0);

  auto garbage = get_json("garbage");
  REQUIRE_FALSE(garbage.ok());
  CHECK(garbage.error().kind == Kind::MalformedResponse);

  auto refusing = get_json("refusing");
  REQUIRE_FALSE(refusing.ok());
  CHECK(refusing.error().kind == Kind::Refused);
}

TEST_CASE("HttpsClient: every fault of a member maps to its error class", "[integration][clusterclient]") {
  ClientRuntime rt(2);
  auto& world = World::get();
  struct Row {
    const char* member;
    Kind kind;
    int http_status;
  };
  const Row rows[] = {
      {"refusing", Kind::Refused, 0},     {"garbage", Kind::MalformedResponse, 0}, {"impostor", Kind::Tls, 0},
      {"expired", Kind::HttpStatus, 401}, {"failing", Kind::HttpStatus, 500},
  };
  for (const auto& row : rows) {
    CAPTURE(row.member);
    auto member = std::make_shared<RestMemberCluster>(rt, world.members.at(row.member));
    auto result = *run_sync(rt, optional_of(member->pod_metrics("", {}, {}, std::chrono::steady_clock::now() + 2s)));
    REQUIRE_FALSE(result.ok());
    const auto* e = &result.error();
    CHECK(e->kind == row.kind);
    CHECK(e->http_status == row.http_status);
    CHECK_FALSE(e->message.empty());
    if (row.http_status == 401) {
      REQUIRE(e->status.has_value());
      CHECK(e->status->reason == "Unauthorized");
    }
  }
}

// The deadline, not the member, ends a request: the slow member answers after
// 300 ms (faults.world.yaml), so a request given 100 ms that lasts until then
// waited for the answer; the black hole never answers, so one that outlives
// its deadline by a second waited for some other timer. The bounds leave a
// loaded machine (a sanitizer build, two cores shared) its scheduling delays;
// an exact bound on the overshoot would measure the machine, not the client.
TEST_CASE("HttpsClient: deadlines hold, a black hole included", "[integration][clusterclient]") {
  ClientRuntime rt(2);
  auto& world = World::get();
  struct Row {
    const char* member;
    std::chrono::milliseconds timeout;
    std::chrono::milliseconds bound;  // took must stay below it
  };
  const Row rows[] = {{"slow", 100ms, 300ms}, {"blackhole", 100ms, 1100ms}, {"blackhole", 250ms, 1250ms}};
  for (const auto& row : rows) {
    CAPTURE(row.member, row.timeout.count());
    HttpsClient client(rt, world.members.at(row.member));
    auto start = std::chrono::steady_clock::now();
    auto r = get_sync(client, "/apis/metrics.k8s.io/v1beta1/pods", row.timeout);
    auto took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
    CAPTURE(took.count());
    CHECK(expect_error(r).kind == Kind::Timeout);
    CHECK(took >= row.timeout - 5ms);
    CHECK(took < row.bound);
  }
  // And the slow member answers when given the time.
  HttpsClient slow(rt, world.members.at("slow"));
  CHECK(std::holds_alternative<HttpReply>(get_sync(slow, "/version", 2s)));
}

TEST_CASE("HttpsClient: a rotated token file is picked up after a 401", "[integration][clusterclient]") {
  ClientRuntime rt(2);
  auto endpoint = World::get().members.at("healthy");
  auto token_file = World::get().dir / "rotating-token";
  std::string good = endpoint.token;
  std::ofstream(token_file) << "not-the-token\n";
  endpoint.token.clear();
  endpoint.token_file = token_file.string();
  HttpsClient client(rt, endpoint);
  auto before = get_sync(client, "/apis/metrics.k8s.io/v1beta1/pods", 2s);
  REQUIRE(std::holds_alternative<HttpReply>(before));
  CHECK(std::get<HttpReply>(before).status == 401);
  std::ofstream(token_file) << good << "\n";
  auto after = get_sync(client, "/apis/metrics.k8s.io/v1beta1/pods", 2s);
  REQUIRE(std::holds_alternative<HttpReply>(after));
  CHECK(std::get<HttpReply>(after).status == 200);
}

TEST_CASE("HttpsClient: a token file that changes is re-read before any 401", "[integration][clusterclient]") {
  ClientRuntime rt(2);
  auto endpoint = World::get().members.at("healthy");
  auto token_file = World::get().dir / "changing-token";
  std::string good = endpoint.token;
  std::ofstream(token_file) << good << "\n";
  endpoint.token.clear();
  endpoint.token_file = token_file.string();
  HttpsClient client(rt, endpoint);
  auto ok = get_sync(client, "/apis/metrics.k8s.io/v1beta1/pods", 2s);
  REQUIRE(std::holds_alternative<HttpReply>(ok));
  CHECK(std::get<HttpReply>(ok).status == 200);
  // A rotation to a token the member does not know shows up as a 401 without any retry needed to see it.
  std::this_thread::sleep_for(1100ms);
  std::ofstream(token_file) << "revoked-token\n";
  std::filesystem::last_write_time(token_file, std::filesystem::file_time_type::clock::now() + 1s);
  auto rejected = get_sync(client, "/apis/metrics.k8s.io/v1beta1/pods", 2s);
  REQUIRE(std::holds_alternative<HttpReply>(rejected));
  CHECK(std::get<HttpReply>(rejected).status == 401);
}

TEST_CASE("RestMemberCluster: typed calls and capability discovery", "[integration][clusterclient]") {
  ClientRuntime rt(2);
  auto& world = World::get();
  auto healthy = std::make_shared<RestMemberCluster>(rt, world.members.at("healthy"));
  std::promise<bool> discovered;
  healthy->refresh_capabilities(std::chrono::steady_clock::now() + 2s,
                                [&discovered](bool ok, std::string) { discovered.set_value(ok); });
  REQUIRE(discovered.get_future().get());
  auto caps = healthy->capabilities();
  REQUIRE(caps);
  CHECK(caps->resource_metrics);
  CHECK(caps->custom_metrics == k8s::CustomMetricsVersion::V1beta2);
  CHECK(caps->external_metrics);
  CHECK(std::any_of(caps->custom_metric_resources.begin(), caps->custom_metric_resources.end(),
                    [](const k8s::APIResource& r) { return r.name == "pods/http_requests"; }));

  auto listed = *run_sync(rt, optional_of(healthy->pod_metrics("default", *k8s::LabelSelector::parse("app=web"), {},
                                                               std::chrono::steady_clock::now() + 2s)));
  REQUIRE(listed.ok());
  CHECK(listed->size() == 2);  // 4 replicas divided 1:1 over healthy and nocustom

  aggregator::CustomMetricsQuery query;
  query.resource = {"", "pods"};
  query.namespace_name = "default";
  query.name = "*";
  query.metric = "http_requests";
  auto values = *run_sync(rt, optional_of(healthy->custom_metrics(query, std::chrono::steady_clock::now() + 2s)));
  REQUIRE(values.ok());
  CHECK(values->size() == 2);

  // The probe: any answer is one; a member that refuses connections is not there.
  auto answering = *run_sync(rt, optional_of(healthy->probe(std::chrono::steady_clock::now() + 2s)));
  CHECK_FALSE(answering.has_value());
  auto refusing = std::make_shared<RestMemberCluster>(rt, world.members.at("refusing"));
  auto refused = *run_sync(rt, optional_of(refusing->probe(std::chrono::steady_clock::now() + 2s)));
  REQUIRE(refused.has_value());
  CHECK(refused->kind == aggregator::MemberError::Kind::Refused);

  auto nocustom = std::make_shared<RestMemberCluster>(rt, world.members.at("nocustom"));
  std::promise<bool> discovered2;
  nocustom->refresh_capabilities(std::chrono::steady_clock::now() + 2s,
                                 [&discovered2](bool ok, std::string) { discovered2.set_value(ok); });
  REQUIRE(discovered2.get_future().get());
  CHECK(nocustom->capabilities()->resource_metrics);
  CHECK_FALSE(nocustom->capabilities()->custom_metrics.has_value());
  CHECK_FALSE(nocustom->capabilities()->external_metrics);
}

namespace {
// A kubeconfig with one context per given member (their CA is the world's ca.crt).
void write_kubeconfig(const std::filesystem::path& file, const std::vector<std::string>& names) {
  auto& world = World::get();
  std::ofstream out(file);
  out << "apiVersion: v1\nkind: Config\nclusters:\n";
  for (const auto& n : names)
    out << "- name: " << n << "\n  cluster: {server: \"" << world.members.at(n).server
        << "\", certificate-authority: ca.crt}\n";
  out << "users:\n";
  for (const auto& n : names) out << "- name: " << n << "\n  user: {token: \"" << world.members.at(n).token << "\"}\n";
  out << "contexts:\n";
  for (const auto& n : names) out << "- name: " << n << "\n  context: {cluster: " << n << ", user: " << n << "}\n";
}

std::vector<std::string> names_of(const aggregator::MemberList& list) {
  std::vector<std::string> out;
  for (const auto& m : list) out.push_back(m->name());
  return out;
}
}  // namespace

TEST_CASE("KubeconfigMemberSource: members follow the file", "[integration][clusterclient]") {
  ClientRuntime rt(2);
  auto& world = World::get();
  auto file = world.dir / "source.kubeconfig";
  write_kubeconfig(file, {"healthy", "slow"});
  KubeconfigSourceOptions options;
  options.kubeconfig_files = {file.string()};
  options.file_check_interval = 100ms;
  KubeconfigMemberSource source(rt, options);
  CHECK(names_of(*source.members()) == std::vector<std::string>{"healthy", "slow"});
  source.wait_for_first_discovery(3s);
  for (const auto& m : *source.members()) CHECK(m->capabilities() != nullptr);
  auto healthy_before = source.members()->front();

  // Rewritten with a member removed and one added: the snapshot follows within
  // seconds, and the unchanged member keeps its client (and its connections).
  std::this_thread::sleep_for(20ms);  // a distinct modification time
  write_kubeconfig(file, {"healthy", "nocustom"});
  auto deadline = std::chrono::steady_clock::now() + 5s;
  while (std::chrono::steady_clock::now() < deadline &&
         names_of(*source.members()) != std::vector<std::string>{"healthy", "nocustom"})
    std::this_thread::sleep_for(50ms);
  CHECK(names_of(*source.members()) == std::vector<std::string>{"healthy", "nocustom"});
  CHECK(source.members()->front() == healthy_before);
}

namespace {
// Waits up to 5 s for the source's member names to be `expected`.
bool names_become(const aggregator::MemberSource& source, const std::vector<std::string>& expected) {
  auto deadline = std::chrono::steady_clock::now() + 5s;
  while (std::chrono::steady_clock::now() < deadline && names_of(*source.members()) != expected)
    std::this_thread::sleep_for(20ms);
  return names_of(*source.members()) == expected;
}

HttpResult send_sync(HttpsClient& client, OutgoingRequest request) {
  std::promise<HttpResult> p;
  client.send(std::move(request), std::chrono::steady_clock::now() + 5s,
              [&p](HttpResult r) { p.set_value(std::move(r)); });
  return p.get_future().get();
}
}  // namespace

TEST_CASE("KarmadaClusterSource: members follow the Cluster objects", "[integration][clusterclient]") {
  ClientRuntime rt(2);
  auto& world = World::get();
  KarmadaSourceOptions options;
  options.kubeconfig_file = (world.dir / "karmada.kubeconfig").string();
  // Secrets are re-read once a minute only: the Cluster changes below can
  // only come through the watch within the checks' bound.
  options.poll_interval = 60s;
  options.access = GENERATE(MemberAccess::Direct, MemberAccess::Proxy);
  KarmadaClusterSource source(rt, options);
  // The simulated control plane marks a member NotReady when its fault makes
  // it unreachable (refuse, blackhole, wrongCertificate): those are left out.
  const std::vector<std::string> ready{"badgzip", "expired", "failing", "garbage", "healthy", "nocustom", "slow"};
  source.wait_for_first_discovery(3s);  // the first poll's members, each discovered once
  CHECK(names_of(*source.members()) == ready);
  auto healthy = source.members()->at(4);
  REQUIRE(healthy->name() == "healthy");
  REQUIRE(healthy->capabilities() != nullptr);  // discovery went through, directly or by the proxy
  CHECK(healthy->capabilities()->resource_metrics);

  // A Cluster deleted, then created again: the snapshot follows within a poll,
  // and the members that did not change keep their clients.
  HttpsClient control(rt, *load_kubeconfig_current_context(options.kubeconfig_file));
  const std::string path = "/apis/cluster.karmada.io/v1alpha1/clusters/nocustom";
  auto got = get_sync(control, path, 5s);
  REQUIRE(std::get<HttpReply>(got).status == 200);
  auto object = nlohmann::json::parse(std::get<HttpReply>(got).body);
  for (const char* field : {"resourceVersion", "uid", "creationTimestamp"}) object["metadata"].erase(field);
  OutgoingRequest remove;
  remove.method = "DELETE";
  remove.target = path;
  auto removed_at = std::chrono::steady_clock::now();
  REQUIRE(std::get<HttpReply>(send_sync(control, remove)).status == 200);
  CHECK(names_become(source, {"badgzip", "expired", "failing", "garbage", "healthy", "slow"}));
  CHECK(std::chrono::steady_clock::now() - removed_at < 4s);  // the watch event, not the 60 s poll
  OutgoingRequest create;
  create.method = "POST";
  create.target = "/apis/cluster.karmada.io/v1alpha1/clusters";
  create.body = object.dump();
  create.content_type = "application/json";
  auto created_at = std::chrono::steady_clock::now();
  REQUIRE(std::get<HttpReply>(send_sync(control, create)).status == 201);
  CHECK(names_become(source, ready));
  CHECK(std::chrono::steady_clock::now() - created_at < 4s);
  CHECK(source.members()->at(4) == healthy);
  source.stop();
}

TEST_CASE("KarmadaClusterSource: a changed --karmada-kubeconfig is read again", "[integration][clusterclient]") {
  ClientRuntime rt(1);
  auto& world = World::get();
  const auto good = (world.dir / "karmada.kubeconfig").string();
  std::ifstream in(good);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto token_at = text.find("token: ");
  REQUIRE(token_at != std::string::npos);
  const auto token_end = text.find('\n', token_at);
  // The same file with a token the control plane does not know: every poll is a 401.
  const std::string wrong = text.substr(0, token_at) + "token: not-a-known-token" + text.substr(token_end);
  const auto file =
      std::filesystem::temp_directory_path() / ("fedmetrics-karmada-kubeconfig-" + std::to_string(::getpid()));
  auto write = [&](const std::string& content) {
    std::ofstream out(file, std::ios::trunc);
    out << content;
  };
  write(wrong);
  KarmadaSourceOptions options;
  options.kubeconfig_file = file.string();
  options.poll_interval = 100ms;
  KarmadaClusterSource source(rt, options);
  source.wait_for_first_discovery(300ms);  // the first polls are refused: nothing to wait for but the timeout
  CHECK(source.members()->empty());        // the set starts empty
  // A rotated token written into the file: the next polls use it.
  std::this_thread::sleep_for(20ms);  // a distinct modification time
  write(text);
  CHECK(names_become(source, {"badgzip", "expired", "failing", "garbage", "healthy", "nocustom", "slow"}));
  source.stop();
  std::filesystem::remove(file);
}

TEST_CASE("KarmadaClusterSource: neither its start nor its stop waits for a control plane that does not answer",
          "[integration][clusterclient]") {
  ClientRuntime rt(1);
  // A listener that never accepts: the kernel completes the TCP handshake,
  // and the TLS handshake of every request waits for its deadline.
  boost::asio::io_context io;
  boost::asio::ip::tcp::acceptor silent(io, {boost::asio::ip::make_address("127.0.0.1"), 0});
  std::ifstream in((World::get().dir / "karmada.kubeconfig").string());
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto file =
      std::filesystem::temp_directory_path() / ("fedmetrics-silent-kubeconfig-" + std::to_string(::getpid()));
  {
    std::ofstream out(file, std::ios::trunc);
    out << std::regex_replace(text, std::regex("server: [^\n]*"),
                              "server: https://127.0.0.1:" + std::to_string(silent.local_endpoint().port()));
  }
  KarmadaSourceOptions options;
  options.kubeconfig_file = file.string();
  options.poll_timeout = 3s;
  const auto started = std::chrono::steady_clock::now();
  KarmadaClusterSource source(rt, options);
  CHECK(std::chrono::steady_clock::now() - started < 1s);  // the first poll is the loop's, not the constructor's
  CHECK(source.members()->empty());
  std::this_thread::sleep_for(200ms);  // the poll and the watch's list are out
  const auto stopping = std::chrono::steady_clock::now();
  source.stop();
  CHECK(std::chrono::steady_clock::now() - stopping < 1s);  // both cancelled, not waited for to their deadline
  std::filesystem::remove(file);
}

namespace {

struct Collected {
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<std::string> lines;
  std::optional<HttpResult> end;
};

LineStreamCallbacks collect_into(const std::shared_ptr<Collected>& c) {
  LineStreamCallbacks callbacks;
  callbacks.on_line = [c](std::string line) {
    std::lock_guard lock(c->mutex);
    c->lines.push_back(std::move(line));
    c->changed.notify_all();
  };
  callbacks.on_end = [c](HttpResult end) {
    std::lock_guard lock(c->mutex);
    REQUIRE_FALSE(c->end.has_value());  // exactly once
    c->end = std::move(end);
    c->changed.notify_all();
  };
  return callbacks;
}

template <class Pred>
bool wait_for(Collected& c, std::chrono::milliseconds timeout, Pred pred) {
  std::unique_lock lock(c.mutex);
  return c.changed.wait_for(lock, timeout, [&] { return pred(c); });
}

}  // namespace

#include "fedmetrics/transport/self_signed.hpp"
#include "fedmetrics/transport/tls_server.hpp"

namespace {
// No body: Content-Length: 0, the connection kept.
async::Task<transport::HttpResponse> answer_without_body(int status) {
  transport::HttpResponse response;
  response.status = status;
  co_return response;
}
}  // namespace

TEST_CASE("HttpsClient: a watch refused with an empty body ends at once", "[integration][clusterclient]") {
  // A header that ends its message (Content-Length: 0, or 204) on a kept-alive
  // connection: the client must not wait for a body that never comes.
  auto dir = std::filesystem::temp_directory_path() / ("fedmetrics-empty-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  auto cert = transport::ensure_self_signed_certificate(dir.string(), {"localhost"}, {"127.0.0.1"});
  int status = 403;
  transport::TlsServerOptions server_options;
  server_options.bind_address = "127.0.0.1";
  server_options.port = 0;
  server_options.cert_file = cert.cert_file;
  server_options.key_file = cert.key_file;
  server_options.threads = 1;
  transport::TlsServer server(server_options,
                              [&status](transport::HttpRequest) { return answer_without_body(status); });
  std::thread serving([&] { server.run(); });
  SECTION("403") { status = 403; }
  SECTION("204") { status = 204; }
  ClusterEndpoint endpoint;
  endpoint.name = "empty";
  endpoint.server = "https://127.0.0.1:" + std::to_string(server.port());
  std::ifstream pem(cert.cert_file);
  endpoint.ca_pem.assign(std::istreambuf_iterator<char>(pem), {});
  {
    ClientRuntime rt(1);
    HttpsClient client(rt, endpoint);
    auto c = std::make_shared<Collected>();
    const auto started = std::chrono::steady_clock::now();
    auto stream = client.stream_lines("/api/v1/pods?watch=true", started + 5s, 10s, collect_into(c));
    REQUIRE(wait_for(*c, 3s, [](Collected& s) { return s.end.has_value(); }));
    CHECK(std::chrono::steady_clock::now() - started < 1s);
    const auto* reply = std::get_if<HttpReply>(&*c->end);
    REQUIRE(reply != nullptr);
    CHECK(reply->status == status);
    CHECK(reply->body.empty());
  }
  server.stop();
  serving.join();
  std::filesystem::remove_all(dir);
}

namespace {

// The control plane, as kube-apiserver, refuses objects in a namespace that does not exist.
void create_namespace(HttpsClient& control, const std::string& ns) {
  OutgoingRequest create;
  create.method = "POST";
  create.target = "/api/v1/namespaces";
  create.content_type = "application/json";
  create.body = nlohmann::json{{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ns}}}}.dump();
  REQUIRE(std::get<HttpReply>(send_sync(control, create)).status == 201);
}

OutgoingRequest lease_create(const std::string& ns, const std::string& name, const std::string& label) {
  OutgoingRequest create;
  create.method = "POST";
  create.target = "/apis/coordination.k8s.io/v1/namespaces/" + ns + "/leases";
  create.content_type = "application/json";
  create.body = nlohmann::json{{"apiVersion", "coordination.k8s.io/v1"},
                               {"kind", "Lease"},
                               {"metadata", {{"name", name}, {"namespace", ns}, {"labels", {{"app", label}}}}},
                               {"spec", {{"holderIdentity", "test"}}}}
                    .dump();
  return create;
}

OutgoingRequest lease_delete(const std::string& ns, const std::string& name) {
  OutgoingRequest remove;
  remove.method = "DELETE";
  remove.target = "/apis/coordination.k8s.io/v1/namespaces/" + ns + "/leases/" + name;
  return remove;
}

}  // namespace

TEST_CASE("HttpsClient: a watch is read line by line as events happen", "[integration][clusterclient]") {
  ClientRuntime rt(1);
  auto& world = World::get();
  HttpsClient control(rt, *load_kubeconfig_current_context((world.dir / "karmada.kubeconfig").string()));
  const std::string ns = "stream-" + std::to_string(::getpid());
  create_namespace(control, ns);
  auto c = std::make_shared<Collected>();
  auto stream =
      control.stream_lines("/apis/coordination.k8s.io/v1/namespaces/" + ns + "/leases?watch=true&timeoutSeconds=3",
                           std::chrono::steady_clock::now() + 5s, 10s, collect_into(c));
  // Each event arrives while the response is still open.
  REQUIRE(std::get<HttpReply>(send_sync(control, lease_create(ns, "one", "x"))).status == 201);
  REQUIRE(wait_for(*c, 3s, [](Collected& s) { return s.lines.size() == 1; }));
  CHECK(nlohmann::json::parse(c->lines[0])["type"] == "ADDED");
  REQUIRE(std::get<HttpReply>(send_sync(control, lease_delete(ns, "one"))).status == 200);
  REQUIRE(wait_for(*c, 3s, [](Collected& s) { return s.lines.size() == 2; }));
  CHECK(nlohmann::json::parse(c->lines[1])["type"] == "DELETED");
  CHECK_FALSE(c->end.has_value());
  // The server's timeoutSeconds ends the stream normally: HTTP 200.
  REQUIRE(wait_for(*c, 6s, [](Collected& s) { return s.end.has_value(); }));
  REQUIRE(std::holds_alternative<HttpReply>(*c->end));
  CHECK(std::get<HttpReply>(*c->end).status == 200);
}

TEST_CASE("HttpsClient: a stream's refusal, silence and cancellation each end it once",
          "[integration][clusterclient]") {
  ClientRuntime rt(1);
  auto& world = World::get();
  HttpsClient control(rt, *load_kubeconfig_current_context((world.dir / "karmada.kubeconfig").string()));

  SECTION("a refusal comes back with its Status") {
    auto c = std::make_shared<Collected>();
    control.stream_lines("/apis/no.such.group/v1/things?watch=true", std::chrono::steady_clock::now() + 5s, 10s,
                         collect_into(c));
    REQUIRE(wait_for(*c, 6s, [](Collected& s) { return s.end.has_value(); }));
    REQUIRE(std::holds_alternative<HttpReply>(*c->end));
    CHECK(std::get<HttpReply>(*c->end).status == 404);
    CHECK(nlohmann::json::parse(std::get<HttpReply>(*c->end).body)["kind"] == "Status");
  }
  SECTION("a stream silent for longer than the idle timeout is ended as a timeout") {
    auto c = std::make_shared<Collected>();
    auto started = std::chrono::steady_clock::now();
    control.stream_lines("/apis/coordination.k8s.io/v1/namespaces/quiet/leases?watch=true&timeoutSeconds=60",
                         started + 5s, 300ms, collect_into(c));
    REQUIRE(wait_for(*c, 5s, [](Collected& s) { return s.end.has_value(); }));
    auto elapsed = std::chrono::steady_clock::now() - started;
    CHECK(expect_error(*c->end).kind == Kind::Timeout);
    CHECK(elapsed >= 300ms);
    CHECK(elapsed < 1500ms);
  }
  SECTION("cancel() ends it at once") {
    auto c = std::make_shared<Collected>();
    auto stream = control.stream_lines("/apis/coordination.k8s.io/v1/namespaces/quiet/leases?watch=true",
                                       std::chrono::steady_clock::now() + 5s, 60s, collect_into(c));
    std::this_thread::sleep_for(200ms);  // connected and waiting for events
    auto cancelled_at = std::chrono::steady_clock::now();
    stream->cancel();
    REQUIRE(wait_for(*c, 2s, [](Collected& s) { return s.end.has_value(); }));
    CHECK(std::chrono::steady_clock::now() - cancelled_at < 500ms);
    const auto& e = expect_error(*c->end);
    CHECK(e.kind == Kind::Timeout);
    CHECK(e.message.find("cancelled") != std::string::npos);
  }
  SECTION("an unreachable server fails by the header deadline") {
    auto endpoint = *load_kubeconfig_current_context((world.dir / "karmada.kubeconfig").string());
    endpoint.server = world.members.at("blackhole").server;
    endpoint.insecure_skip_tls_verify = true;
    endpoint.ca_pem.clear();
    HttpsClient hole(rt, endpoint);
    auto c = std::make_shared<Collected>();
    auto started = std::chrono::steady_clock::now();
    hole.stream_lines("/api?watch=true", started + 400ms, 60s, collect_into(c));
    REQUIRE(wait_for(*c, 3s, [](Collected& s) { return s.end.has_value(); }));
    CHECK(expect_error(*c->end).kind == Kind::Timeout);
    CHECK(std::chrono::steady_clock::now() - started < 1400ms);
  }
}

#include "fedmetrics/kube/reflector.hpp"
#include "fedmetrics/transport/gzip.hpp"

TEST_CASE("HttpsClient: gzip answers are asked for and inflated, within the size cap", "[integration][clusterclient]") {
  ClientRuntime rt(1);
  auto& world = World::get();
  const std::string path = "/api/v1/namespaces/default/pods";

  // The caller's own Accept-Encoding: the body comes as sent, compressed.
  HttpsClient client(rt, world.members.at("healthy"));
  OutgoingRequest raw;
  raw.target = path;
  raw.headers = {{"Accept-Encoding", "gzip"}};
  raw.want_headers = true;
  auto raw_reply = std::get<HttpReply>(send_sync(client, raw));
  REQUIRE(raw_reply.status == 200);
  bool compressed = false;
  for (const auto& [name, value] : raw_reply.headers) compressed |= name == "Content-Encoding" && value == "gzip";
  REQUIRE(compressed);
  auto inflated = transport::gzip_decompress(raw_reply.body, 64 << 20);
  REQUIRE(inflated);

  // By default the client asks for gzip itself and hands over the inflated body, without Content-Encoding.
  OutgoingRequest plain;
  plain.target = path;
  plain.want_headers = true;
  auto reply = std::get<HttpReply>(send_sync(client, plain));
  REQUIRE(reply.status == 200);
  CHECK(reply.body == *inflated);
  for (const auto& [name, value] : reply.headers) CHECK(name != "Content-Encoding");
  CHECK(nlohmann::json::parse(reply.body)["kind"] == "PodList");

  // (disable-compression is checked on the malformedGzip member below, where it changes the outcome.)

  // The cap holds on the inflated size: a compressed body under it that inflates past it is TooLarge.
  REQUIRE(raw_reply.body.size() < inflated->size());
  ClientOptions small;
  small.max_response_bytes = (raw_reply.body.size() + inflated->size()) / 2;
  HttpsClient capped(rt, world.members.at("healthy"), small);
  auto result = get_sync(capped, path, 5s);
  const auto& e = expect_error(result);
  CHECK(e.kind == Kind::TooLarge);
  CHECK_THAT(e.message, Catch::Contains("once inflated"));
}

TEST_CASE("HttpsClient: a gzip body that fails its check is a malformed response", "[integration][clusterclient]") {
  ClientRuntime rt(1);
  auto& world = World::get();
  HttpsClient client(rt, world.members.at("badgzip"));
  auto bad = get_sync(client, "/api/v1/namespaces/default/pods", 5s);
  const auto& e = expect_error(bad);
  CHECK(e.kind == Kind::MalformedResponse);
  CHECK_THAT(e.message, Catch::Contains("malformed gzip body"));
  // Without gzip asked for, the same member answers normally.
  auto endpoint = world.members.at("badgzip");
  endpoint.disable_compression = true;
  HttpsClient identity(rt, endpoint);
  auto result = get_sync(identity, "/api/v1/namespaces/default/pods", 5s);
  REQUIRE(std::holds_alternative<HttpReply>(result));
  CHECK(std::get<HttpReply>(result).status == 200);
}

TEST_CASE("RestMemberCluster: the health probe says why a member is not healthy", "[integration][clusterclient]") {
  ClientRuntime rt(1);
  auto& world = World::get();
  struct Row {
    const char* member;
    bool healthy;
    const char* reason;  // a part of it
  };
  const Row rows[] = {
      {"healthy", true, "ok"},
      {"failing", false, "GET /readyz: HTTP 500: [-]simulated-fault failed: reason withheld"},
      {"refusing", false, "GET /readyz: connect"},
      {"blackhole", false, "deadline exceeded"},
      {"impostor", false, "TLS"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.member);
    RestMemberCluster member(rt, world.members.at(row.member));
    CHECK(member.last_health() == nullptr);
    std::promise<MemberHealth> p;
    auto started = std::chrono::steady_clock::now();
    member.probe_health(started + 500ms, [&p](const MemberHealth& h) { p.set_value(h); });
    auto health = p.get_future().get();
    CHECK(std::chrono::steady_clock::now() - started < 1500ms);  // bounded by the deadline (a black hole would hang)
    CHECK(health.healthy == row.healthy);
    CHECK_THAT(health.reason, Catch::Contains(row.reason));
    REQUIRE(member.last_health() != nullptr);
    CHECK(member.last_health()->healthy == row.healthy);
  }
}

TEST_CASE("Reflector: lists, then follows the watch, resuming after the server ends it",
          "[integration][clusterclient]") {
  ClientRuntime rt(1);
  auto& world = World::get();
  auto control =
      std::make_shared<HttpsClient>(rt, *load_kubeconfig_current_context((world.dir / "karmada.kubeconfig").string()));
  const std::string ns = "reflect-" + std::to_string(::getpid());
  create_namespace(*control, ns);
  REQUIRE(std::get<HttpReply>(send_sync(*control, lease_create(ns, "before", "x"))).status == 201);
  REQUIRE(std::get<HttpReply>(send_sync(*control, lease_create(ns, "other-label", "y"))).status == 201);

  struct Seen {
    std::mutex mutex;
    std::condition_variable changed;
    int firsts = 0;
    std::vector<std::string> added;
  };
  auto seen = std::make_shared<Seen>();
  ReflectorOptions options;
  options.what = "test leases";
  options.collection = ResourcePath::in_group("coordination.k8s.io", "v1", "leases", ns).with("labelSelector", "app=x");
  options.watch_timeout = 1s;  // the server ends each watch after a second: resumed, not relisted
  Reflector reflector(control, options, [seen](const ReflectorChange& change) {
    std::lock_guard lock(seen->mutex);
    if (change.first) ++seen->firsts;
    for (const auto& object : change.added) seen->added.push_back(object["metadata"]["name"]);
    seen->changed.notify_all();
  });
  auto names = [&reflector] {
    std::vector<std::string> out;
    for (const auto& item : reflector.items()) out.push_back(item["metadata"]["name"]);
    return out;
  };
  auto eventually = [](auto pred) {
    for (auto until = std::chrono::steady_clock::now() + 3s; std::chrono::steady_clock::now() < until;
         std::this_thread::sleep_for(20ms))
      if (pred()) return true;
    return pred();
  };
  CHECK_FALSE(reflector.synced());
  reflector.start(rt.executor());
  REQUIRE(eventually([&] { return reflector.synced(); }));
  CHECK(names() == std::vector<std::string>{"before"});  // the label selector applies to the list

  REQUIRE(std::get<HttpReply>(send_sync(*control, lease_create(ns, "during", "x"))).status == 201);
  REQUIRE(std::get<HttpReply>(send_sync(*control, lease_create(ns, "ignored", "y"))).status == 201);
  CHECK(eventually([&] { return names() == std::vector<std::string>{"before", "during"}; }));

  // Across several server-side watch timeouts: one list, several watches.
  std::this_thread::sleep_for(2500ms);
  REQUIRE(std::get<HttpReply>(send_sync(*control, lease_create(ns, "later", "x"))).status == 201);
  REQUIRE(std::get<HttpReply>(send_sync(*control, lease_delete(ns, "before"))).status == 200);
  CHECK(eventually([&] { return names() == std::vector<std::string>{"during", "later"}; }));
  auto stats = reflector.stats();
  CHECK(stats.lists == 1);
  CHECK(stats.watches >= 3);
  CHECK(stats.failures == 0);
  {
    std::lock_guard lock(seen->mutex);
    CHECK(seen->firsts == 1);
    CHECK(seen->added == std::vector<std::string>{"before", "during", "later"});
  }
  reflector.stop();
  // Nothing is reported after stop().
  REQUIRE(std::get<HttpReply>(send_sync(*control, lease_create(ns, "after-stop", "x"))).status == 201);
  std::this_thread::sleep_for(200ms);
  std::lock_guard lock(seen->mutex);
  CHECK(seen->added.size() == 3);
}

TEST_CASE("Reflector: stopped while its watch is open, it ends at once", "[integration][clusterclient]") {
  ClientRuntime rt(1);
  auto& world = World::get();
  auto control =
      std::make_shared<HttpsClient>(rt, *load_kubeconfig_current_context((world.dir / "karmada.kubeconfig").string()));
  ReflectorOptions options;
  options.what = "test clusters";
  options.collection = ResourcePath::in_group("cluster.karmada.io", "v1alpha1", "clusters");
  options.watch_timeout = 60s;  // the server would keep the watch open for a minute
  Reflector reflector(control, options, nullptr);
  reflector.start(rt.executor());
  for (auto until = std::chrono::steady_clock::now() + 3s;
       std::chrono::steady_clock::now() < until && reflector.stats().watches == 0;)
    std::this_thread::sleep_for(10ms);
  REQUIRE(reflector.stats().watches == 1);
  std::this_thread::sleep_for(100ms);  // the watch's answer has begun
  const auto stopping = std::chrono::steady_clock::now();
  reflector.stop();
  CHECK(std::chrono::steady_clock::now() - stopping < 1s);  // the stream is closed, not waited for
  CHECK(control->stats().in_flight == 0);
}

TEST_CASE("Reflector: a failing server is retried with backoff, keeping what it knew", "[integration][clusterclient]") {
  ClientRuntime rt(1);
  auto& world = World::get();
  auto endpoint = *load_kubeconfig_current_context((world.dir / "karmada.kubeconfig").string());
  endpoint.token = "not-a-known-token";  // every request is a 401
  auto control = std::make_shared<HttpsClient>(rt, endpoint);
  ReflectorOptions options;
  options.what = "test clusters";
  options.collection = ResourcePath::in_group("cluster.karmada.io", "v1alpha1", "clusters");
  options.min_backoff = 100ms;
  options.max_backoff = 400ms;
  Reflector reflector(control, options, nullptr);
  reflector.start(rt.executor());
  std::this_thread::sleep_for(1500ms);
  auto stats = reflector.stats();
  CHECK_FALSE(reflector.synced());
  // 100 + 200 + 400 + 400 ms ...: about five tries in 1.5 s, not hundreds.
  CHECK(stats.failures >= 3);
  CHECK(stats.failures <= 7);
  reflector.stop();
}
