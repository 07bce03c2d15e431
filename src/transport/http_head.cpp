#include "fedmetrics/transport/http_head.hpp"

#include <charconv>
#include <cstdio>
#include <ctime>

#include <strings.h>

namespace fedmetrics::transport {

namespace {

// RFC 9110 section 5.6.2: tchar.
bool is_token_char(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  switch (c) {
    case '!':
    case '#':
    case '$':
    case '%':
    case '&':
    case '\'':
    case '*':
    case '+':
    case '-':
    case '.':
    case '^':
    case '_':
    case '`':
    case '|':
    case '~': return true;
    default: return false;
  }
}

bool is_token(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!is_token_char(c)) return false;
  return true;
}

void append_field(std::string& out, std::string_view name, std::string_view value) {
  out.append(name);
  out.append(": ");
  const std::size_t start = out.size();
  out.append(value);
  for (std::size_t i = start; i < out.size(); ++i)
    if (out[i] == '\r' || out[i] == '\n' || out[i] == '\0') out[i] = ' ';
  out.append("\r\n");
}

void append_decimal(std::string& out, std::size_t n) {
  char digits[24];
  auto [end, ec] = std::to_chars(digits, digits + sizeof digits, n);
  (void)ec;
  out.append(digits, end);
}

}  // namespace

std::string_view reason_phrase(int status) {
  switch (status) {
    case 100: return "Continue";
    case 101: return "Switching Protocols";
    case 200: return "OK";
    case 201: return "Created";
    case 202: return "Accepted";
    case 204: return "No Content";
    case 206: return "Partial Content";
    case 301: return "Moved Permanently";
    case 302: return "Found";
    case 303: return "See Other";
    case 304: return "Not Modified";
    case 307: return "Temporary Redirect";
    case 308: return "Permanent Redirect";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 406: return "Not Acceptable";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 410: return "Gone";
    case 411: return "Length Required";
    case 412: return "Precondition Failed";
    case 413: return "Payload Too Large";
    case 414: return "URI Too Long";
    case 415: return "Unsupported Media Type";
    case 417: return "Expectation Failed";
    case 422: return "Unprocessable Entity";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    case 505: return "HTTP Version Not Supported";
    default: return "Unknown";
  }
}

void append_response_head(std::string& out, const ResponseHead& head) {
  const int status = head.status >= 100 && head.status <= 999 ? head.status : 500;
  out.append(head.version == 10 ? "HTTP/1.0 " : "HTTP/1.1 ");
  append_decimal(out, static_cast<std::size_t>(status));
  out.push_back(' ');
  out.append(reason_phrase(status));
  out.append("\r\n");
  append_field(out, "Server", "fedmetrics");
  append_field(out, "Content-Type", head.content_type);
  append_field(out, "Cache-Control", "no-cache, private");
  if (head.fields != nullptr)
    for (const auto& [name, value] : *head.fields)
      if (is_token(name)) append_field(out, name, value);
  if (head.content_length) {
    out.append("Content-Length: ");
    append_decimal(out, *head.content_length);
    out.append("\r\n");
  } else {
    out.append("Transfer-Encoding: chunked\r\n");
  }
  // HTTP/1.1 keeps connections open unless told; HTTP/1.0 closes them unless told.
  if (head.version >= 11 && !head.keep_alive) out.append("Connection: close\r\n");
  if (head.version < 11 && head.keep_alive) out.append("Connection: keep-alive\r\n");
  out.append("\r\n");
}

void append_chunk(std::string& out, std::string_view piece) {
  if (piece.empty()) return;
  char digits[24];
  auto [end, ec] = std::to_chars(digits, digits + sizeof digits, piece.size(), 16);
  (void)ec;
  out.append(digits, end);
  out.append("\r\n");
  out.append(piece);
  out.append("\r\n");
}

std::string http_date(std::chrono::system_clock::time_point when) {
  static constexpr const char* kDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  static constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                            "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  const std::time_t t = std::chrono::system_clock::to_time_t(when);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char text[40];
  const int n = std::snprintf(text, sizeof text, "%s, %02d %s %04d %02d:%02d:%02d GMT", kDays[tm.tm_wday % 7],
                              tm.tm_mday, kMonths[tm.tm_mon % 12], tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
  return std::string(text, n > 0 ? static_cast<std::size_t>(n) : 0);
}

namespace {

// The length of "http://" or "https://" (any case) at the start of `target`, else 0.
std::size_t absolute_scheme_length(std::string_view target) {
  for (std::string_view scheme : {std::string_view("http://"), std::string_view("https://")})
    if (target.size() > scheme.size() && ::strncasecmp(target.data(), scheme.data(), scheme.size()) == 0)
      return scheme.size();
  return 0;
}

// An absolute-form target with a host ("http://host", "https://host:6443/x?y").
bool absolute_form(std::string_view target) {
  const std::size_t scheme = absolute_scheme_length(target);
  if (scheme == 0) return false;
  const std::string_view rest = target.substr(scheme);
  const std::size_t authority = rest.find_first_of("/?");
  return authority != 0 && rest.substr(0, authority).find_first_of(" \t#@") == std::string_view::npos;
}

}  // namespace

std::string origin_form(std::string_view target) {
  if (!absolute_form(target)) return std::string(target);
  std::string_view rest = target.substr(absolute_scheme_length(target));
  const std::size_t path = rest.find_first_of("/?");
  if (path == std::string_view::npos) return "/";
  // RFC 9112 section 3.2.1: an empty path is "/".
  return rest[path] == '?' ? "/" + std::string(rest.substr(path)) : std::string(rest.substr(path));
}

std::optional<HeadRefusal> refuse_request_head(std::string_view method, std::string_view target, unsigned version,
                                               const std::vector<std::pair<std::string, std::string>>& fields) {
  // Go: "malformed HTTP version" for 0.x, 505 for 2.0 and later spoken as HTTP/1.
  if (version < 10) return HeadRefusal{400, "malformed HTTP version"};
  if (version >= 20) return HeadRefusal{505, "unsupported protocol version"};
  // Origin form, absolute form, or "*" for OPTIONS (RFC 9112 section 3.2);
  // Go's url.ParseRequestURI refuses a relative target like "apis/x".
  if (!(target.starts_with('/') || absolute_form(target) || (target == "*" && method == "OPTIONS")))
    return HeadRefusal{400, "malformed request target"};
  int hosts = 0;
  bool content_length = false;
  bool transfer_encoding = false;
  for (const auto& [name, value] : fields) {
    if (value.find_first_of(std::string_view("\0\r\n", 3)) != std::string::npos)
      return HeadRefusal{400, "invalid header value"};
    if (::strcasecmp(name.c_str(), "Host") == 0) ++hosts;
    if (::strcasecmp(name.c_str(), "Content-Length") == 0) content_length = true;
    if (::strcasecmp(name.c_str(), "Transfer-Encoding") == 0) transfer_encoding = true;
  }
  // Go: "missing required Host header" on HTTP/1.1, "too many Host headers" always.
  if (hosts == 0 && version >= 11) return HeadRefusal{400, "missing required Host header"};
  if (hosts > 1) return HeadRefusal{400, "too many Host headers"};
  if (content_length && transfer_encoding) return HeadRefusal{400, "both Content-Length and Transfer-Encoding"};
  return std::nullopt;
}

}  // namespace fedmetrics::transport
