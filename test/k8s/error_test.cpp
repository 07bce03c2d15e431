#include <catch2/catch.hpp>

#include <set>

#include "fedmetrics/k8s/status.hpp"
#include "fedmetrics/k8s/status_reason.hpp"

using namespace fedmetrics::k8s;

TEST_CASE("Error: a message first, of kind Invalid unless it says otherwise", "[k8s][error]") {
  const Error decoding{"items[2].usage.cpu: unable to parse quantity's suffix"};
  CHECK(decoding.kind == ErrorKind::Invalid);
  CHECK(decoding.http_status == 0);
  CHECK_FALSE(decoding.status);
  const Error refused{ErrorKind::Refused, "connect 127.0.0.1:1: connection refused"};
  CHECK(refused.kind == ErrorKind::Refused);
  // at() prefixes the message and keeps the rest.
  const Error upstream{ErrorKind::HttpStatus, "HTTP 404", 404, Status::not_found_resource()};
  const Error where = upstream.at("GET /apis");
  CHECK(where.message == "GET /apis: HTTP 404");
  CHECK(where.kind == ErrorKind::HttpStatus);
  CHECK(where.http_status == 404);
  CHECK(where.status == upstream.status);
}

TEST_CASE("to_status: one mapping of every error kind to a code and a reason", "[k8s][error]") {
  struct Row {
    ErrorKind kind;
    int code;
    const char* reason;
    const char* message;  // the Status's message for the Error's "it failed"
  };
  const Row rows[] = {
      {ErrorKind::NotFound, 404, "NotFound", "it failed"},
      {ErrorKind::Conflict, 409, "Conflict", "it failed"},
      {ErrorKind::Invalid, 422, "Invalid", "it failed"},
      {ErrorKind::Unauthorized, 401, "Unauthorized", "it failed"},
      {ErrorKind::Forbidden, 403, "Forbidden", "it failed"},
      {ErrorKind::Throttled, 429, "TooManyRequests", "it failed"},
      {ErrorKind::Timeout, 504, "Timeout", "Timeout: it failed"},
      {ErrorKind::Internal, 500, "InternalError", "Internal error occurred: it failed"},
      {ErrorKind::Refused, 503, "ServiceUnavailable", "it failed"},
      {ErrorKind::Tls, 503, "ServiceUnavailable", "it failed"},
      {ErrorKind::Network, 503, "ServiceUnavailable", "it failed"},
      {ErrorKind::MalformedResponse, 503, "ServiceUnavailable", "it failed"},
      {ErrorKind::TooLarge, 503, "ServiceUnavailable", "it failed"},
      {ErrorKind::LeftOut, 503, "ServiceUnavailable", "it failed"},
      {ErrorKind::HttpStatus, 503, "ServiceUnavailable", "it failed"},  // no code: the server was not usable
  };
  std::set<std::string_view> names;
  for (const auto& row : rows) {
    CAPTURE(to_string(row.kind));
    const Status s = to_status(Error{row.kind, "it failed"});
    CHECK(s.code == row.code);
    CHECK(s.reason == row.reason);
    CHECK(s.message == row.message);
    names.insert(to_string(row.kind));
  }
  CHECK(names.size() == std::size(rows));  // every kind has a name of its own
}

TEST_CASE("to_status: an error status passes on the server's Status, or gets the reason of its code", "[k8s][error]") {
  const Status forbidden{403, "Forbidden", "pods is forbidden: User \"x\" cannot list resource \"pods\"", {}};
  CHECK(to_status(Error{ErrorKind::HttpStatus, "HTTP 403: ...", 403, forbidden}) == forbidden);

  struct Row {
    int code;
    const char* reason;
  };
  // apimachinery's NewGenericServerResponse: every code it names a reason for.
  const Row rows[] = {{400, "BadRequest"},
                      {401, "Unauthorized"},
                      {403, "Forbidden"},
                      {404, "NotFound"},
                      {405, "MethodNotAllowed"},
                      {406, "NotAcceptable"},
                      {409, "Conflict"},
                      {415, "UnsupportedMediaType"},
                      {422, "Invalid"},
                      {429, "TooManyRequests"},
                      {500, "InternalError"},
                      {502, "InternalError"},
                      {503, "ServiceUnavailable"},
                      {504, "Timeout"},
                      {418, ""},
                      {410, ""}};
  for (const auto& row : rows) {
    CAPTURE(row.code);
    CHECK(reason_for_code(row.code) == row.reason);
    const Status s = to_status(Error{ErrorKind::HttpStatus, "HTTP " + std::to_string(row.code), row.code});
    CHECK(s.code == row.code);
    CHECK(s.reason == row.reason);
    CHECK(s.message == "HTTP " + std::to_string(row.code));
  }
}
