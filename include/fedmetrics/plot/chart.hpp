#pragma once
// A chart as plain values, in data coordinates: the axes with their ticks,
// stacked areas, lines on either axis, markers and the legend. Pure; the
// cairo renderer (render.hpp) only maps it to pixels and draws it.
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace fedmetrics::plot {

struct Color {
  double r = 0;  // 0..1
  double g = 0;
  double b = 0;
  friend bool operator==(const Color&, const Color&) = default;
};

struct Point {
  double x = 0;
  double y = 0;  // NaN: no value here, the line breaks
};

struct Tick {
  double value = 0;
  std::string label;
};

struct Axis {
  double min = 0;
  double max = 1;
  std::vector<Tick> ticks;  // within [min, max], ascending
  std::string label;
};

// One band of a stacked area chart (a member, or the part of a member's
// share it does not use): the region between `lower` and `upper`, which
// share their x values.
struct Area {
  std::string name;
  Color color;
  std::vector<Point> lower;
  std::vector<Point> upper;
};

// Solid: what was measured or decided; Dashed: a metric's target; Dotted
// and DashDot: the FederatedHPA's bounds (minReplicas, maxReplicas), so that
// a bound never looks like a target.
enum class LineStyle { Solid, Dashed, Dotted, DashDot };
enum class AxisSide { Left, Right };

struct Line {
  std::string name;
  Color color;
  LineStyle style = LineStyle::Solid;
  AxisSide axis = AxisSide::Left;
  double width = 1.6;         // pixels
  std::vector<Point> points;  // drawn joined in order; a NaN y breaks the line
  std::vector<Point> dots;    // the sampled values, each marked with a dot
};

enum class MarkerShape { Up, Down, Diamond };

// On the left axis: a rescale (Up/Down at the new count, labelled with it,
// its stem from the count it started from) or another event (Diamond,
// labelled with what happened).
struct Marker {
  double x = 0;
  double y = 0;
  double from = std::numeric_limits<double>::quiet_NaN();  // NaN: no stem
  MarkerShape shape = MarkerShape::Up;
  std::string label;
};

struct LegendEntry {
  enum class Kind { Area, Line, Marker };
  Kind kind = Kind::Area;
  std::string name;
  Color color;
  LineStyle style = LineStyle::Solid;
  MarkerShape shape = MarkerShape::Up;
};

struct Chart {
  std::string title;
  std::string subtitle;
  Axis x;
  Axis left;
  std::optional<Axis> right;  // absent: nothing is drawn on a second axis
  std::vector<Area> areas;    // bottom to top
  std::vector<Line> lines;
  std::vector<Marker> markers;
  std::vector<LegendEntry> legend;
};

// Tick positions at 1, 2 or 5 times a power of ten, at most `max_ticks` of
// them (at least two), and the axis widened to the ticks around
// [lo, hi]: a value axis reads from a tick to a tick. `integers` keeps the
// step at 1 or more (replica counts). lo == hi gets a unit of room.
Axis value_axis(double lo, double hi, int max_ticks, bool integers, std::string label);

// An axis from 0 with exactly `intervals` steps of 1, 2, 2.5 or 5 times a
// power of ten, the smallest that reaches `hi`: a second axis whose ticks
// fall on the first one's grid lines.
Axis aligned_value_axis(double hi, std::size_t intervals, std::string label);

// A time axis over [from, to] seconds since the start, kept as given, with
// ticks at a round duration (1, 2, 5, 10, 15, 30 s; 1, 2, 5, 10, 15, 30 min;
// 1, 2, 3, 6, 12 h; days) and labels as durations: "0", "45s", "1m30s", "2h", "1d6h".
Axis time_axis(double from, double to, int max_ticks, std::string label);

// "0", "45s", "1m30s", "2h", "1d6h" (seconds, rounded down to a second).
std::string duration_label(double seconds);

}  // namespace fedmetrics::plot
