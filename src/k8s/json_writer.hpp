#pragma once
// A direct JSON writer for the hot encoders (metrics lists answered to many
// clients): appends to one string, no document tree. Its output is byte for
// byte what nlohmann::json::dump() writes for the same document, so callers
// must write object keys in the order dump() does (sorted, as std::map
// keeps them); test/k8s/json_writer_test.cpp holds the encoders to that.
#include <string>
#include <string_view>

namespace fedmetrics::k8s {

class JsonWriter {
 public:
  explicit JsonWriter(std::string& out) : out_(out) {}

  void begin_object() { open('{'); }
  void end_object() { close('}'); }
  void begin_array() { open('['); }
  void end_array() { close(']'); }
  void key(std::string_view name) {
    separate();
    append_string(name);
    out_.push_back(':');
    after_key_ = true;
  }
  void string(std::string_view value) {
    separate();
    append_string(value);
  }
  void null() {
    separate();
    out_.append("null");
  }
  // Text that escaping leaves as it is (printable ASCII without '"' or '\\',
  // as the subset reader of json_subset.hpp reads and our formatters write),
  // written without looking at each character again.
  void plain_key(std::string_view name) {
    separate();
    out_.push_back('"');
    out_.append(name);
    out_.append("\":");
    after_key_ = true;
  }
  void plain_string(std::string_view value) {
    separate();
    out_.push_back('"');
    out_.append(value);
    out_.push_back('"');
  }
  // Text that is already a JSON value: a number written by the caller, or a
  // whole item encoded earlier (assemble_*_list).
  void raw(std::string_view json) {
    separate();
    out_.append(json);
  }

  // dump()'s escaping with ensure_ascii off: the two-character escapes, other
  // control characters as \u00xx, UTF-8 passed through. An ill-formed UTF-8
  // sequence (dump() would throw) becomes U+FFFD, as the replace handler does.
  static void escape(std::string& out, std::string_view text);

 private:
  void open(char c) {
    separate();
    out_.push_back(c);
    first_ = true;
  }
  void close(char c) {
    out_.push_back(c);
    first_ = false;
  }
  void separate() {
    if (after_key_) {
      after_key_ = false;
    } else if (!first_) {
      out_.push_back(',');
    }
    first_ = false;
  }
  void append_string(std::string_view text) {
    out_.push_back('"');
    escape(out_, text);
    out_.push_back('"');
  }

  std::string& out_;
  bool first_ = true;
  bool after_key_ = false;
};

}  // namespace fedmetrics::k8s
