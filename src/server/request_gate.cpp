#include "server/request_gate.hpp"

#include <utility>  // before Asio's awaitable.hpp (GCC 12 coroutines)

#include <algorithm>
#include <cctype>
#include <stdexcept>

#include "fedmetrics/auth/authorization.hpp"
#include "fedmetrics/auth/request_attributes.hpp"
#include "fedmetrics/k8s/ascii.hpp"
#include "fedmetrics/k8s/url.hpp"
#include "fedmetrics/transport/async.hpp"

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

async::Task<RequestGate::Verdict> RequestGate::admit(HttpRequest request) {
  // Request attributes come from the decoded path (apiserver requestinfo.go).
  std::string_view target = request.target;
  auto question = target.find('?');
  std::string path;
  if (!k8s::percent_decode_path(target.substr(0, question), path))
    co_return status_response(k8s::Status::bad_request("invalid URL escape in the request path"));
  auto query = question == std::string_view::npos ? k8s::QueryValues{} : k8s::parse_query(target.substr(question + 1));
  // The handler drops empty segments where Go's request info keeps them: a
  // path with any would be authorized as one thing and served as another.
  if (path.find("//") != std::string::npos)
    co_return status_response(k8s::Status::bad_request("the request path has an empty segment: " + path));
  auto parsed = auth::request_attributes(request.method, path, query);
  if (!parsed) co_return status_response(k8s::Status::bad_request(parsed.error().message));
  auth::RequestAttributes attributes = std::move(*parsed);

  // Health probes come without credentials (kubelet): allowed for anyone.
  if (!attributes.resource_request && std::find(options_.always_allow_paths.begin(), options_.always_allow_paths.end(),
                                                path) != options_.always_allow_paths.end())
    co_return std::move(request);

  const auto now_wall = std::chrono::system_clock::now();
  auto v = verifiers();
  std::optional<auth::UserInfo> user;
  if (v->request_header_verifier) {
    auto result = auth::authenticate_request_header(*v->request_header, *v->request_header_verifier,
                                                    request.peer_certificates_pem, request.headers, now_wall);
    strip_identity_headers(request, v->request_header);
    if (result.ok()) user = std::move(result.user);
  }
  if (!user && v->client_verifier) {
    auto result = auth::authenticate_client_certificate(*v->client_verifier, request.peer_certificates_pem, now_wall);
    if (result.ok()) user = std::move(result.user);
  }
  if (!user) {
    auto token = bearer_token(request);
    if (token.empty() || !options_.authentication) co_return unauthorized();
    // Keyed by the token's digest, not the token (k8s.io/apiserver's cached
    // token authenticator does the same): bounded keys, no token kept.
    std::string token_key = auth::token_cache_key(token);
    auto review = token_key.empty() ? std::nullopt : tokens_.get(token_key, Clock::now());
    if (!review) {
      auto posted =
          options_.authentication->post("/apis/authentication.k8s.io/v1/tokenreviews", auth::token_review_body(token));
      auto body = co_await std::move(posted);
      co_await async::throw_if_cancelled();  // the request is gone: nothing to answer or report
      if (!body) {                           // the review could not be made: not cached
        review_failed("TokenReview", body.error().message);
        co_return unauthorized();
      }
      auto answer = auth::parse_token_review(*body);
      if (!answer) {
        review_failed("TokenReview", answer.error().message);
        co_return unauthorized();
      }
      if (!token_key.empty()) tokens_.put(token_key, *answer, Clock::now());
      review = std::move(*answer);
    }
    if (!review->ok()) co_return unauthorized();
    user = std::move(review->user);
  }
  auto authorized =
      authorize(std::move(request), auth::with_authenticated_group(std::move(*user)), std::move(attributes));
  co_return co_await std::move(authorized);
}

void RequestGate::review_failed(std::string_view review, const std::string& error) const {
  if (options_.on_review_failure) options_.on_review_failure(review, error);
}

async::Task<RequestGate::Verdict> RequestGate::authorize(HttpRequest request, auth::UserInfo user,
                                                         auth::RequestAttributes attributes) {
  if (!options_.authorization || auth::always_allowed(user, attributes)) co_return std::move(request);
  auto key = auth::subject_access_review_body(user, attributes);
  auto now = Clock::now();
  if (allowed_.get(key, now)) co_return std::move(request);
  if (auto denied = denied_.get(key, now))
    co_return status_response(auth::forbidden_status(user, attributes, denied->reason));
  auto posted = options_.authorization->post("/apis/authorization.k8s.io/v1/subjectaccessreviews", key);
  auto body = co_await std::move(posted);
  co_await async::throw_if_cancelled();  // the request is gone: nothing to answer or report
  if (!body) {
    review_failed("SubjectAccessReview", body.error().message);
    co_return status_response(k8s::Status::internal_error("authorization: " + body.error().message));
  }
  auto decision = auth::parse_subject_access_review(*body);
  if (!decision) {
    review_failed("SubjectAccessReview", decision.error().message);
    co_return status_response(k8s::Status::internal_error("authorization: " + decision.error().message));
  }
  if (decision->allowed) {
    allowed_.put(key, *decision, Clock::now());
    co_return std::move(request);
  }
  denied_.put(key, *decision, Clock::now());
  co_return status_response(auth::forbidden_status(user, attributes, decision->reason));
}

}  // namespace fedmetrics::server
