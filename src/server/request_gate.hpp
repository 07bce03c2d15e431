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
// composition root provides; everything else here is pure.
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fedmetrics/auth/authenticators.hpp"
#include "fedmetrics/auth/client_certificate_verifier.hpp"
#include "fedmetrics/auth/review_cache.hpp"
#include "fedmetrics/auth/reviews.hpp"
#include "fedmetrics/k8s/expected.hpp"
#include "server/http_types.hpp"

namespace fedmetrics::server {

// POSTs a review document to the control plane; `done` gets the answer's
// body or an error naming what failed. Called from any thread.
class ReviewClient {
 public:
  virtual ~ReviewClient() = default;
  virtual void post(std::string path, std::string body, std::function<void(k8s::Expected<std::string>)> done) = 0;
};

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
  // Called (from any thread) when a review could not be made: the control
  // plane did not answer, or answered something that is not a review.
  // `review` is "TokenReview" or "SubjectAccessReview". The request is then
  // refused (401, or 500 for authorization, as kube-apiserver does), and
  // this is how the failure reaches the log and the metrics.
  std::function<void(std::string_view review, const std::string& error)> on_review_failure;
};

class RequestGate {
 public:
  using Next = std::function<void(const HttpRequest&, std::function<void(HttpResponse)>)>;

  explicit RequestGate(GateOptions options);

  // Throws std::runtime_error naming the bad CA bundle (start-up only).
  void set_trust(const CertificateTrust& trust);

  // Authenticates and authorizes `request`, then calls `next` or answers 401/403.
  void handle(HttpRequest request, std::function<void(HttpResponse)> respond, const Next& next);

 private:
  struct Verifiers {
    std::optional<auth::RequestHeaderConfig> request_header;
    std::optional<auth::ClientCertificateVerifier> request_header_verifier;
    std::optional<auth::ClientCertificateVerifier> client_verifier;
  };
  [[nodiscard]] std::shared_ptr<const Verifiers> verifiers() const;
  void review_failed(std::string_view review, const std::string& error) const;
  void authorize(std::shared_ptr<HttpRequest> request, auth::UserInfo user, auth::RequestAttributes attributes,
                 std::function<void(HttpResponse)> respond, Next next);

  GateOptions options_;
  mutable std::mutex mutex_;
  std::shared_ptr<const Verifiers> verifiers_;
  auth::ReviewCache<auth::AuthenticationResult> tokens_;
  auth::ReviewCache<auth::Decision> allowed_;
  auth::ReviewCache<auth::Decision> denied_;
};

}  // namespace fedmetrics::server
