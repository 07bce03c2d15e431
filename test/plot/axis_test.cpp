// The plot's scales: nice value ticks, round time ticks, duration labels,
// the image format from the file name.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "fedmetrics/plot/chart.hpp"
#include "fedmetrics/plot/render.hpp"

namespace fedmetrics::plot {
namespace {

std::vector<std::string> labels(const Axis& axis) {
  std::vector<std::string> out;
  for (const auto& t : axis.ticks) out.push_back(t.label);
  return out;
}

TEST_CASE("plot: value axis ticks at 1, 2 or 5 times a power of ten", "[plot]") {
  struct Case {
    double lo, hi;
    int max_ticks;
    bool integers;
    double min, max;
    std::vector<std::string> labels;
  };
  const Case cases[] = {
      {0, 10, 8, true, 0, 10, {"0", "2", "4", "6", "8", "10"}},
      {0, 10, 11, true, 0, 10, {"0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10"}},
      {0, 1, 8, true, 0, 1, {"0", "1"}},  // replicas: never a step below 1
      {0, 0.35, 6, false, 0, 0.4, {"0.0", "0.1", "0.2", "0.3", "0.4"}},
      {0, 37, 8, false, 0, 40, {"0", "10", "20", "30", "40"}},  // widened to the tick above
      {0, 1320, 8, false, 0, 1400, {"0", "200", "400", "600", "800", "1000", "1200", "1400"}},
      {0, 0, 8, true, 0, 1, {"0", "1"}},                  // no range: a unit of room
      {-3, 7, 6, false, -5, 10, {"-5", "0", "5", "10"}},  // step 2 would need 7 ticks
  };
  for (const auto& c : cases) {
    INFO(c.lo << ".." << c.hi << " max " << c.max_ticks);
    const Axis axis = value_axis(c.lo, c.hi, c.max_ticks, c.integers, "replicas");
    CHECK(axis.min == Approx(c.min));
    CHECK(axis.max == Approx(c.max));
    CHECK(labels(axis) == c.labels);
    CHECK(axis.ticks.size() <= static_cast<std::size_t>(c.max_ticks));
    CHECK(axis.label == "replicas");
  }
}

TEST_CASE("plot: a second axis on the first one's grid", "[plot]") {
  struct Case {
    double hi;
    std::size_t intervals;
    std::vector<std::string> labels;
  };
  const Case cases[] = {
      {1260, 6, {"0", "250", "500", "750", "1000", "1250", "1500"}},  // 2.5 x 100
      {100, 5, {"0", "20", "40", "60", "80", "100"}},
      {0.9, 3, {"0.0", "0.5", "1.0", "1.5"}},
      {12, 6, {"0", "2", "4", "6", "8", "10", "12"}},
      {0, 2, {"0.0", "0.5", "1.0"}},  // nothing to show: a unit
  };
  for (const auto& c : cases) {
    INFO(c.hi << " in " << c.intervals);
    const Axis axis = aligned_value_axis(c.hi, c.intervals, "cpu");
    CHECK(axis.min == 0);
    CHECK(axis.max >= c.hi);
    CHECK(labels(axis) == c.labels);
  }
}

TEST_CASE("plot: time axis at round durations, kept to the data", "[plot]") {
  struct Case {
    double from, to;
    std::vector<std::string> labels;
  };
  const Case cases[] = {
      {0, 95, {"0", "10s", "20s", "30s", "40s", "50s", "1m", "1m10s", "1m20s", "1m30s"}},
      {0, 2100, {"0", "5m", "10m", "15m", "20m", "25m", "30m", "35m"}},
      {0, 86400, {"0", "3h", "6h", "9h", "12h", "15h", "18h", "21h", "1d"}},
      {7, 12, {"7s", "8s", "9s", "10s", "11s", "12s"}},
      {0, 30 * 86400.0, {"0", "5d", "10d", "15d", "20d", "25d", "30d"}},
  };
  for (const auto& c : cases) {
    INFO(c.from << ".." << c.to);
    const Axis axis = time_axis(c.from, c.to, 10, "time since start");
    CHECK(axis.min == c.from);
    CHECK(axis.max == c.to);
    CHECK(labels(axis) == c.labels);
  }
}

TEST_CASE("plot: durations as labels", "[plot]") {
  CHECK(duration_label(0) == "0");
  CHECK(duration_label(45) == "45s");
  CHECK(duration_label(90) == "1m30s");
  CHECK(duration_label(7200) == "2h");
  CHECK(duration_label(108000) == "1d6h");
  CHECK(duration_label(-30) == "-30s");
  CHECK(duration_label(59.5) == "59s");
  CHECK(duration_label(89.99999999999999) == "1m30s");  // a tick computed by a product
}

TEST_CASE("plot: the image format is the file's extension", "[plot]") {
  CHECK(image_format_for("out.svg") == ImageFormat::Svg);
  CHECK(image_format_for("docs/replay.PNG") == ImageFormat::Png);
  CHECK(image_format_for("a.b/replay.png") == ImageFormat::Png);
  CHECK_FALSE(image_format_for("out.pdf"));
  CHECK_FALSE(image_format_for("out"));
  CHECK_FALSE(image_format_for("dir.svg/out"));
  CHECK_FALSE(image_format_for("out.svg.gz"));
  const std::string message = unknown_format_message("out.pdf");
  CHECK(message.find("out.pdf") != std::string::npos);
  CHECK(message.find(".svg") != std::string::npos);
  CHECK(message.find(".png") != std::string::npos);
}

}  // namespace
}  // namespace fedmetrics::plot
