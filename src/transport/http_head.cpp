#include "fedmetrics/transport/http_head.hpp"

#include <charconv>

namespace fedmetrics::transport {

namespace {

// RFC 9110 section 5.6.2: tchar.
bool is_token_char(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  switch (c) {
    case '!': case '#': case '$': case '%': case '&': case '\'': case '*': case '+':
    case '-': case '.': case '^': case '_': case '`': case '|': case '~':
      return true;
    default:
      return false;
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

}  // namespace fedmetrics::transport
