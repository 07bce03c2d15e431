// Raw bytes from a client, read as the server reads them (tls_server.cpp's
// session with read_http): Beast's request_parser with the server's limits,
// fed by parse_buffered (the socket-free part of read_http, with Beast
// 1.81's std::length_error for a field line past 64 KiB taken as
// header_limit) in pieces (the first byte sets their size, as TLS records
// cut a stream anywhere), the head checked by refuse_request_head before any
// body is taken, then the body, then the request target as the server serves
// it (origin_form) through parse_api_request. No sockets: the bytes stand for
// what TlsSocket reads.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include "fedmetrics/transport/http_head.hpp"
#include "fedmetrics/transport/http_parse.hpp"
#include "fuzz_check.hpp"
#include "server/api_request.hpp"

namespace http = boost::beast::http;

// Boost's assertions stay on in this build (no NDEBUG), with one exception:
// Beast 1.81's BOOST_ASSERT(n >= 5) in basic_parser::parse_chunk_header is
// wrong when a chunked body's last "0\r\n\r\n" arrives in pieces ("0\r\n",
// "\r", "\n"): the code after it returns need_more as it should. Beast fixed
// the assertion in boostorg/beast#2861 (Boost 1.86); release builds (NDEBUG)
// never had it. Every other assertion aborts, and libFuzzer reports it.
namespace boost {
void assertion_failed(const char* expr, const char* function, const char* file, long line) {
  if (std::string_view(expr) == "n >= 5" && std::string_view(file).ends_with("beast/http/impl/basic_parser.ipp"))
    return;
  std::fprintf(stderr, "%s:%ld: %s: Assertion `%s' failed.\n", file, line, function, expr);
  std::abort();
}
void assertion_failed_msg(const char* expr, const char* msg, const char* function, const char* file, long line) {
  std::fprintf(stderr, "%s:%ld: %s: Assertion `%s' failed: %s\n", file, line, function, expr, msg);
  std::abort();
}
}  // namespace boost

namespace {

constexpr std::size_t kMaxHeaderBytes = 64 << 10;  // TlsServerOptions' defaults
constexpr std::size_t kMaxBodyBytes = 3 << 20;

// read_http without the socket: parse_buffered on what has arrived, then
// the next `piece` bytes of `input` as the next read; false when the parser
// fails or the input ends first.
template <class Done>
bool feed(http::request_parser<http::string_body>& parser, boost::beast::flat_buffer& buffer, std::string_view& input,
          std::size_t piece, Done done) {
  for (;;) {
    const auto ec = fedmetrics::transport::parse_buffered(parser, buffer, kMaxHeaderBytes, done);
    if (ec != http::error::need_more) return !ec;
    if (input.empty()) return false;
    const std::size_t n = std::min(piece, input.size());
    auto space = buffer.prepare(n);
    std::copy_n(input.data(), n, static_cast<char*>(space.data()));
    buffer.commit(n);
    input.remove_prefix(n);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::size_t piece = 1 + (data[0] % 64) * (data[0] >= 128 ? 256 : 1);
  std::string_view input = fedmetrics::fuzz::as_text(data + 1, size - 1);
  boost::beast::flat_buffer buffer;
  // Pipelined requests: each in turn on the same buffer, as on one connection.
  for (int requests = 0; requests < 4; ++requests) {
    http::request_parser<http::string_body> parser;
    parser.header_limit(static_cast<std::uint32_t>(kMaxHeaderBytes));
    parser.body_limit(kMaxBodyBytes);
    parser.eager(false);
    if (!feed(parser, buffer, input, piece, [&] { return parser.is_header_done(); })) return 0;
    const auto& head = parser.get();
    std::vector<std::pair<std::string, std::string>> fields;
    for (const auto& field : head) fields.emplace_back(field.name_string(), field.value());
    const auto refusal =
        fedmetrics::transport::refuse_request_head(head.method_string(), head.target(), head.version(), fields);
    if (refusal) {
      FUZZ_CHECK(refusal->status == 400 || refusal->status == 505, "refused with %d", refusal->status);
      return 0;
    }
    // An absolute-form target (RFC 9112 section 3.2.2) is accepted and served
    // on its path: what the server serves is origin_form() of it.
    const std::string served = fedmetrics::transport::origin_form(head.target());
    FUZZ_CHECK(served.starts_with('/') || served == "*", "accepted target %.*s, served as %s",
               static_cast<int>(head.target().size()), head.target().data(), served.c_str());
    const auto verb = head.method();
    if (!parser.is_done() && (verb == http::verb::get || verb == http::verb::head)) return 0;
    parser.eager(true);
    if (!feed(parser, buffer, input, piece, [&] { return parser.is_done(); })) return 0;
    const auto request = parser.release();
    FUZZ_CHECK(request.body().size() <= kMaxBodyBytes, "a body past the limit");
    (void)fedmetrics::server::parse_api_request(request.method_string(), served);
  }
  return 0;
}
