#pragma once
// HTTP helpers shared by the member and control handlers: header lookup and
// response builders. Request targets are decoded by fedmetrics/k8s/url.hpp.
// Internal to the sim module.
#include <chrono>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "fedmetrics/k8s/status.hpp"
#include "fedmetrics/transport/http_message.hpp"

namespace fedmetrics::sim::detail {

// Case-insensitive, the first value.
std::string_view header(const transport::HttpRequest& request, std::string_view name);

transport::HttpResponse json_response(std::string body, int status = 200);
transport::HttpResponse text_response(std::string body, int status = 200);
transport::HttpResponse status_response(const k8s::Status& status);

// k8s.io/apimachinery/pkg/util/duration.HumanDuration: kubectl's AGE column.
std::string human_duration(std::chrono::nanoseconds d);
// A meta.k8s.io/v1 Table columnDefinition without a description (table_json.hpp).
nlohmann::json column(const char* name, const char* type, int priority, const char* format = "");

}  // namespace fedmetrics::sim::detail
