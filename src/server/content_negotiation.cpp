#include "server/content_negotiation.hpp"

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace fedmetrics::server {
namespace {

// One clause of an Accept header: a media range, its parameters (names
// lowercased, values as sent) and its quality.
struct Clause {
  std::string type;
  std::string subtype;
  std::map<std::string, std::string, std::less<>> params;
  double q = 1.0;
};

bool is_tchar(char c) {
  // RFC 9110 5.6.2 token characters.
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

class Scanner {
 public:
  explicit Scanner(std::string_view text) : text_(text) {}
  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t')) ++pos_;
  }
  bool done() const { return pos_ >= text_.size(); }
  bool eat(char c) {
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  std::string token() {
    std::string out;
    while (pos_ < text_.size() && is_tchar(text_[pos_])) out.push_back(lower(text_[pos_++]));
    return out;
  }
  // A token (case kept) or a quoted string; nullopt if neither.
  std::optional<std::string> value() {
    if (!eat('"')) {
      std::string out;
      while (pos_ < text_.size() && is_tchar(text_[pos_])) out.push_back(text_[pos_++]);
      if (out.empty()) return std::nullopt;
      return out;
    }
    std::string out;
    while (pos_ < text_.size()) {
      char c = text_[pos_++];
      if (c == '"') return out;
      if (c == '\\' && pos_ < text_.size()) c = text_[pos_++];
      out.push_back(c);
    }
    return std::nullopt;  // unterminated
  }

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
};

// Go's mime.ParseMediaType as goautoneg uses it: a clause that does not
// parse is skipped, never an error of the request.
std::optional<Clause> parse_clause(std::string_view text) {
  Scanner s(text);
  Clause clause;
  s.skip_space();
  clause.type = s.token();
  if (clause.type.empty() || !s.eat('/')) return std::nullopt;
  clause.subtype = s.token();
  if (clause.subtype.empty()) return std::nullopt;
  for (;;) {
    s.skip_space();
    if (s.done()) break;
    if (!s.eat(';')) return std::nullopt;
    s.skip_space();
    if (s.done()) break;  // a trailing ';' is ignored
    std::string name = s.token();
    if (name.empty()) return std::nullopt;
    s.skip_space();
    if (!s.eat('=')) return std::nullopt;
    s.skip_space();
    auto value = s.value();
    if (!value) return std::nullopt;
    if (name == "q") {
      // strconv.ParseFloat's error leaves 0, which no longer accepts the clause.
      double q = 0;
      auto [end, ec] = std::from_chars(value->data(), value->data() + value->size(), q);
      clause.q = ec == std::errc() && end == value->data() + value->size() ? q : 0;
      // from_chars reads "nan" and "inf", and a NaN would break the sort's
      // ordering below. A quality is in [0, 1] (RFC 9110 12.4.2): NaN or
      // below is "not acceptable", above is the highest (Go keeps q=2 as 2).
      if (!(clause.q >= 0)) clause.q = 0;
      if (clause.q > 1) clause.q = 1;
    } else if (!clause.params.emplace(std::move(name), std::move(*value)).second) {
      return std::nullopt;  // a parameter named twice
    }
  }
  return clause;
}

std::string_view param(const Clause& clause, std::string_view name) {
  auto it = clause.params.find(name);
  return it == clause.params.end() ? std::string_view() : std::string_view(it->second);
}

// The representation this clause admits, if it admits one we serve
// (negotiation.acceptMediaTypeOptions and RequestScope.AllowsMediaTypeTransform).
std::optional<Representation> admitted(const Clause& clause, bool table_convertible) {
  if (clause.q <= 0) return std::nullopt;
  // Our one serializer, application/json, against the media range.
  bool json = (clause.type == "application" && (clause.subtype == "json" || clause.subtype == "*")) ||
              (clause.type == "*" && clause.subtype == "*");
  if (!json) return std::nullopt;
  // stream=watch names the watch framing, which JSON has; any other stream is refused.
  if (auto stream = param(clause, "stream"); !stream.empty() && stream != "watch") return std::nullopt;
  bool convert = clause.params.contains("as") || clause.params.contains("g") || clause.params.contains("v");
  if (!convert) return JsonRepresentation{};
  if (param(clause, "as") != "Table" || param(clause, "g") != "meta.k8s.io" || !table_convertible) return std::nullopt;
  if (param(clause, "v") == "v1") return TableRepresentation{k8s::TableVersion::V1};
  if (param(clause, "v") == "v1beta1") return TableRepresentation{k8s::TableVersion::V1beta1};
  return std::nullopt;
}

bool blank(std::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char c) { return c == ' ' || c == '\t'; });
}

}  // namespace

std::variant<Representation, k8s::Status> negotiate_representation(std::string_view accept, bool table_convertible) {
  if (blank(accept)) return Representation{JsonRepresentation{}};
  std::vector<Clause> clauses;
  std::size_t start = 0;
  while (start <= accept.size()) {
    std::size_t comma = accept.find(',', start);
    if (comma == std::string_view::npos) comma = accept.size();
    if (auto clause = parse_clause(accept.substr(start, comma - start))) clauses.push_back(std::move(*clause));
    start = comma + 1;
  }
  // By quality, then the more specific range first; equal ones keep their order.
  std::stable_sort(clauses.begin(), clauses.end(), [](const Clause& a, const Clause& b) {
    if (a.q != b.q) return a.q > b.q;
    int wild_a = (a.type == "*") + (a.subtype == "*"), wild_b = (b.type == "*") + (b.subtype == "*");
    return wild_a < wild_b;
  });
  for (const auto& clause : clauses) {
    if (auto representation = admitted(clause, table_convertible)) return *representation;
  }
  return k8s::Status::not_acceptable("application/json");
}

}  // namespace fedmetrics::server
