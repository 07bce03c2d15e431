#include <catch2/catch.hpp>

#include "fedmetrics/k8s/status_reason.hpp"
#include "fedmetrics/plugin/kubectl_messages.hpp"

using namespace fedmetrics::plugin;
using Texts = std::vector<std::string>;

TEST_CASE("kubectl messages: Warning headers as client-go reads them", "[plugin][kubectl]") {
  struct Row {
    const char* header;
    Texts texts;
  };
  for (const auto& [header, texts] : std::vector<Row>{
           {R"(299 - "member2: connect 127.0.0.1:1: connection refused")",
            {"member2: connect 127.0.0.1:1: connection refused"}},
           {R"(299 - "a \"quoted\" name \\ here")", {R"(a "quoted" name \ here)"}},
           {R"(299 fedmetrics "with an agent" "Sat, 25 Aug 2012 23:34:45 GMT")", {"with an agent"}},
           {R"(299 - "one", 299 - "two")", {"one", "two"}},
           {R"(199 - "not a 299")", {}},
           {R"(299 - "")", {}},
           {R"(299 - unquoted)", {}},
           {R"(299 - "unterminated)", {}},
           {R"(299 - "good", garbage)", {"good"}},
           {"", {}},
       }) {
    INFO(header);
    CHECK(parse_warning_header(header) == texts);
  }
  // Printed once each, in order, as kubectl's deduplicating warning writer.
  CHECK(
      warning_lines({R"(299 - "member2: left out")", R"(299 - "member3: timeout")", R"(299 - "member2: left out")"}) ==
      Texts{"Warning: member2: left out", "Warning: member3: timeout"});
}

TEST_CASE("kubectl messages: server errors as kubectl prints them", "[plugin][kubectl]") {
  struct Row {
    int status;
    const char* body;
    const char* name;
    const char* line;
  };
  for (
      const auto& [status, body, name, line] : std::vector<Row>{
          {503,
           R"({"kind":"Status","apiVersion":"v1","status":"Failure","reason":"ServiceUnavailable","code":503,
                "message":"no member cluster could serve metrics.k8s.io: member1: connection refused"})",
           "",
           "Error from server (ServiceUnavailable): no member cluster could serve metrics.k8s.io: member1: connection "
           "refused"},
          {404,
           R"({"kind":"Status","reason":"NotFound","code":404,"message":"podmetrics.metrics.k8s.io \"x\" not found"})",
           "x", R"(Error from server (NotFound): podmetrics.metrics.k8s.io "x" not found)"},
          {403,
           R"({"kind":"Status","reason":"Forbidden","code":403,"message":"pods.metrics.k8s.io is forbidden: User \"u\" cannot list"})",
           "", R"(Error from server (Forbidden): pods.metrics.k8s.io is forbidden: User "u" cannot list)"},
          {401, R"({"kind":"Status","reason":"Unauthorized","code":401,"message":"Unauthorized"})", "",
           "error: You must be logged in to the server (Unauthorized)"},
          {500, R"({"kind":"Status","code":500,"message":"no reason given"})", "",
           "Error from server: no reason given"},
          // Not a Status: client-go's generic errors, naming the request.
          {503, "service unavailable\n", "",
           "Error from server (ServiceUnavailable): the server is currently unable to handle the request (get "
           "pods.metrics.k8s.io)"},
          {404, "404 page not found", "p",
           "Error from server (NotFound): the server could not find the requested resource (get pods.metrics.k8s.io "
           "p)"},
          {401, "", "",
           "error: You must be logged in to the server (the server has asked for the client to provide credentials "
           "(get pods.metrics.k8s.io))"},
          {403, "forbidden by policy", "",
           "Error from server (Forbidden): forbidden by policy (get pods.metrics.k8s.io)"},
          {502, "bad gateway", "",
           R"(Error from server (InternalError): an error on the server ("bad gateway") has prevented the request from succeeding (get pods.metrics.k8s.io))"},
          // A body that is not UTF-8 (a gzip or binary answer through the proxy): replaced, never an exception.
          {502, "bad\xff\xfegateway", "",
           "Error from server (InternalError): an error on the server (\"bad\xef\xbf\xbd\xef\xbf\xbdgateway\") has "
           "prevented the request from succeeding (get pods.metrics.k8s.io)"},
          {504, "", "",
           "Error from server (Timeout): the server was unable to return a response in the time allotted, but may "
           "still be processing the request (get pods.metrics.k8s.io)"},
          {418, "teapot", "",
           "Error from server: the server responded with the status code 418 but did not return more information (get "
           "pods.metrics.k8s.io)"},
      }) {
    INFO(status << " " << body);
    CHECK(server_error_line(status, body, "get", "pods.metrics.k8s.io", name) == line);
  }
  CHECK(status_reason(404, R"({"kind":"Status","reason":"NotFound","code":404})") == "NotFound");
  CHECK(status_reason(503, "text") == "ServiceUnavailable");
  CHECK(status_reason(418, "text") == "");
  // An answer that is no Status gets the reason the server would have given
  // its code: one table, k8s's, for both sides.
  for (int code = 400; code < 600; ++code) {
    CAPTURE(code);
    CHECK(status_reason(code, "text") == fedmetrics::k8s::reason_for_code(code));
  }
}

TEST_CASE("kubectl messages: no answer at all", "[plugin][kubectl]") {
  CHECK(connection_error_line(true, "127.0.0.1:6443", "connect 127.0.0.1:6443: connection refused") ==
        "The connection to the server 127.0.0.1:6443 was refused - did you specify the right host or port?");
  CHECK(connection_error_line(false, "127.0.0.1:6443", "TLS handshake 127.0.0.1:6443: TLS: certificate has expired") ==
        "Unable to connect to the server: TLS handshake 127.0.0.1:6443: TLS: certificate has expired");
}
