#pragma once

// ASCII case folding for protocol tokens: HTTP header names, auth schemes,
// media types, URL schemes, Kubernetes kinds. Locale-free on purpose: the
// wire is ASCII, and std::tolower depends on the process locale and takes an
// int that must be cast from unsigned char at every call.

#include <algorithm>
#include <string>
#include <string_view>

namespace fedmetrics::k8s {

constexpr char ascii_lower(char c) noexcept { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

inline std::string ascii_lowercase(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), ascii_lower);
  return out;
}

// Equal when folded to lower case (RFC 9110's case-insensitive tokens).
constexpr bool iequals(std::string_view a, std::string_view b) noexcept {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return ascii_lower(x) == ascii_lower(y); });
}

constexpr bool istarts_with(std::string_view s, std::string_view prefix) noexcept {
  return s.size() >= prefix.size() && iequals(s.substr(0, prefix.size()), prefix);
}

}  // namespace fedmetrics::k8s
