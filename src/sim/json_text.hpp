#pragma once
// JSON text written directly, for the answers whose size makes building
// nlohmann values first too costly (a member's list of 1,000 pods: every
// value an allocation). Keys are written in the order the caller gives:
// callers give them sorted, as nlohmann orders an object's keys, so that
// both write the same bytes. Strings are escaped as nlohmann's dump() does.
// Internal to the sim module.
#include <cstdint>
#include <string>
#include <string_view>

namespace fedmetrics::sim::detail {

class JsonText {
 public:
  explicit JsonText(std::string& out) : out_(out) {}

  JsonText& begin_object() { return open('{'); }
  JsonText& end_object() { return close('}'); }
  JsonText& begin_array() { return open('['); }
  JsonText& end_array() { return close(']'); }
  JsonText& key(std::string_view k) {
    separate();
    append_string(k);
    out_ += ':';
    after_key_ = true;
    return *this;
  }
  JsonText& string(std::string_view v) {
    value();
    append_string(v);
    return *this;
  }
  JsonText& number(std::int64_t v) {
    value();
    out_ += std::to_string(v);
    return *this;
  }
  JsonText& boolean(bool v) {
    value();
    out_ += v ? "true" : "false";
    return *this;
  }
  JsonText& null() {
    value();
    out_ += "null";
    return *this;
  }

 private:
  void separate() {
    if (comma_) out_ += ',';
    comma_ = false;
  }
  // Before a value: a comma unless it follows its key or opens its container.
  void value() {
    if (!after_key_) separate();
    after_key_ = false;
    comma_ = true;
  }
  JsonText& open(char c) {
    value();
    out_ += c;
    comma_ = false;
    return *this;
  }
  JsonText& close(char c) {
    out_ += c;
    comma_ = true;
    return *this;
  }
  void append_string(std::string_view s) {
    static constexpr char kHex[] = "0123456789abcdef";
    out_ += '"';
    for (const char ch : s) {
      const auto c = static_cast<unsigned char>(ch);
      switch (c) {
        case '"': out_ += "\\\""; break;
        case '\\': out_ += "\\\\"; break;
        case '\b': out_ += "\\b"; break;
        case '\f': out_ += "\\f"; break;
        case '\n': out_ += "\\n"; break;
        case '\r': out_ += "\\r"; break;
        case '\t': out_ += "\\t"; break;
        default:
          if (c < 0x20) {
            out_ += "\\u00";
            out_ += kHex[c >> 4];
            out_ += kHex[c & 0xf];
          } else {
            out_ += ch;
          }
      }
    }
    out_ += '"';
  }

  std::string& out_;
  bool comma_ = false;      // a value was written at this level: the next one needs a comma
  bool after_key_ = false;  // the next value is a key's
};

}  // namespace fedmetrics::sim::detail
