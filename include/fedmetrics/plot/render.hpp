#pragma once
// Drawing a Chart to an image file. The only part of the plot module that
// needs a graphics library: cairo's SVG and PNG surfaces when the program is
// built with it (FEDMETRICS_PLOT), else every call says it was built without.
#include <optional>
#include <string>
#include <string_view>

#include "fedmetrics/k8s/expected.hpp"
#include "fedmetrics/plot/chart.hpp"

namespace fedmetrics::plot {

enum class ImageFormat { Svg, Png };

// By the file's extension, any case: .svg or .png; nullopt for anything else.
std::optional<ImageFormat> image_format_for(std::string_view path);

// "the plot: FILE: unknown extension; use .svg or .png"
std::string unknown_format_message(std::string_view path);

// False when the program was built without cairo.
bool rendering_available();

struct Rendered {};

// Draws the chart into `path` (960 x 540; SVG sizes in points). The SVG
// carries the title in <title> and every legend entry in <desc>, one per line.
// Errors: built without cairo, or the file could not be written (naming it).
k8s::Expected<Rendered> render(const Chart& chart, ImageFormat format, const std::string& path);

}  // namespace fedmetrics::plot
