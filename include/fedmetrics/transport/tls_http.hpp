#pragma once
// Reading an HTTP/1.1 message from a TlsSocket with Beast's parser, fed by
// hand: the parser is Beast's (a well-kept one), the reads are TlsSocket's
// own, so that a message already in OpenSSL's buffer is parsed without a
// trip through the scheduler. Shared by the server and the member client.
// An Asio and Beast header: only their translation units include it.
#include <utility>  // before Asio's awaitable.hpp (Boost + C++20 coroutines)

#include <cstddef>
#include <stdexcept>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/basic_parser.hpp>
#include <boost/beast/http/error.hpp>

#include "fedmetrics/transport/tls_socket.hpp"

namespace fedmetrics::transport {

// Feeds `parser` from `buffer`, then from the socket, until `done()` says so
// or the parser fails. Bytes after the message stay in `buffer` (a
// pipelined request). Errors: Beast's (header_limit, body_limit,
// need_buffer when a buffer_body is full, partial_message when the peer
// closed mid-message, end_of_stream when it closed between messages) or the
// socket's (ssl::error::stream_truncated: closed without close_notify in the
// middle of a message). A header is not allowed to grow past `max_header_bytes` while
// it is incomplete (Beast only checks a header once it has all of it).
// Beast 1.81 keeps a field's name and value lengths in 16 bits
// (basic_fields::element, off_t = std::uint16_t) and throws std::length_error
// from put() for a field line of about 64 KiB or more, whatever header_limit
// says: that is a header too large (header_limit) here, not an exception
// that ends the connection unanswered.
template <bool isRequest, class Done>
boost::asio::awaitable<boost::system::error_code> read_http(TlsSocket& tls, boost::beast::flat_buffer& buffer,
                                                             boost::beast::http::basic_parser<isRequest>& parser,
                                                             std::size_t max_header_bytes, Done done) {
  namespace http = boost::beast::http;
  constexpr std::size_t kReadSize = 16 * 1024;  // one TLS record
  for (;;) {
    // Done already (a header that ends its message: Content-Length 0, 204,
    // 304): reading on would wait for bytes that never come.
    if (parser.is_done() || done()) co_return boost::system::error_code{};
    if (buffer.size() > 0) {
      boost::system::error_code ec;
      std::size_t used = 0;
      try {
        used = parser.put(buffer.data(), ec);
      } catch (const std::length_error&) {
        co_return http::error::header_limit;
      }
      buffer.consume(used);
      if (ec && ec != http::error::need_more) co_return ec;
      if (!ec && done()) co_return boost::system::error_code{};
      if (!ec && used > 0) continue;  // the header is done; its body may follow in the buffer
    }
    if (!parser.is_header_done() && buffer.size() > max_header_bytes) co_return http::error::header_limit;
    auto space = buffer.prepare(kReadSize);
    auto [ec, n] = co_await tls.read_some(static_cast<char*>(space.data()), space.size());
    if (ec == boost::asio::error::eof || ec == boost::asio::ssl::error::stream_truncated) {
      if (!parser.got_some() && buffer.size() == 0) co_return http::error::end_of_stream;
      // Closed without close_notify mid-message: a body that ends with the
      // connection may have been cut, so it is not taken as complete.
      if (ec == boost::asio::ssl::error::stream_truncated) co_return ec;
      boost::system::error_code eof_ec;
      parser.put_eof(eof_ec);  // a body delimited by the end of the connection ends here
      if (eof_ec) co_return eof_ec;
      co_return done() ? boost::system::error_code{} : boost::system::error_code(http::error::partial_message);
    }
    if (ec) co_return ec;
    buffer.commit(n);
  }
}

}  // namespace fedmetrics::transport
