#include "fedmetrics/auth/reviews.hpp"

#include <map>
#include <vector>

#include <nlohmann/json.hpp>

namespace fedmetrics::auth {
namespace {

using nlohmann::json;

// Reading untrusted review answers field by field without exceptions; a
// missing or null field reads as the zero value, as Go's decoder leaves it.
class Reader {
 public:
  Reader(const json& object, std::string path) : object_(object), path_(std::move(path)) {}

  [[nodiscard]] const json* field(const char* key) const {
    auto it = object_.find(key);
    return it == object_.end() || it->is_null() ? nullptr : &*it;
  }
  [[nodiscard]] std::string where(const char* key) const { return path_.empty() ? key : path_ + "." + key; }

  k8s::Expected<std::string> string(const char* key) const {
    const json* v = field(key);
    if (v == nullptr) return std::string();
    if (!v->is_string()) return k8s::Error{where(key) + ": expected a string, got " + v->type_name()};
    return v->get<std::string>();
  }
  k8s::Expected<bool> boolean(const char* key) const {
    const json* v = field(key);
    if (v == nullptr) return false;
    if (!v->is_boolean()) return k8s::Error{where(key) + ": expected a boolean, got " + v->type_name()};
    return v->get<bool>();
  }
  k8s::Expected<std::vector<std::string>> strings(const char* key) const {
    const json* v = field(key);
    if (v == nullptr) return std::vector<std::string>{};
    return string_array(*v, where(key));
  }
  static k8s::Expected<std::vector<std::string>> string_array(const json& v, const std::string& path) {
    if (!v.is_array()) return k8s::Error{path + ": expected an array of strings, got " + v.type_name()};
    std::vector<std::string> out;
    for (const auto& item : v) {
      if (!item.is_string()) return k8s::Error{path + ": expected an array of strings, got a " + item.type_name()};
      out.push_back(item.get<std::string>());
    }
    return out;
  }
  // An object of string arrays (UserInfo.extra); null values are skipped.
  k8s::Expected<std::map<std::string, std::vector<std::string>>> string_arrays(const char* key) const {
    auto object = this->object(key);
    if (!object) return object.error();
    std::map<std::string, std::vector<std::string>> out;
    for (const auto& [name, values] : object->object_.items()) {
      if (values.is_null()) continue;
      auto list = string_array(values, object->where(name.c_str()));
      if (!list) return list.error();
      out.emplace(name, std::move(*list));
    }
    return out;
  }
  // The object under `key` ({} when absent); an error when it is not one.
  k8s::Expected<Reader> object(const char* key) const {
    static const json empty = json::object();
    const json* v = field(key);
    if (v == nullptr) return Reader(empty, where(key));
    if (!v->is_object()) return k8s::Error{where(key) + ": expected an object, got " + v->type_name()};
    return Reader(*v, where(key));
  }

 private:
  const json& object_;
  std::string path_;
};

// The document and its status, checking that it is the kind we asked for.
k8s::Expected<json> parse_review(std::string_view body, std::string_view kind) {
  json doc = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return k8s::Error{"malformed JSON"};
  if (!doc.is_object())
    return k8s::Error{std::string("expected a ") + std::string(kind) + " object, got " + doc.type_name()};
  auto actual = Reader(doc, "").string("kind");
  if (!actual) return actual.error();
  if (!actual->empty() && *actual != kind) {
    return k8s::Error{"expected kind " + std::string(kind) + ", got " + *actual};
  }
  return doc;
}

void set_if_not_empty(json& object, const char* key, const std::string& value) {
  if (!value.empty()) object[key] = value;
}

}  // namespace

std::string token_review_body(std::string_view token) {
  return json{{"apiVersion", "authentication.k8s.io/v1"}, {"kind", "TokenReview"}, {"spec", {{"token", token}}}}.dump(
      -1, ' ', false, json::error_handler_t::replace);  // a token or path need not be UTF-8
}

k8s::Expected<AuthenticationResult> parse_token_review(std::string_view body) {
  auto doc = parse_review(body, "TokenReview");
  if (!doc) return doc.error();
  auto status = Reader(*doc, "").object("status");
  if (!status) return status.error();
  auto authenticated = status->boolean("authenticated");
  auto error = status->string("error");
  auto user = status->object("user");
  if (!authenticated) return authenticated.error();
  if (!error) return error.error();
  if (!user) return user.error();
  if (!*authenticated) {
    return error->empty() ? AuthenticationResult::not_applicable() : AuthenticationResult::rejected(*error);
  }
  UserInfo info;
  auto username = user->string("username");
  auto uid = user->string("uid");
  auto groups = user->strings("groups");
  auto extra = user->string_arrays("extra");
  if (!username) return username.error();
  if (!uid) return uid.error();
  if (!groups) return groups.error();
  if (!extra) return extra.error();
  info.name = std::move(*username);
  info.uid = std::move(*uid);
  info.groups = std::move(*groups);
  info.extra = std::move(*extra);
  return AuthenticationResult::authenticated(std::move(info));
}

std::string subject_access_review_body(const UserInfo& user, const RequestAttributes& attributes) {
  json spec = json::object();
  set_if_not_empty(spec, "user", user.name);
  set_if_not_empty(spec, "uid", user.uid);
  if (!user.groups.empty()) spec["groups"] = user.groups;
  if (!user.extra.empty()) spec["extra"] = user.extra;
  json attrs = json::object();
  if (attributes.resource_request) {
    set_if_not_empty(attrs, "namespace", attributes.namespace_name);
    set_if_not_empty(attrs, "verb", attributes.verb);
    set_if_not_empty(attrs, "group", attributes.api_group);
    set_if_not_empty(attrs, "version", attributes.api_version);
    set_if_not_empty(attrs, "resource", attributes.resource);
    set_if_not_empty(attrs, "subresource", attributes.subresource);
    set_if_not_empty(attrs, "name", attributes.name);
    spec["resourceAttributes"] = std::move(attrs);
  } else {
    set_if_not_empty(attrs, "path", attributes.path);
    set_if_not_empty(attrs, "verb", attributes.verb);
    spec["nonResourceAttributes"] = std::move(attrs);
  }
  return json{{"apiVersion", "authorization.k8s.io/v1"}, {"kind", "SubjectAccessReview"}, {"spec", std::move(spec)}}
      .dump(-1, ' ', false, json::error_handler_t::replace);  // a token or path need not be UTF-8
}

k8s::Expected<Decision> parse_subject_access_review(std::string_view body) {
  auto doc = parse_review(body, "SubjectAccessReview");
  if (!doc) return doc.error();
  auto status = Reader(*doc, "").object("status");
  if (!status) return status.error();
  auto allowed = status->boolean("allowed");
  auto denied = status->boolean("denied");
  auto reason = status->string("reason");
  auto evaluation_error = status->string("evaluationError");
  for (const auto* e : {&allowed, &denied}) {
    if (!*e) return e->error();
  }
  if (!reason) return reason.error();
  if (!evaluation_error) return evaluation_error.error();
  return Decision{*allowed, *denied, std::move(*reason), std::move(*evaluation_error)};
}

}  // namespace fedmetrics::auth
