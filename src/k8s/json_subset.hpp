#pragma once
// A reader of the JSON subset metrics-server writes, as SAX events, held
// against nlohmann's parser event by event (test/k8s/json_subset_test.cpp).
// The pods list no longer goes through it: its scanner
// (pod_metrics_scan.hpp) reads that shape without events.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace fedmetrics::k8s::detail {

// Reads the JSON that metrics-server (and our simulator) writes, feeding
// `sax` the events nlohmann's parser would: objects, arrays, and strings of
// printable ASCII without escapes, true, false and null, with JSON's white
// space between them. Anything outside that subset (an escape, a control or
// non-ASCII byte in a string, a number) and anything that is not JSON ends it
// with false, as does `sax` giving up; the caller then reads the text with
// nlohmann's parser. Decoding a pod list takes about half the time it did
// with nlohmann's lexer, which keeps every character of a token for its
// error messages.
template <class Sax>
bool read_json_subset(std::string_view text, Sax& sax) {
  const char* p = text.data();
  const char* const end = p + text.size();
  std::vector<char> open;  // '{' or '[' per container entered; a loop, not recursion, however deep
  std::string scratch;
  const auto skip_space = [&] {
    while (p != end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')) ++p;
  };
  // The string starting at p (a '"'), into scratch; p after its closing quote.
  const auto read_string = [&] {
    const char* const start = ++p;
    while (p != end) {
      const auto c = static_cast<unsigned char>(*p);
      if (c == '"') {
        scratch.assign(start, p);
        ++p;
        return true;
      }
      if (c == '\\' || c < 0x20 || c >= 0x80) return false;
      ++p;
    }
    return false;
  };
  constexpr auto kUnknownSize = static_cast<std::size_t>(-1);
  enum class Next { Value, Key, AfterValue };
  Next next = Next::Value;
  for (;;) {
    skip_space();
    if (next == Next::AfterValue) {
      if (open.empty()) return p == end;  // one value, then only white space
      if (p == end) return false;
      const char c = *p++;
      if (c == ',') {
        next = open.back() == '{' ? Next::Key : Next::Value;
      } else if (c == (open.back() == '{' ? '}' : ']')) {
        if (!(open.back() == '{' ? sax.end_object() : sax.end_array())) return false;
        open.pop_back();
      } else {
        return false;
      }
      continue;
    }
    if (p == end) return false;
    if (next == Next::Key) {
      if (*p != '"' || !read_string() || !sax.key(scratch)) return false;
      skip_space();
      if (p == end || *p != ':') return false;
      ++p;
      next = Next::Value;
      continue;
    }
    // A value.
    const char c = *p;
    if (c == '"') {
      if (!read_string() || !sax.string(scratch)) return false;
      next = Next::AfterValue;
    } else if (c == '{' || c == '[') {
      ++p;
      if (!(c == '{' ? sax.start_object(kUnknownSize) : sax.start_array(kUnknownSize))) return false;
      open.push_back(c);
      skip_space();
      if (p != end && *p == (c == '{' ? '}' : ']')) {  // empty
        ++p;
        if (!(c == '{' ? sax.end_object() : sax.end_array())) return false;
        open.pop_back();
        next = Next::AfterValue;
      } else {
        next = c == '{' ? Next::Key : Next::Value;
      }
    } else if (const std::string_view rest(p, static_cast<std::size_t>(end - p)); rest.starts_with("null")) {
      p += 4;  // an old metrics-server's creationTimestamp, and a zero time of ours
      if (!sax.null()) return false;
      next = Next::AfterValue;
    } else if (rest.starts_with("true") || rest.starts_with("false")) {
      const bool value = *p == 't';
      p += value ? 4 : 5;
      if (!sax.boolean(value)) return false;
      next = Next::AfterValue;
    } else {
      return false;  // a number, or not JSON
    }
  }
}

}  // namespace fedmetrics::k8s::detail
