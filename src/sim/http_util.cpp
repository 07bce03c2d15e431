#include "sim/http_util.hpp"

#include <algorithm>
#include <cctype>

namespace fedmetrics::sim::detail {

namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool percent_decode(std::string_view in, std::string& out, bool plus_is_space) {
  out.clear();
  for (std::size_t i = 0; i < in.size(); ++i) {
    char c = in[i];
    if (c == '%') {
      if (i + 2 >= in.size()) return false;  // a '%' needs two hex digits after it
      int hi = hex_value(in[i + 1]);
      int lo = hex_value(in[i + 2]);
      if (hi < 0 || lo < 0) return false;
      out.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else if (c == '+' && plus_is_space) {
      out.push_back(' ');
    } else {
      out.push_back(c);
    }
  }
  return true;
}

}  // namespace

Target parse_target(std::string_view target) {
  Target out;
  auto q = target.find('?');
  std::string_view path = target.substr(0, q);
  std::string decoded;
  if (!percent_decode(path, decoded, false)) {
    out.valid = false;
    return out;
  }
  // Decode first, split after: "%2A%2Fhttp_requests" becomes two segments, as on a Go server.
  std::size_t start = 0;
  while (start <= decoded.size()) {
    auto slash = decoded.find('/', start);
    if (slash == std::string::npos) slash = decoded.size();
    if (slash > start) out.segments.push_back(decoded.substr(start, slash - start));
    start = slash + 1;
  }
  if (q == std::string_view::npos) return out;
  std::string_view query = target.substr(q + 1);
  while (!query.empty()) {
    auto amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (pair.empty()) continue;
    auto eq = pair.find('=');
    std::string key, value;
    if (!percent_decode(pair.substr(0, eq), key, true)) continue;
    if (eq != std::string_view::npos && !percent_decode(pair.substr(eq + 1), value, true)) continue;
    out.query.emplace(std::move(key), std::move(value));  // the first value wins (url.Values.Get)
  }
  return out;
}

std::string query_value(const Query& query, std::string_view key) {
  auto it = query.find(key);
  return it == query.end() ? std::string() : it->second;
}

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
