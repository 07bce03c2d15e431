// Label selectors, reproducing apimachinery's pkg/labels/selector.go (lexer,
// parser, Requirement.Matches/String) and metav1.LabelSelectorAsSelector
// (pkg/apis/meta/v1/helpers.go); the grammar is pkg/labels/selector.go's Parse.
// The label key and value validation and Go's quoting in the error texts are
// label_validation.cpp's.
#include "fedmetrics/k8s/label_selector.hpp"

#include "k8s/label_validation.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <tuple>
#include <utility>

#include <nlohmann/json.hpp>

namespace fedmetrics::k8s {
namespace {

using detail::aggregate;
using detail::go_json_string_list;
using detail::invalid_value_error;
using detail::join;
using detail::label_value_errors;
using detail::validate_label_key;

// strconv.ParseInt(s, 10, 64): optional sign, decimal digits (no underscores
// with an explicit base), within int64.
std::optional<std::int64_t> parse_int64(std::string_view s) {
  bool negative = false;
  if (!s.empty() && (s.front() == '+' || s.front() == '-')) {
    negative = s.front() == '-';
    s.remove_prefix(1);
  }
  if (s.empty()) return std::nullopt;
  const std::uint64_t limit = negative ? static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) + 1
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
      errs.push_back(invalid_value_error("values[" + std::to_string(i) + "][" + key + "]", detail::go_quote(values[i]),
                                         join(value_errs, "; ")));
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
      {")", Token::ClosedPar},  {",", Token::Comma},       {"!", Token::DoesNotExist}, {"==", Token::DoubleEquals},
      {"=", Token::Equals},     {">", Token::GreaterThan}, {"in", Token::In},          {"<", Token::LessThan},
      {"!=", Token::NotEquals}, {"notin", Token::NotIn},   {"(", Token::OpenPar},
  };
  for (const auto& [literal, token] : kTokens) {
    if (literal == s) return token;
  }
  return std::nullopt;
}

bool is_whitespace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

bool is_special_symbol(char c) {
  switch (c) {
    case '=':
    case '!':
    case '(':
    case ')':
    case ',':
    case '>':
    case '<': return true;
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
    auto values =
        (*op == SelectorOperator::In || *op == SelectorOperator::NotIn) ? parse_values() : parse_exact_value();
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

bool Requirement::matches(const Labels& labels) const {
  const auto it = labels.find(key);
  const bool has = it != labels.end();
  const auto has_value = [&] { return std::find(values.begin(), values.end(), it->second) != values.end(); };
  switch (op) {
    case SelectorOperator::In:
    case SelectorOperator::Equals:
    case SelectorOperator::DoubleEquals: return has && has_value();
    case SelectorOperator::NotIn:
    case SelectorOperator::NotEquals: return !has || !has_value();  // an absent key matches
    case SelectorOperator::Exists: return has;
    case SelectorOperator::DoesNotExist: return !has;
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
