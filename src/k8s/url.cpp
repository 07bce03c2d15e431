#include "fedmetrics/k8s/url.hpp"

#include <algorithm>

#include "fedmetrics/k8s/ascii.hpp"

namespace fedmetrics::k8s {

namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool percent_decode(std::string_view in, std::string& out, bool plus_is_space) {
  out.clear();
  out.reserve(in.size());
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

std::vector<std::string> split_path(std::string_view path) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= path.size()) {
    auto slash = path.find('/', start);
    if (slash == std::string_view::npos) slash = path.size();
    if (slash > start) parts.emplace_back(path.substr(start, slash - start));
    start = slash + 1;
  }
  return parts;
}

}  // namespace

bool percent_decode_path(std::string_view in, std::string& out) { return percent_decode(in, out, false); }

QueryValues parse_query(std::string_view query) {
  QueryValues out;
  std::size_t start = 0;
  while (start <= query.size()) {
    auto amp = query.find('&', start);
    if (amp == std::string_view::npos) amp = query.size();
    std::string_view pair = query.substr(start, amp - start);
    start = amp + 1;
    // Go 1.17+ rejects pairs containing ';' (url.ParseQuery); they are skipped.
    if (pair.empty() || pair.find(';') != std::string_view::npos) continue;
    auto eq = pair.find('=');
    std::string key, value;
    if (!percent_decode(pair.substr(0, eq), key, true)) continue;
    if (eq != std::string_view::npos && !percent_decode(pair.substr(eq + 1), value, true)) continue;
    out.emplace(std::move(key), std::move(value));  // emplace keeps the first value
  }
  return out;
}

std::string query_value(const QueryValues& query, std::string_view key) {
  auto it = query.find(key);
  return it == query.end() ? std::string() : it->second;
}

std::optional<RequestTarget> parse_request_target(std::string_view target) {
  auto question = target.find('?');
  std::string path;
  if (!percent_decode_path(target.substr(0, question), path)) return std::nullopt;
  RequestTarget out;
  out.segments = split_path(path);
  if (question != std::string_view::npos) out.query = parse_query(target.substr(question + 1));
  return out;
}

bool query_bool(const QueryValues& query, std::string_view key) {
  auto it = query.find(key);
  if (it == query.end()) return false;
  const auto& v = it->second;
  if (v == "0") return false;
  return !iequals(v, "false");
}

}  // namespace fedmetrics::k8s
