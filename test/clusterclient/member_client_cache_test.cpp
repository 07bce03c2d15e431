// The member client cache: one client per member, made again when the
// member's endpoint changes, dropped when unused; a client that cannot be
// made leaves nothing behind.
#include <catch2/catch.hpp>

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>

#include "fedmetrics/clusterclient/member_client_cache.hpp"

namespace fedmetrics::clusterclient {
namespace {

using namespace std::chrono_literals;

struct Client {
  kube::ClusterEndpoint endpoint;
};

kube::ClusterEndpoint endpoint(const std::string& name, const std::string& token = "t") {
  kube::ClusterEndpoint e;
  e.name = name;
  e.server = "https://" + name + ".example:6443";
  e.token = token;
  return e;
}

struct Counting {
  int made = 0;
  MemberClientCache<Client> cache{[this](const kube::ClusterEndpoint& e) {
                                    ++made;
                                    if (e.token == "unusable") throw std::runtime_error("member: bad CA");
                                    return std::make_shared<Client>(Client{e});
                                  },
                                  10min};
};

TEST_CASE("MemberClientCache: a client per member, made again when its endpoint changes") {
  Counting c;
  const auto t0 = std::chrono::steady_clock::time_point{} + 1h;
  auto a = c.cache.get(endpoint("a"), t0);
  CHECK(c.cache.get(endpoint("a"), t0 + 1s) == a);  // the same endpoint: the same client
  auto b = c.cache.get(endpoint("b"), t0 + 1s);
  CHECK(b != a);
  CHECK(c.made == 2);
  auto rotated = c.cache.get(endpoint("a", "rotated"), t0 + 2s);
  CHECK(rotated != a);
  CHECK(rotated->endpoint.token == "rotated");
  CHECK(c.made == 3);
  CHECK(c.cache.size() == 2);
}

TEST_CASE("MemberClientCache: a client unused for the period is dropped") {
  Counting c;
  const auto t0 = std::chrono::steady_clock::time_point{} + 1h;
  auto a = c.cache.get(endpoint("a"), t0);
  c.cache.get(endpoint("b"), t0);
  c.cache.get(endpoint("b"), t0 + 9min);  // b is used, a is not
  c.cache.get(endpoint("b"), t0 + 11min);
  CHECK(c.cache.size() == 1);                          // a left
  CHECK(c.cache.get(endpoint("a"), t0 + 11min) != a);  // made anew when asked again
  CHECK(c.made == 3);
}

TEST_CASE("MemberClientCache: a client that cannot be made is an error and no entry") {
  Counting c;
  const auto t0 = std::chrono::steady_clock::time_point{} + 1h;
  auto a = c.cache.get(endpoint("a"), t0);
  CHECK_THROWS_WITH(c.cache.get(endpoint("a", "unusable"), t0), "member: bad CA");
  CHECK(c.cache.size() == 0);  // the old client is not served with the new credentials
  CHECK(c.cache.get(endpoint("a"), t0) != a);
}

}  // namespace
}  // namespace fedmetrics::clusterclient
