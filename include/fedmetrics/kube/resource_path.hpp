#pragma once
// Paths and queries of Kubernetes API requests, escaped once, here.
#include <string>
#include <string_view>

namespace fedmetrics::kube {

// Percent-encodes one path segment (everything but RFC 3986 unreserved characters).
std::string escape_path_segment(std::string_view segment);
// Go's url.QueryEscape: space becomes '+'.
std::string escape_query_value(std::string_view value);

}  // namespace fedmetrics::kube
