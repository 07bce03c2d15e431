#pragma once
// What the label selector parser reports, in Kubernetes' words: label key and
// value validation (apimachinery pkg/api/validate/content) and the
// field.Error and aggregate texts around it, with Go's renderings of the bad
// values (strconv.Quote, encoding/json). Private to the k8s module; go_quote
// itself is declared in fedmetrics/k8s/label_selector.hpp, as the field
// selector code shares it.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fedmetrics::k8s::detail {

// json.Marshal of a []string bad value: "null" when there are none.
std::string go_json_string_list(const std::vector<std::string>& values);
// content.IsLabelValue's errors: empty, or a label key name of at most 63 bytes.
std::vector<std::string> label_value_errors(std::string_view value);
std::string join(const std::vector<std::string>& parts, std::string_view separator);
// field.Invalid(path, value, detail).Error(); `rendered_value` is already
// formatted (%q for strings, JSON for lists).
std::string invalid_value_error(std::string_view path, std::string_view rendered_value, std::string_view detail);
// utilerrors aggregate's Error(): one error as it is; several, de-duplicated, as "[e1, e2]".
std::string aggregate(const std::vector<std::string>& errors);
// validateLabelKey in selector.go; `path` is "<nil>" from the parser (a nil
// *field.Path prints that way) and "key" from NewRequirement.
std::optional<std::string> validate_label_key(std::string_view key, std::string_view path);

}  // namespace fedmetrics::k8s::detail
