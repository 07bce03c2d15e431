#pragma once
// A SAX handler that writes down every event of a parse as text, in order:
// the JSON subset reader (src/k8s/json_subset.hpp) and nlohmann's parser are
// held against each other through it, event by event, in
// test/k8s/json_subset_test.cpp and fuzz/json_subset_fuzz.cpp.
#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace fedmetrics::test {

struct JsonEventRecorder {
  using json = nlohmann::json;
  std::vector<std::string> events;
  bool saw_number = false;  // numbers are outside the subset

  bool null() { return add("null"); }
  bool boolean(bool v) { return add(v ? "true" : "false"); }
  bool number_integer(json::number_integer_t v) { return number("int " + std::to_string(v)); }
  bool number_unsigned(json::number_unsigned_t v) { return number("uint " + std::to_string(v)); }
  bool number_float(json::number_float_t, const json::string_t& text) { return number("float " + text); }
  bool string(json::string_t& v) { return add("string " + v); }
  bool binary(json::binary_t&) { return add("binary"); }
  bool start_object(std::size_t n) { return add("{" + std::to_string(n)); }
  bool key(json::string_t& k) { return add("key " + k); }
  bool end_object() { return add("}"); }
  bool start_array(std::size_t n) { return add("[" + std::to_string(n)); }
  bool end_array() { return add("]"); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) { return false; }

 private:
  bool number(std::string e) {
    saw_number = true;
    return add(std::move(e));
  }
  bool add(std::string e) {
    events.push_back(std::move(e));
    return true;
  }
};

}  // namespace fedmetrics::test
