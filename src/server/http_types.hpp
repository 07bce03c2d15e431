#pragma once
// Building responses: JSON, text, and the one mapping from a Kubernetes
// Status to HTTP (docs/architecture.md, "Conventions": an error maps to HTTP
// in exactly one place).
#include <string>

#include "fedmetrics/k8s/status.hpp"
#include "fedmetrics/transport/http_message.hpp"

namespace fedmetrics::server {

using transport::HttpRequest;
using transport::HttpResponse;

inline HttpResponse json_response(std::string body, int status = 200) {
  return HttpResponse{status, "application/json", std::move(body), {}};
}

inline HttpResponse text_response(std::string body, int status = 200) {
  return HttpResponse{status, "text/plain; charset=utf-8", std::move(body), {}};
}

inline HttpResponse status_response(const k8s::Status& status) {
  HttpResponse r{status.code, "application/json", status.to_json_string(), {}};
  r.headers.emplace_back("X-Content-Type-Options", "nosniff");
  // RFC 9110 section 15.5.6: a 405 lists the methods the target supports;
  // every resource served here is read-only (watch included: GET, HEAD).
  if (status.code == 405) r.headers.emplace_back("Allow", "GET, HEAD");
  return r;
}

}  // namespace fedmetrics::server
