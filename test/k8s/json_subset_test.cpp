// The member answer's first reader (src/k8s/json_subset.hpp) held against
// nlohmann's strict SAX parser, event by event: whenever it reads a text,
// nlohmann reads it too, into the same events; and it does read the subset
// metrics-server writes (a fallback to nlohmann would hide a reader that
// never does).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "k8s/json_events.hpp"
#include "k8s/json_subset.hpp"

using fedmetrics::k8s::detail::read_json_subset;
using nlohmann::json;

namespace {

using Recorder = fedmetrics::test::JsonEventRecorder;

struct Reading {
  bool read = false;
  std::vector<std::string> events;
};

Reading ours(const std::string& text) {
  Recorder r;
  const bool read = read_json_subset(text, r);
  return {read, std::move(r.events)};
}

Reading nlohmanns(const std::string& text) {
  Recorder r;
  const bool read = json::sax_parse(text.begin(), text.end(), &r, json::input_format_t::json, /*strict=*/true);
  return {read, std::move(r.events)};
}

// What must hold for every text: ours reads only what nlohmann reads, into the same events.
void require_agreement(const std::string& text) {
  INFO("text: " << text);
  const Reading mine = ours(text);
  if (!mine.read) return;  // nlohmann's parser decides
  const Reading theirs = nlohmanns(text);
  REQUIRE(theirs.read);
  REQUIRE(mine.events == theirs.events);
}

const std::string kGood =
    R"({"kind":"PodMetricsList","apiVersion":"metrics.k8s.io/v1beta1","metadata":{},"items":[{"metadata":{"name":"web",)"
    R"("namespace":"default","creationTimestamp":null,"labels":{"app":"web"}},"timestamp":"2026-08-22T10:15:20Z",)"
    R"("window":"15s","live":true,"gone":false,"containers":[{"name":"c","usage":{"cpu":"5m","memory":"8Mi"}}],"x":[]}]})";

}  // namespace

TEST_CASE("JSON subset reader: reads what metrics-server writes, as nlohmann does", "[k8s][decode]") {
  const std::vector<std::string> readable = {
      kGood,
      "{}",
      "[]",
      R"("text")",
      "null",
      " \t\r\n{ \"a\" :\n[ true , false , null , { } , [ ] , \"\x7f\" ] }\n\n",  // white space; DEL is allowed raw
      std::string(100000, '[') + std::string(100000, ']'),                       // depth costs no recursion
  };
  for (const std::string& text : readable) {
    INFO("text: " << text.substr(0, 200));
    const Reading mine = ours(text);
    REQUIRE(mine.read);
    const Reading theirs = nlohmanns(text);
    REQUIRE(theirs.read);
    CHECK(mine.events == theirs.events);
  }
}

TEST_CASE("JSON subset reader: outside the subset it stops and leaves the text to nlohmann", "[k8s][decode]") {
  for (const std::string& text : {std::string(R"({"n":1})"), std::string(R"({"n":-1.5e3})"),
                                  std::string(R"({"s":"caf\u00e9"})"), std::string("{\"s\":\"caf\xc3\xa9\"}"),
                                  std::string("\xef\xbb\xbf{}"),  // a byte-order mark, which nlohmann skips
                                  std::string(R"({"s":"a\"b"})")}) {
    INFO("text: " << text);
    CHECK_FALSE(ours(text).read);
    CHECK(nlohmanns(text).read);  // valid JSON: the fallback reads it
  }
}

TEST_CASE("JSON subset reader: never reads a text nlohmann rejects, near the common shape", "[k8s][decode]") {
  // Every prefix (cut short anywhere), every one-byte deletion, and every
  // insertion or replacement of a byte that matters to JSON's grammar.
  const std::string inserted = "\"{}[],: \t\n\fx1n\\\x01\x7f\xc3";
  for (std::size_t i = 0; i <= kGood.size(); ++i) {
    require_agreement(kGood.substr(0, i));
    if (i < kGood.size()) require_agreement(kGood.substr(0, i) + kGood.substr(i + 1));
    for (char c : inserted) {
      require_agreement(kGood.substr(0, i) + c + kGood.substr(i));
      if (i < kGood.size()) require_agreement(kGood.substr(0, i) + c + kGood.substr(i + 1));
    }
  }
  for (const std::string& text :
       {std::string(""), std::string(" "), std::string("nul"), std::string("nullx"), std::string("truefalse"),
        std::string("[1]"), std::string("{\"a\"}"), std::string("{\"a\":}"), std::string("[\"a\" \"b\"]"),
        std::string("{} {}"), std::string("\v{}"), std::string("{}\f")}) {
    require_agreement(text);
  }
}
