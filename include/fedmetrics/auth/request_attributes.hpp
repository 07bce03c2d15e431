#pragma once
// What a request asks to do, in authorizer terms (apiserver
// pkg/endpoints/request/requestinfo.go, RequestInfoFactory.NewRequestInfo
// with API prefixes "api" and "apis").
#include <string>
#include <string_view>

#include "fedmetrics/k8s/expected.hpp"
#include "fedmetrics/k8s/url.hpp"

namespace fedmetrics::auth {

struct RequestAttributes {
  bool resource_request = false;
  // Resource requests: get, list, watch, create, update, patch, delete,
  // deletecollection, proxy ("" for other methods). Non-resource requests:
  // the lowercased HTTP method.
  std::string verb;
  std::string path;  // the decoded path, as received
  std::string api_group;  // "" for the core group (/api/v1)
  std::string api_version;
  std::string namespace_name;
  std::string resource;
  std::string subresource;
  std::string name;
  friend bool operator==(const RequestAttributes&, const RequestAttributes&) = default;
};

// `decoded_path` is the percent-decoded path (k8s::percent_decode_path);
// `query` the decoded query (k8s::parse_query), read for watch and
// fieldSelector on lists. An error only where Go fails too: a /watch/ or
// /proxy/ verb segment with nothing after it.
[[nodiscard]] k8s::Expected<RequestAttributes> request_attributes(std::string_view method,
                                                                  std::string_view decoded_path,
                                                                  const k8s::QueryValues& query);

}  // namespace fedmetrics::auth
