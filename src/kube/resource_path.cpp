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

}  // namespace fedmetrics::kube
