#include "fedmetrics/auth/request_attributes.hpp"

#include <algorithm>
#include <cctype>
#include <vector>

#include "fedmetrics/k8s/ascii.hpp"
#include "fedmetrics/k8s/field_selector.hpp"

namespace fedmetrics::auth {
namespace {

// Go's splitPath: trim '/' at both ends, split on '/'; inner empty segments
// stay (so "/apis//v1/x" has an empty group, as upstream).
std::vector<std::string_view> split_path(std::string_view path) {
  std::vector<std::string_view> parts;
  const auto first = path.find_first_not_of('/');
  if (first == std::string_view::npos) return parts;
  path = path.substr(first, path.find_last_not_of('/') - first + 1);
  for (std::size_t start = 0;;) {
    const auto slash = path.find('/', start);
    parts.push_back(path.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start));
    if (slash == std::string_view::npos) return parts;
    start = slash + 1;
  }
}

std::string verb_of_method(std::string_view method) {
  if (method == "POST") return "create";
  if (method == "GET" || method == "HEAD") return "get";
  if (method == "PUT") return "update";
  if (method == "PATCH") return "patch";
  if (method == "DELETE") return "delete";
  return "";
}

// fieldSelector's RequiresExactMatch("metadata.name"), kept only when it is a
// valid path segment name (not "." or "..", no '/' or '%'). Our
// FieldSelector knows only metadata.name and metadata.namespace; a selector
// on any other field fails to parse here and leaves the name empty, which
// only asks the SAR for more (the whole collection), never less.
std::string name_from_field_selector(const k8s::QueryValues& query) {
  auto it = query.find("fieldSelector");
  if (it == query.end()) return {};
  auto selector = k8s::FieldSelector::parse(it->second);
  if (!selector) return {};
  for (const auto& r : selector->requirements()) {
    if (r.field != "metadata.name" || r.negated) continue;
    if (r.value == "." || r.value == ".." || r.value.find_first_of("/%") != std::string::npos) return {};
    return r.value;
  }
  return {};
}

}  // namespace

k8s::Expected<RequestAttributes> request_attributes(std::string_view method, std::string_view decoded_path,
                                                    const k8s::QueryValues& query) {
  RequestAttributes out;
  out.path = std::string(decoded_path);
  out.verb = k8s::ascii_lowercase(method);

  auto parts = split_path(decoded_path);
  if (parts.size() < 3 || (parts[0] != "api" && parts[0] != "apis")) return out;
  const bool grouped = parts[0] == "apis";
  parts.erase(parts.begin());
  if (grouped) {
    if (parts.size() < 3) return out;  // /apis/{g}/{v}: discovery, not a resource
    out.api_group = std::string(parts[0]);
    parts.erase(parts.begin());
  }
  out.resource_request = true;
  out.api_version = std::string(parts[0]);
  parts.erase(parts.begin());

  // /{watch|proxy}/...: the verb is in the path (deprecated forms).
  if (parts[0] == "watch" || parts[0] == "proxy") {
    if (parts.size() < 2) return k8s::Error{"unable to determine kind and namespace from url, " + out.path};
    out.verb = std::string(parts[0]);
    out.verb_in_path = true;
    parts.erase(parts.begin());
  } else {
    out.verb = verb_of_method(method);
  }

  // namespaces/{ns}/{resource}/...; namespaces/{ns}[/status|/finalize] is
  // the namespace object itself.
  if (parts[0] == "namespaces" && parts.size() > 1) {
    out.namespace_name = std::string(parts[1]);
    if (parts.size() > 2 && parts[2] != "status" && parts[2] != "finalize")
      parts.erase(parts.begin(), parts.begin() + 2);
  }
  out.parts.assign(parts.begin(), parts.end());
  out.resource = std::string(parts[0]);
  if (parts.size() >= 2) out.name = std::string(parts[1]);
  if (parts.size() >= 3 && out.verb != "proxy") out.subresource = std::string(parts[2]);

  if (out.name.empty() && out.verb == "get") {
    out.verb = k8s::query_bool(query, "watch") ? "watch" : "list";
    out.name = name_from_field_selector(query);
  }
  if (out.name.empty() && out.verb == "delete") out.verb = "deletecollection";
  return out;
}

k8s::Expected<RequestAttributes> request_attributes(std::string_view method, const k8s::RequestTarget& target) {
  std::string path;
  for (const auto& segment : target.segments) path += "/" + segment;
  return request_attributes(method, path.empty() ? "/" : path, target.query);
}

}  // namespace fedmetrics::auth
