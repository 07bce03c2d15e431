#include "fedmetrics/auth/user_info.hpp"

#include <algorithm>

namespace fedmetrics::auth {

bool has_group(const UserInfo& user, std::string_view group) {
  return std::find(user.groups.begin(), user.groups.end(), group) != user.groups.end();
}

UserInfo with_authenticated_group(UserInfo user) {
  if (user.name == kAnonymousUser || has_group(user, kAuthenticatedGroup) || has_group(user, kUnauthenticatedGroup)) {
    return user;
  }
  user.groups.emplace_back(kAuthenticatedGroup);
  return user;
}

UserInfo anonymous_user() {
  return UserInfo{std::string(kAnonymousUser), {}, {std::string(kUnauthenticatedGroup)}, {}};
}

}  // namespace fedmetrics::auth
