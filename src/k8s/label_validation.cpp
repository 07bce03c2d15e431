// Go's renderings of strings in Kubernetes error texts (strconv.Quote,
// encoding/json) and the label key and value validation with its messages
// (apimachinery pkg/api/validate/content, pkg/util/validation/field/errors.go),
// as the label selector parser reports them. Go regular expressions are
// replaced by hand-written character checks.
#include "k8s/label_validation.hpp"

#include <algorithm>
#include <cstdint>
#include <initializer_list>

#include "fedmetrics/k8s/label_selector.hpp"

namespace fedmetrics::k8s {
namespace {

// ---------------------------------------------------------------------------
// Go string rendering: strconv.Quote (%q) and encoding/json, as they appear in
// Kubernetes error texts.

constexpr char kLowerHex[] = "0123456789abcdef";

struct DecodedRune {
  char32_t rune;
  std::size_t width;
  bool valid;  // false: an invalid byte, decoded by Go as U+FFFD of width 1
};

bool is_continuation(unsigned char b, unsigned char lo = 0x80, unsigned char hi = 0xBF) { return b >= lo && b <= hi; }

// utf8.DecodeRuneInString: rejects overlong forms, surrogates and > U+10FFFF.
DecodedRune decode_rune(std::string_view s, std::size_t i) {
  const auto at = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char b0 = at(i);
  const std::size_t left = s.size() - i;
  const DecodedRune invalid{0xFFFD, 1, false};
  if (b0 < 0x80) return {b0, 1, true};
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    if (left < 2 || !is_continuation(at(i + 1))) return invalid;
    return {static_cast<char32_t>(((b0 & 0x1F) << 6) | (at(i + 1) & 0x3F)), 2, true};
  }
  if (b0 >= 0xE0 && b0 <= 0xEF) {
    const unsigned char lo = b0 == 0xE0 ? 0xA0 : 0x80;
    const unsigned char hi = b0 == 0xED ? 0x9F : 0xBF;
    if (left < 3 || !is_continuation(at(i + 1), lo, hi) || !is_continuation(at(i + 2))) return invalid;
    return {static_cast<char32_t>(((b0 & 0x0F) << 12) | ((at(i + 1) & 0x3F) << 6) | (at(i + 2) & 0x3F)), 3, true};
  }
  if (b0 >= 0xF0 && b0 <= 0xF4) {
    const unsigned char lo = b0 == 0xF0 ? 0x90 : 0x80;
    const unsigned char hi = b0 == 0xF4 ? 0x8F : 0xBF;
    if (left < 4 || !is_continuation(at(i + 1), lo, hi) || !is_continuation(at(i + 2)) || !is_continuation(at(i + 3))) {
      return invalid;
    }
    return {static_cast<char32_t>(((b0 & 0x07) << 18) | ((at(i + 1) & 0x3F) << 12) | ((at(i + 2) & 0x3F) << 6) |
                                  (at(i + 3) & 0x3F)),
            4, true};
  }
  return invalid;
}

// An approximation of unicode.IsPrint for non-ASCII runes: Go prints letters,
// marks, numbers, punctuation and symbols as they are and escapes the rest. We
// escape the control, format, separator and private-use ranges; unassigned code
// points (which Go also escapes) are printed as they are.
bool is_print_non_ascii(char32_t r) {
  struct Range {
    char32_t lo, hi;
  };
  static constexpr Range kNotPrintable[] = {
      {0x80, 0xA0},       {0xAD, 0xAD},       {0x600, 0x605},      {0x61C, 0x61C},     {0x6DD, 0x6DD},
      {0x70F, 0x70F},     {0x890, 0x891},     {0x8E2, 0x8E2},      {0x1680, 0x1680},   {0x180E, 0x180E},
      {0x2000, 0x200F},   {0x2028, 0x202F},   {0x205F, 0x2064},    {0x2066, 0x206F},   {0x3000, 0x3000},
      {0xD800, 0xF8FF},   {0xFDD0, 0xFDEF},   {0xFEFF, 0xFEFF},    {0xFFF9, 0xFFFB},   {0xFFFE, 0xFFFF},
      {0x110BD, 0x110BD}, {0x110CD, 0x110CD}, {0x13430, 0x1343F},  {0x1BCA0, 0x1BCA3}, {0x1D173, 0x1D17A},
      {0xE0001, 0xE0001}, {0xE0020, 0xE007F}, {0xF0000, 0x10FFFF},
  };
  return std::none_of(std::begin(kNotPrintable), std::end(kNotPrintable),
                      [r](const Range& range) { return r >= range.lo && r <= range.hi; });
}

void append_hex(std::string& out, std::uint32_t value, int digits) {
  for (int shift = (digits - 1) * 4; shift >= 0; shift -= 4) out += kLowerHex[(value >> shift) & 0xF];
}

// strconv's appendEscapedRune for a rune that is not printed as it is.
void append_escaped_rune(std::string& out, char32_t r) {
  switch (r) {
    case '\a': out += "\\a"; return;
    case '\b': out += "\\b"; return;
    case '\f': out += "\\f"; return;
    case '\n': out += "\\n"; return;
    case '\r': out += "\\r"; return;
    case '\t': out += "\\t"; return;
    case '\v': out += "\\v"; return;
    default: break;
  }
  if (r < ' ' || r == 0x7F) {
    out += "\\x";
    append_hex(out, r, 2);
  } else if (r < 0x10000) {
    out += "\\u";
    append_hex(out, r, 4);
  } else {
    out += "\\U";
    append_hex(out, r, 8);
  }
}

// encoding/json's string encoding (with its default HTML escaping).
std::string go_json_quote(std::string_view s) {
  std::string out = "\"";
  for (std::size_t i = 0; i < s.size();) {
    const DecodedRune d = decode_rune(s, i);
    const char32_t r = d.rune;
    if (!d.valid) {
      out += "\\ufffd";
    } else if (r == '"' || r == '\\') {
      out += '\\';
      out += static_cast<char>(r);
    } else if (r == '\n' || r == '\r' || r == '\t' || r == '\b' || r == '\f') {
      append_escaped_rune(out, r);
    } else if (r < 0x20 || r == '<' || r == '>' || r == '&' || r == 0x2028 || r == 0x2029) {
      out += "\\u";
      append_hex(out, r, 4);
    } else {
      out.append(s.substr(i, d.width));
    }
    i += d.width;
  }
  out += '"';
  return out;
}

// ---------------------------------------------------------------------------
// Validation (content.IsLabelKey, content.IsLabelValue, content.IsDNS1123Subdomain).

constexpr std::size_t kLabelKeyNameMaxLength = 63;
constexpr std::size_t kLabelValueMaxLength = 63;
constexpr std::size_t kDNS1123SubdomainMaxLength = 253;

constexpr std::string_view kLabelKeyFmt = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
constexpr std::string_view kLabelKeyErrMsg =
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
    "character";
constexpr std::string_view kLabelValueFmt = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
constexpr std::string_view kLabelValueErrMsg =
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
    "start and end with an alphanumeric character";
constexpr std::string_view kDNS1123SubdomainFmt = "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
constexpr std::string_view kDNS1123SubdomainErrMsg =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
    "start and end with an alphanumeric character";

bool is_ascii_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }
bool is_lower_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// ^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$ (Go's $ matches only at the very end).
bool matches_label_key_name(std::string_view s) {
  if (s.empty() || !is_ascii_alnum(s.front()) || !is_ascii_alnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return is_ascii_alnum(c) || c == '-' || c == '_' || c == '.'; });
}

// ^[a-z0-9]([-a-z0-9]*[a-z0-9])?$, one dot-separated part of a subdomain.
bool matches_dns1123_label(std::string_view s) {
  if (s.empty() || !is_lower_alnum(s.front()) || !is_lower_alnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return is_lower_alnum(c) || c == '-'; });
}

bool matches_dns1123_subdomain(std::string_view s) {
  while (true) {
    const std::size_t dot = s.find('.');
    if (!matches_dns1123_label(s.substr(0, dot))) return false;
    if (dot == std::string_view::npos) return true;
    s.remove_prefix(dot + 1);
  }
}

// content.RegexError: note the two spaces after each "'," when there are
// several examples ("(e.g. 'MyName',  or 'my.name',  or '123-abc', regex ...").
std::string regex_error(std::string_view msg, std::string_view re, std::initializer_list<std::string_view> examples) {
  std::string out(msg);
  out += " (e.g. ";
  bool first = true;
  for (std::string_view example : examples) {
    if (!first) out += " or ";
    first = false;
    out += "'";
    out += example;
    out += "', ";
  }
  out += "regex used for validation is '";
  out += re;
  out += "')";
  return out;
}

std::string max_len_error(std::size_t length) { return "must be no more than " + std::to_string(length) + " bytes"; }

std::vector<std::string> dns1123_subdomain_errors(std::string_view value) {
  std::vector<std::string> errs;
  if (value.size() > kDNS1123SubdomainMaxLength) errs.push_back(max_len_error(kDNS1123SubdomainMaxLength));
  if (!matches_dns1123_subdomain(value)) {
    errs.push_back(regex_error(kDNS1123SubdomainErrMsg, kDNS1123SubdomainFmt, {"example.com"}));
  }
  return errs;
}

// content.IsLabelKey (a.k.a. IsQualifiedName): [prefix "/"] name.
std::vector<std::string> label_key_errors(std::string_view value) {
  std::vector<std::string> errs;
  const std::size_t slashes = static_cast<std::size_t>(std::count(value.begin(), value.end(), '/'));
  std::string_view name = value;
  if (slashes > 1) {
    errs.push_back("a valid label key " + regex_error(kLabelKeyErrMsg, kLabelKeyFmt, {"MyName", "my.name", "123-abc"}) +
                   " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')");
    return errs;
  }
  if (slashes == 1) {
    const std::size_t slash = value.find('/');
    const std::string_view prefix = value.substr(0, slash);
    name = value.substr(slash + 1);
    if (prefix.empty()) {
      errs.emplace_back("prefix part must be non-empty");
    } else {
      for (const std::string& e : dns1123_subdomain_errors(prefix)) errs.push_back("prefix part " + e);
    }
  }
  if (name.empty()) {
    errs.emplace_back("name part must be non-empty");
  } else if (name.size() > kLabelKeyNameMaxLength) {
    errs.push_back("name part " + max_len_error(kLabelKeyNameMaxLength));
  }
  if (!matches_label_key_name(name)) {
    errs.push_back("name part " + regex_error(kLabelKeyErrMsg, kLabelKeyFmt, {"MyName", "my.name", "123-abc"}));
  }
  return errs;
}

}  // namespace

namespace detail {

// json.Marshal of a []string bad value. Upstream passes `append([]string(nil),
// values...)`, which is nil (printed "null") whenever there are no values.
std::string go_json_string_list(const std::vector<std::string>& values) {
  if (values.empty()) return "null";
  std::string out = "[";
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ',';
    out += go_json_quote(values[i]);
  }
  out += ']';
  return out;
}

// content.IsLabelValue: empty, or a label key name of at most 63 bytes.
std::vector<std::string> label_value_errors(std::string_view value) {
  std::vector<std::string> errs;
  if (value.size() > kLabelValueMaxLength) errs.push_back(max_len_error(kLabelValueMaxLength));
  if (!value.empty() && !matches_label_key_name(value)) {
    errs.push_back(regex_error(kLabelValueErrMsg, kLabelValueFmt, {"MyValue", "my_value", "12345"}));
  }
  return errs;
}

std::string join(const std::vector<std::string>& parts, std::string_view separator) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += separator;
    out += parts[i];
  }
  return out;
}

// field.Invalid(path, value, detail).Error(); `rendered_value` is already
// formatted (%q for strings, JSON for lists).
std::string invalid_value_error(std::string_view path, std::string_view rendered_value, std::string_view detail) {
  std::string out(path);
  out += ": Invalid value: ";
  out += rendered_value;
  if (!detail.empty()) {
    out += ": ";
    out += detail;
  }
  return out;
}

// utilerrors aggregate's Error(): one error as it is; several, de-duplicated,
// as "[e1, e2]".
std::string aggregate(const std::vector<std::string>& errors) {
  if (errors.size() == 1) return errors.front();
  std::vector<std::string> unique;
  for (const std::string& e : errors) {
    if (std::find(unique.begin(), unique.end(), e) == unique.end()) unique.push_back(e);
  }
  if (unique.size() == 1) return unique.front();
  return "[" + join(unique, ", ") + "]";
}

// validateLabelKey in selector.go; `path` is "<nil>" from the parser (a nil
// *field.Path prints that way) and "key" from NewRequirement.
std::optional<std::string> validate_label_key(std::string_view key, std::string_view path) {
  const std::vector<std::string> errs = label_key_errors(key);
  if (errs.empty()) return std::nullopt;
  return invalid_value_error(path, detail::go_quote(key), join(errs, "; "));
}

std::string go_quote(std::string_view text) {
  std::string out = "\"";
  for (std::size_t i = 0; i < text.size();) {
    const DecodedRune d = decode_rune(text, i);
    if (!d.valid) {
      out += "\\x";
      append_hex(out, static_cast<unsigned char>(text[i]), 2);
    } else if (d.rune == '"' || d.rune == '\\') {
      out += '\\';
      out += static_cast<char>(d.rune);
    } else if ((d.rune >= 0x20 && d.rune < 0x7F) || (d.rune >= 0x80 && is_print_non_ascii(d.rune))) {
      out.append(text.substr(i, d.width));
    } else {
      append_escaped_rune(out, d.rune);
    }
    i += d.width;
  }
  out += '"';
  return out;
}

std::size_t utf8_sequence_length(std::string_view text, std::size_t i) {
  const DecodedRune d = decode_rune(text, i);
  return d.valid ? d.width : 0;
}

}  // namespace detail
}  // namespace fedmetrics::k8s
