// The object form of label selectors, metav1.LabelSelector, as
// metav1.LabelSelectorAsSelector reads it (pkg/apis/meta/v1/helpers.go) and
// as a selector is written back.
#include "fedmetrics/k8s/label_selector.hpp"

#include "k8s/label_requirement.hpp"
#include "k8s/label_validation.hpp"

#include <optional>
#include <utility>

#include <nlohmann/json.hpp>

namespace fedmetrics::k8s {
namespace {

using detail::new_requirement;

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

}  // namespace fedmetrics::k8s
