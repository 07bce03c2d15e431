#pragma once
// Reading an HTTP/1.1 message from a TlsSocket with Beast's parser, fed by
// hand: the parser is Beast's (a well-kept one), the reads are TlsSocket's
// own, so that a message already in OpenSSL's buffer is parsed without a
// trip through the scheduler. Shared by the server and the member client.
// An Asio and Beast header: only their translation units include it.
#include <utility>  // before Asio's awaitable.hpp (Boost + C++20 coroutines)

#include <cstddef>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/basic_parser.hpp>
#include <boost/beast/http/error.hpp>

#include "fedmetrics/transport/http_parse.hpp"
#include "fedmetrics/transport/tls_socket.hpp"

namespace fedmetrics::transport {

// Feeds `parser` from `buffer` (parse_buffered), then from the socket, until
// `done()` says so or the parser fails. Bytes after the message stay in
// `buffer` (a pipelined request). Errors: parse_buffered's (header_limit,
// body_limit, need_buffer when a buffer_body is full, Beast's parse errors),
// partial_message when the peer closed mid-message, end_of_stream when it
// closed between messages, or the socket's (ssl::error::stream_truncated:
// closed without close_notify in the middle of a message).
template <bool isRequest, class Done>
boost::asio::awaitable<boost::system::error_code> read_http(TlsSocket& tls, boost::beast::flat_buffer& buffer,
                                                            boost::beast::http::basic_parser<isRequest>& parser,
                                                            std::size_t max_header_bytes, Done done) {
  namespace http = boost::beast::http;
  constexpr std::size_t kReadSize = 16 * 1024;  // one TLS record
  for (;;) {
    if (auto ec = parse_buffered(parser, buffer, max_header_bytes, done); ec != http::error::need_more) co_return ec;
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
