#pragma once
// Request-target handling shared by the member and control handlers: Go's
// url.PathUnescape and url.ParseQuery semantics (wire contract 0.1, 0.2) and
// header lookup. Internal to the sim module.
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "fedmetrics/k8s/status.hpp"
#include "fedmetrics/transport/http_message.hpp"

namespace fedmetrics::sim::detail {

using Query = std::map<std::string, std::string, std::less<>>;

struct Target {
  std::vector<std::string> segments;  // of the decoded path, empty ones dropped
  Query query;
  bool valid = true;  // false on a bad percent escape
};

Target parse_target(std::string_view target);
std::string query_value(const Query& query, std::string_view key);

// Case-insensitive, the first value.
std::string_view header(const transport::HttpRequest& request, std::string_view name);

transport::HttpResponse json_response(std::string body, int status = 200);
transport::HttpResponse text_response(std::string body, int status = 200);
transport::HttpResponse status_response(const k8s::Status& status);

}  // namespace fedmetrics::sim::detail
