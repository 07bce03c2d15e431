#include "fedmetrics/kube/plain_http.hpp"

#include <utility>  // before Asio's awaitable.hpp

#include <stdexcept>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/url/parse.hpp>

#include "kube/connector.hpp"

// GCC 12 inlines Asio's coroutine frame allocation and then reports its own
// matching operator delete as mismatched: a false positive (see tls_server.cpp).
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

namespace fedmetrics::kube {

namespace {
using tcp = asio::ip::tcp;
constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);
constexpr std::size_t kMaxHeaderBytes = 64 * 1024;
}  // namespace

PlainHttpServer parse_plain_http_url(const std::string& url, std::string peer, const std::string& what) {
  auto parsed = boost::urls::parse_uri(url);
  if (!parsed || parsed->scheme() != "http" || parsed->host_address().empty())
    throw std::runtime_error(what + ": \"" + url + "\" is not an http:// URL");
  PlainHttpServer s;
  s.host = std::string(parsed->host_address());
  if (s.host.size() > 1 && s.host.front() == '[') s.host = s.host.substr(1, s.host.size() - 2);
  s.port = parsed->has_port() ? std::string(parsed->port()) : "80";
  const bool port_ok = !s.port.empty() && s.port.size() <= 5 &&
                       s.port.find_first_not_of("0123456789") == std::string::npos && std::stoi(s.port) >= 1 &&
                       std::stoi(s.port) <= 65535;
  if (!port_ok) throw std::runtime_error(what + ": \"" + url + "\": the port must be a number from 1 to 65535");
  s.host_header = std::string(parsed->encoded_host_and_port());
  s.base_path = std::string(parsed->encoded_path());
  while (!s.base_path.empty() && s.base_path.back() == '/') s.base_path.pop_back();
  s.peer = std::move(peer);
  return s;
}

async::Task<HttpResult> plain_http_get(PlainHttpServer server, std::string target,
                                       std::vector<std::pair<std::string, std::string>> headers, Deadline deadline,
                                       std::size_t max_response_bytes) {
  auto executor = co_await asio::this_coro::executor;
  const std::string address = server.host + ":" + server.port;
  beast::tcp_stream stream(executor);
  stream.expires_at(deadline);
  // An address needs no lookup; a name goes to Asio's resolver, bounded by
  // the stream's deadline only once connected (a hung DNS server holds the
  // request until the resolver gives up).
  boost::system::error_code literal_error;
  auto literal = asio::ip::make_address(server.host, literal_error);
  tcp::resolver::results_type endpoints;
  if (!literal_error) {
    endpoints = tcp::resolver::results_type::create(
        tcp::endpoint(literal, static_cast<unsigned short>(std::stoi(server.port))), server.host, server.port);
  } else {
    tcp::resolver resolver(executor);
    auto [rec, found] = co_await resolver.async_resolve(server.host, server.port, use_tuple);
    if (rec) co_return classify(rec, "resolve", address, X509_V_OK, server.peer);
    endpoints = std::move(found);
  }
  if (std::chrono::steady_clock::now() >= deadline)
    co_return error(Kind::Timeout, "resolve " + address + ": deadline exceeded");
  auto [cec, ep] = co_await stream.async_connect(endpoints, use_tuple);
  (void)ep;
  if (cec) co_return classify(cec, "connect", address, X509_V_OK, server.peer);
  http::request<http::empty_body> req{http::verb::get, server.base_path + target, 11};
  req.set(http::field::host, server.host_header);
  req.set(http::field::user_agent, "fedmetrics");
  req.set(http::field::accept, "application/json");
  req.set(http::field::connection, "close");
  for (const auto& [name, value] : headers) req.set(name, value);
  auto [wec, written] = co_await http::async_write(stream, req, use_tuple);
  (void)written;
  if (wec) co_return classify(wec, "write to", address, X509_V_OK, server.peer);
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.header_limit(kMaxHeaderBytes);
  parser.body_limit(max_response_bytes);
  parser.eager(true);
  auto [rec, read] = co_await http::async_read(stream, buffer, parser, use_tuple);
  (void)read;
  if (rec) co_return classify(rec, "read from", address, X509_V_OK, server.peer);
  boost::system::error_code ignored;
  stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
  auto res = parser.release();
  HttpReply reply;
  reply.status = static_cast<int>(res.result_int());
  reply.content_type = std::string(res[http::field::content_type]);
  reply.body = std::move(res.body());
  co_return reply;
}

}  // namespace fedmetrics::kube
