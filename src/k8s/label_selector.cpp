// Label selectors, reproducing apimachinery's pkg/labels/selector.go (lexer,
// parser, Requirement.Matches/String), the label key/value validation of
// pkg/api/validate/content (kube.go, dns.go, errors.go), field.Error texts
// (pkg/util/validation/field/errors.go) and metav1.LabelSelectorAsSelector
// (pkg/apis/meta/v1/helpers.go); the grammar is pkg/labels/selector.go's Parse.
//
// Go regular expressions are replaced by hand-written character checks: the
// patterns are simple, and std::regex is slow and recursion-hungry on long input.
#include "fedmetrics/k8s/label_selector.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <tuple>
#include <utility>

#include <nlohmann/json.hpp>

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

bool is_continuation(unsigned char b, unsigned char lo = 0x80, unsigned char hi = 0xBF) {
  return b >= lo && b <= hi;
}

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
    return {static_cast<char32_t>(((b0 & 0x0F) << 12) | ((at(i + 1) & 0x3F) << 6) | (at(i + 2) & 0x3F)), 3,
            true};
  }
  if (b0 >= 0xF0 && b0 <= 0xF4) {
    const unsigned char lo = b0 == 0xF0 ? 0x90 : 0x80;
    const unsigned char hi = b0 == 0xF4 ? 0x8F : 0xBF;
    if (left < 4 || !is_continuation(at(i + 1), lo, hi) || !is_continuation(at(i + 2)) ||
        !is_continuation(at(i + 3))) {
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
      {0x80, 0xA0},       {0xAD, 0xAD},       {0x600, 0x605},     {0x61C, 0x61C},     {0x6DD, 0x6DD},
      {0x70F, 0x70F},     {0x890, 0x891},     {0x8E2, 0x8E2},     {0x1680, 0x1680},   {0x180E, 0x180E},
      {0x2000, 0x200F},   {0x2028, 0x202F},   {0x205F, 0x2064},   {0x2066, 0x206F},   {0x3000, 0x3000},
      {0xD800, 0xF8FF},   {0xFDD0, 0xFDEF},   {0xFEFF, 0xFEFF},   {0xFFF9, 0xFFFB},   {0xFFFE, 0xFFFF},
      {0x110BD, 0x110BD}, {0x110CD, 0x110CD}, {0x13430, 0x1343F}, {0x1BCA0, 0x1BCA3}, {0x1D173, 0x1D17A},
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

bool is_ascii_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}
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

// strconv.ParseInt(s, 10, 64): optional sign, decimal digits (no underscores
// with an explicit base), within int64.
std::optional<std::int64_t> parse_int64(std::string_view s) {
  bool negative = false;
  if (!s.empty() && (s.front() == '+' || s.front() == '-')) {
    negative = s.front() == '-';
    s.remove_prefix(1);
  }
  if (s.empty()) return std::nullopt;
  const std::uint64_t limit =
      negative ? static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) + 1
               : static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  std::uint64_t value = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    const auto digit = static_cast<std::uint64_t>(c - '0');
    if (value > (limit - digit) / 10) return std::nullopt;
    value = value * 10 + digit;
  }
  if (negative) return value == limit ? std::numeric_limits<std::int64_t>::min() : -static_cast<std::int64_t>(value);
  return static_cast<std::int64_t>(value);
}

void sort_unique(std::vector<std::string>& values) {
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
}

// labels.NewRequirement with a nil path: checks the value count for the
// operator and every value, reporting all problems at once. The values keep
// their given order for the error indexes, then become a sorted set.
Expected<Requirement> new_requirement(std::string key, SelectorOperator op, std::vector<std::string> values) {
  std::vector<std::string> errs;
  if (auto e = validate_label_key(key, "key")) errs.push_back(std::move(*e));
  switch (op) {
    case SelectorOperator::In:
    case SelectorOperator::NotIn:
      if (values.empty()) {
        errs.push_back(invalid_value_error("values", go_json_string_list(values),
                                           "for 'in', 'notin' operators, values set can't be empty"));
      }
      break;
    case SelectorOperator::Equals:
    case SelectorOperator::DoubleEquals:
    case SelectorOperator::NotEquals:
      if (values.size() != 1) {
        errs.push_back(invalid_value_error("values", go_json_string_list(values),
                                           "exact-match compatibility requires one single value"));
      }
      break;
    case SelectorOperator::Exists:
    case SelectorOperator::DoesNotExist:
      if (!values.empty()) {
        errs.push_back(invalid_value_error("values", go_json_string_list(values),
                                           "values set must be empty for exists and does not exist"));
      }
      break;
    case SelectorOperator::GreaterThan:
    case SelectorOperator::LessThan:
      if (values.size() != 1) {
        errs.push_back(invalid_value_error("values", go_json_string_list(values),
                                           "for 'Gt', 'Lt' operators, exactly one value is required"));
      }
      for (std::size_t i = 0; i < values.size(); ++i) {
        if (!parse_int64(values[i])) {
          errs.push_back(invalid_value_error("values[" + std::to_string(i) + "]", detail::go_quote(values[i]),
                                             "for 'Gt', 'Lt' operators, the value must be an integer"));
        }
      }
      break;
  }
  for (std::size_t i = 0; i < values.size(); ++i) {
    const std::vector<std::string> value_errs = label_value_errors(values[i]);
    if (!value_errs.empty()) {
      errs.push_back(invalid_value_error("values[" + std::to_string(i) + "][" + key + "]",
                                         detail::go_quote(values[i]), join(value_errs, "; ")));
    }
  }
  if (!errs.empty()) return Error{aggregate(errs)};
  sort_unique(values);
  return Requirement{std::move(key), op, std::move(values)};
}

void sort_by_key(std::vector<Requirement>& requirements) {
  std::stable_sort(requirements.begin(), requirements.end(),
                   [](const Requirement& a, const Requirement& b) { return a.key < b.key; });
}

// ---------------------------------------------------------------------------
// Lexer (selector.go Lexer). Bytes are read one at a time; like Go's read(),
// a NUL byte reads the same as the end of the string (and is consumed).

enum class Token {
  Error,
  EndOfString,
  ClosedPar,
  Comma,
  DoesNotExist,
  DoubleEquals,
  Equals,
  GreaterThan,
  Identifier,
  In,
  LessThan,
  NotEquals,
  NotIn,
  OpenPar,
};

struct ScannedItem {
  Token token;
  std::string literal;
};

// string2token: the literals that are tokens rather than identifiers.
std::optional<Token> token_for_literal(std::string_view s) {
  static constexpr std::pair<std::string_view, Token> kTokens[] = {
      {")", Token::ClosedPar},   {",", Token::Comma},       {"!", Token::DoesNotExist}, {"==", Token::DoubleEquals},
      {"=", Token::Equals},      {">", Token::GreaterThan}, {"in", Token::In},          {"<", Token::LessThan},
      {"!=", Token::NotEquals},  {"notin", Token::NotIn},   {"(", Token::OpenPar},
  };
  for (const auto& [literal, token] : kTokens) {
    if (literal == s) return token;
  }
  return std::nullopt;
}

bool is_whitespace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

bool is_special_symbol(char c) {
  switch (c) {
    case '=': case '!': case '(': case ')': case ',': case '>': case '<': return true;
    default: return false;
  }
}

class Lexer {
 public:
  explicit Lexer(std::string_view text) : text_(text) {}

  ScannedItem lex() {
    const char c = skip_whitespace(read());
    if (c == '\0') return {Token::EndOfString, ""};
    unread();
    return is_special_symbol(c) ? scan_special_symbol() : scan_identifier_or_keyword();
  }

 private:
  char read() { return pos_ < text_.size() ? text_[pos_++] : '\0'; }
  void unread() { --pos_; }

  char skip_whitespace(char c) {
    while (is_whitespace(c)) c = read();
    return c;
  }

  // A run of non-special, non-space bytes; "in" and "notin" are keywords here
  // and become identifiers again in value position (see Parser::Context).
  ScannedItem scan_identifier_or_keyword() {
    std::string buffer;
    while (true) {
      const char c = read();
      if (c == '\0') break;
      if (is_special_symbol(c) || is_whitespace(c)) {
        unread();
        break;
      }
      buffer += c;
    }
    if (auto token = token_for_literal(buffer)) return {*token, std::move(buffer)};
    return {Token::Identifier, std::move(buffer)};
  }

  // Longest match among the operators made of special symbols ("!=" over "!").
  ScannedItem scan_special_symbol() {
    std::string buffer;
    std::optional<ScannedItem> last;
    while (true) {
      const char c = read();
      if (c == '\0') break;
      if (!is_special_symbol(c)) {
        unread();
        break;
      }
      buffer += c;
      if (auto token = token_for_literal(buffer)) {
        last = ScannedItem{*token, buffer};
      } else if (last) {
        unread();
        break;
      }
    }
    // Unreachable in practice (every single special symbol is a token), kept
    // for fidelity with upstream's scanSpecialSymbol.
    if (!last) return {Token::Error, "error expected: keyword found '" + buffer + "'"};
    return std::move(*last);
  }

  std::string_view text_;
  std::size_t pos_ = 0;
};

// ---------------------------------------------------------------------------
// Parser (selector.go Parser): scans everything first, then descends.

class Parser {
 public:
  explicit Parser(std::string_view text, std::size_t max_requirements = std::numeric_limits<std::size_t>::max())
      : max_requirements_(max_requirements) {
    Lexer lexer(text);
    while (true) {
      items_.push_back(lexer.lex());
      if (items_.back().token == Token::EndOfString) break;
    }
  }

  Expected<std::vector<Requirement>> parse() {
    std::vector<Requirement> requirements;
    while (true) {
      const auto [token, literal] = lookahead(Context::Values);
      if (token == Token::EndOfString) return requirements;
      if (token != Token::Identifier && token != Token::DoesNotExist) {
        return Error{"found '" + literal + "', expected: !, identifier, or 'end of string'"};
      }
      auto requirement = parse_requirement();
      if (!requirement) return Error{"unable to parse requirement: " + requirement.error().message};
      if (requirements.size() == max_requirements_) {
        return Error{"too many requirements in the selector: the limit is " + std::to_string(max_requirements_)};
      }
      requirements.push_back(std::move(*requirement));
      const auto [after, after_literal] = consume(Context::Values);
      if (after == Token::EndOfString) return requirements;
      if (after != Token::Comma) return Error{"found '" + after_literal + "', expected: ',' or 'end of string'"};
      const auto [next, next_literal] = lookahead(Context::Values);
      if (next != Token::Identifier && next != Token::DoesNotExist) {
        return Error{"found '" + next_literal + "', expected: identifier after ','"};
      }
    }
  }

 private:
  // In value position the keywords "in" and "notin" are plain identifiers.
  enum class Context { KeyAndOperator, Values };

  std::pair<Token, std::string> lookahead(Context context) const {
    // Upstream never reads past the end-of-string item; stay safe regardless.
    const ScannedItem& item = items_[std::min(position_, items_.size() - 1)];
    Token token = item.token;
    if (context == Context::Values && (token == Token::In || token == Token::NotIn)) token = Token::Identifier;
    return {token, item.literal};
  }

  std::pair<Token, std::string> consume(Context context) {
    auto result = lookahead(context);
    ++position_;
    return result;
  }

  Expected<Requirement> parse_requirement() {
    auto key_and_operator = parse_key_and_infer_operator();
    if (!key_and_operator) return key_and_operator.error();
    auto [key, inferred] = std::move(*key_and_operator);
    if (inferred) return new_requirement(std::move(key), *inferred, {});
    auto op = parse_operator();
    if (!op) return op.error();
    auto values = (*op == SelectorOperator::In || *op == SelectorOperator::NotIn) ? parse_values() : parse_exact_value();
    if (!values) return values.error();
    // Upstream collects a sets.String and passes its sorted List(), so error
    // indexes ("values[2][app]") refer to the sorted, de-duplicated values.
    sort_unique(*values);
    return new_requirement(std::move(key), *op, std::move(*values));
  }

  // "!key" is DoesNotExist; "key" followed by ',' or the end is Exists;
  // otherwise no operator yet (an operator token must follow). Note that
  // "!key=v" yields DoesNotExist and then fails on the "=".
  using KeyAndOperator = std::pair<std::string, std::optional<SelectorOperator>>;
  Expected<KeyAndOperator> parse_key_and_infer_operator() {
    std::optional<SelectorOperator> op;
    auto [token, literal] = consume(Context::Values);
    if (token == Token::DoesNotExist) {
      op = SelectorOperator::DoesNotExist;
      std::tie(token, literal) = consume(Context::Values);
    }
    if (token != Token::Identifier) return Error{"found '" + literal + "', expected: identifier"};
    if (auto e = validate_label_key(literal, "<nil>")) return Error{std::move(*e)};
    const Token next = lookahead(Context::Values).first;
    if ((next == Token::EndOfString || next == Token::Comma) && !op) op = SelectorOperator::Exists;
    return KeyAndOperator{std::move(literal), op};
  }

  Expected<SelectorOperator> parse_operator() {
    const auto [token, literal] = consume(Context::KeyAndOperator);
    switch (token) {
      case Token::In: return SelectorOperator::In;
      case Token::Equals: return SelectorOperator::Equals;
      case Token::DoubleEquals: return SelectorOperator::DoubleEquals;
      case Token::GreaterThan: return SelectorOperator::GreaterThan;
      case Token::LessThan: return SelectorOperator::LessThan;
      case Token::NotIn: return SelectorOperator::NotIn;
      case Token::NotEquals: return SelectorOperator::NotEquals;
      default: return Error{"found '" + literal + "', expected: in, notin, =, ==, !=, gt, lt"};
    }
  }

  // "(" [list] ")"; "()" is the set {""}.
  Expected<std::vector<std::string>> parse_values() {
    auto [token, literal] = consume(Context::Values);
    if (token != Token::OpenPar) return Error{"found '" + literal + "' expected: '('"};
    std::tie(token, literal) = lookahead(Context::Values);
    if (token == Token::ClosedPar) {
      consume(Context::Values);
      return std::vector<std::string>{""};
    }
    if (token != Token::Identifier && token != Token::Comma) {
      return Error{"found '" + literal + "', expected: ',', ')' or identifier"};
    }
    auto values = parse_identifiers_list();
    if (!values) return values.error();
    if (consume(Context::Values).first != Token::ClosedPar) {
      // Unreachable: the list only ends in front of ')'. Upstream reports the
      // list's first token here.
      return Error{"found '" + literal + "', expected: ')'"};
    }
    return values;
  }

  // Upstream's parseIdentifiersList, quirks included: a leading ',' or ",)"
  // adds "", ",," adds "" and consumes the second comma, so "(a,,)" is an
  // error ("found ')', expected: ',', or identifier") while "(a,,b)" and
  // "(a,)" are fine.
  Expected<std::vector<std::string>> parse_identifiers_list() {
    std::vector<std::string> values;
    while (true) {
      const auto [token, literal] = consume(Context::Values);
      if (token == Token::Identifier) {
        values.push_back(literal);
        const auto [next, next_literal] = lookahead(Context::Values);
        if (next == Token::Comma) continue;
        if (next == Token::ClosedPar) return values;
        return Error{"found '" + next_literal + "', expected: ',' or ')'"};
      }
      if (token != Token::Comma) return Error{"found '" + literal + "', expected: ',', or identifier"};
      if (values.empty()) values.emplace_back();  // "(,"
      const Token next = lookahead(Context::Values).first;
      if (next == Token::ClosedPar) {  // ",)"
        values.emplace_back();
        return values;
      }
      if (next == Token::Comma) {  // ",,"
        consume(Context::Values);
        values.emplace_back();
      }
    }
  }

  // One value; nothing before ',' or the end means "".
  Expected<std::vector<std::string>> parse_exact_value() {
    const Token next = lookahead(Context::Values).first;
    if (next == Token::EndOfString || next == Token::Comma) return std::vector<std::string>{""};
    const auto [token, literal] = consume(Context::Values);
    if (token == Token::Identifier) return std::vector<std::string>{literal};
    return Error{"found '" + literal + "', expected: identifier"};
  }

  std::vector<ScannedItem> items_;
  std::size_t position_ = 0;
  std::size_t max_requirements_;
};

// ---------------------------------------------------------------------------
// Object form (metav1.LabelSelector). JSON is decoded first, as Go's decoder
// would, with a JSON null read as the zero value; validation follows.

struct DecodedExpression {
  std::string key;
  std::string op;
  std::vector<std::string> values;
};

struct DecodedSelector {
  std::vector<std::pair<std::string, std::string>> match_labels;  // sorted by key
  std::vector<DecodedExpression> match_expressions;
};

Error type_error(std::string_view path, std::string_view expected, const nlohmann::json& got) {
  return Error{"expected " + std::string(expected) + ", got " + got.type_name()}.at(path);
}

Expected<std::string> decode_string(const nlohmann::json& j, std::string_view path) {
  if (j.is_null()) return std::string();
  if (!j.is_string()) return type_error(path, "a string", j);
  return j.get<std::string>();
}

const nlohmann::json* member(const nlohmann::json& object, std::string_view name) {
  auto it = object.find(name);
  if (it == object.end() || it->is_null()) return nullptr;
  return &*it;
}

Expected<DecodedExpression> decode_expression(const nlohmann::json& j, const std::string& path) {
  DecodedExpression out;
  if (j.is_null()) return out;
  if (!j.is_object()) return type_error(path, "an object", j);
  for (auto [name, target] : {std::pair{"key", &out.key}, std::pair{"operator", &out.op}}) {
    if (const auto* v = member(j, name)) {
      auto s = decode_string(*v, path + "." + name);
      if (!s) return s.error();
      *target = std::move(*s);
    }
  }
  if (const auto* values = member(j, "values")) {
    if (!values->is_array()) return type_error(path + ".values", "an array", *values);
    for (std::size_t i = 0; i < values->size(); ++i) {
      auto s = decode_string((*values)[i], path + ".values[" + std::to_string(i) + "]");
      if (!s) return s.error();
      out.values.push_back(std::move(*s));
    }
  }
  return out;
}

Expected<DecodedSelector> decode_selector(const nlohmann::json& object) {
  DecodedSelector out;
  if (object.is_null()) return out;
  if (!object.is_object()) return type_error("", "an object", object);
  if (const auto* labels = member(object, "matchLabels")) {
    if (!labels->is_object()) return type_error("matchLabels", "an object", *labels);
    // nlohmann::json objects iterate in key order, so errors are deterministic
    // (Go ranges over the map in random order).
    for (const auto& [k, v] : labels->items()) {
      auto s = decode_string(v, "matchLabels." + k);
      if (!s) return s.error();
      out.match_labels.emplace_back(k, std::move(*s));
    }
  }
  if (const auto* expressions = member(object, "matchExpressions")) {
    if (!expressions->is_array()) return type_error("matchExpressions", "an array", *expressions);
    for (std::size_t i = 0; i < expressions->size(); ++i) {
      auto e = decode_expression((*expressions)[i], "matchExpressions[" + std::to_string(i) + "]");
      if (!e) return e.error();
      out.match_expressions.push_back(std::move(*e));
    }
  }
  return out;
}

// The operators metav1.LabelSelectorOperator has; Gt/Lt are not among them.
std::optional<SelectorOperator> object_operator(std::string_view name) {
  if (name == "In") return SelectorOperator::In;
  if (name == "NotIn") return SelectorOperator::NotIn;
  if (name == "Exists") return SelectorOperator::Exists;
  if (name == "DoesNotExist") return SelectorOperator::DoesNotExist;
  return std::nullopt;
}

nlohmann::json expression(const Requirement& r, std::string_view op, bool with_values) {
  nlohmann::json out = {{"key", r.key}, {"operator", std::string(op)}};
  if (with_values) out["values"] = r.values;
  return out;
}

}  // namespace

// ---------------------------------------------------------------------------

namespace detail {

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

bool Requirement::matches(const Labels& labels) const {
  const auto it = labels.find(key);
  const bool has = it != labels.end();
  const auto has_value = [&] { return std::find(values.begin(), values.end(), it->second) != values.end(); };
  switch (op) {
    case SelectorOperator::In:
    case SelectorOperator::Equals:
    case SelectorOperator::DoubleEquals:
      return has && has_value();
    case SelectorOperator::NotIn:
    case SelectorOperator::NotEquals:
      return !has || !has_value();  // an absent key matches
    case SelectorOperator::Exists:
      return has;
    case SelectorOperator::DoesNotExist:
      return !has;
    case SelectorOperator::GreaterThan:
    case SelectorOperator::LessThan: {
      // Both sides must be base-10 int64s; anything else does not match.
      if (!has || values.size() != 1) return false;
      const auto label_value = parse_int64(it->second);
      const auto bound = parse_int64(values.front());
      if (!label_value || !bound) return false;
      return op == SelectorOperator::GreaterThan ? *label_value > *bound : *label_value < *bound;
    }
  }
  return false;
}

std::string Requirement::to_string() const {
  std::string out;
  if (op == SelectorOperator::DoesNotExist) out += '!';
  out += key;
  switch (op) {
    case SelectorOperator::Equals: out += "="; break;
    case SelectorOperator::DoubleEquals: out += "=="; break;
    case SelectorOperator::NotEquals: out += "!="; break;
    case SelectorOperator::In: out += " in "; break;
    case SelectorOperator::NotIn: out += " notin "; break;
    case SelectorOperator::GreaterThan: out += ">"; break;
    case SelectorOperator::LessThan: out += "<"; break;
    case SelectorOperator::Exists:
    case SelectorOperator::DoesNotExist: return out;
  }
  const bool is_set = op == SelectorOperator::In || op == SelectorOperator::NotIn;
  if (is_set) out += '(';
  // Values are kept sorted; sort a copy anyway, as upstream's safeSort does,
  // for requirements built by hand.
  std::vector<std::string> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  out += join(sorted, ",");
  if (is_set) out += ')';
  return out;
}

Expected<LabelSelector> LabelSelector::parse(std::string_view text) {
  return parse(text, std::numeric_limits<std::size_t>::max());
}

Expected<LabelSelector> LabelSelector::parse(std::string_view text, std::size_t max_requirements) {
  auto requirements = Parser(text, max_requirements).parse();
  if (!requirements) return requirements.error();
  return from_requirements(std::move(*requirements));
}

Expected<LabelSelector> LabelSelector::from_object(const nlohmann::json& object) {
  auto decoded = decode_selector(object);
  if (!decoded) return decoded.error();
  std::vector<Requirement> requirements;
  for (auto& [key, value] : decoded->match_labels) {
    auto r = new_requirement(key, SelectorOperator::Equals, {value});
    if (!r) return r.error();
    requirements.push_back(std::move(*r));
  }
  for (auto& e : decoded->match_expressions) {
    const auto op = object_operator(e.op);
    if (!op) return Error{detail::go_quote(e.op) + " is not a valid label selector operator"};
    auto r = new_requirement(std::move(e.key), *op, std::move(e.values));
    if (!r) return r.error();
    requirements.push_back(std::move(*r));
  }
  return from_requirements(std::move(requirements));
}

LabelSelector LabelSelector::from_requirements(std::vector<Requirement> requirements) {
  for (Requirement& r : requirements) sort_unique(r.values);
  sort_by_key(requirements);
  LabelSelector out;
  out.requirements_ = std::move(requirements);
  return out;
}

nlohmann::json LabelSelector::to_object() const {
  nlohmann::json match_labels = nlohmann::json::object();
  nlohmann::json match_expressions = nlohmann::json::array();
  for (const Requirement& r : requirements_) {
    const bool equality = r.op == SelectorOperator::Equals || r.op == SelectorOperator::DoubleEquals ||
                          (r.op == SelectorOperator::In && r.values.size() == 1);
    // matchLabels holds one value per key; a second equality on the same key
    // is kept as an In expression so that nothing is lost.
    if (equality && r.values.size() == 1 && !match_labels.contains(r.key)) {
      match_labels[r.key] = r.values.front();
      continue;
    }
    switch (r.op) {
      case SelectorOperator::Equals:
      case SelectorOperator::DoubleEquals:
      case SelectorOperator::In: match_expressions.push_back(expression(r, "In", true)); break;
      case SelectorOperator::NotEquals:
      case SelectorOperator::NotIn: match_expressions.push_back(expression(r, "NotIn", true)); break;
      case SelectorOperator::Exists: match_expressions.push_back(expression(r, "Exists", false)); break;
      case SelectorOperator::DoesNotExist: match_expressions.push_back(expression(r, "DoesNotExist", false)); break;
      case SelectorOperator::GreaterThan: match_expressions.push_back(expression(r, "Gt", true)); break;
      case SelectorOperator::LessThan: match_expressions.push_back(expression(r, "Lt", true)); break;
    }
  }
  nlohmann::json out = nlohmann::json::object();
  if (!match_labels.empty()) out["matchLabels"] = std::move(match_labels);
  if (!match_expressions.empty()) out["matchExpressions"] = std::move(match_expressions);
  return out;
}

bool LabelSelector::matches(const Labels& labels) const {
  return std::all_of(requirements_.begin(), requirements_.end(),
                     [&](const Requirement& r) { return r.matches(labels); });
}

std::string LabelSelector::to_string() const {
  std::string out;
  for (std::size_t i = 0; i < requirements_.size(); ++i) {
    if (i > 0) out += ',';
    out += requirements_[i].to_string();
  }
  return out;
}

std::pair<LabelSelector, LabelSelector> LabelSelector::partition(std::string_view key) const {
  std::pair<LabelSelector, LabelSelector> out;
  for (const Requirement& r : requirements_) {
    (r.key == key ? out.first : out.second).requirements_.push_back(r);
  }
  return out;
}

}  // namespace fedmetrics::k8s
