#pragma once
// The steps the label selector's string form (label_selector_parser.cpp) and
// object form (label_selector_object.cpp) share with the selector itself
// (label_selector.cpp). Private to the k8s module.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fedmetrics/k8s/label_selector.hpp"

namespace fedmetrics::k8s::detail {

// strconv.ParseInt(s, 10, 64): optional sign, decimal digits (no underscores
// with an explicit base), within int64.
std::optional<std::int64_t> parse_int64(std::string_view s);

// Sorted, without repeats: a requirement's values are a set (sets.String).
void sort_unique(std::vector<std::string>& values);

// labels.NewRequirement with a nil path: checks the value count for the
// operator and every value, reporting all problems at once. The values keep
// their given order for the error indexes, then become a sorted set.
Expected<Requirement> new_requirement(std::string key, SelectorOperator op, std::vector<std::string> values);

// selector.go's Parse: the requirements of the string form, in their order,
// at most `max_requirements` of them.
Expected<std::vector<Requirement>> parse_requirements(std::string_view text, std::size_t max_requirements);

}  // namespace fedmetrics::k8s::detail
