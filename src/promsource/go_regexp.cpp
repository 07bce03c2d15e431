#include "promsource/go_regexp.hpp"

#include <algorithm>
#include <cctype>

namespace fedmetrics::promsource {

namespace {

bool name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

}  // namespace

k8s::Expected<GoRegexp> GoRegexp::compile(std::string_view pattern) {
  GoRegexp out;
  out.pattern_ = std::string(pattern);
  std::string ecma;
  ecma.reserve(pattern.size());
  bool in_class = false;
  std::size_t depth = 0;    // open groups
  std::size_t repeats = 0;  // sum of {n,m} counts
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\') {
      if (i + 1 >= pattern.size()) return k8s::Error{"error parsing regexp: trailing backslash at end of expression"};
      const char n = pattern[i + 1];
      if (n == 'A' || n == 'z' || n == 'Q' || n == 'E' || n == 'p' || n == 'P' || n == 'C' || (n >= '1' && n <= '9')) {
        return k8s::Error{std::string("error parsing regexp: \\") + n +
                          " is not supported here (Go syntax this reader cannot run)"};
      }
      ecma += c;
      ecma += n;
      ++i;
      continue;
    }
    if (in_class) {
      if (c == ']') in_class = false;
      if (c == '[' && i + 1 < pattern.size() && pattern[i + 1] == ':') {
        // POSIX class [[:alpha:]]: copied up to its closing ":]".
        const auto end = pattern.find(":]", i + 2);
        if (end == std::string_view::npos) return k8s::Error{"error parsing regexp: missing closing ]"};
        ecma.append(pattern.substr(i, end + 2 - i));
        i = end + 1;
        continue;
      }
      ecma += c;
      continue;
    }
    if (c == '[') {
      in_class = true;
      ecma += c;
      // A ']' first in a class (or after '^') is a literal in both grammars
      // for Go; ECMAScript reads "[]" as an empty class, so escape it.
      std::size_t j = i + 1;
      if (j < pattern.size() && pattern[j] == '^') {
        ecma += '^';
        ++j;
      }
      if (j < pattern.size() && pattern[j] == ']') {
        ecma += "\\]";
        ++j;
      }
      i = j - 1;
      continue;
    }
    if (c == '{') {
      // {n}, {n,} or {n,m}: Go refuses counts above 1000; std::regex builds
      // a copy of the repeated part per count, so the counts of the whole
      // pattern are held to 1000 together.
      std::size_t j = i + 1;
      std::size_t count = 0;  // the larger bound
      std::size_t number = 0;
      bool digits = false;
      while (j < pattern.size() && ((pattern[j] >= '0' && pattern[j] <= '9') || pattern[j] == ',')) {
        if (pattern[j] == ',') {
          number = 0;
        } else {
          digits = true;
          number = std::min<std::size_t>(number * 10 + (pattern[j] - '0'), 100000);
          count = std::max(count, number);
        }
        ++j;
      }
      if (digits && j < pattern.size() && pattern[j] == '}') {
        repeats += count;
        if (repeats > 1000) return k8s::Error{"error parsing regexp: invalid repeat count (above 1000 in all)"};
      }
    }
    if (c == ')' && depth > 0) --depth;
    if (c == '(') {
      // Go refuses nesting past 1000; std::regex compiles by recursion, so less.
      if (++depth > 100) return k8s::Error{"error parsing regexp: expression nests too deeply"};
      if (i + 1 < pattern.size() && pattern[i + 1] == '?') {
        const std::string_view rest = pattern.substr(i + 2);
        if (rest.starts_with(":")) {
          ecma += "(?:";
          i += 2;
          continue;
        }
        std::size_t skip = 0;
        if (rest.starts_with("P<")) skip = 2;
        else if (rest.starts_with("<")) skip = 1;
        if (skip == 0)
          return k8s::Error{"error parsing regexp: flags and look-around groups (?...) are not supported here"};
        const auto close = rest.find('>');
        if (close == std::string_view::npos) return k8s::Error{"error parsing regexp: invalid named capture"};
        std::string name(rest.substr(skip, close - skip));
        if (name.empty()) return k8s::Error{"error parsing regexp: invalid named capture"};
        for (char nc : name)
          if (!name_char(nc)) return k8s::Error{"error parsing regexp: invalid named capture: " + name};
        out.names_.push_back(std::move(name));
        ecma += '(';
        i += 2 + close;
        continue;
      }
      out.names_.emplace_back();
    }
    ecma += c;
  }
  try {
    out.regex_ = std::regex(ecma, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    return k8s::Error{std::string("error parsing regexp: ") + e.what()};
  }
  if (out.regex_.mark_count() != out.names_.size()) {
    return k8s::Error{"error parsing regexp: unsupported group syntax"};
  }
  return out;
}

bool GoRegexp::search(std::string_view text) const { return std::regex_search(text.begin(), text.end(), regex_); }

std::optional<std::string> GoRegexp::expand(std::string_view templ, std::string_view text) const {
  std::match_results<std::string_view::const_iterator> m;
  if (!std::regex_search(text.begin(), text.end(), m, regex_)) return std::nullopt;
  // Go's Regexp.expand: $name or ${name}, the name the longest run of
  // letters, digits and '_'; all digits is a group number; an unknown or
  // unmatched group expands to nothing; "$$" is a '$'; a '$' not followed by
  // a name is copied as is.
  auto group = [&](std::string_view name) -> std::string {
    bool digits = !name.empty();
    for (char c : name) digits = digits && std::isdigit(static_cast<unsigned char>(c)) != 0;
    std::size_t index = 0;
    if (digits) {
      if (name.size() > 9) return {};
      index = std::stoul(std::string(name));
    } else {
      std::size_t found = 0;
      for (std::size_t g = 0; g < names_.size(); ++g)
        if (names_[g] == name) found = g + 1;
      if (found == 0) return {};
      index = found;
    }
    if (index >= m.size() || !m[index].matched) return {};
    return m[index].str();
  };
  std::string out;
  for (std::size_t i = 0; i < templ.size(); ++i) {
    const char c = templ[i];
    if (c != '$' || i + 1 >= templ.size()) {
      out += c;
      continue;
    }
    if (templ[i + 1] == '$') {
      out += '$';
      ++i;
      continue;
    }
    if (templ[i + 1] == '{') {
      const auto close = templ.find('}', i + 2);
      std::string_view name = close == std::string_view::npos ? std::string_view{} : templ.substr(i + 2, close - i - 2);
      bool valid = !name.empty();
      for (char nc : name) valid = valid && name_char(nc);
      if (!valid) {
        out += c;
        continue;
      }
      out += group(name);
      i = close;
      continue;
    }
    std::size_t j = i + 1;
    while (j < templ.size() && name_char(templ[j])) ++j;
    if (j == i + 1) {
      out += c;
      continue;
    }
    out += group(templ.substr(i + 1, j - i - 1));
    i = j - 1;
  }
  return out;
}

}  // namespace fedmetrics::promsource
