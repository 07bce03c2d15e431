#include "sim/http_util.hpp"

#include <algorithm>
#include <cctype>

#include "fedmetrics/k8s/ascii.hpp"
#include "sim/table_json.hpp"

namespace fedmetrics::sim::detail {

std::string_view header(const transport::HttpRequest& request, std::string_view name) {
  for (const auto& [k, v] : request.headers) {
    if (k8s::iequals(k, name)) return v;
  }
  return {};
}

transport::HttpResponse json_response(std::string body, int status) {
  return transport::HttpResponse{status, "application/json", std::move(body), {}};
}

transport::HttpResponse text_response(std::string body, int status) {
  return transport::HttpResponse{status, "text/plain; charset=utf-8", std::move(body), {}};
}

transport::HttpResponse status_response(const k8s::Status& status) {
  transport::HttpResponse r{status.code, "application/json", status.to_json_string(), {}};
  r.headers.emplace_back("X-Content-Type-Options", "nosniff");
  return r;
}

// k8s.io/apimachinery/pkg/util/duration.HumanDuration: kubectl's AGE column.
std::string human_duration(std::chrono::nanoseconds d) {
  using std::to_string;
  auto seconds = std::chrono::duration_cast<std::chrono::seconds>(d).count();
  if (seconds < -1) return "<invalid>";
  if (seconds < 0) return "0s";
  if (seconds < 120) return to_string(seconds) + "s";
  auto minutes = seconds / 60;
  if (minutes < 10)
    return seconds % 60 == 0 ? to_string(minutes) + "m" : to_string(minutes) + "m" + to_string(seconds % 60) + "s";
  if (minutes < 180) return to_string(minutes) + "m";
  auto hours = minutes / 60;
  if (hours < 8)
    return minutes % 60 == 0 ? to_string(hours) + "h" : to_string(hours) + "h" + to_string(minutes % 60) + "m";
  if (hours < 48) return to_string(hours) + "h";
  if (hours < 24 * 8)
    return hours % 24 == 0 ? to_string(hours / 24) + "d" : to_string(hours / 24) + "d" + to_string(hours % 24) + "h";
  if (hours < 24 * 365 * 2) return to_string(hours / 24) + "d";
  auto days = (hours / 24) % 365;
  if (hours < 24 * 365 * 8)
    return days == 0 ? to_string(hours / 24 / 365) + "y" : to_string(hours / 24 / 365) + "y" + to_string(days) + "d";
  return to_string(hours / 24 / 365) + "y";
}

nlohmann::json column(const char* name, const char* type, int priority, const char* format) {
  return column(k8s::TableColumnDefinition{name, type, format, "", priority});
}

}  // namespace fedmetrics::sim::detail
