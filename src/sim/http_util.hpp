#pragma once
// HTTP helpers shared by the member and control handlers: header lookup and
// response builders. Request targets are decoded by fedmetrics/k8s/url.hpp.
// Internal to the sim module.
#include <string>
#include <string_view>

#include "fedmetrics/k8s/status.hpp"
#include "fedmetrics/transport/http_message.hpp"

namespace fedmetrics::sim::detail {

// Case-insensitive, the first value.
std::string_view header(const transport::HttpRequest& request, std::string_view name);

transport::HttpResponse json_response(std::string body, int status = 200);
transport::HttpResponse text_response(std::string body, int status = 200);
transport::HttpResponse status_response(const k8s::Status& status);

}  // namespace fedmetrics::sim::detail
