#pragma once
// Kubernetes label selectors (apimachinery pkg/labels/selector.go and
// metav1.LabelSelector): the string grammar with every operator, Kubernetes'
// validation and error texts, the object form, matching, and the canonical
// (sorted) string that is forwarded to member clusters.
#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "fedmetrics/k8s/expected.hpp"

namespace fedmetrics::k8s {

using Labels = std::map<std::string, std::string, std::less<>>;

enum class SelectorOperator {
  Equals,        // =
  DoubleEquals,  // ==
  NotEquals,     // !=
  In,            // in
  NotIn,         // notin
  Exists,        // key
  DoesNotExist,  // !key
  GreaterThan,   // >
  LessThan,      // <
};

struct Requirement {
  std::string key;
  SelectorOperator op = SelectorOperator::Exists;
  std::vector<std::string> values;  // sorted, de-duplicated

  [[nodiscard]] bool matches(const Labels& labels) const;
  [[nodiscard]] std::string to_string() const;
  friend bool operator==(const Requirement&, const Requirement&) = default;
};

class LabelSelector {
 public:
  LabelSelector() = default;  // empty: matches everything

  // The string form; "" is the empty selector. Errors carry Kubernetes' texts.
  static Expected<LabelSelector> parse(std::string_view text);
  // The same, refusing more than `max_requirements` requirements as soon as
  // the parser reaches one more (the server's bound on untrusted selectors;
  // upstream has none).
  static Expected<LabelSelector> parse(std::string_view text, std::size_t max_requirements);
  // metav1.LabelSelector object form ({"matchLabels":..,"matchExpressions":..});
  // null or {} is the empty selector.
  static Expected<LabelSelector> from_object(const nlohmann::json& object);
  // Builds from already-validated requirements (sorted by key on the way in).
  static LabelSelector from_requirements(std::vector<Requirement> requirements);

  // Object form; Equals/DoubleEquals/single-value In become matchLabels where
  // possible. Gt/Lt have no object form and are emitted as matchExpressions
  // with operator "Gt"/"Lt".
  [[nodiscard]] nlohmann::json to_object() const;

  [[nodiscard]] bool matches(const Labels& labels) const;
  [[nodiscard]] std::string to_string() const;  // canonical: sorted by key, no spaces
  [[nodiscard]] bool empty() const { return requirements_.empty(); }
  [[nodiscard]] const std::vector<Requirement>& requirements() const { return requirements_; }

  // Splits into (requirements on `key`, all the others). The server uses this
  // to take the reserved key fedmetrics/cluster out before forwarding.
  [[nodiscard]] std::pair<LabelSelector, LabelSelector> partition(std::string_view key) const;

  friend bool operator==(const LabelSelector&, const LabelSelector&) = default;

 private:
  std::vector<Requirement> requirements_;  // sorted by key (stable)
};

namespace detail {
// Go's strconv.Quote (what fmt's %q prints): Kubernetes quotes bad values this
// way in its error texts ("Invalid value: \"-app\"", "\"foo\" is not a known
// field selector"). Shared by the label and field selector code.
[[nodiscard]] std::string go_quote(std::string_view text);
// The length of the valid UTF-8 sequence starting at text[i], or 0 when Go's
// decoder would read that byte as an invalid rune (U+FFFD, width 1).
[[nodiscard]] std::size_t utf8_sequence_length(std::string_view text, std::size_t i);
}  // namespace detail

}  // namespace fedmetrics::k8s
