#pragma once
// The part of reading an HTTP/1.1 message that needs no socket: giving
// Beast's parser the bytes already buffered, with the header bound and Beast
// 1.81's 16-bit field sizes handled (read_http in tls_http.hpp is this plus
// the reads). Beast headers only, no Asio I/O and no coroutines, so that the
// fuzz target fuzz/http_head_fuzz.cpp runs exactly this on raw bytes.
#include <cstddef>
#include <stdexcept>

#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/basic_parser.hpp>
#include <boost/beast/http/error.hpp>

namespace fedmetrics::transport {

// Feeds `parser` from `buffer` until `done()` says so (an empty error
// code), the parser fails (its error), or it needs bytes the buffer does not
// hold (http::error::need_more: read more into `buffer` and call again).
// Bytes after the message stay in `buffer` (a pipelined request). A header
// is not allowed to grow past `max_header_bytes` while it is incomplete
// (Beast only checks a header once it has all of it). Beast 1.81 keeps a
// field's name and value lengths in 16 bits (basic_fields::element, off_t =
// std::uint16_t) and throws std::length_error from put() for a field line of
// about 64 KiB or more, whatever header_limit says: that is a header too
// large (header_limit) here, not an exception that ends the connection
// unanswered.
template <bool isRequest, class Done>
boost::system::error_code parse_buffered(boost::beast::http::basic_parser<isRequest>& parser,
                                         boost::beast::flat_buffer& buffer, std::size_t max_header_bytes, Done done) {
  namespace http = boost::beast::http;
  for (;;) {
    // Done already (a header that ends its message: Content-Length 0, 204,
    // 304): asking for more would wait for bytes that never come.
    if (parser.is_done() || done()) return {};
    if (buffer.size() > 0) {
      boost::system::error_code ec;
      std::size_t used = 0;
      try {
        used = parser.put(buffer.data(), ec);
      } catch (const std::length_error&) {
        return http::error::header_limit;
      }
      buffer.consume(used);
      if (ec && ec != http::error::need_more) return ec;
      if (!ec && done()) return {};
      if (!ec && used > 0) continue;  // the header is done; its body may follow in the buffer
    }
    if (!parser.is_header_done() && buffer.size() > max_header_bytes) return http::error::header_limit;
    return http::error::need_more;
  }
}

}  // namespace fedmetrics::transport
