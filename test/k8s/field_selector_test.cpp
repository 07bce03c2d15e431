// Field selectors against apimachinery's pkg/fields/selector.go plus the
// metadata.name / metadata.namespace restriction of metrics.k8s.io (wire
// contract sections 4.2 and 4.3).
#include <cstdint>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "fedmetrics/k8s/field_selector.hpp"

using fedmetrics::k8s::FieldRequirement;
using fedmetrics::k8s::FieldSelector;

namespace {

std::string canonical(const std::string& text) {
  auto parsed = FieldSelector::parse(text);
  if (!parsed) return "<error> " + parsed.error().message;
  return parsed->to_string();
}

std::string parse_error(const std::string& text) {
  auto parsed = FieldSelector::parse(text);
  if (parsed) return "<no error> " + parsed->to_string();
  return parsed.error().message;
}

std::string unknown_field(const std::string& quoted_field) {
  return quoted_field + " is not a known field selector: only \"metadata.name\", \"metadata.namespace\"";
}

struct Row {
  std::string input;
  std::string expected;
};

}  // namespace

TEST_CASE("FieldSelector: parses to the canonical sorted, escaped form") {
  const std::vector<Row> rows = {
      {"", ""},
      {",", ""},
      {",,metadata.name=foo,,", "metadata.name=foo"},  // empty terms are ignored
      {"metadata.name=foo", "metadata.name=foo"},
      {"metadata.name==foo", "metadata.name=foo"},  // "==" prints as "="
      {"metadata.name!=foo", "metadata.name!=foo"},
      {"metadata.name=", "metadata.name="},
      {"metadata.name!=", "metadata.name!="},
      {"metadata.namespace=ns,metadata.name=foo", "metadata.name=foo,metadata.namespace=ns"},
      {"metadata.namespace!=b,metadata.namespace!=a", "metadata.namespace!=a,metadata.namespace!=b"},
      // Ordered by the printed term, so the output is canonical (upstream would keep the
      // raw-term order here: "metadata.name==b" sorts before "metadata.name=a").
      {"metadata.name==b,metadata.name=a", "metadata.name=a,metadata.name=b"},
      {"metadata.name!=a,metadata.name=a", "metadata.name!=a,metadata.name=a"},
      // Escapes in values, re-escaped on output.
      {"metadata.name=a\\,b", "metadata.name=a\\,b"},
      {"metadata.name=a\\=b\\\\c", "metadata.name=a\\=b\\\\c"},
      {"metadata.name=\\\\", "metadata.name=\\\\"},
      {"metadata.name=a\\,b,metadata.namespace=c", "metadata.name=a\\,b,metadata.namespace=c"},
      // The first operator wins; "!=" and "==" are tried before "=" at each position.
      {"metadata.name=!x", "metadata.name=!x"},
      {"metadata.name==!x", "metadata.name=!x"},
      {"metadata.name=caf\xc3\xa9", "metadata.name=caf\xc3\xa9"},
      {"metadata.name=a b", "metadata.name=a b"},  // no whitespace trimming in values
  };
  for (const auto& row : rows) {
    INFO("input: [" << row.input << "]");
    CHECK(canonical(row.input) == row.expected);
  }
}

TEST_CASE("FieldSelector: parse error texts") {
  const std::vector<Row> rows = {
      {"foo", "invalid selector: 'foo'; can't understand 'foo'"},
      {"metadata.name", "invalid selector: 'metadata.name'; can't understand 'metadata.name'"},
      {"metadata.name!foo", "invalid selector: 'metadata.name!foo'; can't understand 'metadata.name!foo'"},
      // Terms are sorted before parsing, so "bar" is looked at first.
      {"metadata.name=a,bar", "invalid selector: 'metadata.name=a,bar'; can't understand 'bar'"},
      {"zzz,aaa", "invalid selector: 'zzz,aaa'; can't understand 'aaa'"},
      // Go prints the offending rune with %v: its decimal code point.
      {"metadata.name=a=b", "invalid field selector: unescaped character in value: 61"},
      {"metadata.name!==b", "invalid field selector: unescaped character in value: 61"},
      {"metadata.name===b", "invalid field selector: unescaped character in value: 61"},
      {"metadata.name=x!=y", "invalid field selector: unescaped character in value: 61"},
      {"metadata.name=a\\x", "invalid field selector: invalid escape sequence: \\x"},
      {"metadata.name=a\\", "invalid field selector: invalid escape sequence: \\"},
      {"metadata.name=\\\\\\", "invalid field selector: invalid escape sequence: \\"},
      {"metadata.name=\\\xc3\xa9", "invalid field selector: invalid escape sequence: \\\xc3\xa9"},
      {"metadata.name=\\\xff", "invalid field selector: invalid escape sequence: \\\xef\xbf\xbd"},  // U+FFFD
      // Only the two fields metrics-server knows (DefaultMetaV1FieldSelectorConversion).
      {"spec.nodeName=n1", unknown_field("\"spec.nodeName\"")},
      {"status.phase!=Running", unknown_field("\"status.phase\"")},
      {"metadata.uid=x", unknown_field("\"metadata.uid\"")},
      {"=x", unknown_field("\"\"")},
      {" metadata.name=x", unknown_field("\" metadata.name\"")},
      {"Metadata.name=x", unknown_field("\"Metadata.name\"")},
      {"b.x=1,a.x=1", unknown_field("\"a.x\"")},  // first in sorted order
      {"a\"b=1", unknown_field("\"a\\\"b\"")},    // quoted like Go's %q
      {"\xff=1", unknown_field("\"\\xff\"")},
      // Parsing finishes before fields are checked: a later syntax error wins.
      {"aaa.unknown=x,metadata.name=y=z", "invalid field selector: unescaped character in value: 61"},
  };
  for (const auto& row : rows) {
    INFO("input: [" << row.input << "]");
    CHECK(parse_error(row.input) == row.expected);
  }
}

TEST_CASE("FieldSelector: requirements hold unescaped values and the negation") {
  auto selector = FieldSelector::parse("metadata.namespace==ns,metadata.name!=a\\,b\\\\");
  REQUIRE(selector.ok());
  const std::vector<FieldRequirement> expected = {{"metadata.name", true, "a,b\\"},
                                                  {"metadata.namespace", false, "ns"}};
  CHECK(selector->requirements() == expected);
  CHECK_FALSE(selector->empty());
  CHECK(FieldSelector::parse(",,").value().empty());
  CHECK(FieldSelector().empty());
  CHECK(FieldSelector().to_string().empty());
}

TEST_CASE("FieldSelector: bytes that are not UTF-8 become U+FFFD once a value has escapes, as in Go") {
  // UnescapeValue returns the value untouched when it has no '\\', ',' or '='.
  CHECK(FieldSelector::parse("metadata.name=\xff")->requirements().front().value == "\xff");
  // Otherwise it re-encodes rune by rune, and an invalid byte reads as U+FFFD.
  CHECK(FieldSelector::parse("metadata.name=\xff\\,")->requirements().front().value == "\xef\xbf\xbd,");
}

TEST_CASE("FieldSelector: matching on name and namespace") {
  struct MatchRow {
    std::string selector;
    std::string name;
    std::string namespace_name;
    bool matches;
  };
  const std::vector<MatchRow> rows = {
      {"", "any", "thing", true},
      {"metadata.name=web-1", "web-1", "default", true},
      {"metadata.name=web-1", "web-2", "default", false},
      {"metadata.name==web-1", "web-1", "default", true},
      {"metadata.name!=web-1", "web-1", "default", false},
      {"metadata.name!=web-1", "web-2", "default", true},
      {"metadata.namespace=kube-system", "x", "kube-system", true},
      {"metadata.namespace=kube-system", "x", "default", false},
      {"metadata.namespace!=kube-system", "x", "default", true},
      {"metadata.namespace=", "node-1", "", true},  // cluster-scoped objects have no namespace
      {"metadata.namespace=", "web-1", "default", false},
      {"metadata.name=web-1,metadata.namespace=default", "web-1", "default", true},
      {"metadata.name=web-1,metadata.namespace=default", "web-1", "other", false},
      {"metadata.name=web-1,metadata.namespace=default", "web-2", "default", false},
      {"metadata.name!=a,metadata.name!=b", "c", "", true},
      {"metadata.name!=a,metadata.name!=b", "b", "", false},
      {"metadata.name=a\\,b", "a,b", "", true},
      {"metadata.name=a\\,b", "a\\,b", "", false},
  };
  for (const auto& row : rows) {
    INFO("selector: [" << row.selector << "] name: " << row.name << " namespace: " << row.namespace_name);
    auto selector = FieldSelector::parse(row.selector);
    REQUIRE(selector.ok());
    CHECK(selector->matches(row.name, row.namespace_name) == row.matches);
  }
}

TEST_CASE("FieldSelector: hostile input never crashes and valid output re-parses") {
  std::string many;
  for (int i = 0; i < 20000; ++i) many += "metadata.name!=n" + std::to_string(i) + ",";
  auto big = FieldSelector::parse(many);
  REQUIRE(big.ok());
  CHECK(big->requirements().size() == 20000);
  CHECK(parse_error(std::string(1 << 20, '\\')).find("invalid selector: '") == 0);
  CHECK(parse_error("metadata.name=" + std::string(1 << 20, '=')) ==
        "invalid field selector: unescaped character in value: 61");
  CHECK(canonical(std::string(100000, ',')).empty());

  static const char kAlphabet[] = "metadata.name.namespace=!,\\ x\x00\xff\xc3\xa9";
  const std::string alphabet(kAlphabet, sizeof kAlphabet - 1);
  std::uint64_t state = 0x2545F4914F6CDD1DULL;
  const auto next = [&state] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  int valid = 0;
  for (int i = 0; i < 20000; ++i) {
    // Start most inputs with a known field so that valid selectors do occur.
    std::string input = (next() % 2 == 0) ? "metadata.name" : "metadata.namespace";
    const std::size_t length = next() % 16;
    for (std::size_t j = 0; j < length; ++j) input += alphabet[next() % alphabet.size()];
    auto parsed = FieldSelector::parse(input);
    if (!parsed) {
      CHECK_FALSE(parsed.error().message.empty());
      continue;
    }
    ++valid;
    INFO("input: [" << input << "] canonical: [" << parsed->to_string() << "]");
    auto again = FieldSelector::parse(parsed->to_string());
    REQUIRE(again.ok());
    CHECK(again->to_string() == parsed->to_string());
    CHECK(again->requirements().size() == parsed->requirements().size());
  }
  CHECK(valid > 100);
}
