// The chart drawn with cairo (Debian's libcairo2): its SVG surface for .svg,
// its image surface written as PNG for .png. Everything here is pixels; what
// is drawn, and where in data units, was decided by the pure chart code.
#include <cairo-svg.h>
#include <cairo.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <memory>
#include <numbers>
#include <string>
#include <string_view>
#include <vector>

#include "fedmetrics/plot/render.hpp"

namespace fedmetrics::plot {

namespace {

constexpr double kWidth = 960;  // pixels (PNG) or points (SVG)
constexpr double kHeight = 540;
constexpr const char* kFont = "DejaVu Sans";

struct SurfaceDeleter {
  void operator()(cairo_surface_t* s) const { cairo_surface_destroy(s); }
};
struct ContextDeleter {
  void operator()(cairo_t* c) const { cairo_destroy(c); }
};
using Surface = std::unique_ptr<cairo_surface_t, SurfaceDeleter>;
using Context = std::unique_ptr<cairo_t, ContextDeleter>;

void set_color(cairo_t* cr, const Color& c, double alpha = 1) { cairo_set_source_rgba(cr, c.r, c.g, c.b, alpha); }

void font(cairo_t* cr, double size, bool bold = false) {
  cairo_select_font_face(cr, kFont, CAIRO_FONT_SLANT_NORMAL, bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(cr, size);
}

double text_width(cairo_t* cr, const std::string& text) {
  cairo_text_extents_t e;
  cairo_text_extents(cr, text.c_str(), &e);
  return e.x_advance;
}

enum class Align { Left, Center, Right };

// Text with its baseline at y, aligned on x.
void text(cairo_t* cr, double x, double y, const std::string& s, Align align = Align::Left) {
  const double w = text_width(cr, s);
  cairo_move_to(cr, align == Align::Left ? x : align == Align::Center ? x - w / 2 : x - w, y);
  cairo_show_text(cr, s.c_str());
}

// Pixels of the plot area and the mapping of data units to them.
struct Frame {
  double x0, x1, y0, y1;  // y0 top, y1 bottom
  double px(const Axis& a, double v) const { return x0 + (v - a.min) / (a.max - a.min) * (x1 - x0); }
  double py(const Axis& a, double v) const { return y1 - (v - a.min) / (a.max - a.min) * (y1 - y0); }
};

struct LegendItem {
  const LegendEntry* entry;
  double x, y;
};

constexpr double kSwatch = 22;
constexpr double kLegendRow = 20;

// Legend entries in rows under the plot, wrapped at the plot's width.
std::vector<LegendItem> legend_layout(cairo_t* cr, const Chart& chart, double x0, double x1, double y, int& rows) {
  font(cr, 12);
  std::vector<LegendItem> out;
  double x = x0;
  rows = chart.legend.empty() ? 0 : 1;
  for (const auto& e : chart.legend) {
    const double w = kSwatch + 6 + text_width(cr, e.name) + 22;
    if (x > x0 && x + w - 22 > x1) {
      x = x0;
      y += kLegendRow;
      ++rows;
    }
    out.push_back({&e, x, y});
    x += w;
  }
  return out;
}

void dash(cairo_t* cr, LineStyle style) {
  static const double dashed[] = {6, 4};
  static const double dotted[] = {1.5, 3};
  static const double dash_dot[] = {9, 3, 2, 3};
  switch (style) {
    case LineStyle::Solid: cairo_set_dash(cr, nullptr, 0, 0); break;
    case LineStyle::Dashed: cairo_set_dash(cr, dashed, 2, 0); break;
    case LineStyle::Dotted: cairo_set_dash(cr, dotted, 2, 0); break;
    case LineStyle::DashDot: cairo_set_dash(cr, dash_dot, 4, 0); break;
  }
}

void marker_path(cairo_t* cr, MarkerShape shape, double x, double y, double r) {
  switch (shape) {
    case MarkerShape::Up:  // the tip on the point
      cairo_move_to(cr, x, y - r * 0.2);
      cairo_line_to(cr, x - r, y + r * 1.5);
      cairo_line_to(cr, x + r, y + r * 1.5);
      break;
    case MarkerShape::Down:
      cairo_move_to(cr, x, y + r * 0.2);
      cairo_line_to(cr, x - r, y - r * 1.5);
      cairo_line_to(cr, x + r, y - r * 1.5);
      break;
    case MarkerShape::Diamond:
      cairo_move_to(cr, x, y - r);
      cairo_line_to(cr, x + r, y);
      cairo_line_to(cr, x, y + r);
      cairo_line_to(cr, x - r, y);
      break;
  }
  cairo_close_path(cr);
}

void draw(cairo_t* cr, const Chart& chart) {
  cairo_set_source_rgb(cr, 1, 1, 1);
  cairo_paint(cr);

  Frame f{64, kWidth - (chart.right ? 76 : 24), 64, 0};
  int rows = 0;
  legend_layout(cr, chart, f.x0, f.x1, 0, rows);
  f.y1 = kHeight - 58 - rows * kLegendRow;

  // Grid.
  cairo_set_line_width(cr, 1);
  cairo_set_source_rgb(cr, 0.91, 0.91, 0.91);
  for (const auto& t : chart.left.ticks) {
    const double y = std::round(f.py(chart.left, t.value)) + 0.5;
    cairo_move_to(cr, f.x0, y);
    cairo_line_to(cr, f.x1, y);
  }
  for (const auto& t : chart.x.ticks) {
    const double x = std::round(f.px(chart.x, t.value)) + 0.5;
    cairo_move_to(cr, x, f.y0);
    cairo_line_to(cr, x, f.y1);
  }
  cairo_stroke(cr);

  cairo_save(cr);
  cairo_rectangle(cr, f.x0, f.y0, f.x1 - f.x0, f.y1 - f.y0);
  cairo_clip(cr);
  // Stacked areas, one fill each.
  for (const auto& area : chart.areas) {
    if (area.upper.empty()) continue;
    cairo_move_to(cr, f.px(chart.x, area.upper.front().x), f.py(chart.left, area.upper.front().y));
    for (const auto& p : area.upper) cairo_line_to(cr, f.px(chart.x, p.x), f.py(chart.left, p.y));
    for (auto it = area.lower.rbegin(); it != area.lower.rend(); ++it) {
      cairo_line_to(cr, f.px(chart.x, it->x), f.py(chart.left, it->y));
    }
    cairo_close_path(cr);
    set_color(cr, area.color);
    cairo_fill(cr);
  }
  // Lines, one stroke each; NaN breaks a line.
  for (const auto& line : chart.lines) {
    const Axis& axis = line.axis == AxisSide::Right && chart.right ? *chart.right : chart.left;
    bool pen_down = false;
    for (const auto& p : line.points) {
      if (std::isnan(p.y)) {
        pen_down = false;
        continue;
      }
      const double x = f.px(chart.x, p.x);
      const double y = f.py(axis, p.y);
      pen_down ? cairo_line_to(cr, x, y) : cairo_move_to(cr, x, y);
      pen_down = true;
    }
    set_color(cr, line.color);
    cairo_set_line_width(cr, line.width);
    dash(cr, line.style);
    cairo_stroke(cr);
    dash(cr, LineStyle::Solid);
    if (!line.dots.empty()) {
      for (const auto& p : line.dots) {
        cairo_new_sub_path(cr);
        cairo_arc(cr, f.px(chart.x, p.x), f.py(axis, p.y), 3.2, 0, 2 * std::numbers::pi);
      }
      set_color(cr, line.color);
      cairo_fill(cr);
    }
  }
  cairo_restore(cr);

  // Markers, over the frame's edge if need be, each labelled on its right.
  font(cr, 11, true);
  for (const auto& m : chart.markers) {
    const double x = f.px(chart.x, m.x);
    const double y = f.py(chart.left, m.y);
    if (!std::isnan(m.from)) {  // the stem: from the count the step started from
      cairo_move_to(cr, x, f.py(chart.left, m.from));
      cairo_line_to(cr, x, y);
      cairo_set_source_rgb(cr, 0.13, 0.13, 0.13);
      cairo_set_line_width(cr, 1);
      cairo_stroke(cr);
    }
    marker_path(cr, m.shape, x, y, 5);
    cairo_set_source_rgb(cr, 0.13, 0.13, 0.13);
    cairo_fill_preserve(cr);
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_set_line_width(cr, 1);
    cairo_stroke(cr);
    if (!m.label.empty()) {
      cairo_set_source_rgb(cr, 0.13, 0.13, 0.13);
      text(cr, x + 7, m.shape == MarkerShape::Down ? y - 2 : y + 11, m.label);
    }
  }

  // Frame and ticks.
  cairo_set_source_rgb(cr, 0.25, 0.25, 0.25);
  cairo_set_line_width(cr, 1);
  cairo_rectangle(cr, f.x0 + 0.5, f.y0 + 0.5, f.x1 - f.x0 - 1, f.y1 - f.y0 - 1);
  cairo_stroke(cr);
  font(cr, 11);
  for (const auto& t : chart.x.ticks) {
    const double x = std::round(f.px(chart.x, t.value)) + 0.5;
    cairo_move_to(cr, x, f.y1);
    cairo_line_to(cr, x, f.y1 + 4);
    cairo_stroke(cr);
    text(cr, x, f.y1 + 17, t.label, Align::Center);
  }
  for (const auto& t : chart.left.ticks) {
    const double y = std::round(f.py(chart.left, t.value)) + 0.5;
    cairo_move_to(cr, f.x0 - 4, y);
    cairo_line_to(cr, f.x0, y);
    cairo_stroke(cr);
    text(cr, f.x0 - 7, y + 4, t.label, Align::Right);
  }
  if (chart.right) {
    for (const auto& t : chart.right->ticks) {
      const double y = std::round(f.py(*chart.right, t.value)) + 0.5;
      cairo_move_to(cr, f.x1, y);
      cairo_line_to(cr, f.x1 + 4, y);
      cairo_stroke(cr);
      text(cr, f.x1 + 7, y + 4, t.label);
    }
  }

  // Axis labels.
  font(cr, 12);
  cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
  text(cr, (f.x0 + f.x1) / 2, f.y1 + 34, chart.x.label, Align::Center);
  cairo_save(cr);
  cairo_translate(cr, 18, (f.y0 + f.y1) / 2);
  cairo_rotate(cr, -std::numbers::pi / 2);
  text(cr, 0, 0, chart.left.label, Align::Center);
  cairo_restore(cr);
  if (chart.right) {
    cairo_save(cr);
    cairo_translate(cr, kWidth - 14, (f.y0 + f.y1) / 2);
    cairo_rotate(cr, std::numbers::pi / 2);
    text(cr, 0, 0, chart.right->label, Align::Center);
    cairo_restore(cr);
  }

  // Title and subtitle.
  font(cr, 17, true);
  text(cr, f.x0, 28, chart.title);
  font(cr, 12);
  cairo_set_source_rgb(cr, 0.35, 0.35, 0.35);
  text(cr, f.x0, 48, chart.subtitle);

  // Legend.
  for (const auto& item : legend_layout(cr, chart, f.x0, f.x1, f.y1 + 56, rows)) {
    const LegendEntry& e = *item.entry;
    const double cy = item.y - 4;
    switch (e.kind) {
      case LegendEntry::Kind::Area:
        cairo_rectangle(cr, item.x, cy - 6, kSwatch, 12);
        set_color(cr, e.color);
        cairo_fill(cr);
        break;
      case LegendEntry::Kind::Line:
        cairo_move_to(cr, item.x, cy);
        cairo_line_to(cr, item.x + kSwatch, cy);
        set_color(cr, e.color);
        cairo_set_line_width(cr, 2);
        dash(cr, e.style);
        cairo_stroke(cr);
        dash(cr, LineStyle::Solid);
        break;
      case LegendEntry::Kind::Marker:
        marker_path(cr, e.shape, item.x + kSwatch / 2, e.shape == MarkerShape::Up ? cy - 4 : cy, 5);
        set_color(cr, e.color);
        cairo_fill(cr);
        break;
    }
    cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
    font(cr, 12);
    text(cr, item.x + kSwatch + 6, item.y, e.name);
  }
}

std::string xml_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      default: out += c;
    }
  }
  return out;
}

// cairo's SVG has its text as glyph outlines: the words go into <title> and
// <desc> (read by screen readers and by scripts), one legend entry a line.
bool describe_svg(const Chart& chart, std::string& svg) {
  const auto open = svg.find("<svg");
  const auto end = open == std::string::npos ? open : svg.find('>', open);
  if (end == std::string::npos) return false;
  std::string desc = "\n<title>" + xml_escape(chart.title) + "</title>\n<desc>";
  for (const auto& e : chart.legend) desc += "\n" + xml_escape(e.name);
  desc += "\n</desc>";
  svg.insert(end + 1, desc);
  return true;
}

// cairo's write callback: the image is built in memory and written once, so
// that --plot also works on a pipe or /dev/stdout (nothing is read back).
cairo_status_t append_to(void* closure, const unsigned char* data, unsigned int length) {
  static_cast<std::string*>(closure)->append(reinterpret_cast<const char*>(data), length);
  return CAIRO_STATUS_SUCCESS;
}

k8s::Error cannot_write(const std::string& path, std::string_view why) {
  return k8s::Error{"--plot " + path + ": cannot write: " + std::string(why)};
}

k8s::Error cannot_draw(const std::string& path, cairo_status_t status) {
  return k8s::Error{"--plot " + path + ": cannot draw the chart: " + cairo_status_to_string(status)};
}

k8s::Expected<Rendered> write_file(const std::string& path, const std::string& bytes) {
  errno = 0;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (out) out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (out) out.flush();
  if (!out) return cannot_write(path, errno != 0 ? std::strerror(errno) : "write failed");
  return Rendered{};
}

k8s::Expected<std::string> svg_bytes(const Chart& chart, const std::string& path) {
  std::string svg;
  Surface surface(cairo_svg_surface_create_for_stream(append_to, &svg, kWidth, kHeight));
  if (auto s = cairo_surface_status(surface.get()); s != CAIRO_STATUS_SUCCESS) return cannot_draw(path, s);
  Context cr(cairo_create(surface.get()));
  draw(cr.get(), chart);
  cr.reset();
  cairo_surface_finish(surface.get());
  if (auto s = cairo_surface_status(surface.get()); s != CAIRO_STATUS_SUCCESS) return cannot_draw(path, s);
  if (!describe_svg(chart, svg)) return k8s::Error{"--plot " + path + ": cairo wrote no <svg> element"};
  return svg;
}

k8s::Expected<std::string> png_bytes(const Chart& chart, const std::string& path) {
  Surface surface(cairo_image_surface_create(CAIRO_FORMAT_RGB24, int(kWidth), int(kHeight)));
  if (auto s = cairo_surface_status(surface.get()); s != CAIRO_STATUS_SUCCESS) return cannot_draw(path, s);
  Context cr(cairo_create(surface.get()));
  draw(cr.get(), chart);
  cr.reset();
  std::string png;
  if (auto s = cairo_surface_write_to_png_stream(surface.get(), append_to, &png); s != CAIRO_STATUS_SUCCESS)
    return cannot_draw(path, s);
  return png;
}

}  // namespace

bool rendering_available() { return true; }

k8s::Expected<Rendered> render(const Chart& chart, ImageFormat format, const std::string& path) {
  auto bytes = format == ImageFormat::Svg ? svg_bytes(chart, path) : png_bytes(chart, path);
  if (!bytes) return bytes.error();
  return write_file(path, *bytes);
}

}  // namespace fedmetrics::plot
