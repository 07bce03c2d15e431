#include <catch2/catch.hpp>

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fedmetrics/k8s/field_reader.hpp"
#include "support/random_json.hpp"

using namespace fedmetrics::k8s;
using nlohmann::json;

namespace {

enum class Color { Red, Green, Blue };

// The error of reading `key` of `doc` with `read`, or "" when it reads.
template <class Read>
std::string error_of(const json& doc, Read&& read) {
  FieldReader reader;
  const Fields f(reader, doc, "spec");
  read(f);
  return reader.error() ? reader.error()->message : "";
}

// Reads every kind of field of `f` and of what is nested in it; checks after
// each read that a recorded error never changes and that reads after it
// return nothing.
void read_everything(const Fields& f, int depth) {
  FieldReader& reader = f.reader();
  // One read: `read_value` says whether it read something.
  auto read = [&](auto&& read_value) {
    const auto before = reader.error();
    const bool read_something = read_value();
    if (!before) return;
    REQUIRE(reader.error());
    CHECK(reader.error()->message == before->message);
    CHECK_FALSE(read_something);
  };
  read([&] {
    f.allow({"name", "count", "ratio", "on", "size", "when", "color", "items", "child"});
    return false;
  });
  read([&] { return f.string("name").has_value(); });
  read([&] { return f.int32("count").has_value(); });
  read([&] { return f.integer("count").has_value(); });
  read([&] { return f.number("ratio").has_value(); });
  read([&] { return f.boolean("on").has_value(); });
  read([&] { return f.quantity("size").has_value(); });
  read([&] { return f.time("when").has_value(); });
  read([&] { return f.one_of<Color>("color", {{"Red", Color::Red}, {"Green", Color::Green}}).has_value(); });
  read([&] {
    if (const auto* when = f.raw("when")) reader.duration(*when, f.path_of("when"));
    if (const auto* count = f.raw("count")) reader.integer_in(*count, f.path_of("count"), -5, 5);
    return false;
  });
  read([&] {
    bool any = false;
    f.each("items", [&](const json&, const std::string&) { any = true; });
    return any;
  });
  if (depth > 0) {
    f.each_object("items", [&](const Fields& item) { read_everything(item, depth - 1); });
    if (auto child = f.object("child")) read_everything(*child, depth - 1);
  }
}

}  // namespace

TEST_CASE("FieldReader: each read names the field and what was wrong", "[k8s][field_reader]") {
  struct Row {
    json doc;
    std::string error;
  };
  auto name = [](const Fields& f) { (void)f.string("name"); };
  auto count = [](const Fields& f) { (void)f.int32("count"); };
  auto ratio = [](const Fields& f) { (void)f.number("ratio"); };
  auto on = [](const Fields& f) { (void)f.boolean("on"); };
  auto size = [](const Fields& f) { (void)f.quantity("size"); };
  auto when = [](const Fields& f) { (void)f.time("when"); };
  auto color = [](const Fields& f) {
    (void)f.one_of<Color>("color", {{"Red", Color::Red}, {"Green", Color::Green}, {"Blue", Color::Blue}});
  };
  auto items = [](const Fields& f) { (void)f.array("items"); };
  auto required = [](const Fields& f) { (void)f.required_object("child"); };
  auto within = [](const Fields& f) { f.reader().integer_in(f.required("count"), f.path_of("count"), 1, 10); };
  auto duration = [](const Fields& f) { f.reader().duration(f.required("when"), f.path_of("when")); };
  auto strict = [](const Fields& f) {
    const Fields s(f.reader(), f.raw_object(), f.path(), UnknownFields::Refuse);
    s.allow({"minReplicas", "maxReplicas"});
  };

  CHECK(error_of({{"name", 5}}, name) == "spec.name: not a string");
  CHECK(error_of({{"name", nullptr}}, name).empty());  // null reads as absent
  CHECK(error_of({{"count", "5"}}, count) == "spec.count: not an integer");
  CHECK(error_of({{"count", 2.5}}, count) == "spec.count: not an integer");
  CHECK(error_of({{"count", 3.0}}, count).empty());
  CHECK(error_of({{"count", 1LL << 40}}, count) == "spec.count: out of range for a 32-bit integer");
  CHECK(error_of({{"count", 18446744073709551615ULL}}, count) == "spec.count: out of range for an integer");
  CHECK(error_of({{"ratio", "1"}}, ratio) == "spec.ratio: not a number");
  CHECK(error_of({{"on", "true"}}, on) == "spec.on: not a boolean");
  CHECK(error_of({{"size", true}}, size) == "spec.size: not a quantity");
  CHECK(error_of({{"size", "lots"}}, size) ==
        "spec.size: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
  CHECK(error_of({{"size", 2}}, size).empty());
  CHECK(error_of({{"when", "yesterday"}}, when) == "spec.when: not a time");
  CHECK(error_of({{"color", "Purple"}}, color) == "spec.color: must be Red, Green or Blue (got \"Purple\")");
  CHECK(error_of({{"color", 1}}, color) == "spec.color: not a string");
  CHECK(error_of({{"items", {{"a", 1}}}}, items) == "spec.items: not an array");
  CHECK(error_of(json::object(), required) == "spec.child: is required");
  CHECK(error_of({{"child", json::array()}}, required) == "spec.child: not an object (got array)");
  CHECK(error_of({{"count", 11}}, within) == "spec.count: must be between 1 and 10");
  CHECK(error_of({{"when", "fast"}}, duration) == "spec.when: time: invalid duration \"fast\"");
  CHECK(error_of({{"maxReplica", 3}}, strict) == "spec.maxReplica: unknown field (did you mean \"maxReplicas\"?)");
  CHECK(error_of({{"zzz", 3}}, strict) == "spec.zzz: unknown field");
  CHECK(error_of({{"zzz", 3}}, [](const Fields& f) { f.allow({"name"}); }).empty());  // ignored unless refused
  CHECK(error_of(json::array(), name) == "spec: not an object (got array)");
}

TEST_CASE("FieldReader: the first error wins and reads after it return nothing", "[k8s][field_reader]") {
  const json doc = {{"name", 1}, {"count", "two"}, {"good", "yes"}, {"items", {1, 2, 3}}};
  FieldReader reader;
  const Fields f(reader, doc, "");
  CHECK_FALSE(f.string("name"));
  CHECK_FALSE(f.int32("count"));
  f.fail("good", "a later failure");
  CHECK_FALSE(f.string("good"));  // well-typed, but read after the error
  CHECK_FALSE(f.has("good"));
  int elements = 0;
  f.each("items", [&](const json&, const std::string&) { ++elements; });
  CHECK(elements == 0);
  auto result = reader.finish(42);
  REQUIRE_FALSE(result);
  CHECK(result.error().message == "name: not a string");
  CHECK(result.error().kind == ErrorKind::Invalid);

  FieldReader clean;
  const Fields g(clean, doc, "");
  CHECK(g.string("good") == "yes");
  std::vector<std::string> paths;
  g.each("items", [&](const json&, const std::string& path) { paths.push_back(path); });
  CHECK(paths == std::vector<std::string>{"items[0]", "items[1]", "items[2]"});
  CHECK(clean.finish(42).value() == 42);
}

TEST_CASE("FieldReader: random and wrong-typed documents never throw and keep their first error",
          "[k8s][field_reader]") {
  std::mt19937 rng(20261128);
  const std::vector<std::string> keys = {"name", "count", "ratio", "on", "size", "when", "color", "items", "child", ""};
  int failed = 0;
  for (int i = 0; i < 2000; ++i) {
    const json doc = fedmetrics::testing::random_json(rng, 4, keys);
    INFO(doc.dump(-1, ' ', false, json::error_handler_t::replace));
    for (auto unknown : {UnknownFields::Ignore, UnknownFields::Refuse}) {
      FieldReader reader;
      REQUIRE_NOTHROW(read_everything(Fields(reader, doc, "doc", unknown), 3));
      auto result = reader.finish(0);
      if (!result) {
        ++failed;
        CHECK_THAT(result.error().message, Catch::StartsWith("doc"));
      }
    }
  }
  // The generator reaches both outcomes.
  CHECK(failed > 100);
  CHECK(failed < 3900);
}
