#include "fedmetrics/aggregator/member_cluster.hpp"

namespace fedmetrics::aggregator {

// Stable snake_case words: they start every partial-failure warning and are
// meant to become a Prometheus label value as they are.
std::string_view to_string(MemberError::Kind kind) {
  switch (kind) {
    case MemberError::Kind::Refused: return "refused";
    case MemberError::Kind::Timeout: return "timeout";
    case MemberError::Kind::Tls: return "tls";
    case MemberError::Kind::Network: return "network";
    case MemberError::Kind::HttpStatus: return "http_status";
    case MemberError::Kind::MalformedResponse: return "malformed_response";
    case MemberError::Kind::TooLarge: return "too_large";
    case MemberError::Kind::Throttled: return "throttled";
    case MemberError::Kind::LeftOut: return "left_out";
  }
  return "unknown";
}

}  // namespace fedmetrics::aggregator
