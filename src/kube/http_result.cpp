#include <nlohmann/json.hpp>

#include "fedmetrics/k8s/metrics_types.hpp"
#include "fedmetrics/k8s/status.hpp"
#include "fedmetrics/kube/https_client.hpp"

namespace fedmetrics::kube {

namespace {

// "HTTP 403", and the Status the server sent in `body`, when it sent one.
Error status_error(int code, const nlohmann::json* body) {
  Error e{ErrorKind::HttpStatus, "HTTP " + std::to_string(code), code};
  if (body == nullptr) return e;
  if (auto status = k8s::Status::from_json(*body); status.ok()) {
    if (!status->message.empty()) e.message += ": " + status->message;
    e.status = std::move(*status);
  }
  return e;
}

}  // namespace

k8s::Expected<nlohmann::json> json_of(const HttpResult& result) {
  if (const auto* e = std::get_if<Error>(&result)) return *e;
  const auto& reply = std::get<HttpReply>(result);
  auto document = k8s::parse_document(reply.body);
  if (reply.status < 200 || reply.status >= 300)
    return status_error(reply.status, document.ok() ? &*document : nullptr);
  if (!document.ok()) return Error{ErrorKind::MalformedResponse, "response is not JSON"};
  return std::move(*document);
}

std::string describe(const HttpResult& result) {
  if (const auto* e = std::get_if<Error>(&result)) return e->message;
  const auto& reply = std::get<HttpReply>(result);
  auto doc = nlohmann::json::parse(reply.body, nullptr, false);
  return status_error(reply.status, doc.is_discarded() ? nullptr : &doc).message;
}

}  // namespace fedmetrics::kube
