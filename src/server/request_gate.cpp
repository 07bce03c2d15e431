#include "server/request_gate.hpp"

#include <algorithm>
#include <cctype>
#include <stdexcept>

#include "fedmetrics/auth/authorization.hpp"
#include "fedmetrics/auth/request_attributes.hpp"
#include "fedmetrics/k8s/ascii.hpp"
#include "fedmetrics/k8s/url.hpp"

namespace fedmetrics::server {

namespace {

using Clock = std::chrono::steady_clock;

using k8s::iequals;

// "Bearer <token>" (scheme case-insensitive, as apiserver's bearertoken authenticator); "" otherwise.
std::string bearer_token(const HttpRequest& request) {
  for (const auto& [name, value] : request.headers) {
    if (!iequals(name, "Authorization")) continue;
    auto space = value.find(' ');
    if (space == std::string::npos || !iequals(std::string_view(value).substr(0, space), "bearer")) return {};
    auto token = value.substr(space + 1);
    while (!token.empty() && token.front() == ' ') token.erase(token.begin());
    return token;
  }
  return {};
}

// Drops the identity headers once read, so that nothing downstream can
// mistake a client's own X-Remote-User for a vouched one.
void strip_identity_headers(HttpRequest& request, const std::optional<auth::RequestHeaderConfig>& config) {
  if (!config) return;
  std::erase_if(request.headers, [&](const auto& h) {
    auto matches = [&](const std::vector<std::string>& names) {
      return std::any_of(names.begin(), names.end(), [&](const std::string& n) { return iequals(h.first, n); });
    };
    bool prefixed = std::any_of(
        config->extra_header_prefixes.begin(), config->extra_header_prefixes.end(), [&](const std::string& p) {
          return h.first.size() >= p.size() && iequals(std::string_view(h.first).substr(0, p.size()), p);
        });
    return matches(config->username_headers) || matches(config->uid_headers) || matches(config->group_headers) ||
           prefixed;
  });
}

HttpResponse unauthorized() { return status_response(k8s::Status::unauthorized()); }

}  // namespace

RequestGate::RequestGate(GateOptions options)
    : options_(std::move(options)),
      verifiers_(std::make_shared<const Verifiers>()),
      tokens_(options_.token_cache_ttl),
      allowed_(options_.authorized_cache_ttl),
      denied_(options_.unauthorized_cache_ttl) {}

void RequestGate::set_trust(const CertificateTrust& trust) {
  auto next = std::make_shared<Verifiers>();
  if (trust.request_header) {
    auto verifier = auth::ClientCertificateVerifier::from_pem(trust.request_header->client_ca_pem);
    if (!verifier) throw std::runtime_error("requestheader client CA: " + verifier.error().message);
    next->request_header = trust.request_header;
    next->request_header_verifier = std::move(*verifier);
  }
  if (!trust.client_ca_pem.empty()) {
    auto verifier = auth::ClientCertificateVerifier::from_pem(trust.client_ca_pem);
    if (!verifier) throw std::runtime_error("client CA: " + verifier.error().message);
    next->client_verifier = std::move(*verifier);
  }
  std::lock_guard lock(mutex_);
  verifiers_ = std::move(next);
}

std::shared_ptr<const RequestGate::Verifiers> RequestGate::verifiers() const {
  std::lock_guard lock(mutex_);
  return verifiers_;
}

void RequestGate::handle(HttpRequest request, std::function<void(HttpResponse)> respond, const Next& next) {
  // Request attributes come from the decoded path (apiserver requestinfo.go).
  std::string_view target = request.target;
  auto question = target.find('?');
  std::string path;
  if (!k8s::percent_decode_path(target.substr(0, question), path))
    return respond(status_response(k8s::Status::bad_request("invalid URL escape in the request path")));
  auto query = question == std::string_view::npos ? k8s::QueryValues{} : k8s::parse_query(target.substr(question + 1));
  // The handler drops empty segments where Go's request info keeps them: a
  // path with any would be authorized as one thing and served as another.
  if (path.find("//") != std::string::npos)
    return respond(status_response(k8s::Status::bad_request("the request path has an empty segment: " + path)));
  auto parsed = auth::request_attributes(request.method, path, query);
  if (!parsed) return respond(status_response(k8s::Status::bad_request(parsed.error().message)));
  auth::RequestAttributes attributes = std::move(*parsed);

  // Health probes come without credentials (kubelet): allowed for anyone.
  if (!attributes.resource_request && std::find(options_.always_allow_paths.begin(), options_.always_allow_paths.end(),
                                                path) != options_.always_allow_paths.end())
    return next(request, std::move(respond));

  const auto now_wall = std::chrono::system_clock::now();
  auto v = verifiers();
  auto shared = std::make_shared<HttpRequest>(std::move(request));
  if (v->request_header_verifier) {
    auto result = auth::authenticate_request_header(*v->request_header, *v->request_header_verifier,
                                                    shared->peer_certificates_pem, shared->headers, now_wall);
    strip_identity_headers(*shared, v->request_header);
    if (result.ok())
      return authorize(shared, auth::with_authenticated_group(std::move(result.user)), std::move(attributes),
                       std::move(respond), next);
  }
  if (v->client_verifier) {
    auto result = auth::authenticate_client_certificate(*v->client_verifier, shared->peer_certificates_pem, now_wall);
    if (result.ok())
      return authorize(shared, auth::with_authenticated_group(std::move(result.user)), std::move(attributes),
                       std::move(respond), next);
  }
  auto token = bearer_token(*shared);
  if (token.empty() || !options_.authentication) return respond(unauthorized());
  // Keyed by the token's digest, not the token (k8s.io/apiserver's cached
  // token authenticator does the same): bounded keys, no token kept.
  std::string token_key = auth::token_cache_key(token);
  if (auto cached = token_key.empty() ? std::nullopt : tokens_.get(token_key, Clock::now())) {
    if (!cached->ok()) return respond(unauthorized());
    return authorize(shared, auth::with_authenticated_group(cached->user), std::move(attributes), std::move(respond),
                     next);
  }
  options_.authentication->post("/apis/authentication.k8s.io/v1/tokenreviews", auth::token_review_body(token),
                                [this, shared, token_key = std::move(token_key), attributes = std::move(attributes),
                                 respond = std::move(respond), next](k8s::Expected<std::string> body) mutable {
                                  if (!body) {  // the review could not be made: not cached
                                    review_failed("TokenReview", body.error().message);
                                    return respond(unauthorized());
                                  }
                                  auto review = auth::parse_token_review(*body);
                                  if (!review) {
                                    review_failed("TokenReview", review.error().message);
                                    return respond(unauthorized());
                                  }
                                  if (!token_key.empty()) tokens_.put(token_key, *review, Clock::now());
                                  if (!review->ok()) return respond(unauthorized());
                                  authorize(shared, auth::with_authenticated_group(std::move(review->user)),
                                            std::move(attributes), std::move(respond), next);
                                });
}

void RequestGate::review_failed(std::string_view review, const std::string& error) const {
  if (options_.on_review_failure) options_.on_review_failure(review, error);
}

void RequestGate::authorize(std::shared_ptr<HttpRequest> request, auth::UserInfo user,
                            auth::RequestAttributes attributes, std::function<void(HttpResponse)> respond, Next next) {
  if (!options_.authorization || auth::always_allowed(user, attributes)) return next(*request, std::move(respond));
  auto key = auth::subject_access_review_body(user, attributes);
  auto now = Clock::now();
  if (allowed_.get(key, now)) return next(*request, std::move(respond));
  if (auto denied = denied_.get(key, now))
    return respond(status_response(auth::forbidden_status(user, attributes, denied->reason)));
  options_.authorization->post(
      "/apis/authorization.k8s.io/v1/subjectaccessreviews", key,
      [this, request, user = std::move(user), attributes = std::move(attributes), key, respond = std::move(respond),
       next = std::move(next)](k8s::Expected<std::string> body) mutable {
        if (!body) {
          review_failed("SubjectAccessReview", body.error().message);
          return respond(status_response(k8s::Status::internal_error("authorization: " + body.error().message)));
        }
        auto decision = auth::parse_subject_access_review(*body);
        if (!decision) {
          review_failed("SubjectAccessReview", decision.error().message);
          return respond(status_response(k8s::Status::internal_error("authorization: " + decision.error().message)));
        }
        if (decision->allowed) {
          allowed_.put(key, *decision, Clock::now());
          return next(*request, std::move(respond));
        }
        denied_.put(key, *decision, Clock::now());
        respond(status_response(auth::forbidden_status(user, attributes, decision->reason)));
      });
}

}  // namespace fedmetrics::server
