#pragma once
// What a request asks to do, in authorizer terms (apiserver
// pkg/endpoints/request/requestinfo.go, RequestInfoFactory.NewRequestInfo
// with API prefixes "api" and "apis").
#include <string>
#include <string_view>
#include <vector>

#include "fedmetrics/k8s/expected.hpp"
#include "fedmetrics/k8s/url.hpp"

namespace fedmetrics::auth {

struct RequestAttributes {
  bool resource_request = false;
  // Resource requests: get, list, watch, create, update, patch, delete,
  // deletecollection, proxy ("" for other methods). Non-resource requests:
  // the lowercased HTTP method.
  std::string verb;
  std::string path;       // the decoded path, as received
  std::string api_group;  // "" for the core group (/api/v1)
  std::string api_version;
  std::string namespace_name;
  std::string resource;
  std::string subresource;
  std::string name;
  // Resource requests: the path's segments from the resource on (Go's
  // RequestInfo.Parts): resource, name, subresource and what follows it
  // (a proxy's path). `name` may come from a list's fieldSelector instead;
  // parts never do, so a server that routes on them serves what the path says.
  std::vector<std::string> parts{};
  // The verb came from a /watch/ or /proxy/ segment of the path (the
  // deprecated forms), not from the method.
  bool verb_in_path = false;
  friend bool operator==(const RequestAttributes&, const RequestAttributes&) = default;
};

// `decoded_path` is the percent-decoded path (k8s::percent_decode_path);
// `query` the decoded query (k8s::parse_query), read for watch and
// fieldSelector on lists. An error only where Go fails too: a /watch/ or
// /proxy/ verb segment with nothing after it.
[[nodiscard]] k8s::Expected<RequestAttributes> request_attributes(std::string_view method,
                                                                  std::string_view decoded_path,
                                                                  const k8s::QueryValues& query);
// The same for a target split by k8s::parse_request_target: the path as a
// server that drops empty segments serves it.
[[nodiscard]] k8s::Expected<RequestAttributes> request_attributes(std::string_view method,
                                                                  const k8s::RequestTarget& target);

}  // namespace fedmetrics::auth
