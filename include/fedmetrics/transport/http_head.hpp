#pragma once
// The bytes of an HTTP/1.1 response head and of chunked framing, as plain
// functions free of Beast and Asio. The server writes these itself so that a
// response (head and the start of its body) goes out as one TLS record and
// one send(), instead of through Beast's serializer and its buffer views.
#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fedmetrics::transport {

struct ResponseHead {
  int status = 200;
  unsigned version = 11;  // 10 = HTTP/1.0, 11 = HTTP/1.1
  std::string_view content_type;
  // Extra header fields, in order. A name that is not an RFC 9110 token is
  // left out; CR, LF and NUL in a value become spaces, so that text from a
  // member cluster (a Warning) can never start a header line of its own.
  const std::vector<std::pair<std::string, std::string>>* fields = nullptr;
  std::optional<std::size_t> content_length;  // nullopt: Transfer-Encoding: chunked
  bool keep_alive = true;
};

// Appends "HTTP/1.1 200 OK\r\n...\r\n\r\n": Server, Content-Type,
// Cache-Control, the extra fields, Content-Length or Transfer-Encoding, and
// Connection when it differs from the version's default.
void append_response_head(std::string& out, const ResponseHead& head);

// Appends one chunk of a chunked body ("<hex size>\r\n<piece>\r\n"). An empty
// piece appends nothing: an empty chunk would end the body.
void append_chunk(std::string& out, std::string_view piece);

// Ends a chunked body.
inline constexpr std::string_view kLastChunk = "0\r\n\r\n";

// RFC 9110 section 5.6.7 IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT"), the
// Date every answer carries (Go's net/http adds it to every response).
std::string http_date(std::chrono::system_clock::time_point when);

// Why a request head that Beast parsed must still be refused, as Go's
// net/http refuses it (readRequest and its callers), or nullopt when it is
// acceptable. `version` is Beast's (11 = HTTP/1.1). The status is 400, or 505
// for a major version past 1. Checks: the version; a Host field on HTTP/1.1
// (exactly one); the target in origin form ("/..."), absolute form
// ("http://host/...", which RFC 9112 section 3.2.2 says a server must accept,
// as Go does) or "*" for OPTIONS; no
// NUL, CR or LF inside a field value; not both Content-Length and
// Transfer-Encoding (RFC 9112 section 6.1: a request smuggling vector).
struct HeadRefusal {
  int status = 400;
  std::string_view reason;  // "missing required Host header"
};
std::optional<HeadRefusal> refuse_request_head(std::string_view method, std::string_view target, unsigned version,
                                               const std::vector<std::pair<std::string, std::string>>& fields);

// The target in origin form: an absolute-form target ("https://host/apis?x",
// accepted by refuse_request_head) as its path and query ("/apis?x";
// "https://host?x" is "/?x"); any other target as it is. The handlers route on it.
std::string origin_form(std::string_view target);

// The reason phrase of a status code ("Not Found"); "Unknown" for codes
// without one.
std::string_view reason_phrase(int status);

}  // namespace fedmetrics::transport
