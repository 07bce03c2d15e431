// Label selectors, reproducing apimachinery's pkg/labels/selector.go
// (Requirement, NewRequirement, Matches, String) and metav1's selector
// helpers. The string form's lexer and parser are label_selector_parser.cpp's,
// the object form (metav1.LabelSelector) label_selector_object.cpp's, the
// label key and value validation and Go's quoting in the error texts
// label_validation.cpp's.
#include "fedmetrics/k8s/label_selector.hpp"

#include "k8s/label_requirement.hpp"
#include "k8s/label_validation.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <utility>

namespace fedmetrics::k8s {
namespace detail {

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

}  // namespace detail

namespace {

using detail::join;
using detail::parse_int64;
using detail::sort_unique;

void sort_by_key(std::vector<Requirement>& requirements) {
  std::stable_sort(requirements.begin(), requirements.end(),
                   [](const Requirement& a, const Requirement& b) { return a.key < b.key; });
}

}  // namespace

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
  auto requirements = detail::parse_requirements(text, max_requirements);
  if (!requirements) return requirements.error();
  return from_requirements(std::move(*requirements));
}

LabelSelector LabelSelector::from_requirements(std::vector<Requirement> requirements) {
  for (Requirement& r : requirements) sort_unique(r.values);
  sort_by_key(requirements);
  LabelSelector out;
  out.requirements_ = std::move(requirements);
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
