#pragma once
// Field selectors (apimachinery pkg/fields/selector.go), restricted as
// metrics-server restricts them to metadata.name and metadata.namespace.
// Wire contract 4.2 and 4.3.
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

  [[nodiscard]] bool matches(std::string_view name, std::string_view namespace_name) const;
  [[nodiscard]] std::string to_string() const;  // canonical, sorted, values escaped
  [[nodiscard]] bool empty() const { return requirements_.empty(); }
  [[nodiscard]] const std::vector<FieldRequirement>& requirements() const { return requirements_; }

 private:
  std::vector<FieldRequirement> requirements_;
};

}  // namespace fedmetrics::k8s
