#pragma once
// The two review documents a delegating apiserver posts to its main
// apiserver: TokenReview (authentication.k8s.io/v1, for bearer tokens;
// apiserver plugin/pkg/authenticator/token/webhook) and SubjectAccessReview
// (authorization.k8s.io/v1; plugin/pkg/authorizer/webhook).
// Bodies in, bodies out: the HTTP call is the caller's.
#include <string>
#include <string_view>

#include "fedmetrics/auth/request_attributes.hpp"
#include "fedmetrics/auth/user_info.hpp"
#include "fedmetrics/k8s/expected.hpp"

namespace fedmetrics::auth {

// POST /apis/authentication.k8s.io/v1/tokenreviews
[[nodiscard]] std::string token_review_body(std::string_view token);

// The answer as Go's webhook authenticator reads it: authenticated -> the
// user; not authenticated -> Rejected with status.error, or NotApplicable
// when there is none. An error when the body is not a TokenReview.
[[nodiscard]] k8s::Expected<AuthenticationResult> parse_token_review(std::string_view body);

// POST /apis/authorization.k8s.io/v1/subjectaccessreviews. Empty fields are
// left out (Go's omitempty). Object keys come out sorted, so the body is
// also a canonical cache key for the question.
[[nodiscard]] std::string subject_access_review_body(const UserInfo& user, const RequestAttributes& attributes);

struct Decision {
  bool allowed = false;
  bool denied = false;  // an explicit deny; neither flag = no opinion, also a 403 for us
  std::string reason;
  std::string evaluation_error;
  friend bool operator==(const Decision&, const Decision&) = default;
};

// An error when the body is not a SubjectAccessReview.
[[nodiscard]] k8s::Expected<Decision> parse_subject_access_review(std::string_view body);

}  // namespace fedmetrics::auth
