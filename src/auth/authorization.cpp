#include "fedmetrics/auth/authorization.hpp"

namespace fedmetrics::auth {
namespace {

bool is_discovery_path(std::string_view path) {
  for (std::string_view root : {"/api", "/apis", "/openapi"}) {
    if (path == root) return true;
    if (path.size() > root.size() && path.substr(0, root.size()) == root && path[root.size()] == '/') return true;
  }
  return path == "/version" || path == "/version/";
}

}  // namespace

bool always_allowed(const UserInfo& user, const RequestAttributes& attributes) {
  if (has_group(user, kMastersGroup)) return true;
  if (attributes.resource_request) return false;
  const std::string_view path = attributes.path;
  if (path == "/healthz" || path == "/readyz" || path == "/livez") return true;
  return attributes.verb == "get" && has_group(user, kAuthenticatedGroup) && is_discovery_path(path);
}

k8s::Status forbidden_status(const UserInfo& user, const RequestAttributes& attributes, std::string_view reason) {
  if (attributes.resource_request) {
    return k8s::Status::forbidden(user.name, attributes.verb, {attributes.api_group, attributes.resource},
                                  attributes.subresource, attributes.namespace_name, attributes.name, reason);
  }
  // Status::forbidden_path has no reason; apiserver appends it to the same text.
  k8s::Status status = k8s::Status::forbidden_path(user.name, attributes.verb, attributes.path);
  if (!reason.empty()) status.message += ": " + std::string(reason);
  return status;
}

}  // namespace fedmetrics::auth
