#include "fedmetrics/k8s/status.hpp"
#include "fedmetrics/k8s/status_reason.hpp"

#include <nlohmann/json.hpp>

#include "k8s/json_decode.hpp"

namespace fedmetrics::k8s {

namespace {
Status make(int code, std::string reason, std::string message, StatusDetails details = {}) {
  return Status{code, std::move(reason), std::move(message), std::move(details)};
}
}  // namespace

std::string_view reason_for_code(int code) {
  switch (code) {
    case 400: return "BadRequest";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "NotFound";
    case 405: return "MethodNotAllowed";
    case 406: return "NotAcceptable";
    case 409: return "Conflict";
    case 415: return "UnsupportedMediaType";
    case 422: return "Invalid";
    case 429: return "TooManyRequests";
    case 503: return "ServiceUnavailable";
    case 504: return "Timeout";
    default: return code >= 500 ? "InternalError" : "";
  }
}

Status to_status(const Error& error) {
  switch (error.kind) {
    case ErrorKind::NotFound: return make(404, "NotFound", error.message);
    case ErrorKind::Conflict: return make(409, "Conflict", error.message);
    case ErrorKind::Invalid: return make(422, "Invalid", error.message);
    case ErrorKind::Unauthorized: return Status::unauthorized(error.message);
    case ErrorKind::Forbidden: return make(403, "Forbidden", error.message);
    case ErrorKind::Throttled: return make(429, "TooManyRequests", error.message);
    case ErrorKind::Timeout: return Status::timeout(error.message);
    case ErrorKind::Internal: return Status::internal_error(error.message);
    case ErrorKind::HttpStatus:
      if (error.status) {
        Status passed = *error.status;
        if (error.http_status != 0) passed.code = error.http_status;  // the code that came with it
        return passed;
      }
      if (error.http_status >= 400)
        return make(error.http_status, std::string(reason_for_code(error.http_status)), error.message);
      break;
    case ErrorKind::Refused:
    case ErrorKind::Tls:
    case ErrorKind::Network:
    case ErrorKind::MalformedResponse:
    case ErrorKind::TooLarge:
    case ErrorKind::LeftOut: break;
  }
  return Status::service_unavailable(error.message);
}

Status Status::not_found(const GroupResource& what, std::string_view name) {
  return make(404, "NotFound", what.to_string() + " \"" + std::string(name) + "\" not found",
              StatusDetails{std::string(name), what.group, what.resource, {}, 0});
}

Status Status::not_found_resource() {
  return make(404, "NotFound", "the server could not find the requested resource");
}

Status Status::metric_not_found(std::string_view metric, const GroupResource& what, std::string_view name,
                                std::string_view selector) {
  std::string message = "the server could not find the metric " + std::string(metric) + " for " + what.to_string();
  if (!name.empty()) message += " " + std::string(name);
  if (!selector.empty()) message += " with selector " + std::string(selector);
  return make(404, "NotFound", std::move(message));
}

Status Status::bad_request(std::string_view message) { return make(400, "BadRequest", std::string(message)); }

Status Status::unauthorized(std::string_view message) {
  return make(401, "Unauthorized", message.empty() ? "not authorized" : std::string(message));
}

// apiserver responsewriters/errors.go ForbiddenStatusError.
Status Status::forbidden(std::string_view user, std::string_view verb, const GroupResource& what,
                         std::string_view subresource, std::string_view namespace_name, std::string_view name,
                         std::string_view reason) {
  std::string resource = what.resource;
  if (!subresource.empty()) resource += "/" + std::string(subresource);
  std::string message = "User \"" + std::string(user) + "\" cannot " + std::string(verb) + " resource \"" + resource +
                        "\" in API group \"" + what.group + "\"";
  if (namespace_name.empty()) message += " at the cluster scope";
  else message += " in the namespace \"" + std::string(namespace_name) + "\"";
  if (!reason.empty()) message += ": " + std::string(reason);
  std::string prefix = what.to_string();
  if (!name.empty()) prefix += " \"" + std::string(name) + "\"";
  return make(403, "Forbidden", prefix + " is forbidden: " + message,
              StatusDetails{std::string(name), what.group, what.resource, {}, 0});
}

Status Status::forbidden_path(std::string_view user, std::string_view verb, std::string_view path) {
  return make(403, "Forbidden",
              "forbidden: User \"" + std::string(user) + "\" cannot " + std::string(verb) + " path \"" +
                  std::string(path) + "\"");
}

Status Status::conflict(const GroupResource& what, std::string_view name, std::string_view why) {
  return make(
      409, "Conflict",
      "Operation cannot be fulfilled on " + what.to_string() + " \"" + std::string(name) + "\": " + std::string(why),
      StatusDetails{std::string(name), what.group, what.resource, {}, 0});
}

Status Status::method_not_allowed(std::string_view verb, const GroupResource& what) {
  return make(405, "MethodNotAllowed",
              std::string(verb) + " is not supported on resources of kind \"" + what.to_string() + "\"",
              StatusDetails{{}, what.group, what.resource, {}, 0});
}

Status Status::not_acceptable(std::string_view types) {
  return make(406, "NotAcceptable", "only the following media types are accepted: " + std::string(types));
}

Status Status::service_unavailable(std::string_view message, std::int32_t retry_after_seconds) {
  return make(503, "ServiceUnavailable", std::string(message), StatusDetails{{}, {}, {}, {}, retry_after_seconds});
}

Status Status::timeout(std::string_view message, std::int32_t retry_after_seconds) {
  return make(504, "Timeout", "Timeout: " + std::string(message), StatusDetails{{}, {}, {}, {}, retry_after_seconds});
}

Status Status::internal_error(std::string_view error) {
  return make(500, "InternalError", "Internal error occurred: " + std::string(error),
              StatusDetails{{}, {}, {}, {StatusCause{{}, std::string(error), {}}}, 0});
}

nlohmann::json Status::to_json() const {
  nlohmann::json out = {{"kind", "Status"},
                        {"apiVersion", "v1"},
                        {"metadata", nlohmann::json::object()},
                        {"status", "Failure"},
                        {"message", message}};
  if (!reason.empty()) out["reason"] = reason;
  if (!details.empty()) {
    nlohmann::json d = nlohmann::json::object();
    if (!details.name.empty()) d["name"] = details.name;
    if (!details.group.empty()) d["group"] = details.group;
    if (!details.kind.empty()) d["kind"] = details.kind;
    if (!details.causes.empty()) {
      nlohmann::json causes = nlohmann::json::array();
      for (const auto& c : details.causes) {
        nlohmann::json cause = nlohmann::json::object();
        if (!c.reason.empty()) cause["reason"] = c.reason;
        if (!c.message.empty()) cause["message"] = c.message;
        if (!c.field.empty()) cause["field"] = c.field;
        causes.push_back(std::move(cause));
      }
      d["causes"] = std::move(causes);
    }
    if (details.retry_after_seconds != 0) d["retryAfterSeconds"] = details.retry_after_seconds;
    out["details"] = std::move(d);
  }
  out["code"] = code;
  return out;
}

// Messages may quote client input (a path, a name) that is not UTF-8:
// replace such bytes rather than throw.
std::string Status::to_json_string() const {
  return to_json().dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Expected<Status> Status::from_json(const nlohmann::json& in) {
  ObjectReader r(in, "");
  if (!r.ok()) return r.error();
  auto kind = r.string("kind", Need::Required);
  if (!kind) return kind.error();
  if (*kind != "Status") return Error{"kind: expected \"Status\", got \"" + *kind + "\""};
  Status s;
  auto code = r.integer("code", Need::Optional);
  if (!code) return code.error();
  s.code = static_cast<int>(*code);
  auto reason = r.string("reason", Need::Optional);
  if (!reason) return reason.error();
  s.reason = *reason;
  auto message = r.string("message", Need::Optional);
  if (!message) return message.error();
  s.message = *message;
  if (auto d = r.object("details", Need::Optional); !d) {
    return d.error();
  } else if (d->present()) {
    for (auto [field, target] : {std::pair{"name", &s.details.name}, std::pair{"group", &s.details.group},
                                 std::pair{"kind", &s.details.kind}}) {
      auto v = d->string(field, Need::Optional);
      if (!v) return v.error();
      *target = *v;
    }
    auto retry = d->integer("retryAfterSeconds", Need::Optional);
    if (!retry) return retry.error();
    s.details.retry_after_seconds = static_cast<std::int32_t>(*retry);
  }
  return s;
}

}  // namespace fedmetrics::k8s
