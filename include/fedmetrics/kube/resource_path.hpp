#pragma once
// Paths and queries of Kubernetes API requests, escaped once, here: a
// ResourcePath names what a request is about (group, version, namespace,
// resource, name, subresource, query parameters) and turns it into the
// request target, as client-go's request builder does. Pure.
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fedmetrics/k8s/expected.hpp"

namespace fedmetrics::kube {

// Percent-encodes one path segment (everything but RFC 3986 unreserved
// characters; '*' too, as client-go does).
std::string escape_path_segment(std::string_view segment);
// Go's url.QueryEscape: space becomes '+'.
std::string escape_query_value(std::string_view value);

struct ResourcePath {
  std::string group;           // empty: the core group (/api/v1); else /apis/<group>/<version>
  std::string version;         // "v1", "v1beta1"
  std::string namespace_name;  // empty: cluster-scoped, or every namespace
  std::string resource;        // "pods", "federatedhpas"
  std::string name;            // empty: the collection
  std::string subresource;     // "status", "scale", "proxy" (of a named object only)
  // In the order given; empty values are left out (client-go's Param with "").
  std::vector<std::pair<std::string, std::string>> query = {};

  // The core group's "/api/v1/<resource>" and the like.
  static ResourcePath core(std::string resource, std::string namespace_name = {}, std::string name = {});
  static ResourcePath in_group(std::string group, std::string version, std::string resource,
                               std::string namespace_name = {}, std::string name = {});
  // Adds a query parameter (left out when `value` is empty).
  ResourcePath& with(std::string key, std::string value);

  // Why this path names nothing a server could serve, as apimachinery words
  // it (path.IsValidPathSegmentName): an empty version or resource, a
  // subresource without a name, a segment that is "." or ".." or has '/'
  // or '%'. nullopt when it is fine.
  [[nodiscard]] std::optional<k8s::Error> invalid() const;

  // The request target: every segment escaped, a segment that is "." or
  // ".." written %2E so that no server or proxy on the way takes it for a
  // step up, the query after '?'. A subresource without a name is left out.
  [[nodiscard]] std::string target() const;
};

}  // namespace fedmetrics::kube
