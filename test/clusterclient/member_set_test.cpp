// MemberSet's reconciliation: which member clients survive a new list of
// endpoints. No member answers here (the endpoints point at a closed port on
// loopback); discovery failing in the background is expected and harmless.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <future>

#include "fedmetrics/clusterclient/member_set.hpp"

using namespace fedmetrics::clusterclient;
namespace kube = fedmetrics::kube;
using namespace std::chrono_literals;

namespace {

kube::ClusterEndpoint endpoint(const std::string& name) {
  kube::ClusterEndpoint e;
  e.name = name;
  e.server = "https://127.0.0.1:9";
  e.insecure_skip_tls_verify = true;
  e.token = "token-" + name;
  return e;
}

MemberSetOptions quiet() {
  MemberSetOptions o;
  o.discovery_interval = 1h;
  o.discovery_timeout = 200ms;
  return o;
}

std::vector<std::string> names_of(const fedmetrics::aggregator::MemberList& list) {
  std::vector<std::string> out;
  for (const auto& m : list) out.push_back(m->name());
  return out;
}

}  // namespace

TEST_CASE("MemberSet: reconcile adds, keeps, replaces and drops members", "[clusterclient][member_set]") {
  kube::ClientRuntime runtime(1);
  MemberSet set(runtime, quiet());
  CHECK(set.members()->empty());
  set.reconcile({endpoint("a"), endpoint("b")}, OnBadEndpoint::Throw);
  auto first = set.members();
  REQUIRE(names_of(*first) == std::vector<std::string>{"a", "b"});

  auto rotated = endpoint("b");
  rotated.token = "rotated";
  set.reconcile({rotated, endpoint("c")}, OnBadEndpoint::KeepPrevious);
  auto second = set.members();
  REQUIRE(names_of(*second) == std::vector<std::string>{"b", "c"});
  CHECK(second->at(0) != first->at(1));  // new credentials: a new client
  auto* b = dynamic_cast<RestMemberCluster*>(second->at(0).get());
  REQUIRE(b != nullptr);
  CHECK(b->endpoint().token == "rotated");
  CHECK(names_of(*first) == std::vector<std::string>{"a", "b"});  // a snapshot never changes under its reader

  set.reconcile({endpoint("c"), rotated}, OnBadEndpoint::KeepPrevious);
  auto third = set.members();
  CHECK(third->at(0) == second->at(0));  // unchanged: the same client, its pool and capabilities
  CHECK(third->at(1) == second->at(1));

  set.wait_for_first_discovery(2s);
  set.stop();
  CHECK(set.members()->empty());
}

TEST_CASE("MemberSet: an endpoint the client cannot use", "[clusterclient][member_set]") {
  kube::ClientRuntime runtime(1);
  MemberSet set(runtime, quiet());
  auto bad = endpoint("b");
  bad.insecure_skip_tls_verify = false;
  bad.ca_pem = "not a certificate";

  // At start-up: an exception naming it, and nothing changes.
  CHECK_THROWS_WITH(set.reconcile({endpoint("a"), bad}, OnBadEndpoint::Throw),
                    Catch::StartsWith("member b: certificate-authority is not a PEM certificate"));
  CHECK(set.members()->empty());
  CHECK_THROWS_WITH(set.reconcile({endpoint("a"), endpoint("a")}, OnBadEndpoint::Throw), "member \"a\" is given twice");
  CHECK(set.members()->empty());

  // Later: the member keeps its previous endpoint; a new one is left out; the rest is applied.
  set.reconcile({endpoint("a"), endpoint("b")}, OnBadEndpoint::Throw);
  auto before = set.members();
  auto bad_c = bad;
  bad_c.name = "c";
  set.reconcile({endpoint("a"), bad, bad_c, endpoint("d")}, OnBadEndpoint::KeepPrevious);
  auto after = set.members();
  REQUIRE(names_of(*after) == std::vector<std::string>{"a", "b", "d"});
  CHECK(after->at(1) == before->at(1));
  set.reconcile({endpoint("a"), endpoint("a"), endpoint("b")}, OnBadEndpoint::KeepPrevious);  // the first one wins
  CHECK(names_of(*set.members()) == std::vector<std::string>{"a", "b"});
}

TEST_CASE("MemberSet: the snapshot holds the members left out, with why, and never a member among them",
          "[clusterclient][member_set][left_out]") {
  kube::ClientRuntime runtime(1);
  MemberSet set(runtime, quiet());
  using fedmetrics::aggregator::LeftOutMember;
  set.reconcile({endpoint("a")}, OnBadEndpoint::Throw,
                {{"c", "Cluster NotReady (ClusterNotReachable)"},
                 {"b", "Cluster has no Ready condition yet"},
                 {"a", "stale: a is a member"}});
  auto snapshot = set.snapshot();
  CHECK(names_of(snapshot->members) == std::vector<std::string>{"a"});
  CHECK(snapshot->left_out == std::vector<LeftOutMember>{{"b", "Cluster has no Ready condition yet"},
                                                         {"c", "Cluster NotReady (ClusterNotReachable)"}});
  CHECK(set.members()->size() == 1);  // the same snapshot's members

  // An endpoint the client cannot use, with no previous one: left out, with the client's reason.
  auto bad = endpoint("d");
  bad.insecure_skip_tls_verify = false;
  bad.ca_pem = "not a certificate";
  set.reconcile({endpoint("a"), bad}, OnBadEndpoint::KeepPrevious);
  snapshot = set.snapshot();
  CHECK(names_of(snapshot->members) == std::vector<std::string>{"a"});
  REQUIRE(snapshot->left_out.size() == 1);
  CHECK(snapshot->left_out[0].name == "d");
  CHECK_THAT(snapshot->left_out[0].reason,
             Catch::StartsWith("its endpoint cannot be used: certificate-authority is not a PEM certificate"));

  // Ready again: a member, no longer left out.
  set.reconcile({endpoint("a"), endpoint("c")}, OnBadEndpoint::KeepPrevious);
  CHECK(names_of(set.snapshot()->members) == std::vector<std::string>{"a", "c"});
  CHECK(set.snapshot()->left_out.empty());
  set.stop();
}

namespace {

// A port on loopback that accepts connections and never answers: a member
// whose discovery takes as long as its deadline.
struct SilentListener {
  SilentListener() {
    fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t size = sizeof address;
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&address), size) == 0);
    REQUIRE(::listen(fd, 16) == 0);
    REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size) == 0);
    port = ntohs(address.sin_port);
  }
  ~SilentListener() { ::close(fd); }
  int fd = -1;
  int port = 0;
};

}  // namespace

TEST_CASE("MemberSet: when_discovered calls back once every member had a discovery attempt",
          "[clusterclient][member_set]") {
  kube::ClientRuntime runtime(1);
  MemberSet set(runtime, quiet());
  set.reconcile({endpoint("a"), endpoint("b")}, OnBadEndpoint::Throw);
  std::promise<void> ready;
  const auto asked = std::chrono::steady_clock::now();
  set.when_discovered(1h, [&] { ready.set_value(); });
  // Both members refuse the connection: their first attempts end at once, long before the timeout.
  REQUIRE(ready.get_future().wait_for(10s) == std::future_status::ready);
  CHECK(std::chrono::steady_clock::now() - asked < 10s);
  set.stop();
}

TEST_CASE("MemberSet: when_discovered calls back at its timeout when a member does not answer",
          "[clusterclient][member_set]") {
  SilentListener silent;
  kube::ClientRuntime runtime(1);
  auto options = quiet();
  options.discovery_timeout = 1h;
  MemberSet set(runtime, options);
  auto member = endpoint("silent");
  member.server = "https://127.0.0.1:" + std::to_string(silent.port);
  set.reconcile({member}, OnBadEndpoint::Throw);
  std::promise<void> ready;
  const auto asked = std::chrono::steady_clock::now();
  set.when_discovered(200ms, [&] { ready.set_value(); });
  REQUIRE(ready.get_future().wait_for(10s) == std::future_status::ready);
  CHECK(std::chrono::steady_clock::now() - asked >= 200ms);  // not before: the member's attempt has not ended
  set.stop();
}

TEST_CASE("MemberSet: endpoint_of names where a member is reached", "[clusterclient][member_set]") {
  kube::ClientRuntime runtime(1);
  MemberSet set(runtime, quiet());
  set.reconcile({endpoint("a")}, OnBadEndpoint::Throw);
  REQUIRE(set.endpoint_of("a"));
  CHECK(*set.endpoint_of("a") == endpoint("a"));
  CHECK_FALSE(set.endpoint_of("b"));
  auto rotated = endpoint("a");
  rotated.token = "rotated";
  set.reconcile({rotated}, OnBadEndpoint::KeepPrevious);
  CHECK(set.endpoint_of("a")->token == "rotated");
  set.stop();
  CHECK_FALSE(set.endpoint_of("a"));
}
