// Field selectors, reproducing apimachinery's pkg/fields/selector.go
// (ParseSelector: splitTerms, splitTerm, UnescapeValue, EscapeValue) followed
// by runtime.DefaultMetaV1FieldSelectorConversion, the conversion the
// metrics.k8s.io API applies, which knows only metadata.name and
// metadata.namespace.
#include "fedmetrics/k8s/field_selector.hpp"

#include <functional>

#include <algorithm>
#include <optional>
#include <utility>

#include "fedmetrics/k8s/label_selector.hpp"  // detail::go_quote, detail::utf8_sequence_length

namespace fedmetrics::k8s {
namespace {

constexpr std::string_view kName = "metadata.name";
constexpr std::string_view kNamespace = "metadata.namespace";
constexpr std::string_view kReplacementCharacter = "\xEF\xBF\xBD";  // U+FFFD in UTF-8

// splitTerms: splits on commas that are not backslash-escaped; the escapes
// stay in the terms. (Upstream walks runes; walking bytes is the same here
// because '\\' and ',' never occur inside a multi-byte UTF-8 sequence.)
std::vector<std::string> split_terms(std::string_view selector) {
  std::vector<std::string> terms;
  if (selector.empty()) return terms;
  std::size_t start = 0;
  bool in_slash = false;
  for (std::size_t i = 0; i < selector.size(); ++i) {
    const char c = selector[i];
    if (in_slash) {
      in_slash = false;
    } else if (c == '\\') {
      in_slash = true;
    } else if (c == ',') {
      terms.emplace_back(selector.substr(start, i - start));
      start = i + 1;
    }
  }
  terms.emplace_back(selector.substr(start));
  return terms;
}

struct SplitTerm {
  std::string_view lhs;
  std::string_view op;
  std::string_view rhs;
};

// splitTerm: the first position where "!=", "==" or "=" starts (tried in that
// order, so "a==b" is not read as a="=b"); the field cannot be escaped.
std::optional<SplitTerm> split_term(std::string_view term) {
  static constexpr std::string_view kOperators[] = {"!=", "==", "="};
  for (std::size_t i = 0; i < term.size(); ++i) {
    const std::string_view remaining = term.substr(i);
    for (std::string_view op : kOperators) {
      if (remaining.substr(0, op.size()) == op) return SplitTerm{term.substr(0, i), op, term.substr(i + op.size())};
    }
  }
  return std::nullopt;
}

// UnescapeValue: "\\", "\," and "\=" are the only escapes; a bare ',' or '='
// is an error. Go formats the offending rune with %v, i.e. as its decimal code
// point ("unescaped character in value: 61" for '='). Like Go's rune loop,
// bytes that are not valid UTF-8 come out as U+FFFD once any escaping is
// involved.
Expected<std::string> unescape_value(std::string_view s) {
  if (s.find_first_of("\\,=") == std::string_view::npos) return std::string(s);
  std::string out;
  out.reserve(s.size());
  bool in_slash = false;
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t length = detail::utf8_sequence_length(s, i);
    const std::string_view rune = length == 0 ? kReplacementCharacter : s.substr(i, length);
    i += length == 0 ? 1 : length;
    const char c = rune.size() == 1 ? rune.front() : '\0';
    if (in_slash) {
      if (c != '\\' && c != ',' && c != '=') {
        return Error{"invalid field selector: invalid escape sequence: \\" + std::string(rune)};
      }
      out += c;
      in_slash = false;
    } else if (c == '\\') {
      in_slash = true;
    } else if (c == ',' || c == '=') {
      return Error{"invalid field selector: unescaped character in value: " + std::to_string(static_cast<int>(c))};
    } else {
      out += rune;
    }
  }
  if (in_slash) return Error{"invalid field selector: invalid escape sequence: \\"};
  return out;
}

// EscapeValue: the inverse, so that to_string() re-parses to the same value.
std::string escape_value(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (c == '\\' || c == ',' || c == '=') out += '\\';
    out += c;
  }
  return out;
}

// runtime.DefaultMetaV1FieldSelectorConversion, as metrics-server serves it.
std::optional<Error> check_known_field(std::string_view field) {
  if (field == kName || field == kNamespace) return std::nullopt;
  return Error{detail::go_quote(field) +
               " is not a known field selector: only \"metadata.name\", \"metadata.namespace\""};
}

// One term as printed: field, operator, escaped value.
std::string term(const FieldRequirement& r) { return r.field + (r.negated ? "!=" : "=") + escape_value(r.value); }

}  // namespace

Expected<FieldSelector> FieldSelector::parse(std::string_view text) {
  return parse_checked(text, [](std::string_view field) { return check_known_field(field); });
}

Expected<FieldSelector> FieldSelector::parse_for(std::string_view text, const std::vector<std::string_view>& known) {
  return parse_checked(text, [&known](std::string_view field) -> std::optional<Error> {
    if (std::find(known.begin(), known.end(), field) != known.end()) return std::nullopt;
    return Error{"field label not supported: " + std::string(field)};
  });
}

Expected<FieldSelector> FieldSelector::parse_checked(
    std::string_view text, const std::function<std::optional<Error>(std::string_view)>& check) {
  // Upstream sorts the raw terms before parsing, so both the error reported
  // first and the order of the requirements follow the sorted terms.
  std::vector<std::string> terms = split_terms(text);
  std::sort(terms.begin(), terms.end());
  FieldSelector out;
  for (const std::string& term : terms) {
    if (term.empty()) continue;
    const auto split = split_term(term);
    if (!split) return Error{"invalid selector: '" + std::string(text) + "'; can't understand '" + term + "'"};
    auto value = unescape_value(split->rhs);
    if (!value) return value.error();
    out.requirements_.push_back(FieldRequirement{std::string(split->lhs), split->op == "!=", std::move(*value)});
  }
  // The field conversion runs after the whole selector parsed (Transform).
  for (const FieldRequirement& r : out.requirements_) {
    if (auto error = check(r.field)) return *error;
  }
  // Upstream keeps the order of the sorted raw terms, which can differ from
  // the order of the printed terms ("a==b" sorts before "a=a"); ordering by the
  // printed form makes to_string() canonical: re-parsing it gives it back.
  std::stable_sort(out.requirements_.begin(), out.requirements_.end(),
                   [](const FieldRequirement& a, const FieldRequirement& b) { return term(a) < term(b); });
  return out;
}

bool FieldSelector::matches(std::string_view name, std::string_view namespace_name) const {
  return std::all_of(requirements_.begin(), requirements_.end(), [&](const FieldRequirement& r) {
    const std::string_view actual = r.field == kName ? name : namespace_name;
    return (actual == r.value) != r.negated;
  });
}

bool FieldSelector::matches(const std::function<std::string(std::string_view field)>& value_of) const {
  return std::all_of(requirements_.begin(), requirements_.end(),
                     [&](const FieldRequirement& r) { return (value_of(r.field) == r.value) != r.negated; });
}

std::string FieldSelector::to_string() const {
  std::string out;
  for (std::size_t i = 0; i < requirements_.size(); ++i) {
    if (i > 0) out += ',';
    out += term(requirements_[i]);
  }
  return out;
}

}  // namespace fedmetrics::k8s
