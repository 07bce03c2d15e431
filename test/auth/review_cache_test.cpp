// The review cache: time to live against a clock passed in, replacement,
// and the capacity bound (expired entries go first, then the oldest).
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "fedmetrics/auth/review_cache.hpp"

using namespace fedmetrics::auth;
using namespace std::chrono_literals;
using Cache = ReviewCache<std::string>;

TEST_CASE("Auth: cached reviews expire after their time to live", "[auth][cache]") {
  Cache cache(10s);
  const Cache::Clock::time_point t0{};
  CHECK_FALSE(cache.get("token", t0));
  cache.put("token", "jane", t0);
  CHECK(cache.get("token", t0) == "jane");
  CHECK(cache.get("token", t0 + 9999ms) == "jane");
  CHECK_FALSE(cache.get("token", t0 + 10s));
  // Putting again restarts the time to live and replaces the value.
  cache.put("token", "john", t0 + 10s);
  CHECK(cache.get("token", t0 + 15s) == "john");
  CHECK(cache.size() == 1);
}

TEST_CASE("Auth: a full review cache drops expired entries, then the oldest", "[auth][cache]") {
  Cache cache(10s, 3);
  const Cache::Clock::time_point t0{};
  cache.put("a", "1", t0);
  cache.put("b", "2", t0 + 1s);
  cache.put("c", "3", t0 + 2s);
  cache.put("a", "1'", t0 + 3s);  // a is now the newest
  cache.put("d", "4", t0 + 4s);   // full: b, the oldest, goes
  CHECK_FALSE(cache.get("b", t0 + 4s));
  CHECK(cache.get("c", t0 + 4s) == "3");
  CHECK(cache.get("a", t0 + 4s) == "1'");
  CHECK(cache.get("d", t0 + 4s) == "4");
  CHECK(cache.size() == 3);
  // Later, c and a have expired: both go, d and e stay.
  cache.put("e", "5", t0 + 13s);
  CHECK(cache.size() == 2);
  CHECK(cache.get("d", t0 + 13s) == "4");
  CHECK(cache.get("e", t0 + 13s) == "5");
}

TEST_CASE("Auth: the review cache is safe to share between threads", "[auth][cache]") {
  Cache cache(10s, 64);
  const Cache::Clock::time_point t0{};
  std::atomic<int> wrong{0};  // Catch's assertions are not thread-safe
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&cache, &wrong, t0, t] {
      for (int i = 0; i < 2000; ++i) {
        const std::string key = std::to_string((i * 7 + t) % 100);
        cache.put(key, key, t0 + std::chrono::milliseconds(i));
        auto v = cache.get(key, t0 + std::chrono::milliseconds(i));
        if (v && *v != key) ++wrong;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  CHECK(wrong == 0);
  CHECK(cache.size() <= 64);
}

namespace {
std::string hex(const std::string& bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out += kHex[c >> 4];
    out += kHex[c & 0xF];
  }
  return out;
}
}  // namespace

TEST_CASE("Auth: the token cache is keyed by the token's SHA-256, never the token", "[auth][cache]") {
  // FIPS 180-2's test vector.
  CHECK(hex(token_cache_key("abc")) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  const std::string long_token(64 * 1024, 't');
  const std::string key = token_cache_key(long_token);
  CHECK(key.size() == 32);
  CHECK(key.find("tttt") == std::string::npos);
  CHECK(token_cache_key(long_token) == key);
  CHECK(token_cache_key(long_token + "u") != key);

  // 5,000 distinct 64 KiB tokens: the cache holds its capacity of 32-byte keys.
  ReviewCache<std::string> cache(10s, 4096);
  const ReviewCache<std::string>::Clock::time_point t0{};
  std::string token = long_token;
  for (int i = 0; i < 5000; ++i) {
    token.replace(0, std::to_string(i).size(), std::to_string(i));
    cache.put(token_cache_key(token), "jane", t0);
  }
  CHECK(cache.size() == 4096);
  CHECK(cache.get(token_cache_key(token), t0) == "jane");
}
