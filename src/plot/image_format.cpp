#include <algorithm>
#include <string>

#include "fedmetrics/k8s/ascii.hpp"
#include "fedmetrics/plot/render.hpp"

namespace fedmetrics::plot {

std::optional<ImageFormat> image_format_for(std::string_view path) {
  const auto dot = path.rfind('.');
  const auto slash = path.rfind('/');
  if (dot == std::string_view::npos || (slash != std::string_view::npos && dot < slash)) return std::nullopt;
  const std::string ext = k8s::ascii_lowercase(path.substr(dot + 1));
  if (ext == "svg") return ImageFormat::Svg;
  if (ext == "png") return ImageFormat::Png;
  return std::nullopt;
}

std::string unknown_format_message(std::string_view path) {
  return "--plot " + std::string(path) + ": unknown image format; the extension chooses it: .svg or .png";
}

}  // namespace fedmetrics::plot
