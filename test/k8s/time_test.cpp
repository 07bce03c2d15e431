#include <catch2/catch.hpp>

#include <string>

#include "fedmetrics/k8s/time.hpp"

using namespace fedmetrics::k8s;
using namespace std::chrono;

namespace {
constexpr std::int64_t kMinute = 60'000'000'000LL;
constexpr std::int64_t kHour = 60 * kMinute;
constexpr std::int64_t kSecond = 1'000'000'000LL;
constexpr std::int64_t kMilli = 1'000'000LL;
}  // namespace

// Go's time package test tables (durationTests, parseDurationTests), as facts.
TEST_CASE("Duration: formatted as Go's Duration.String", "[k8s][time]") {
  struct Row {
    std::int64_t nanos;
    const char* text;
  };
  const Row rows[] = {
      {0, "0s"},
      {1, "1ns"},
      {1100, "1.1\xC2\xB5s"},
      {2'200'000, "2.2ms"},
      {3300 * kMilli, "3.3s"},
      {4 * kMinute + 5 * kSecond, "4m5s"},
      {4 * kMinute + 5001 * kMilli, "4m5.001s"},
      {5 * kHour + 6 * kMinute + 7001 * kMilli, "5h6m7.001s"},
      {8 * kMinute + 1, "8m0.000000001s"},
      {INT64_MAX, "2562047h47m16.854775807s"},
      {INT64_MIN, "-2562047h47m16.854775808s"},
      {60 * kSecond, "1m0s"},
      {15'021 * kMilli, "15.021s"},
      {500 * kMilli, "500ms"},
      {-1500 * kMilli, "-1.5s"},
      {kHour, "1h0m0s"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.text);
    CHECK(format_duration(nanoseconds{row.nanos}) == row.text);
  }
}

TEST_CASE("Duration: parsed as Go's time.ParseDuration", "[k8s][time]") {
  struct Row {
    const char* text;
    std::int64_t nanos;
  };
  const Row rows[] = {
      {"0", 0},
      {"5s", 5 * kSecond},
      {"30s", 30 * kSecond},
      {"1478s", 1478 * kSecond},
      {"-5s", -5 * kSecond},
      {"+5s", 5 * kSecond},
      {"-0", 0},
      {"+0", 0},
      {"5.0s", 5 * kSecond},
      {"5.6s", 5 * kSecond + 600 * kMilli},
      {"5.s", 5 * kSecond},
      {".5s", 500 * kMilli},
      {"1.004s", 1004 * kMilli},
      {"1.0040s", 1004 * kMilli},
      {"100.00100s", 100 * kSecond + 1 * kMilli},
      {"10ns", 10},
      {"11us", 11'000},
      {"12\xC2\xB5s", 12'000},
      {"12\xCE\xBCs", 12'000},
      {"13ms", 13 * kMilli},
      {"15m", 15 * kMinute},
      {"16h", 16 * kHour},
      {"3h30m", 3 * kHour + 30 * kMinute},
      {"10.5s4m", 4 * kMinute + 10 * kSecond + 500 * kMilli},
      {"-2m3.4s", -(2 * kMinute + 3 * kSecond + 400 * kMilli)},
      {"1h2m3s4ms5us6ns", kHour + 2 * kMinute + 3 * kSecond + 4 * kMilli + 5'000 + 6},
      {"39h9m14.425s", 39 * kHour + 9 * kMinute + 14 * kSecond + 425 * kMilli},
      {"52763797000ns", 52'763'797'000},
      {"0.3333333333333333333h", 20 * kMinute},
      {"9007199254740993ns", 9'007'199'254'740'993},
      {"9223372036854775807ns", INT64_MAX},
      {"9223372036854775.807us", INT64_MAX},
      {"9223372036s854ms775us807ns", INT64_MAX},
      {"-9223372036854775808ns", INT64_MIN},
      {"0.100000000000000000000h", 6 * kMinute},
      {"0.830103483285477580700h", 49 * kMinute + 48 * kSecond + 372'539'827},
  };
  for (const auto& row : rows) {
    CAPTURE(row.text);
    auto parsed = parse_duration(row.text);
    REQUIRE(parsed.ok());
    CHECK(parsed->count() == row.nanos);
  }
}

TEST_CASE("Duration: invalid strings are errors with Go's messages", "[k8s][time]") {
  for (const char* text : {"", "3", "-", "s", ".", "-.", ".s", "+.s", "1d", "\x85\x85", "\xff\xff",
                           "9223372036854775808ns", "9223372036854775.808us", "1h-2m"}) {
    CAPTURE(text);
    CHECK_FALSE(parse_duration(text).ok());
  }
  CHECK(parse_duration("3").error().message == "time: missing unit in duration \"3\"");
  CHECK(parse_duration("1d").error().message == "time: unknown unit \"d\" in duration \"1d\"");
  CHECK(parse_duration("").error().message == "time: invalid duration \"\"");
}

TEST_CASE("Time: RFC 3339 parsed with fractions and offsets, written in UTC seconds", "[k8s][time]") {
  auto t = parse_time("2026-08-22T10:15:30Z");
  REQUIRE(t.ok());
  CHECK(format_time(*t) == "2026-08-22T10:15:30Z");
  CHECK(duration_cast<seconds>(t->time_since_epoch()).count() == 1787393730);

  auto fractional = parse_time("2026-08-22T10:15:30.987654321Z");
  REQUIRE(fractional.ok());
  CHECK((*fractional - *t).count() == 987654321);
  CHECK(format_time(*fractional) == "2026-08-22T10:15:30Z");  // truncated, as metav1.Time

  auto offset = parse_time("2026-08-22T12:15:30+02:00");
  REQUIRE(offset.ok());
  CHECK(*offset == *t);
  auto lower = parse_time("2026-08-22t10:15:30z");
  REQUIRE(lower.ok());
  CHECK(*lower == *t);

  CHECK(format_time(Timestamp{}) == "1970-01-01T00:00:00Z");
  CHECK(format_time(*parse_time("2024-02-29T23:59:59Z")) == "2024-02-29T23:59:59Z");
}

// Found by fuzz/pod_metrics_fuzz.cpp: a year past 2262 overflowed the
// conversion to 64-bit nanoseconds (UB; a wrapped time in 1677 in practice).
TEST_CASE("Time: RFC 3339 times a Timestamp cannot hold are refused, not wrapped", "[k8s][time]") {
  for (const char* text : {"5259-08-22T10:15:20Z", "9999-12-31T23:59:59Z", "0000-01-01T00:00:00Z",
                           "2262-04-12T00:00:00Z", "1677-09-20T23:59:59Z", "2262-04-11T23:00:00-02:00"}) {
    INFO(text);
    const auto t = parse_time(text);
    REQUIRE_FALSE(t.ok());
    CHECK(t.error().message ==
          "parsing time \"" + std::string(text) + "\" as RFC 3339: outside 1677-09-22 to 2262-04-10");
  }
  for (const char* text : {"2262-04-10T23:59:59.999999999Z", "1677-09-22T00:00:00Z"}) {
    INFO(text);
    CHECK(parse_time(text).ok());
  }
}

TEST_CASE("Time: written digit by digit over the whole Timestamp range", "[k8s][time]") {
  using namespace std::chrono;
  const auto at = [](int y, unsigned mo, unsigned d, int h, int mi, int s) {
    return Timestamp{sys_days{year{y} / month{mo} / day{d}} + hours{h} + minutes{mi} + seconds{s}};
  };
  // Nanoseconds in 64 bits reach from 1677-09-21 to 2262-04-11.
  CHECK(format_time(at(1678, 1, 2, 3, 4, 5)) == "1678-01-02T03:04:05Z");
  CHECK(format_time(at(1969, 12, 31, 23, 59, 59)) == "1969-12-31T23:59:59Z");  // before the epoch
  CHECK(format_time(at(1969, 12, 31, 23, 59, 59) + milliseconds(999)) == "1969-12-31T23:59:59Z");
  CHECK(format_time(at(2262, 4, 10, 23, 59, 59)) == "2262-04-10T23:59:59Z");
  // Every field at every width: a day's seconds in one year, and every day of it.
  for (int second = 0; second < 86400; second += 7) {
    const Timestamp t = at(2026, 3, 4, second / 3600, second / 60 % 60, second % 60);
    const std::string text = format_time(t);
    CAPTURE(text);
    REQUIRE(parse_time(text).ok());
    CHECK(*parse_time(text) == t);
  }
  for (int d = 0; d < 366; ++d) {
    const Timestamp t = Timestamp{sys_days{year{2024} / January / 1} + days{d}};
    CHECK(*parse_time(format_time(t)) == t);
  }
}

TEST_CASE("Time: malformed times are errors naming the input", "[k8s][time]") {
  for (const char* text :
       {"", "2026-08-22", "2026-08-22T10:15:30", "2026-13-01T00:00:00Z", "2026-02-30T00:00:00Z", "2026-08-22T24:00:00Z",
        "2026-08-22T10:15:30.Z", "2026-08-22T10:15:30Zjunk", "2026-08-22 10:15:30Z", "yesterday"}) {
    CAPTURE(text);
    auto parsed = parse_time(text);
    REQUIRE_FALSE(parsed.ok());
    CHECK(parsed.error().message.find(text) != std::string::npos);
  }
}
