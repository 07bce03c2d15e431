// Label selectors against apimachinery's behaviour (pkg/labels/selector_test.go
// vectors and kube-apiserver's error texts).
#include <cstdint>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "fedmetrics/k8s/label_selector.hpp"

using fedmetrics::k8s::Labels;
using fedmetrics::k8s::LabelSelector;
using fedmetrics::k8s::Requirement;
using fedmetrics::k8s::SelectorOperator;
using nlohmann::json;

namespace {

// The canonical string of a parsed selector, or the error text marked as such,
// so one CHECK shows both kinds of surprise.
std::string canonical(const std::string& text) {
  auto parsed = LabelSelector::parse(text);
  if (!parsed) return "<error> " + parsed.error().message;
  return parsed->to_string();
}

std::string parse_error(const std::string& text) {
  auto parsed = LabelSelector::parse(text);
  if (parsed) return "<no error> " + parsed->to_string();
  return parsed.error().message;
}

std::string object_error(const json& object) {
  auto parsed = LabelSelector::from_object(object);
  if (parsed) return "<no error> " + parsed->to_string();
  return parsed.error().message;
}

const std::string kNameRegexError =
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
    "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const std::string kValueRegexError =
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for "
    "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
const std::string kPrefixRegexError =
    "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const std::string kIntegerError = "for 'Gt', 'Lt' operators, the value must be an integer";

// What the parser reports for an invalid key (the path is a nil *field.Path).
std::string key_error(const std::string& key, const std::string& detail) {
  return "unable to parse requirement: <nil>: Invalid value: \"" + key + "\": " + detail;
}

struct CanonicalRow {
  std::string input;
  std::string canonical;
};

struct ErrorRow {
  std::string input;
  std::string error;
};

}  // namespace

TEST_CASE("LabelSelector: valid selectors parse to the canonical string") {
  const std::vector<CanonicalRow> rows = {
      // pkg/labels/selector_test.go TestSelectorParse / TestSetSelectorParser
      {"x=a,y=b,z=c", "x=a,y=b,z=c"},
      {"", ""},
      {"x!=a,y=b", "x!=a,y=b"},
      {"x=", "x="},
      {"x= ", "x="},
      {"x=,z= ", "x=,z="},
      {"x= ,z= ", "x=,z="},
      {"!x", "!x"},
      {"x>1", "x>1"},
      {"x>1,z<5", "x>1,z<5"},
      {"x notin (abc,,def),bar,z in (),w", "bar,w,x notin (,abc,def),z in ()"},
      {"a in (x,y,notin, z,in)", "a in (in,notin,x,y,z)"},
      {"0.1.2.domain/99 notin (10.10.100.1, tick.tack.clock)", "0.1.2.domain/99 notin (10.10.100.1,tick.tack.clock)"},
      {"\rx", "x"},
      {"this-is-a-dns.domain.com/key-with-dash", "this-is-a-dns.domain.com/key-with-dash"},
      {"foo  in\t (abc)", "foo in (abc)"},
      {"x notin\n (abc)", "x notin (abc)"},
      {"x  notin\t\t\t(abc,def)", "x notin (abc,def)"},
      {"x in (abc,)", "x in (,abc)"},
      {"x in ()", "x in ()"},
      {"x notin ( )", "x notin ()"},
      {"x notin (, a)", "x notin (,a)"},
      {"x,y", "x,y"},
      {"x,y in (a)", "x,y in (a)"},
      {"a ", "a"},
      {"x=a,y!=b,z in (h,i,j)", "x=a,y!=b,z in (h,i,j)"},
      // Sorting: by key (stable), set values sorted, duplicates collapse.
      {"x=a,a=x", "a=x,x=a"},
      {"x in (def,abc)", "x in (abc,def)"},
      {"x in (b,a,b,a)", "x in (a,b)"},
      {"x in (,)", "x in ()"},
      {"x in (a,,b)", "x in (,a,b)"},
      {"z,x=a,x!=b", "x=a,x!=b,z"},
      {"x!=b,x=a", "x!=b,x=a"},
      // Operators keep their spelling.
      {"x==a", "x==a"},
      {"x<-0", "<error> unable to parse requirement: values[0][x]: Invalid value: \"-0\": " + kValueRegexError},
      {"x>007", "x>007"},
      {"x>9223372036854775807", "x>9223372036854775807"},
      // "in"/"notin" are keywords only in operator position.
      {"notin=in", "notin=in"},
      {"in in (in)", "in in (in)"},
      {"in,notin", "in,notin"},
      {"x=notin", "x=notin"},
      // Whitespace is only a separator.
      {" \t\r\nx \n=\t a ,\ny", "x=a,y"},
      {"app=web,tier in (api,frontend)", "app=web,tier in (api,frontend)"},
      {"example.com/app=x", "example.com/app=x"},
  };
  for (const auto& row : rows) {
    INFO("input: [" << row.input << "]");
    CHECK(canonical(row.input) == row.canonical);
  }
}

TEST_CASE("LabelSelector: canonical strings parse back to themselves") {
  const std::vector<std::string> inputs = {"x notin (abc,,def),bar,z in (),w", "!x,y>3,z<0", "a==b,a!=c,a",
                                           "0.1.2.domain/99 notin (10.10.100.1, tick.tack.clock)", "in in (notin,in)"};
  for (const auto& input : inputs) {
    INFO("input: [" << input << "]");
    auto first = LabelSelector::parse(input);
    REQUIRE(first.ok());
    auto second = LabelSelector::parse(first->to_string());
    REQUIRE(second.ok());
    CHECK(*second == *first);
    CHECK(second->to_string() == first->to_string());
  }
}

TEST_CASE("LabelSelector: parse error texts") {
  const std::vector<ErrorRow> rows = {
      // Upstream's invalid vectors.
      // "|" is not special: the value "a||y" is read, and fails validation first.
      {"x=a||y=b", "unable to parse requirement: values[0][x]: Invalid value: \"a||y\": " + kValueRegexError},
      {"x=a=b", "found '=', expected: ',' or 'end of string'"},
      {"x==a==b", "found '==', expected: ',' or 'end of string'"},
      {"!x=a", "found '=', expected: ',' or 'end of string'"},
      {"x<a", "unable to parse requirement: values[0]: Invalid value: \"a\": " + kIntegerError},
      {"x,,y", "found ',', expected: identifier after ','"},
      {",x,y", "found ',', expected: !, identifier, or 'end of string'"},
      {"x nott in (y)", "unable to parse requirement: found 'nott', expected: in, notin, =, ==, !=, gt, lt"},
      {"a in (xyz),", "found '', expected: identifier after ','"},
      {"a in (xyz)b notin ()", "found 'b', expected: ',' or 'end of string'"},
      {"a in (xyz abc)", "unable to parse requirement: found 'abc', expected: ',' or ')'"},
      {"a notin(", "unable to parse requirement: found '', expected: ',', ')' or identifier"},
      {"a (", "unable to parse requirement: found '(', expected: in, notin, =, ==, !=, gt, lt"},
      {"(", "found '(', expected: !, identifier, or 'end of string'"},
      // Every other parser message.
      {"a b", "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"},
      {"a in x", "unable to parse requirement: found 'x' expected: '('"},
      {"a in (x=", "unable to parse requirement: found '=', expected: ',' or ')'"},
      {"a in (x,=)", "unable to parse requirement: found '=', expected: ',', or identifier"},
      {"a in (=)", "unable to parse requirement: found '=', expected: ',', ')' or identifier"},
      // Upstream quirk: ",," consumes the second comma, so ",,)" is an error.
      {"a in (a,,)", "unable to parse requirement: found ')', expected: ',', or identifier"},
      {"a in (,,)", "unable to parse requirement: found ')', expected: ',', or identifier"},
      {"x=(", "unable to parse requirement: found '(', expected: identifier"},
      {"x!==a", "unable to parse requirement: found '=', expected: identifier"},
      {"!", "unable to parse requirement: found '', expected: identifier"},
      {"!,x", "unable to parse requirement: found ',', expected: identifier"},
      {"!=a", "found '!=', expected: !, identifier, or 'end of string'"},
      {"x=a,", "found '', expected: identifier after ','"},
      {"x)", "unable to parse requirement: found ')', expected: in, notin, =, ==, !=, gt, lt"},
      // Gt/Lt values: base-10 int64 only, and also valid label values.
      {"x>", "unable to parse requirement: values[0]: Invalid value: \"\": " + kIntegerError},
      {"x>1.5", "unable to parse requirement: values[0]: Invalid value: \"1.5\": " + kIntegerError},
      {"x>0x10", "unable to parse requirement: values[0]: Invalid value: \"0x10\": " + kIntegerError},
      {"x>1_000", "unable to parse requirement: values[0]: Invalid value: \"1_000\": " + kIntegerError},
      {"x>9223372036854775808",
       "unable to parse requirement: values[0]: Invalid value: \"9223372036854775808\": " + kIntegerError},
      {"x>-5", "unable to parse requirement: values[0][x]: Invalid value: \"-5\": " + kValueRegexError},
      {"x<+5", "unable to parse requirement: values[0][x]: Invalid value: \"+5\": " + kValueRegexError},
      {"x>b@d", "unable to parse requirement: [values[0]: Invalid value: \"b@d\": " + kIntegerError +
                    ", values[0][x]: Invalid value: \"b@d\": " + kValueRegexError + "]"},
      // Two of kube-apiserver's texts, spelled out in full.
      {"-app",
       "unable to parse requirement: <nil>: Invalid value: \"-app\": name part must consist of alphanumeric "
       "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or "
       "'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"},
      {"app=b@d",
       "unable to parse requirement: values[0][app]: Invalid value: \"b@d\": a valid label must be an empty string "
       "or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
       "character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is "
       "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"},
      // Bad set values are reported at their sorted index (upstream passes sets.String.List()).
      {"app in (ok,z@,a@)", "unable to parse requirement: [values[0][app]: Invalid value: \"a@\": " + kValueRegexError +
                                ", values[2][app]: Invalid value: \"z@\": " + kValueRegexError + "]"},
      // Key validation happens before the operator is looked at.
      {"-app=(", key_error("-app", "name part " + kNameRegexError)},
  };
  for (const auto& row : rows) {
    INFO("input: [" << row.input << "]");
    CHECK(parse_error(row.input) == row.error);
  }
}

TEST_CASE("LabelSelector: label key validation edge cases") {
  const std::string name63(63, 'a');
  std::string prefix253;
  while (prefix253.size() + 64 <= 253) prefix253 += std::string(63, 'p') + ".";
  prefix253 += std::string(253 - prefix253.size(), 'q');
  REQUIRE(prefix253.size() == 253);
  const std::string prefix254 = prefix253 + "q";

  const std::vector<ErrorRow> rows = {
      {name63, ""},
      {name63 + "a", key_error(name63 + "a", "name part must be no more than 63 bytes")},
      {name63 + "-", key_error(name63 + "-", "name part must be no more than 63 bytes; name part " + kNameRegexError)},
      {"MyName", ""},
      {"my.name", ""},
      {"123-abc", ""},
      {"a_b", ""},
      {"A", ""},
      {"a_", key_error("a_", "name part " + kNameRegexError)},
      {"_a", key_error("_a", "name part " + kNameRegexError)},
      {".a", key_error(".a", "name part " + kNameRegexError)},
      {"a@b", key_error("a@b", "name part " + kNameRegexError)},
      {"example.com/MyName", ""},
      {prefix253 + "/x", ""},
      {prefix254 + "/x", key_error(prefix254 + "/x", "prefix part must be no more than 253 bytes")},
      {"Example.com/app", key_error("Example.com/app", kPrefixRegexError)},
      {"exa_mple.com/app", key_error("exa_mple.com/app", kPrefixRegexError)},
      {"a..b/app", key_error("a..b/app", kPrefixRegexError)},
      {"a./app", key_error("a./app", kPrefixRegexError)},
      {"-a/app", key_error("-a/app", kPrefixRegexError)},
      {"a-/app", key_error("a-/app", kPrefixRegexError)},
      {"/app", key_error("/app", "prefix part must be non-empty")},
      {"example.com/", key_error("example.com/", "name part must be non-empty; name part " + kNameRegexError)},
      {"/", key_error("/", "prefix part must be non-empty; name part must be non-empty; name part " + kNameRegexError)},
      {"Bad_/-bad", key_error("Bad_/-bad", kPrefixRegexError + "; name part " + kNameRegexError)},
      {"a/b/c", key_error("a/b/c", "a valid label key " + kNameRegexError +
                                       " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')")},
      {"a//b", key_error("a//b", "a valid label key " + kNameRegexError +
                                     " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')")},
  };
  for (const auto& row : rows) {
    INFO("key: [" << row.input << "]");
    const std::string expected = row.error.empty() ? "<no error> " + row.input : row.error;
    CHECK(parse_error(row.input) == expected);
  }
  // Upstream's subdomain check has no per-label length limit, only the 253-byte total.
  CHECK(LabelSelector::parse(std::string(64, 'b') + ".c/x").ok());
}

TEST_CASE("LabelSelector: label value validation edge cases") {
  const std::string value63(63, 'v');
  const std::vector<ErrorRow> rows = {
      {"", ""},
      {value63, ""},
      {"A.b_c-1", ""},
      {"1", ""},
      {value63 + "v",
       "unable to parse requirement: values[0][k]: Invalid value: \"" + value63 + "v\": must be no more than 63 bytes"},
      {value63 + "-", "unable to parse requirement: values[0][k]: Invalid value: \"" + value63 +
                          "-\": must be no more than 63 bytes; " + kValueRegexError},
      {"a-", "unable to parse requirement: values[0][k]: Invalid value: \"a-\": " + kValueRegexError},
      {"_a", "unable to parse requirement: values[0][k]: Invalid value: \"_a\": " + kValueRegexError},
      {"a/b", "unable to parse requirement: values[0][k]: Invalid value: \"a/b\": " + kValueRegexError},
  };
  for (const auto& row : rows) {
    INFO("value: [" << row.input << "]");
    const std::string expected = row.error.empty() ? "<no error> k=" + row.input : row.error;
    CHECK(parse_error("k=" + row.input) == expected);
  }
}

TEST_CASE("LabelSelector: error texts quote bad input the way Go's %q does") {
  using fedmetrics::k8s::detail::go_quote;
  CHECK(go_quote("plain") == "\"plain\"");
  CHECK(go_quote("a\"b\\c") == "\"a\\\"b\\\\c\"");
  CHECK(go_quote("\a\b\f\n\r\t\v") == "\"\\a\\b\\f\\n\\r\\t\\v\"");
  CHECK(go_quote(std::string("\x00\x01\x7f", 3)) == "\"\\x00\\x01\\x7f\"");
  CHECK(go_quote("\xff") == "\"\\xff\"");                         // invalid UTF-8
  CHECK(go_quote("\xed\xa0\x80") == "\"\\xed\\xa0\\x80\"");       // a surrogate is invalid UTF-8
  CHECK(go_quote("\xc0\xaf") == "\"\\xc0\\xaf\"");                // overlong
  CHECK(go_quote("\xe2\x82") == "\"\\xe2\\x82\"");                // truncated
  CHECK(go_quote("caf\xc3\xa9") == "\"caf\xc3\xa9\"");            // printable runes as they are
  CHECK(go_quote("\xf0\x9f\x98\x80") == "\"\xf0\x9f\x98\x80\"");  // U+1F600
  CHECK(go_quote("\xc2\xa0") == "\"\\u00a0\"");                   // no-break space is not printable
  CHECK(go_quote("\xc2\x85") == "\"\\u0085\"");                   // C1 control
  CHECK(go_quote("\xef\xbb\xbf") == "\"\\ufeff\"");               // BOM (format)
  CHECK(go_quote("\xf3\xb0\x80\x80") == "\"\\U000f0000\"");       // private use plane
  CHECK(go_quote("\xef\xbf\xbd") == "\"\xef\xbf\xbd\"");          // a real U+FFFD is printable

  // In context: a key with bytes that are not printable.
  CHECK(parse_error("a\xff") == key_error("a\\xff", "name part " + kNameRegexError));
  CHECK(parse_error("k=\"q\"") ==
        "unable to parse requirement: values[0][k]: Invalid value: \"\\\"q\\\"\": " + kValueRegexError);
}

TEST_CASE("LabelSelector: a NUL byte reads as the end of the string, as in Go's lexer") {
  // Go's Lexer.read returns 0 both at the end and for a NUL byte.
  CHECK(canonical(std::string("\0x=y", 4)).empty());
  CHECK(canonical(std::string("x=y \0,z", 8)) == "x=y");   // after a space: the end; the rest is ignored
  CHECK(canonical(std::string("x=y,\0z", 6)) == "x=y,z");  // right after a symbol: consumed, skipped
  CHECK(canonical(std::string("x=a\0b", 5)) == "<error> found 'b', expected: ',' or 'end of string'");
  CHECK(canonical(std::string("x=\0y", 4)) == "x=y");  // the NUL ends the '=' token and is consumed
}

namespace {

struct MatchRow {
  std::string selector;
  Labels labels;
  bool matches;
};

}  // namespace

TEST_CASE("LabelSelector: matching truth table for every operator") {
  const std::vector<MatchRow> rows = {
      {"", {}, true},
      {"", {{"x", "y"}}, true},
      {"x=y", {{"x", "y"}}, true},
      {"x=y", {{"x", "z"}}, false},
      {"x=y", {}, false},
      {"x=", {{"x", ""}}, true},
      {"x=", {}, false},
      {"x==y", {{"x", "y"}}, true},
      {"x==y", {{"x", "z"}}, false},
      {"x==y", {}, false},
      {"x!=y", {{"x", "y"}}, false},
      {"x!=y", {{"x", "z"}}, true},
      {"x!=y", {}, true},  // absent key matches !=
      {"x!=y", {{"other", "y"}}, true},
      {"x in (a,b)", {{"x", "a"}}, true},
      {"x in (a,b)", {{"x", "b"}}, true},
      {"x in (a,b)", {{"x", "c"}}, false},
      {"x in (a,b)", {}, false},
      {"x in ()", {{"x", ""}}, true},
      {"x in ()", {{"x", "a"}}, false},
      {"x notin (a,b)", {{"x", "a"}}, false},
      {"x notin (a,b)", {{"x", "c"}}, true},
      {"x notin (a,b)", {}, true},  // absent key matches notin
      {"x notin ()", {}, true},
      {"x notin ()", {{"x", ""}}, false},
      {"x", {{"x", ""}}, true},
      {"x", {{"x", "z"}}, true},
      {"x", {{"y", "z"}}, false},
      {"!x", {{"y", "z"}}, true},
      {"!x", {{"x", ""}}, false},
      {"x>1", {{"x", "2"}}, true},
      {"x>1", {{"x", "1"}}, false},
      {"x>1", {{"x", "0"}}, false},
      {"x>1", {{"x", "+5"}}, true},  // ParseInt accepts a sign on the label side
      {"x>1", {{"x", "002"}}, true},
      {"x>1", {{"x", "v2"}}, false},  // not an integer: no match
      {"x>1", {{"x", ""}}, false},
      {"x>1", {{"x", "2.5"}}, false},
      {"x>1", {{"x", "99999999999999999999"}}, false},  // out of int64
      {"x>1", {}, false},
      {"x<1", {{"x", "0"}}, true},
      {"x<1", {{"x", "-3"}}, true},
      {"x<1", {{"x", "1"}}, false},
      {"x<1", {{"x", "2"}}, false},
      {"x<1", {{"x", "a"}}, false},
      {"x<1", {}, false},
      {"x<9223372036854775807", {{"x", "-9223372036854775808"}}, true},
      {"x=y,z=w", {{"x", "y"}, {"z", "w"}}, true},
      {"x=y,z=w", {{"x", "w"}, {"z", "w"}}, false},
      {"x!=y,z!=w", {{"x", "z"}, {"z", "a"}}, true},
      {"x!=y,z!=w", {{"x", "z"}, {"z", "w"}}, false},
      {"notin=in", {{"notin", "in"}}, true},
      {"foo=bar,foobar=bar,baz=blah", {{"foo", "bar"}, {"baz", "blah"}}, false},
  };
  for (const auto& row : rows) {
    std::string labels;
    for (const auto& [k, v] : row.labels) labels += k + "=" + v + " ";
    INFO("selector: [" << row.selector << "] labels: {" << labels << "}");
    auto selector = LabelSelector::parse(row.selector);
    REQUIRE(selector.ok());
    CHECK(selector->matches(row.labels) == row.matches);
  }
}

TEST_CASE("LabelSelector: hand-built requirements match and print like upstream's") {
  const Labels labels = {{"x", "5"}};
  CHECK_FALSE(Requirement{"x", SelectorOperator::GreaterThan, {"1", "2"}}.matches(labels));  // two values
  CHECK_FALSE(Requirement{"x", SelectorOperator::GreaterThan, {"one"}}.matches(labels));     // bad bound
  CHECK(Requirement{"x", SelectorOperator::GreaterThan, {"4"}}.matches(labels));

  struct Row {
    std::vector<Requirement> requirements;
    std::string expected;
  };
  const std::vector<Row> rows = {
      // pkg/labels/selector_test.go TestToString
      {{{"x", SelectorOperator::In, {"abc", "def"}},
        {"y", SelectorOperator::NotIn, {"jkl"}},
        {"z", SelectorOperator::Exists, {}}},
       "x in (abc,def),y notin (jkl),z"},
      {{{"x", SelectorOperator::NotIn, {"abc", "def"}},
        {"y", SelectorOperator::NotEquals, {"jkl"}},
        {"z", SelectorOperator::DoesNotExist, {}}},
       "x notin (abc,def),y!=jkl,!z"},
      {{{"x", SelectorOperator::NotIn, {"abc"}},
        {"y", SelectorOperator::In, {"jkl", "mno"}},
        {"z", SelectorOperator::NotIn, {""}}},
       "x notin (abc),y in (jkl,mno),z notin ()"},
      {{{"x", SelectorOperator::Equals, {"abc"}},
        {"y", SelectorOperator::DoubleEquals, {"jkl"}},
        {"z", SelectorOperator::NotEquals, {"a"}},
        {"z", SelectorOperator::Exists, {}}},
       "x=abc,y==jkl,z!=a,z"},
      {{{"x", SelectorOperator::GreaterThan, {"2"}},
        {"y", SelectorOperator::LessThan, {"8"}},
        {"z", SelectorOperator::Exists, {}}},
       "x>2,y<8,z"},
      // Sorted by key on the way in, values sorted and de-duplicated.
      {{{"z", SelectorOperator::Exists, {}}, {"a", SelectorOperator::In, {"q", "p", "q"}}}, "a in (p,q),z"},
  };
  for (const auto& row : rows) {
    INFO("expected: " << row.expected);
    const auto selector = LabelSelector::from_requirements(row.requirements);
    CHECK(selector.to_string() == row.expected);
  }
  const auto built = LabelSelector::from_requirements({{"a", SelectorOperator::In, {"q", "p", "q"}}});
  CHECK(built.requirements().front().values == std::vector<std::string>{"p", "q"});
  // Requirement::to_string sorts a copy for requirements that were never normalised.
  CHECK(Requirement{"a", SelectorOperator::NotIn, {"b", "a"}}.to_string() == "a notin (a,b)");
}

TEST_CASE("LabelSelector: parse keeps requirements sorted by key, stably") {
  auto selector = LabelSelector::parse("z,b!=1,a,b=2");
  REQUIRE(selector.ok());
  const auto& r = selector->requirements();
  REQUIRE(r.size() == 4);
  CHECK(r[0] == Requirement{"a", SelectorOperator::Exists, {}});
  CHECK(r[1] == Requirement{"b", SelectorOperator::NotEquals, {"1"}});
  CHECK(r[2] == Requirement{"b", SelectorOperator::Equals, {"2"}});
  CHECK(r[3] == Requirement{"z", SelectorOperator::Exists, {}});
  CHECK(LabelSelector::parse("x notin (b,,a)")->requirements().front().values ==
        std::vector<std::string>{"", "a", "b"});
  CHECK(LabelSelector::parse("").value().empty());
  CHECK_FALSE(LabelSelector::parse("x").value().empty());
}

TEST_CASE("LabelSelector: object form parses like LabelSelectorAsSelector") {
  struct Row {
    json object;
    std::string canonical;
  };
  const std::vector<Row> rows = {
      {json(nullptr), ""},
      {json::object(), ""},
      {json::parse(R"({"matchLabels":null,"matchExpressions":null})"), ""},
      {json::parse(R"({"matchLabels":{},"matchExpressions":[]})"), ""},
      {json::parse(R"({"matchLabels":{"tier":"api","app":"web"}})"), "app=web,tier=api"},
      {json::parse(R"({"matchLabels":{"app":""}})"), "app="},
      {json::parse(R"({"matchLabels":{"app":null}})"), "app="},  // null reads as Go's zero value
      {json::parse(R"({"matchExpressions":[{"key":"x","operator":"In","values":["b","a","b"]}]})"), "x in (a,b)"},
      {json::parse(R"({"matchExpressions":[{"key":"x","operator":"In","values":[""]}]})"), "x in ()"},
      {json::parse(R"({"matchExpressions":[{"key":"x","operator":"NotIn","values":["a"]}]})"), "x notin (a)"},
      {json::parse(R"({"matchExpressions":[{"key":"x","operator":"Exists"}]})"), "x"},
      {json::parse(R"({"matchExpressions":[{"key":"x","operator":"Exists","values":[]}]})"), "x"},
      {json::parse(R"({"matchExpressions":[{"key":"x","operator":"DoesNotExist","values":null}]})"), "!x"},
      {json::parse(R"({"matchLabels":{"z":"1"},"matchExpressions":[{"key":"a","operator":"Exists"}]})"), "a,z=1"},
      {json::parse(R"({"matchLabels":{"a":"1"},"matchExpressions":[{"key":"a","operator":"NotIn","values":["2"]}]})"),
       "a=1,a notin (2)"},
      {json::parse(
           R"({"matchLabels":{"a":"1"},"extra":true,"matchExpressions":[{"key":"a","operator":"Exists","x":1}]})"),
       "a=1,a"},
  };
  for (const auto& row : rows) {
    INFO("object: " << row.object.dump());
    auto selector = LabelSelector::from_object(row.object);
    REQUIRE(selector.ok());
    CHECK(selector->to_string() == row.canonical);
  }
  CHECK(LabelSelector::from_object(json(nullptr)).value().matches({{"any", "thing"}}));
}

TEST_CASE("LabelSelector: object form validation and type errors") {
  struct Row {
    std::string object;
    std::string error;
  };
  const std::vector<Row> rows = {
      // Operators: only the four of metav1.LabelSelectorOperator, spelled exactly.
      {R"({"matchExpressions":[{"key":"x","operator":"Foo"}]})", "\"Foo\" is not a valid label selector operator"},
      {R"({"matchExpressions":[{"key":"x","operator":"in","values":["a"]}]})",
       "\"in\" is not a valid label selector operator"},
      {R"({"matchExpressions":[{"key":"x","operator":"Gt","values":["1"]}]})",
       "\"Gt\" is not a valid label selector operator"},
      {R"({"matchExpressions":[{"key":"x"}]})", "\"\" is not a valid label selector operator"},
      // Value counts.
      {R"({"matchExpressions":[{"key":"x","operator":"In"}]})",
       "values: Invalid value: null: for 'in', 'notin' operators, values set can't be empty"},
      {R"({"matchExpressions":[{"key":"x","operator":"NotIn","values":[]}]})",
       "values: Invalid value: null: for 'in', 'notin' operators, values set can't be empty"},
      {R"({"matchExpressions":[{"key":"x","operator":"Exists","values":["a"]}]})",
       "values: Invalid value: [\"a\"]: values set must be empty for exists and does not exist"},
      {R"({"matchExpressions":[{"key":"x","operator":"DoesNotExist","values":["a","<b>"]}]})",
       "[values: Invalid value: [\"a\",\"\\u003cb\\u003e\"]: values set must be empty for exists and does not "
       "exist, values[1][x]: Invalid value: \"<b>\": " +
           kValueRegexError + "]"},
      // Keys and values, reported with NewRequirement's paths.
      {R"({"matchLabels":{"-a":"b"}})", "key: Invalid value: \"-a\": name part " + kNameRegexError},
      {R"({"matchLabels":{"app":"b@d"}})", "values[0][app]: Invalid value: \"b@d\": " + kValueRegexError},
      {R"({"matchLabels":{"-a":"b@d"}})", "[key: Invalid value: \"-a\": name part " + kNameRegexError +
                                              ", values[0][-a]: Invalid value: \"b@d\": " + kValueRegexError + "]"},
      {R"({"matchExpressions":[{"operator":"Exists"}]})",
       "key: Invalid value: \"\": name part must be non-empty; name part " + kNameRegexError},
      {R"({"matchExpressions":[{"key":"x","operator":"In","values":["ok","b@d"]}]})",
       "values[1][x]: Invalid value: \"b@d\": " + kValueRegexError},
      {R"({"matchExpressions":[{"key":"a b","operator":"Exists"}]})",
       "key: Invalid value: \"a b\": name part " + kNameRegexError},
      // JSON types, named by field.
      {R"([])", "expected an object, got array"},
      {R"("app=web")", "expected an object, got string"},
      {R"({"matchLabels":[]})", "matchLabels: expected an object, got array"},
      {R"({"matchLabels":{"a":1}})", "matchLabels.a: expected a string, got number"},
      {R"({"matchExpressions":{}})", "matchExpressions: expected an array, got object"},
      {R"({"matchExpressions":["x"]})", "matchExpressions[0]: expected an object, got string"},
      {R"({"matchExpressions":[{"key":"a","operator":5}]})",
       "matchExpressions[0].operator: expected a string, got number"},
      {R"({"matchExpressions":[{"key":true,"operator":"Exists"}]})",
       "matchExpressions[0].key: expected a string, got boolean"},
      {R"({"matchExpressions":[{"key":"a","operator":"In","values":"x"}]})",
       "matchExpressions[0].values: expected an array, got string"},
      // Decoding comes before validation, as with Go's json.Unmarshal.
      {R"({"matchExpressions":[{"key":"-bad","operator":"Nope"},{"key":"a","operator":"In","values":["x",2]}]})",
       "matchExpressions[1].values[1]: expected a string, got number"},
  };
  for (const auto& row : rows) {
    INFO("object: " << row.object);
    CHECK(object_error(json::parse(row.object)) == row.error);
  }
}

TEST_CASE("LabelSelector: object form output and round trips") {
  auto selector = LabelSelector::parse("app=web,tier in (frontend,api),x notin (a),y,!z,w!=v,n==m,g>5,l<3");
  REQUIRE(selector.ok());
  const json expected = json::parse(R"({
    "matchLabels": {"app": "web", "n": "m"},
    "matchExpressions": [
      {"key": "g", "operator": "Gt", "values": ["5"]},
      {"key": "l", "operator": "Lt", "values": ["3"]},
      {"key": "tier", "operator": "In", "values": ["api", "frontend"]},
      {"key": "w", "operator": "NotIn", "values": ["v"]},
      {"key": "x", "operator": "NotIn", "values": ["a"]},
      {"key": "y", "operator": "Exists"},
      {"key": "z", "operator": "DoesNotExist"}
    ]})");
  CHECK(selector->to_object() == expected);

  CHECK(LabelSelector().to_object() == json::object());
  // A single-value In becomes a matchLabels entry (header contract) ...
  CHECK(LabelSelector::parse("a in (x)")->to_object() == json::parse(R"({"matchLabels":{"a":"x"}})"));
  // ... and matchLabels has one value per key, so a second equality stays an expression.
  CHECK(LabelSelector::parse("a=x,a=y")->to_object() ==
        json::parse(R"({"matchLabels":{"a":"x"},"matchExpressions":[{"key":"a","operator":"In","values":["y"]}]})"));

  // Selectors made of object-form operators survive string -> object -> selector.
  for (const char* text :
       {"", "app=web,tier in (api,frontend)", "a,!b,c notin (x,y)", "a in (,x)", "example.com/k=v,k in (a,b,c)"}) {
    INFO("selector: [" << text << "]");
    auto parsed = LabelSelector::parse(text);
    REQUIRE(parsed.ok());
    auto back = LabelSelector::from_object(parsed->to_object());
    REQUIRE(back.ok());
    CHECK(*back == *parsed);
  }
  // Equivalent spellings come back in the object form's words.
  CHECK(LabelSelector::from_object(LabelSelector::parse("x==a,y!=b")->to_object())->to_string() == "x=a,y notin (b)");
  // Gt/Lt have no object form upstream: what to_object emits for them is refused on the way back.
  CHECK(object_error(LabelSelector::parse("g>5")->to_object()) == "\"Gt\" is not a valid label selector operator");
}

TEST_CASE("LabelSelector: partition splits off the requirements on one key") {
  auto selector = LabelSelector::parse("fedmetrics/cluster in (b,a),app=web,tier,fedmetrics/cluster!=c");
  REQUIRE(selector.ok());
  const auto [on_key, others] = selector->partition("fedmetrics/cluster");
  CHECK(on_key.to_string() == "fedmetrics/cluster in (a,b),fedmetrics/cluster!=c");
  CHECK(others.to_string() == "app=web,tier");
  CHECK(on_key.matches({{"fedmetrics/cluster", "a"}}));
  CHECK_FALSE(on_key.matches({{"fedmetrics/cluster", "c"}}));

  const auto [none, all] = LabelSelector::parse("app=web")->partition("fedmetrics/cluster");
  CHECK(none.empty());
  CHECK(all.to_string() == "app=web");

  const auto [everything, nothing_left] = LabelSelector::parse("k")->partition("k");
  CHECK(everything.to_string() == "k");
  CHECK(nothing_left.empty());
  // Prefix keys are distinct keys.
  CHECK(LabelSelector::parse("fedmetrics/clusterx=a")->partition("fedmetrics/cluster").first.empty());
}

TEST_CASE("LabelSelector: hostile input never crashes and valid output re-parses") {
  // Very long inputs.
  CHECK(
      LabelSelector::parse(std::string(1 << 20, 'a')).error().message.find("name part must be no more than 63 bytes") !=
      std::string::npos);
  std::string many;
  for (int i = 0; i < 20000; ++i) many += "k" + std::to_string(i % 97) + "=v,";
  many += "last";
  auto big = LabelSelector::parse(many);
  REQUIRE(big.ok());
  CHECK(big->requirements().size() == 20001);
  CHECK(LabelSelector::parse(std::string(100000, '(')).error().message ==
        "found '(', expected: !, identifier, or 'end of string'");
  CHECK_FALSE(LabelSelector::parse("x in (" + std::string(100000, ',')).ok());
  CHECK_FALSE(LabelSelector::parse(std::string(100000, '!')).ok());

  // Pseudo-random byte strings over an alphabet rich in the grammar's symbols.
  static const char kAlphabet[] = "ab0-_./=!(),<> \t\nin notin\x00\xff\xc3\xa9";
  const std::string alphabet(kAlphabet, sizeof kAlphabet - 1);
  std::uint64_t state = 0x9E3779B97F4A7C15ULL;
  const auto next = [&state] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  int valid = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string input;
    const std::size_t length = next() % 24;
    for (std::size_t j = 0; j < length; ++j) input += alphabet[next() % alphabet.size()];
    auto parsed = LabelSelector::parse(input);
    if (!parsed) {
      CHECK_FALSE(parsed.error().message.empty());
      continue;
    }
    ++valid;
    auto again = LabelSelector::parse(parsed->to_string());
    INFO("input: [" << input << "] canonical: [" << parsed->to_string() << "]");
    REQUIRE(again.ok());
    CHECK(again->to_string() == parsed->to_string());
  }
  CHECK(valid > 100);  // the generator does reach valid selectors

  // Arbitrary JSON shapes never crash the object decoder.
  for (const char* text :
       {R"({"matchLabels":{"a":{"b":1}}})", R"({"matchExpressions":[[]]})",
        R"({"matchExpressions":[{"values":[null,"a"],"key":"k","operator":"In"}]})", "1.5", "true"}) {
    INFO("object: " << text);
    auto parsed = LabelSelector::from_object(json::parse(text));
    if (parsed) CHECK(parsed->to_string() == "k in (,a)");
  }
}

TEST_CASE("LabelSelector: parse with a requirement limit stops at the first one over it") {
  auto three = LabelSelector::parse("a=1,b in (x,y,z),!c", 3);
  REQUIRE(three.ok());
  CHECK(three->requirements().size() == 3);
  auto four = LabelSelector::parse("a=1,b in (x,y,z),!c,d", 3);
  REQUIRE(!four.ok());
  CHECK(four.error().message == "too many requirements in the selector: the limit is 3");
  // A syntax error before the limit is reported as such.
  CHECK(LabelSelector::parse("a=1,=", 1).error().message.starts_with("found '='"));
  // Without a limit, as before.
  CHECK(LabelSelector::parse("a=1,b=2,c=3,d=4").ok());
}
