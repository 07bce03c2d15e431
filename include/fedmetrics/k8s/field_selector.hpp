#pragma once
// Field selectors (apimachinery pkg/fields/selector.go), restricted as
// metrics-server restricts them to metadata.name and metadata.namespace.
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fedmetrics/k8s/expected.hpp"

namespace fedmetrics::k8s {

struct FieldRequirement {
  std::string field;
  bool negated = false;  // "!=" rather than "=" / "=="
  std::string value;
  friend bool operator==(const FieldRequirement&, const FieldRequirement&) = default;
};

class FieldSelector {
 public:
  FieldSelector() = default;  // empty: matches everything

  // Parses the grammar, then rejects any field other than metadata.name and
  // metadata.namespace with Kubernetes' message naming the field.
  static Expected<FieldSelector> parse(std::string_view text);
  // For a core resource, whose field label conversion knows `known` (pods:
  // spec.nodeName, status.phase, ...): any other field is kube-apiserver's
  // "field label not supported: <field>".
  static Expected<FieldSelector> parse_for(std::string_view text, const std::vector<std::string_view>& known);

  [[nodiscard]] bool matches(std::string_view name, std::string_view namespace_name) const;
  // `value_of` gives an object's value of a field (as its selectable fields).
  [[nodiscard]] bool matches(const std::function<std::string(std::string_view field)>& value_of) const;
  [[nodiscard]] std::string to_string() const;  // canonical, sorted, values escaped
  [[nodiscard]] bool empty() const { return requirements_.empty(); }
  [[nodiscard]] const std::vector<FieldRequirement>& requirements() const { return requirements_; }

 private:
  static Expected<FieldSelector> parse_checked(std::string_view text,
                                               const std::function<std::optional<Error>(std::string_view)>& check);
  std::vector<FieldRequirement> requirements_;
};

}  // namespace fedmetrics::k8s
