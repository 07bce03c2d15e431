// The string form of label selectors: apimachinery's pkg/labels/selector.go
// Lexer and Parser, whose grammar is its Parse.
#include "k8s/label_requirement.hpp"
#include "k8s/label_validation.hpp"

#include <limits>
#include <optional>
#include <tuple>
#include <utility>

namespace fedmetrics::k8s {
namespace {

using detail::new_requirement;
using detail::sort_unique;
using detail::validate_label_key;

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

}  // namespace

Expected<std::vector<Requirement>> detail::parse_requirements(std::string_view text, std::size_t max_requirements) {
  return Parser(text, max_requirements).parse();
}

}  // namespace fedmetrics::k8s
