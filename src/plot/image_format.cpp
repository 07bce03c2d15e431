#include <algorithm>
#include <cctype>
#include <string>

#include "fedmetrics/plot/render.hpp"

namespace fedmetrics::plot {

std::optional<ImageFormat> image_format_for(std::string_view path) {
  const auto dot = path.rfind('.');
  const auto slash = path.rfind('/');
  if (dot == std::string_view::npos || (slash != std::string_view::npos && dot < slash)) return std::nullopt;
  std::string ext(path.substr(dot + 1));
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  if (ext == "svg") return ImageFormat::Svg;
  if (ext == "png") return ImageFormat::Png;
  return std::nullopt;
}

std::string unknown_format_message(std::string_view path) {
  return "--plot " + std::string(path) + ": unknown image format; the extension chooses it: .svg or .png";
}

}  // namespace fedmetrics::plot
