#pragma once
// Go regular expressions (RE2 syntax) as far as std::regex's ECMAScript
// grammar can run them: the rules file's name.matches and seriesFilters are
// Go regexps (prometheus-adapter pkg/naming/metric_namer.go compiles them with
// regexp.Compile). Private to src/promsource.
//
// What differs from Go, and how: named groups (?P<name>...) and (?<name>...)
// are turned into plain groups whose names are kept for ${name}; inline flags
// ((?i), (?s), ...), \A, \z, \Q...\E, \p{..} and backreferences are refused
// with an error at load time (Go has no backreferences; the others ECMAScript
// lacks). Matching is leftmost-first in both, so a pattern both accept finds
// the same match. ECMAScript backtracks, so a pathological pattern can be slow
// where RE2 is linear: the patterns come from the operator's own file.
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "fedmetrics/k8s/expected.hpp"

namespace fedmetrics::promsource {

class GoRegexp {
 public:
  static k8s::Expected<GoRegexp> compile(std::string_view pattern);

  // Go's MatchString: is there a match anywhere in `text`.
  [[nodiscard]] bool search(std::string_view text) const;
  // Go's FindStringSubmatchIndex then ExpandString(template): nullopt when
  // there is no match.
  [[nodiscard]] std::optional<std::string> expand(std::string_view templ, std::string_view text) const;
  // The number of capture groups (Go's NumSubexp).
  [[nodiscard]] std::size_t groups() const { return names_.size(); }
  [[nodiscard]] const std::string& pattern() const { return pattern_; }

 private:
  std::string pattern_;
  std::regex regex_;
  std::vector<std::string> names_;  // one per group, "" when unnamed
};

}  // namespace fedmetrics::promsource
