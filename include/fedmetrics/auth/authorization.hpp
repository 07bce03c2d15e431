#pragma once
// The authorization decisions we take without a SubjectAccessReview, and the
// 403 we answer with after one (apiserver's
// responsewriters.ForbiddenStatusError).
#include <string_view>

#include "fedmetrics/auth/request_attributes.hpp"
#include "fedmetrics/auth/user_info.hpp"
#include "fedmetrics/k8s/status.hpp"

namespace fedmetrics::auth {

// True when the request is allowed without asking the API server:
// * the paths /healthz, /readyz, /livez (exact) and anything for group
//   system:masters (apiserver pkg/server/options/authorization.go
//   AlwaysAllowPaths, AlwaysAllowGroups), for anyone;
// * `get` on the non-resource paths RBAC's system:discovery role grants to
//   system:authenticated: /api, /api/*, /apis, /apis/* (only /apis/{g} and
//   /apis/{g}/{v} are non-resource there), /openapi, /openapi/*, /version,
//   /version/ (kubernetes plugin/pkg/auth/authorizer/rbac/bootstrappolicy
//   policy.go). This spares a SAR on every aggregator discovery probe.
// `user` is the authenticated user, system:authenticated already added.
[[nodiscard]] bool always_allowed(const UserInfo& user, const RequestAttributes& attributes);

// The 403 apiserver sends when the authorizer says no (apiserver
// pkg/endpoints/handlers/responsewriters/errors.go ForbiddenStatusError),
// with the SAR's reason appended after ": " when there is one.
[[nodiscard]] k8s::Status forbidden_status(const UserInfo& user, const RequestAttributes& attributes,
                                           std::string_view reason);

}  // namespace fedmetrics::auth
