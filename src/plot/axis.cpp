#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "fedmetrics/plot/chart.hpp"

namespace fedmetrics::plot {

namespace {

std::string number_label(double value, double step) {
  // As many decimals as the step needs: 0.25 steps print 0.25, 0.5, 0.75.
  int decimals = 0;
  for (double s = step; decimals < 6 && std::abs(s - std::round(s)) > 1e-9 * std::max(1.0, std::abs(s)); s *= 10) {
    ++decimals;
  }
  if (std::abs(value) < step * 1e-9) value = 0;  // no "-0"
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  return buffer;
}

}  // namespace

Axis value_axis(double lo, double hi, int max_ticks, bool integers, std::string label) {
  max_ticks = std::max(max_ticks, 2);
  if (!(hi > lo)) hi = lo + 1;
  Axis axis;
  axis.label = std::move(label);
  const double raw = (hi - lo) / (max_ticks - 1);
  double step = std::pow(10.0, std::floor(std::log10(raw)) - 1);
  for (int i = 0;; ++i) {
    const double candidate = step * std::array<double, 3>{1, 2, 5}[i % 3] * std::pow(10.0, i / 3);
    if (integers && candidate < 1) continue;
    const double first = std::floor(lo / candidate + 1e-9);
    const double last = std::ceil(hi / candidate - 1e-9);
    if (last - first + 1 <= max_ticks) {
      step = candidate;
      axis.min = first * step;
      axis.max = last * step;
      for (double k = first; k <= last + 0.5; ++k) axis.ticks.push_back({k * step, number_label(k * step, step)});
      return axis;
    }
  }
}

Axis aligned_value_axis(double hi, std::size_t intervals, std::string label) {
  intervals = std::max<std::size_t>(intervals, 1);
  if (!(hi > 0)) hi = 1;
  const double raw = hi / static_cast<double>(intervals);
  double step = 0;
  for (double power = std::pow(10.0, std::floor(std::log10(raw)) - 1); step == 0; power *= 10) {
    for (double m : {1.0, 2.0, 2.5, 5.0}) {
      if (m * power * static_cast<double>(intervals) >= hi * (1 - 1e-9)) {
        step = m * power;
        break;
      }
    }
  }
  Axis axis;
  axis.label = std::move(label);
  axis.min = 0;
  axis.max = step * static_cast<double>(intervals);
  for (std::size_t k = 0; k <= intervals; ++k) {
    axis.ticks.push_back({step * static_cast<double>(k), number_label(step * static_cast<double>(k), step)});
  }
  return axis;
}

std::string duration_label(double seconds) {
  if (seconds < 0) return "-" + duration_label(-seconds);
  auto s = static_cast<std::int64_t>(std::floor(seconds + 1e-9));
  if (s == 0) return "0";
  std::string out;
  for (auto [unit, suffix] : {std::pair<std::int64_t, char>{86400, 'd'}, {3600, 'h'}, {60, 'm'}, {1, 's'}}) {
    if (s >= unit) {
      out += std::to_string(s / unit) + suffix;
      s %= unit;
    }
  }
  return out;
}

Axis time_axis(double from, double to, int max_ticks, std::string label) {
  max_ticks = std::max(max_ticks, 2);
  if (!(to > from)) to = from + 1;
  Axis axis;
  axis.min = from;
  axis.max = to;
  axis.label = std::move(label);
  static const std::vector<double> kSteps = {1,   2,   5,    10,   15,   30,    60,    120,   300,
                                             600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400};
  double step = 0;
  for (double candidate : kSteps) {
    if (std::floor(to / candidate + 1e-9) - std::ceil(from / candidate - 1e-9) + 1 <= max_ticks) {
      step = candidate;
      break;
    }
  }
  for (double days = 2; step == 0; days *= days < 5 ? 2.5 : 2) {  // 2, 5, 10, 20 ... days
    const double candidate = days * 86400;
    if (std::floor(to / candidate + 1e-9) - std::ceil(from / candidate - 1e-9) + 1 <= max_ticks) step = candidate;
  }
  for (double k = std::ceil(from / step - 1e-9); k * step <= to + step * 1e-9; ++k) {
    axis.ticks.push_back({k * step, duration_label(k * step)});
  }
  return axis;
}

}  // namespace fedmetrics::plot
