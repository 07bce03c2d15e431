#pragma once
// A GET over plain HTTP, for servers reached in the clear (a member's
// Prometheus at an http:// URL): one connection per request, closed after
// it, with the request's deadline on every phase and a cap on the answer's
// size. Every failure is a classified k8s::Error naming the peer, as the
// HTTPS client's are. No pool: a Prometheus query is one request every
// period, not the serving path's stream of them.
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "fedmetrics/kube/https_client.hpp"
#include "fedmetrics/transport/task.hpp"

namespace fedmetrics::kube {

struct PlainHttpServer {
  std::string host;         // a name or an address (no brackets)
  std::string port;         // "80" when the URL gives none
  std::string host_header;  // the URL's host[:port], as written
  std::string base_path;    // the URL's path without its trailing '/', put before every target
  std::string peer;         // how errors name the server: "Prometheus http://..."
};

// Reads "http://host[:port][/path]"; throws std::runtime_error naming `what`
// when it is not such a URL.
PlainHttpServer parse_plain_http_url(const std::string& url, std::string peer, const std::string& what);

// GET base_path + `target` (path and query, already escaped) by `deadline`;
// an answer above `max_response_bytes` is TooLarge. Runs on the awaiting
// coroutine's executor.
async::Task<HttpResult> plain_http_get(PlainHttpServer server, std::string target,
                                       std::vector<std::pair<std::string, std::string>> headers, Deadline deadline,
                                       std::size_t max_response_bytes);

}  // namespace fedmetrics::kube
