#include <catch2/catch.hpp>

#include "fedmetrics/k8s/ascii.hpp"

using namespace fedmetrics::k8s;

TEST_CASE("ascii: iequals folds A-Z only", "[k8s][ascii]") {
  CHECK(iequals("Authorization", "authorization"));
  CHECK(iequals("WARNING", "Warning"));
  CHECK(iequals("", ""));
  CHECK_FALSE(iequals("Accept", "Accept-Encoding"));
  CHECK_FALSE(iequals("Accept-Encoding", "Accept"));
  CHECK_FALSE(iequals("bearer", "bearex"));
  // Neighbours of the letters' ranges and bytes past ASCII are compared as they are:
  // '@' and '[' are not letters, and Latin-1's Ä (0xC4) is not ä (0xE4) on the wire.
  CHECK_FALSE(iequals("@", "`"));
  CHECK_FALSE(iequals("[", "{"));
  CHECK_FALSE(iequals("\xC4", "\xE4"));
  static_assert(iequals("Content-Type", "content-type"));
}

TEST_CASE("ascii: istarts_with and ascii_lowercase", "[k8s][ascii]") {
  CHECK(istarts_with("X-Remote-Extra-Scopes", "x-remote-extra-"));
  CHECK(istarts_with("abc", ""));
  CHECK_FALSE(istarts_with("X-Remote", "x-remote-extra-"));
  CHECK(ascii_lowercase("Deployment-NGINX") == "deployment-nginx");
  CHECK(ascii_lowercase("GET") == "get");
  CHECK(ascii_lowercase("\xC4Z") == "\xC4z");
  CHECK(ascii_lowercase("") == "");
}
