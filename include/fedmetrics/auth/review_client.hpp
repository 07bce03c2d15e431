#pragma once
// Where the reviews go: the control plane's authentication.k8s.io and
// authorization.k8s.io APIs, as the request gate asks them. The composition
// root gives the HTTPS implementation; tests a fake (test/support).
#include <string>

#include "fedmetrics/k8s/expected.hpp"
#include "fedmetrics/transport/task.hpp"

namespace fedmetrics::auth {

class ReviewClient {
 public:
  virtual ~ReviewClient() = default;
  // POSTs a TokenReview or SubjectAccessReview document to `path`: the
  // answer's body, or an error naming what failed. Answered by the client's
  // own deadline, on the awaiting coroutine's executor.
  virtual async::Task<k8s::Expected<std::string>> post(std::string path, std::string body) = 0;
};

}  // namespace fedmetrics::auth
