// The response head and chunk framing the server writes itself.
#include <catch2/catch.hpp>

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "fedmetrics/transport/http_head.hpp"

using fedmetrics::transport::append_chunk;
using fedmetrics::transport::append_response_head;
using fedmetrics::transport::kLastChunk;
using fedmetrics::transport::reason_phrase;
using fedmetrics::transport::ResponseHead;

namespace {

std::string head_of(const ResponseHead& head) {
  std::string out;
  append_response_head(out, head);
  return out;
}

}  // namespace

TEST_CASE("http_head: a 200 with a length, kept alive", "[transport][http_head]") {
  std::vector<std::pair<std::string, std::string>> fields{{"Warning", "299 - \"member2: timeout\""},
                                                          {"Warning", "299 - \"member3: refused\""}};
  ResponseHead head{200, 11, "application/json", &fields, 36987, true};
  CHECK(head_of(head) ==
        "HTTP/1.1 200 OK\r\n"
        "Server: fedmetrics\r\n"
        "Content-Type: application/json\r\n"
        "Cache-Control: no-cache, private\r\n"
        "Warning: 299 - \"member2: timeout\"\r\n"
        "Warning: 299 - \"member3: refused\"\r\n"
        "Content-Length: 36987\r\n"
        "\r\n");
}

TEST_CASE("http_head: Connection follows the version's default", "[transport][http_head]") {
  CHECK(head_of({404, 11, "application/json", nullptr, 0, false}).find("\r\nConnection: close\r\n") !=
        std::string::npos);
  CHECK(head_of({404, 11, "application/json", nullptr, 0, true}).find("Connection:") == std::string::npos);
  const std::string keep_10 = head_of({200, 10, "text/plain", nullptr, 2, true});
  CHECK(keep_10.rfind("HTTP/1.0 200 OK\r\n", 0) == 0);
  CHECK(keep_10.find("\r\nConnection: keep-alive\r\n") != std::string::npos);
  CHECK(head_of({200, 10, "text/plain", nullptr, 2, false}).find("Connection:") == std::string::npos);
}

TEST_CASE("http_head: a streamed body is chunked", "[transport][http_head]") {
  const std::string out = head_of({200, 11, "application/json", nullptr, std::nullopt, false});
  CHECK(out.find("\r\nTransfer-Encoding: chunked\r\n") != std::string::npos);
  CHECK(out.find("Content-Length") == std::string::npos);
  std::string body;
  append_chunk(body, "hello");
  append_chunk(body, "");  // would end the body: left out
  append_chunk(body, std::string(300, 'x'));
  body.append(kLastChunk);
  CHECK(body == "5\r\nhello\r\n12c\r\n" + std::string(300, 'x') + "\r\n0\r\n\r\n");
}

TEST_CASE("http_head: a value cannot start a header line of its own", "[transport][http_head]") {
  // A member's error text ends up in a Warning; it must not inject a field.
  std::vector<std::pair<std::string, std::string>> fields{
      {"Warning", "299 - \"a\r\nX-Injected: 1\""}, {"Bad Name", "dropped"}, {"X-Nul", std::string("a\0b", 3)}};
  const std::string out = head_of({200, 11, "application/json", &fields, 1, true});
  CHECK(out.find("\r\nX-Injected") == std::string::npos);
  CHECK(out.find("Warning: 299 - \"a  X-Injected: 1\"\r\n") != std::string::npos);
  CHECK(out.find("Bad Name") == std::string::npos);
  CHECK(out.find("X-Nul: a b\r\n") != std::string::npos);
  // Exactly one blank line, at the end.
  CHECK(out.find("\r\n\r\n") == out.size() - 4);
}

TEST_CASE("http_head: reason phrases", "[transport][http_head]") {
  CHECK(reason_phrase(200) == "OK");
  CHECK(reason_phrase(409) == "Conflict");
  CHECK(reason_phrase(431) == "Request Header Fields Too Large");
  CHECK(reason_phrase(503) == "Service Unavailable");
  CHECK(reason_phrase(599) == "Unknown");
  // A status outside 100..999 is sent as a 500 rather than as a malformed line.
  CHECK(head_of({42, 11, "text/plain", nullptr, 0, true}).rfind("HTTP/1.1 500 Internal Server Error\r\n", 0) == 0);
}

TEST_CASE("http_head: http_date is RFC 9110's IMF-fixdate in GMT", "[transport][http_head]") {
  // RFC 9110 section 5.6.7's own example: 784111777 s after the epoch.
  auto when = std::chrono::system_clock::time_point(std::chrono::seconds(784111777));
  CHECK(fedmetrics::transport::http_date(when) == "Sun, 06 Nov 1994 08:49:37 GMT");
  CHECK(fedmetrics::transport::http_date(std::chrono::system_clock::time_point{}) == "Thu, 01 Jan 1970 00:00:00 GMT");
}

TEST_CASE("http_head: refuse_request_head refuses what Go's net/http refuses", "[transport][http_head]") {
  using fedmetrics::transport::refuse_request_head;
  using Fields = std::vector<std::pair<std::string, std::string>>;
  const Fields host{{"Host", "localhost"}};
  CHECK_FALSE(refuse_request_head("GET", "/apis", 11, host));
  CHECK_FALSE(refuse_request_head("GET", "/", 10, {}));  // HTTP/1.0 needs no Host
  CHECK_FALSE(refuse_request_head("OPTIONS", "*", 11, host));
  CHECK_FALSE(refuse_request_head("GET", "/", 11, {{"host", "a"}, {"Content-Length", "0"}}));
  // Absolute form: a server must accept it (RFC 9112 section 3.2.2), as Go does.
  CHECK_FALSE(refuse_request_head("GET", "https://fedmetrics:6443/apis?x=1", 11, host));
  CHECK_FALSE(refuse_request_head("GET", "HTTP://localhost", 11, host));

  struct Case {
    const char* name;
    std::string method, target;
    unsigned version;
    Fields fields;
    int status;
  };
  const std::vector<Case> cases = {
      {"HTTP/0.9", "GET", "/", 9, host, 400},
      {"HTTP/2.0 spoken as HTTP/1", "GET", "/", 20, host, 505},
      {"HTTP/1.1 without Host", "GET", "/", 11, {}, 400},
      {"two Host fields", "GET", "/", 11, {{"Host", "a"}, {"host", "b"}}, 400},
      {"a relative target", "GET", "apis/metrics.k8s.io", 11, host, 400},
      {"* on GET", "GET", "*", 11, host, 400},
      {"a scheme without a host", "GET", "https:///apis", 11, host, 400},
      {"another scheme", "GET", "ftp://host/apis", 11, host, 400},
      {"a scheme alone", "GET", "http://", 11, host, 400},
      {"NUL in a value", "GET", "/", 11, {{"Host", "a"}, {"X-A", std::string("a\0b", 3)}}, 400},
      {"CR in a value", "GET", "/", 11, {{"Host", "a"}, {"X-A", "a\rb"}}, 400},
      {"Content-Length and Transfer-Encoding",
       "POST",
       "/",
       11,
       {{"Host", "a"}, {"content-length", "5"}, {"Transfer-Encoding", "chunked"}},
       400},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    auto refusal = refuse_request_head(c.method, c.target, c.version, c.fields);
    REQUIRE(refusal);
    CHECK(refusal->status == c.status);
    CHECK_FALSE(refusal->reason.empty());
  }
}

TEST_CASE("http_head: origin_form turns an absolute-form target into the path and query handlers route on",
          "[transport][http_head]") {
  using fedmetrics::transport::origin_form;
  CHECK(origin_form("/apis/metrics.k8s.io/v1beta1/pods?labelSelector=a%3Db") ==
        "/apis/metrics.k8s.io/v1beta1/pods?labelSelector=a%3Db");
  CHECK(origin_form("https://fedmetrics.svc:6443/apis/metrics.k8s.io/v1beta1/pods?limit=1") ==
        "/apis/metrics.k8s.io/v1beta1/pods?limit=1");
  CHECK(origin_form("http://localhost") == "/");
  CHECK(origin_form("HTTPS://localhost?verbose") == "/?verbose");
  CHECK(origin_form("*") == "*");
  CHECK(origin_form("ftp://host/x") == "ftp://host/x");  // refused before it gets here
}
