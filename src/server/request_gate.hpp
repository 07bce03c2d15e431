#pragma once
// Who is asking, and may they: every request passes here before the
// ApiHandler, as through a delegating apiserver's authentication and
// authorization filters (k8s.io/apiserver pkg/endpoints/filters; docs/api.md,
// "Authentication and authorization").
//   authentication, first success wins: request-header (the aggregator's
//   front-proxy certificate vouching for X-Remote-User/Group), x509 client
//   certificates (client-ca-file), bearer tokens (TokenReview, cached);
//   nobody: 401, except on the always-allowed health paths.
//   authorization: always-allowed paths and groups, discovery for every
//   authenticated user, otherwise a SubjectAccessReview (cached): 403 unless
//   allowed.
// The reviews go to the control plane through a ReviewClient the
// composition root provides, and are awaited; everything else here is pure.
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "fedmetrics/auth/authenticators.hpp"
#include "fedmetrics/auth/review_client.hpp"
#include "fedmetrics/auth/client_certificate_verifier.hpp"
#include "fedmetrics/auth/review_cache.hpp"
#include "fedmetrics/auth/reviews.hpp"
#include "fedmetrics/k8s/expected.hpp"
#include "fedmetrics/transport/task.hpp"
#include "server/http_types.hpp"

namespace fedmetrics::server {

using auth::ReviewClient;

// The certificate side of authentication, swapped whole when the
// extension-apiserver-authentication ConfigMap changes.
struct CertificateTrust {
  std::optional<auth::RequestHeaderConfig> request_header;
  std::string client_ca_pem;
};

struct GateOptions {
  std::shared_ptr<ReviewClient> authentication;  // null: bearer tokens are not accepted
  std::shared_ptr<ReviewClient> authorization;   // null: every authenticated user is allowed
  std::vector<std::string> always_allow_paths{"/healthz", "/readyz", "/livez"};
  std::chrono::seconds token_cache_ttl{10};
  std::chrono::seconds authorized_cache_ttl{10};
  std::chrono::seconds unauthorized_cache_ttl{10};
  // Called (on the request's executor) when a review could not be made: the control
  // plane did not answer, or answered something that is not a review.
  // `review` is "TokenReview" or "SubjectAccessReview". The request is then
  // refused (401, or 500 for authorization, as kube-apiserver does), and
  // this is how the failure reaches the log and the metrics.
  std::function<void(std::string_view review, const std::string& error)> on_review_failure;
};

class RequestGate {
 public:
  // What the gate decides of a request: the request to serve (the identity
  // headers it read dropped), or its own answer (400, 401, 403, or 500 when
  // an access review could not be made).
  using Verdict = std::variant<HttpRequest, HttpResponse>;

  explicit RequestGate(GateOptions options);

  // Throws std::runtime_error naming the bad CA bundle (start-up only).
  void set_trust(const CertificateTrust& trust);

  // Authenticates and authorizes `request`, awaiting the reviews it needs.
  // A coroutine cancelled while a review is out ends with the cancellation
  // (no answer, and no review failure reported).
  async::Task<Verdict> admit(HttpRequest request);

 private:
  struct Verifiers {
    std::optional<auth::RequestHeaderConfig> request_header;
    std::optional<auth::ClientCertificateVerifier> request_header_verifier;
    std::optional<auth::ClientCertificateVerifier> client_verifier;
  };
  [[nodiscard]] std::shared_ptr<const Verifiers> verifiers() const;
  void review_failed(std::string_view review, const std::string& error) const;
  async::Task<Verdict> authorize(HttpRequest request, auth::UserInfo user, auth::RequestAttributes attributes);

  GateOptions options_;
  mutable std::mutex mutex_;
  std::shared_ptr<const Verifiers> verifiers_;
  auth::ReviewCache<auth::AuthenticationResult> tokens_;
  auth::ReviewCache<auth::Decision> allowed_;
  auth::ReviewCache<auth::Decision> denied_;
};

}  // namespace fedmetrics::server
