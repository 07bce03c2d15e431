#pragma once
// A bounded cache of review answers with a time to live, as Go's delegating
// authenticator and authorizer keep them: TokenReview results (success and
// failure) and SubjectAccessReview allow/deny decisions for 10 s each
// (apiserver pkg/server/options authentication.go, authorization.go). Keys:
// token_cache_key(token) for TokenReview, subject_access_review_body() for
// SAR. The clock is passed in. Thread-safe.
#include <chrono>
#include <cstddef>
#include <iterator>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

namespace fedmetrics::auth {

// The TokenReview cache key of a bearer token: its SHA-256 digest (32 bytes),
// never the token itself, so that a full cache holds 4,096 x 32 bytes of keys
// however long the tokens are, and no token stays in memory after its review.
// k8s.io/apiserver's cached token authenticator keys by a hash of the token
// too (an HMAC-SHA-256 with a per-process random key); a plain SHA-256 is
// enough here since the cache is in-process and never exposed. Empty if the
// digest could not be made: the caller must then not use the cache.
[[nodiscard]] std::string token_cache_key(std::string_view token);

template <class Value>
class ReviewCache {
 public:
  using Clock = std::chrono::steady_clock;

  explicit ReviewCache(Clock::duration ttl = std::chrono::seconds(10), std::size_t capacity = 4096)
      : ttl_(ttl), capacity_(capacity == 0 ? 1 : capacity) {}

  // The value stored under `key` if it has not expired at `now`.
  [[nodiscard]] std::optional<Value> get(const std::string& key, Clock::time_point now) const {
    std::lock_guard lock(mutex_);
    auto it = entries_.find(key);
    if (it == entries_.end() || it->second.expires <= now) return std::nullopt;
    return it->second.value;
  }

  // Stores (or replaces) `key`, expiring at now + ttl. Expired entries go
  // first; when still full, the oldest one.
  void put(const std::string& key, Value value, Clock::time_point now) {
    std::lock_guard lock(mutex_);
    if (auto it = entries_.find(key); it != entries_.end()) {
      order_.erase(it->second.position);
      entries_.erase(it);
    }
    // One TTL for all: insertion order is expiry order, so the expired
    // entries are at the front of order_.
    while (!order_.empty() && (entries_.at(order_.front()).expires <= now || entries_.size() >= capacity_)) {
      entries_.erase(order_.front());
      order_.pop_front();
    }
    order_.push_back(key);
    entries_.emplace(key, Entry{std::move(value), now + ttl_, std::prev(order_.end())});
  }

  [[nodiscard]] std::size_t size() const {
    std::lock_guard lock(mutex_);
    return entries_.size();
  }

 private:
  struct Entry {
    Value value;
    Clock::time_point expires;
    std::list<std::string>::iterator position;
  };
  const Clock::duration ttl_;
  const std::size_t capacity_;
  mutable std::mutex mutex_;
  std::list<std::string> order_;  // keys, oldest first
  std::unordered_map<std::string, Entry> entries_;
};

}  // namespace fedmetrics::auth
