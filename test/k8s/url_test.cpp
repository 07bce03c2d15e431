// Request-target decoding against Go's net/url (url.PathUnescape,
// url.ParseQuery, url.Values.Get) and a Go server's routing on the decoded
// path.
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "fedmetrics/k8s/url.hpp"

using namespace fedmetrics::k8s;

TEST_CASE("url: paths are percent-decoded as url.PathUnescape", "[k8s][url]") {
  std::string out;
  CHECK(percent_decode_path("/a%2Ab%2f", out));
  CHECK(out == "/a*b/");
  CHECK(percent_decode_path("a+b", out));
  CHECK(out == "a+b");  // '+' is literal in a path
  CHECK_FALSE(percent_decode_path("%", out));
  CHECK_FALSE(percent_decode_path("%4", out));
  CHECK_FALSE(percent_decode_path("%zz", out));
}

TEST_CASE("url: queries are form-decoded as url.ParseQuery, first value wins", "[k8s][url]") {
  auto q = parse_query("a=1&a=2&b=x+y%21&c&d=%28%29&bad=%zz&semi=1;2&&%zz=x");
  CHECK(q.at("a") == "1");  // first value wins, as url.Values.Get
  CHECK(q.at("b") == "x y!");
  CHECK(q.at("c").empty());
  CHECK(q.at("d") == "()");
  CHECK(q.count("bad") == 0);
  CHECK(q.count("semi") == 0);  // Go 1.17+ rejects ';'
  CHECK(q.size() == 4);
  CHECK(query_value(q, "a") == "1");
  CHECK(query_value(q, "absent").empty());
  CHECK(parse_query("").empty());
}

TEST_CASE("url: a request target is decoded first and split after", "[k8s][url]") {
  auto t = parse_request_target("/apis/custom.metrics.k8s.io/v1beta2/namespaces/default/pods/%2A%2Fhttp_requests");
  REQUIRE(t);
  CHECK(t->segments == std::vector<std::string>{"apis", "custom.metrics.k8s.io", "v1beta2", "namespaces", "default",
                                                "pods", "*", "http_requests"});
  CHECK(t->query.empty());

  t = parse_request_target("//api//v1/pods/?labelSelector=app%3Dweb&watch=1");
  REQUIRE(t);
  CHECK(t->segments == std::vector<std::string>{"api", "v1", "pods"});  // empty segments dropped
  CHECK(query_value(t->query, "labelSelector") == "app=web");
  CHECK(query_value(t->query, "watch") == "1");

  t = parse_request_target("/");
  REQUIRE(t);
  CHECK(t->segments.empty());

  CHECK_FALSE(parse_request_target("/api/v1/pods%zz?a=1"));
  // A bad escape in the query only drops that pair.
  t = parse_request_target("/healthz?a=%zz&b=2");
  REQUIRE(t);
  CHECK(t->query.count("a") == 0);
  CHECK(query_value(t->query, "b") == "2");
}
