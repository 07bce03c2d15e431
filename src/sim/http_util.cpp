#include "sim/http_util.hpp"

#include <algorithm>
#include <cctype>

namespace fedmetrics::sim::detail {

std::string_view header(const transport::HttpRequest& request, std::string_view name) {
  for (const auto& [k, v] : request.headers) {
    if (k.size() == name.size() && std::equal(k.begin(), k.end(), name.begin(), [](char a, char b) {
          return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
        }))
      return v;
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

}  // namespace fedmetrics::sim::detail
