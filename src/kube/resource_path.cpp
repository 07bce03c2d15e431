#include "fedmetrics/kube/resource_path.hpp"

#include <cctype>

namespace fedmetrics::kube {

std::string escape_path_segment(std::string_view segment) {
  static constexpr char hex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : segment) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(hex[c >> 4]);
      out.push_back(hex[c & 15]);
    }
  }
  return out;
}

std::string escape_query_value(std::string_view value) {
  std::string out;
  for (char c : value) {
    if (c == ' ') out.push_back('+');
    else out += escape_path_segment(std::string_view(&c, 1));
  }
  return out;
}

namespace {

// One segment of a path: escaped, and a dot segment written so that it stays a name.
std::string segment(std::string_view s) {
  if (s == ".") return "%2E";
  if (s == "..") return "%2E%2E";
  return escape_path_segment(s);
}

// apimachinery's path.IsValidPathSegmentName, for `what` ("name", "namespace").
std::optional<k8s::Error> invalid_segment(std::string_view what, std::string_view s) {
  auto invalid = [&](std::string_view why) {
    return k8s::Error{std::string(what) + " \"" + std::string(s) + "\": " + std::string(why), k8s::ErrorKind::Invalid};
  };
  if (s == ".") return invalid("may not be '.'");
  if (s == "..") return invalid("may not be '..'");
  if (s.find('/') != std::string_view::npos) return invalid("may not contain '/'");
  if (s.find('%') != std::string_view::npos) return invalid("may not contain '%'");
  return std::nullopt;
}

}  // namespace

ResourcePath ResourcePath::core(std::string resource, std::string namespace_name, std::string name) {
  return in_group({}, "v1", std::move(resource), std::move(namespace_name), std::move(name));
}

ResourcePath ResourcePath::in_group(std::string group, std::string version, std::string resource,
                                    std::string namespace_name, std::string name) {
  ResourcePath p;
  p.group = std::move(group);
  p.version = std::move(version);
  p.resource = std::move(resource);
  p.namespace_name = std::move(namespace_name);
  p.name = std::move(name);
  return p;
}

ResourcePath& ResourcePath::with(std::string key, std::string value) {
  if (!value.empty()) query.emplace_back(std::move(key), std::move(value));
  return *this;
}

std::optional<k8s::Error> ResourcePath::invalid() const {
  if (version.empty()) return k8s::Error{"the API version may not be empty", k8s::ErrorKind::Invalid};
  if (resource.empty()) return k8s::Error{"the resource may not be empty", k8s::ErrorKind::Invalid};
  if (!subresource.empty() && name.empty())
    return k8s::Error{"the subresource \"" + subresource + "\" needs a name", k8s::ErrorKind::Invalid};
  const std::pair<std::string_view, const std::string*> segments[] = {
      {"group", &group},       {"version", &version}, {"namespace", &namespace_name},
      {"resource", &resource}, {"name", &name},       {"subresource", &subresource}};
  for (const auto& [what, value] : segments)
    if (auto e = invalid_segment(what, *value)) return e;
  return std::nullopt;
}

std::string ResourcePath::target() const {
  std::string out = group.empty() ? "/api/" + segment(version) : "/apis/" + segment(group) + "/" + segment(version);
  if (!namespace_name.empty()) out += "/namespaces/" + segment(namespace_name);
  out += "/" + segment(resource);
  if (!name.empty()) {
    out += "/" + segment(name);
    if (!subresource.empty()) out += "/" + segment(subresource);
  }
  char separator = '?';
  for (const auto& [key, value] : query) {
    out += separator;
    out += escape_query_value(key) + "=" + escape_query_value(value);
    separator = '&';
  }
  return out;
}

}  // namespace fedmetrics::kube
