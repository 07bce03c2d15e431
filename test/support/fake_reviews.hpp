#pragma once
// The control plane's review API in memory (auth::ReviewClient): a
// TokenReview authenticates "alice" (group "devs") unless `authenticated` is
// off, a SubjectAccessReview allows unless `allowed` is off, `unreachable`
// fails every review with that error, and `held` keeps the answers until
// the test releases them (a review cancelled meanwhile ends at once).
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fedmetrics/auth/review_client.hpp"
#include "fedmetrics/transport/async.hpp"
#include "support/held.hpp"

namespace fedmetrics::testing {

class FakeReviews final : public auth::ReviewClient {
 public:
  bool authenticated = true;
  bool allowed = true;
  std::optional<std::string> unreachable;
  Held held;  // off by default

  async::Task<k8s::Expected<std::string>> post(std::string path, std::string body) override {
    {
      std::lock_guard lock(mutex_);
      bodies_.push_back(body);
    }
    co_await held.wait_cancellable();
    if (unreachable) co_return k8s::Error{*unreachable};
    using nlohmann::json;
    if (path.find("tokenreviews") != std::string::npos) {
      json status = authenticated
                        ? json{{"authenticated", true}, {"user", {{"username", "alice"}, {"groups", {"devs"}}}}}
                        : json{{"authenticated", false}};
      co_return json{{"apiVersion", "authentication.k8s.io/v1"}, {"kind", "TokenReview"}, {"status", status}}.dump();
    }
    co_return json{
        {"apiVersion", "authorization.k8s.io/v1"}, {"kind", "SubjectAccessReview"}, {"status", {{"allowed", allowed}}}}
        .dump();
  }

  // Every review document posted, in order.
  [[nodiscard]] std::vector<std::string> bodies() const {
    std::lock_guard lock(mutex_);
    return bodies_;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<std::string> bodies_;
};

}  // namespace fedmetrics::testing
