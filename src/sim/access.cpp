#include "sim/access.hpp"

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <variant>

#include "fedmetrics/k8s/status.hpp"
#include "sim/http_util.hpp"
#include "sim/store_rest.hpp"

namespace fedmetrics::sim {

using nlohmann::json;

namespace {

bool in(const std::vector<std::string>& values, std::string_view v) {
  return std::any_of(values.begin(), values.end(), [&](const std::string& x) { return x == "*" || x == v; });
}

// rbac/v1 PolicyRule matching (k8s.io/component-helpers/auth/rbac/validation).
bool rule_allows(const PolicyRule& rule, const json& spec) {
  if (auto r = spec.find("resourceAttributes"); r != spec.end() && r->is_object()) {
    std::string verb = r->value("verb", ""), group = r->value("group", ""), resource = r->value("resource", "");
    std::string sub = r->value("subresource", ""), name = r->value("name", "");
    if (rule.resources.empty() || !in(rule.verbs, verb) || !in(rule.api_groups, group)) return false;
    bool resource_ok = std::any_of(rule.resources.begin(), rule.resources.end(), [&](const std::string& x) {
      if (x == "*") return true;
      if (sub.empty()) return x == resource;
      return x == resource + "/" + sub || x == resource + "/*" || x == "*/" + sub;
    });
    return resource_ok && (rule.resource_names.empty() || in(rule.resource_names, name));
  }
  if (auto n = spec.find("nonResourceAttributes"); n != spec.end() && n->is_object()) {
    std::string verb = n->value("verb", ""), path = n->value("path", "");
    if (rule.non_resource_urls.empty() || !in(rule.verbs, verb)) return false;
    return std::any_of(rule.non_resource_urls.begin(), rule.non_resource_urls.end(), [&](const std::string& x) {
      if (x == "*" || x == path) return true;
      return x.ends_with("*") && path.starts_with(std::string_view(x).substr(0, x.size() - 1));
    });
  }
  return false;
}

}  // namespace

AccessDecision authorize(const UserSpec& user, const json& sar_spec) {
  auto groups = sar_spec.value("groups", json::array());
  bool master = std::find(user.groups.begin(), user.groups.end(), "system:masters") != user.groups.end() ||
                std::any_of(groups.begin(), groups.end(), [](const json& g) { return g == "system:masters"; });
  if (master || user.rules.empty()) return {true, ""};
  for (std::size_t i = 0; i < user.rules.size(); ++i)
    if (rule_allows(user.rules[i], sar_spec))
      return {true, "RBAC: allowed by the world's rule " + std::to_string(i) + " of user \"" + user.name + "\""};
  return {false, ""};
}

}  // namespace fedmetrics::sim

namespace fedmetrics::sim::detail {

using k8s::Status;
using nlohmann::json;
using transport::HttpResponse;

namespace {

constexpr std::string_view kServiceAccountPrefix = "system:serviceaccount:";
// kube-apiserver's --api-audiences default: the service account issuer.
constexpr std::string_view kDefaultAudience = "https://kubernetes.default.svc.cluster.local";
// TokenRequest bounds (k8s.io/kubernetes pkg/apis/authentication/validation).
constexpr std::int64_t kMinTokenSeconds = 600;
constexpr std::int64_t kMaxTokenSeconds = std::int64_t{1} << 32;
constexpr std::int64_t kDefaultTokenSeconds = 3600;

std::vector<std::string> strings_of(const json& v) {
  std::vector<std::string> out;
  if (!v.is_array()) return out;
  for (const auto& s : v)
    if (s.is_string()) out.push_back(s.get<std::string>());
  return out;
}

std::vector<std::string> with_authenticated(std::vector<std::string> groups) {
  if (std::find(groups.begin(), groups.end(), "system:authenticated") == groups.end())
    groups.emplace_back("system:authenticated");
  return groups;
}

const json* stored(const ObjectStore& store, std::string_view group, std::string_view resource, std::string_view ns,
                   std::string_view name, StoreResult& holder) {
  const auto* type = store.find_type(group, "v1", resource);
  if (type == nullptr) return nullptr;
  holder = store.get(*type, ns, name);
  return std::get_if<json>(&holder);
}

json stored_items(const ObjectStore& store, std::string_view resource) {
  const auto* type = store.find_type("rbac.authorization.k8s.io", "v1", resource);
  if (type == nullptr) return json::array();
  auto list = store.list(*type, "", {}, {});
  const auto* doc = std::get_if<json>(&list);
  return doc == nullptr ? json::array() : doc->value("items", json::array());
}

// Whether an rbac/v1 Subject names the user (kind User, Group or ServiceAccount).
bool subject_matches(const json& subject, const UserInfo& user) {
  if (!subject.is_object()) return false;
  const std::string kind = subject.value("kind", ""), name = subject.value("name", "");
  if (kind == "User") return name == user.name;
  if (kind == "Group") return std::find(user.groups.begin(), user.groups.end(), name) != user.groups.end();
  if (kind == "ServiceAccount")
    return user.name == std::string(kServiceAccountPrefix) + subject.value("namespace", "") + ":" + name;
  return false;
}

std::vector<PolicyRule> rules_of(const json& role) {
  std::vector<PolicyRule> out;
  for (const auto& r : role.value("rules", json::array())) {
    if (!r.is_object()) continue;
    out.push_back({strings_of(r.value("verbs", json())), strings_of(r.value("apiGroups", json())),
                   strings_of(r.value("resources", json())), strings_of(r.value("resourceNames", json())),
                   strings_of(r.value("nonResourceURLs", json()))});
  }
  return out;
}

// RBAC over the stored bindings (k8s.io/kubernetes plugin/pkg/auth/authorizer/rbac):
// a ClusterRoleBinding grants its ClusterRole everywhere; a RoleBinding grants
// its Role or ClusterRole in the binding's namespace only.
std::optional<std::string> rbac_allows(const ObjectStore& store, const UserInfo& user, const json& spec) {
  const auto& attributes = spec.value("resourceAttributes", json());
  const std::string request_ns = attributes.is_object() ? attributes.value("namespace", "") : "";
  auto granted_by = [&](const json& binding, bool cluster) -> bool {
    const auto& subjects = binding.value("subjects", json::array());
    if (!subjects.is_array() ||
        std::none_of(subjects.begin(), subjects.end(), [&](const json& s) { return subject_matches(s, user); }))
      return false;
    const auto& ref = binding.value("roleRef", json::object());
    const std::string kind = ref.value("kind", ""), binding_ns = binding["metadata"].value("namespace", "");
    if (!cluster && (!attributes.is_object() || request_ns != binding_ns)) return false;
    StoreResult holder;
    const json* role =
        kind == "ClusterRole"
            ? stored(store, "rbac.authorization.k8s.io", "clusterroles", "", ref.value("name", ""), holder)
            : stored(store, "rbac.authorization.k8s.io", "roles", binding_ns, ref.value("name", ""), holder);
    if (role == nullptr) return false;
    auto rules = rules_of(*role);
    return std::any_of(rules.begin(), rules.end(), [&](const PolicyRule& r) { return rule_allows(r, spec); });
  };
  for (bool cluster : {true, false})
    for (const auto& b : stored_items(store, cluster ? "clusterrolebindings" : "rolebindings"))
      if (granted_by(b, cluster))
        return std::string("RBAC: allowed by ") + (cluster ? "ClusterRoleBinding" : "RoleBinding") + " \"" +
               b["metadata"].value("name", "") + "\"";
  return std::nullopt;
}

Status invalid(std::string_view kind, std::string_view group, std::string_view name, std::string_view field,
               const std::string& value, std::string_view why) {
  Status s;
  s.code = 422;
  s.reason = "Invalid";
  const std::string detail = "Invalid value: " + value + ": " + std::string(why);
  s.message = std::string(kind) + "." + std::string(group) + " \"" + std::string(name) +
              "\" is invalid: " + std::string(field) + ": " + detail;
  s.details.name = std::string(name);
  s.details.group = std::string(group);
  s.details.kind = std::string(kind);
  s.details.causes.push_back({"FieldValueInvalid", detail, std::string(field)});
  return s;
}

json review(std::string_view kind, std::string_view api_version, json spec, json status,
            std::optional<k8s::Timestamp> created = std::nullopt) {
  json out = {{"kind", kind}, {"apiVersion", api_version}, {"metadata", {{"creationTimestamp", nullptr}}}};
  if (created) out["metadata"]["creationTimestamp"] = k8s::format_time(*created);
  if (!spec.is_null()) out["spec"] = std::move(spec);
  out["status"] = std::move(status);
  return out;
}

// A review's spec: a JSON object with exactly one of the attribute kinds, else a Status.
std::variant<json, Status> access_review_spec(std::string_view kind, const std::string& body) {
  auto parsed = parse_object(body);
  if (!parsed) return Status::bad_request(parsed.error().message);
  auto spec = parsed->value("spec", json::object());
  bool resource = spec.is_object() && spec.contains("resourceAttributes");
  bool non_resource = spec.is_object() && spec.contains("nonResourceAttributes");
  if (resource == non_resource)
    return invalid(kind, "authorization.k8s.io", "", "spec.resourceAttributes", "null",
                   "exactly one of nonResourceAttributes or resourceAttributes must be specified");
  return spec;
}

json status_of(const AccessDecision& decision) {
  json status = {{"allowed", decision.allowed}};
  if (!decision.reason.empty()) status["reason"] = decision.reason;
  return status;
}

}  // namespace

std::string ServiceAccountTokens::issue(Grant grant) {
  std::lock_guard lock(mutex_);
  char buf[64];
  std::string token;
  do {
    std::snprintf(buf, sizeof buf, "sim-sa.%016" PRIx64 "%016" PRIx64, random_(), random_());
    token = buf;
  } while (grants_.contains(token));
  grants_.emplace(token, std::move(grant));
  return token;
}

std::optional<ServiceAccountTokens::Grant> ServiceAccountTokens::find(std::string_view token) const {
  std::lock_guard lock(mutex_);
  auto it = grants_.find(token);
  if (it == grants_.end()) return std::nullopt;
  return it->second;
}

std::optional<UserInfo> authenticate_token(const World& world, const ObjectStore& store,
                                           const ServiceAccountTokens& tokens, std::string_view token,
                                           k8s::Timestamp now) {
  if (token.empty()) return std::nullopt;
  for (const auto& u : world.users)
    if (u.token == token) return UserInfo{u.name, "", with_authenticated(u.groups), &u};
  auto grant = tokens.find(token);
  if (!grant || now >= grant->expires) return std::nullopt;
  StoreResult holder;
  const json* account = stored(store, "", "serviceaccounts", grant->namespace_name, grant->name, holder);
  if (account == nullptr || (*account)["metadata"].value("uid", "") != grant->uid) return std::nullopt;
  if (!grant->bound_resource.empty()) {
    const json* bound = stored(store, "", grant->bound_resource, grant->namespace_name, grant->bound_name, holder);
    if (bound == nullptr || (*bound)["metadata"].value("uid", "") != grant->bound_uid) return std::nullopt;
  }
  return UserInfo{std::string(kServiceAccountPrefix) + grant->namespace_name + ":" + grant->name,
                  grant->uid,
                  {"system:serviceaccounts", "system:serviceaccounts:" + grant->namespace_name, "system:authenticated"},
                  nullptr};
}

AccessDecision authorize_user(const ObjectStore& store, const UserInfo& user, const json& sar_spec) {
  if (user.world_user != nullptr) {
    auto decision = authorize(*user.world_user, sar_spec);
    if (decision.allowed) return decision;
  } else if (std::find(user.groups.begin(), user.groups.end(), "system:masters") != user.groups.end()) {
    return {true, ""};
  }
  if (auto reason = rbac_allows(store, user, sar_spec)) return {true, *reason};
  return {false, ""};
}

HttpResponse token_request(ObjectStore& store, ServiceAccountTokens& tokens, const std::string& namespace_name,
                           const std::string& name, const std::string& body, k8s::Timestamp now) {
  auto parsed = parse_object(body);
  if (!parsed) return status_response(Status::bad_request(parsed.error().message));
  json spec = parsed->value("spec", json::object());
  if (!spec.is_object()) return status_response(Status::bad_request("TokenRequest.spec must be an object"));
  auto seconds = spec.value("expirationSeconds", json());
  if (seconds.is_null()) seconds = kDefaultTokenSeconds;
  if (!seconds.is_number_integer())
    return status_response(Status::bad_request("spec.expirationSeconds must be an integer"));
  const auto expiration = seconds.get<std::int64_t>();
  if (expiration < kMinTokenSeconds)
    return status_response(invalid("TokenRequest", "authentication.k8s.io", name, "spec.expirationSeconds",
                                   std::to_string(expiration), "may not specify a duration less than 10 minutes"));
  if (expiration > kMaxTokenSeconds)
    return status_response(invalid("TokenRequest", "authentication.k8s.io", name, "spec.expirationSeconds",
                                   std::to_string(expiration), "may not specify a duration larger than 2^32 seconds"));
  StoreResult holder;
  const json* account = stored(store, "", "serviceaccounts", namespace_name, name, holder);
  if (account == nullptr) return status_response(Status::not_found({"", "serviceaccounts"}, name));
  ServiceAccountTokens::Grant grant{namespace_name,
                                    name,
                                    (*account)["metadata"].value("uid", ""),
                                    now + std::chrono::seconds(expiration),
                                    strings_of(spec.value("audiences", json())),
                                    "",
                                    "",
                                    ""};
  if (grant.audiences.empty()) grant.audiences = {std::string(kDefaultAudience)};
  const auto& ref = spec.value("boundObjectRef", json());
  if (ref.is_object()) {
    const std::string kind = ref.value("kind", "");
    const std::string resource = kind == "Secret" ? "secrets" : kind == "Pod" ? "pods" : "";
    if (resource.empty())
      return status_response(invalid("TokenRequest", "authentication.k8s.io", name, "spec.boundObjectRef.kind",
                                     "\"" + kind + "\"", "supported values: \"Pod\", \"Secret\""));
    const json* bound = stored(store, "", resource, namespace_name, ref.value("name", ""), holder);
    if (bound == nullptr) return status_response(Status::not_found({"", resource}, ref.value("name", "")));
    const std::string uid = (*bound)["metadata"].value("uid", "");
    if (!ref.value("uid", "").empty() && ref.value("uid", "") != uid)
      return status_response(Status::conflict({"", resource}, ref.value("name", ""), "the object's uid differs"));
    grant.bound_resource = resource;
    grant.bound_name = ref.value("name", "");
    grant.bound_uid = uid;
  }
  spec["audiences"] = grant.audiences;
  spec["expirationSeconds"] = expiration;
  if (!spec.contains("boundObjectRef")) spec["boundObjectRef"] = nullptr;
  const auto expires = k8s::format_time(grant.expires);
  json out = review("TokenRequest", "authentication.k8s.io/v1", spec,
                    {{"token", tokens.issue(std::move(grant))}, {"expirationTimestamp", expires}}, now);
  out["metadata"]["name"] = name;
  out["metadata"]["namespace"] = namespace_name;
  return json_response(out.dump(), 201);
}

HttpResponse token_review(const World& world, const ObjectStore& store, const ServiceAccountTokens& tokens,
                          const std::string& body, k8s::Timestamp now) {
  auto parsed = parse_object(body);
  if (!parsed) return status_response(Status::bad_request(parsed.error().message));
  json spec = parsed->value("spec", json::object());
  // No audiences asked for: the API server's own (kube-apiserver's TokenReview).
  auto wanted = strings_of(spec.value("audiences", json()));
  if (wanted.empty()) wanted = {std::string(kDefaultAudience)};
  json status = {{"authenticated", false}};
  if (auto user = authenticate_token(world, store, tokens, spec.value("token", ""), now)) {
    // A ServiceAccount token is valid only for its audiences; a world token for any.
    std::vector<std::string> audiences = wanted;
    if (user->world_user == nullptr) {
      auto grant = tokens.find(spec.value("token", ""));
      std::erase_if(audiences, [&](const std::string& a) { return !in(grant->audiences, a); });
    }
    if (audiences.empty()) {
      status["error"] = "token audiences are invalid for the target audiences";
    } else {
      json user_json = {{"username", user->name}, {"uid", user->uid}, {"groups", user->groups}};
      status = {{"authenticated", true}, {"user", user_json}, {"audiences", audiences}};
    }
  }
  return json_response(review("TokenReview", "authentication.k8s.io/v1", spec, status).dump(), 201);
}

HttpResponse subject_access_review(const World& world, const ObjectStore& store, const std::string& body) {
  auto spec = access_review_spec("SubjectAccessReview", body);
  if (auto* s = std::get_if<Status>(&spec)) return status_response(*s);
  const auto& s = std::get<json>(spec);
  UserInfo user{s.value("user", ""), s.value("uid", ""), strings_of(s.value("groups", json())), nullptr};
  for (const auto& u : world.users)
    if (u.name == user.name) user.world_user = &u;
  auto decision = authorize_user(store, user, s);
  if (!decision.allowed && user.world_user == nullptr)
    decision.reason = "no user named \"" + user.name + "\" in the world file, and no RBAC binding allows it";
  return json_response(review("SubjectAccessReview", "authorization.k8s.io/v1", s, status_of(decision)).dump(), 201);
}

HttpResponse self_subject_access_review(const ObjectStore& store, const UserInfo& user, const std::string& body) {
  auto spec = access_review_spec("SelfSubjectAccessReview", body);
  if (auto* s = std::get_if<Status>(&spec)) return status_response(*s);
  // The attributes are about the caller, whatever the body says of the user.
  json sar = std::get<json>(spec);
  sar["user"] = user.name;
  sar["groups"] = user.groups;
  auto decision = authorize_user(store, user, sar);
  return json_response(
      review("SelfSubjectAccessReview", "authorization.k8s.io/v1", std::get<json>(spec), status_of(decision)).dump(),
      201);
}

HttpResponse self_subject_review(const UserInfo& user, k8s::Timestamp now) {
  json info = {{"username", user.name}, {"groups", user.groups}};
  if (!user.uid.empty()) info["uid"] = user.uid;
  return json_response(
      review("SelfSubjectReview", "authentication.k8s.io/v1", json(), {{"userInfo", info}}, now).dump(), 201);
}

void seed_bootstrap_roles(ObjectStore& store) {
  const auto* cluster_roles = store.find_type("rbac.authorization.k8s.io", "v1", "clusterroles");
  const auto* roles = store.find_type("rbac.authorization.k8s.io", "v1", "roles");
  if (cluster_roles == nullptr || roles == nullptr) return;
  store.create(
      *cluster_roles, "",
      {{"metadata", {{"name", "system:auth-delegator"}}},
       {"rules",
        {{{"apiGroups", {"authentication.k8s.io"}}, {"resources", {"tokenreviews"}}, {"verbs", {"create"}}},
         {{"apiGroups", {"authorization.k8s.io"}}, {"resources", {"subjectaccessreviews"}}, {"verbs", {"create"}}}}}});
  store.create(*roles, "kube-system",
               {{"metadata", {{"name", "extension-apiserver-authentication-reader"}}},
                {"rules",
                 {{{"apiGroups", {""}},
                   {"resources", {"configmaps"}},
                   {"resourceNames", {"extension-apiserver-authentication"}},
                   {"verbs", {"get", "list", "watch"}}}}}});
}

}  // namespace fedmetrics::sim::detail
