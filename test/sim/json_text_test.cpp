// JsonText writes what nlohmann's dump() writes for the same document, keys
// given in nlohmann's (sorted) order: the simulator's pod lists rely on it.
#include <catch2/catch.hpp>

#include <string>

#include <nlohmann/json.hpp>

#include "sim/json_text.hpp"

using fedmetrics::sim::detail::JsonText;
using nlohmann::json;

TEST_CASE("JsonText: the same bytes as nlohmann's dump of the same document", "[sim][json_text]") {
  std::string out;
  JsonText j(out);
  j.begin_object();
  j.key("a").begin_array().end_array();
  j.key("b").begin_object().end_object();
  j.key("c").begin_array().number(1).number(-2).boolean(true).boolean(false).null().string("x").end_array();
  j.key("d")
      .begin_array()
      .begin_object()
      .key("ip")
      .string("10.0.0.1")
      .end_object()
      .begin_object()
      .end_object()
      .end_array();
  j.key("e").begin_object().key("f").begin_object().key("g").number(0).end_object().key("h").string("").end_object();
  j.end_object();
  const json expected = {{"a", json::array()},
                         {"b", json::object()},
                         {"c", {1, -2, true, false, nullptr, "x"}},
                         {"d", json::array({{{"ip", "10.0.0.1"}}, json::object()})},
                         {"e", {{"f", {{"g", 0}}}, {"h", ""}}}};
  CHECK(out == expected.dump());
  CHECK(json::parse(out) == expected);
}

TEST_CASE("JsonText: strings escaped as nlohmann escapes them", "[sim][json_text]") {
  const std::string cases[] = {
      "plain", "quote \" and backslash \\", "\b\f\n\r\t", std::string("nul \0 and \x01 \x1f", 13),
      "\x7f",  "caf\xc3\xa9 \xe2\x82\xac",  "/slash/",    "",
  };
  for (const auto& text : cases) {
    INFO(json(text).dump());
    std::string out;
    JsonText(out).begin_object().key(text).string(text).end_object();
    CHECK(out == json{{text, text}}.dump());
  }
}
