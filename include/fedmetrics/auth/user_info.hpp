#pragma once
// Who is asking (apiserver pkg/authentication/user.DefaultInfo) and what one
// authenticator concluded about a request.
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fedmetrics::auth {

inline constexpr std::string_view kAuthenticatedGroup = "system:authenticated";
inline constexpr std::string_view kUnauthenticatedGroup = "system:unauthenticated";
inline constexpr std::string_view kAnonymousUser = "system:anonymous";
inline constexpr std::string_view kMastersGroup = "system:masters";

struct UserInfo {
  std::string name;
  std::string uid;
  std::vector<std::string> groups;
  std::map<std::string, std::vector<std::string>> extra;
  friend bool operator==(const UserInfo&, const UserInfo&) = default;
};

// Go's authenticator answer (response, ok, err) as one value. The order of
// authenticators is request-header, x509, bearer token; as in Go's union
// authenticator (apiserver pkg/authentication/request/union) both
// NotApplicable and Rejected move on to the next one, and a request that no
// authenticator accepts is anonymous (or 401); `error` is for the log only.
struct AuthenticationResult {
  enum class Kind { NotApplicable, Authenticated, Rejected };
  Kind kind = Kind::NotApplicable;
  UserInfo user;      // when Authenticated
  std::string error;  // when Rejected

  static AuthenticationResult not_applicable() { return {}; }
  static AuthenticationResult authenticated(UserInfo user) { return {Kind::Authenticated, std::move(user), {}}; }
  static AuthenticationResult rejected(std::string error) { return {Kind::Rejected, {}, std::move(error)}; }
  [[nodiscard]] bool ok() const { return kind == Kind::Authenticated; }
};

// Adds "system:authenticated" as apiserver's AuthenticatedGroupAdder does
// (pkg/authentication/group/authenticated_group_adder.go): not for
// system:anonymous, and not when the user already has system:authenticated
// or system:unauthenticated.
[[nodiscard]] UserInfo with_authenticated_group(UserInfo user);

// What Go makes of a request without credentials when anonymous auth is on.
[[nodiscard]] UserInfo anonymous_user();

[[nodiscard]] bool has_group(const UserInfo& user, std::string_view group);

}  // namespace fedmetrics::auth
