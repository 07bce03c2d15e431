#include "fedmetrics/k8s/expected.hpp"

namespace fedmetrics::k8s {

std::string_view to_string(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::Refused: return "refused";
    case ErrorKind::Timeout: return "timeout";
    case ErrorKind::Tls: return "tls";
    case ErrorKind::Network: return "network";
    case ErrorKind::HttpStatus: return "http_status";
    case ErrorKind::MalformedResponse: return "malformed_response";
    case ErrorKind::TooLarge: return "too_large";
    case ErrorKind::Throttled: return "throttled";
    case ErrorKind::LeftOut: return "left_out";
    case ErrorKind::NotFound: return "not_found";
    case ErrorKind::Conflict: return "conflict";
    case ErrorKind::Invalid: return "invalid";
    case ErrorKind::Unauthorized: return "unauthorized";
    case ErrorKind::Forbidden: return "forbidden";
    case ErrorKind::Internal: return "internal";
  }
  return "unknown";
}

}  // namespace fedmetrics::k8s
