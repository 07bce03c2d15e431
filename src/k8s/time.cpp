#include "fedmetrics/k8s/time.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <limits>

namespace fedmetrics::k8s {
namespace {

using std::chrono::nanoseconds;

Error time_error(std::string_view text) {
  return Error{"parsing time \"" + std::string(text) + "\" as RFC 3339: not a time"};
}

// Reads exactly `width` decimal digits at `pos`.
bool read_digits(std::string_view s, std::size_t& pos, std::size_t width, int& out) {
  if (pos + width > s.size()) return false;
  out = 0;
  for (std::size_t i = 0; i < width; ++i) {
    char c = s[pos + i];
    if (c < '0' || c > '9') return false;
    out = out * 10 + (c - '0');
  }
  pos += width;
  return true;
}

bool expect(std::string_view s, std::size_t& pos, char c) {
  if (pos >= s.size() || s[pos] != c) return false;
  ++pos;
  return true;
}

}  // namespace

Expected<Timestamp> parse_time(std::string_view text) {
  using namespace std::chrono;
  std::size_t pos = 0;
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (!read_digits(text, pos, 4, year) || !expect(text, pos, '-') || !read_digits(text, pos, 2, month) ||
      !expect(text, pos, '-') || !read_digits(text, pos, 2, day))
    return time_error(text);
  if (pos >= text.size() || (text[pos] != 'T' && text[pos] != 't')) return time_error(text);
  ++pos;
  if (!read_digits(text, pos, 2, hour) || !expect(text, pos, ':') || !read_digits(text, pos, 2, minute) ||
      !expect(text, pos, ':') || !read_digits(text, pos, 2, second))
    return time_error(text);
  // Fractional seconds: any number of digits, kept to nanoseconds.
  std::int64_t fraction_ns = 0;
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    std::size_t digits = 0;
    std::int64_t scale = 100'000'000;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
      fraction_ns += (text[pos] - '0') * scale;
      scale /= 10;
      ++pos;
      ++digits;
    }
    if (digits == 0) return time_error(text);
  }
  int offset_minutes = 0;
  if (pos < text.size() && (text[pos] == 'Z' || text[pos] == 'z')) {
    ++pos;
  } else if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
    int sign = text[pos] == '-' ? -1 : 1;
    ++pos;
    int oh = 0, om = 0;
    if (!read_digits(text, pos, 2, oh) || !expect(text, pos, ':') || !read_digits(text, pos, 2, om) || oh > 23 ||
        om > 59)
      return time_error(text);
    offset_minutes = sign * (oh * 60 + om);
  } else {
    return time_error(text);
  }
  if (pos != text.size()) return time_error(text);
  if (hour > 23 || minute > 59 || second > 59) return time_error(text);  // Go rejects leap second 60 too
  year_month_day ymd{std::chrono::year{year}, std::chrono::month{static_cast<unsigned>(month)},
                     std::chrono::day{static_cast<unsigned>(day)}};
  if (!ymd.ok()) return time_error(text);
  // Seconds first: RFC 3339 years run to 9999, but a Timestamp (64-bit
  // nanoseconds since 1970) ends in 2262 and starts in 1677, and converting a
  // time outside that range to nanoseconds would overflow. Go's time.Time
  // holds such times; we refuse them, as no member writes one.
  const sys_seconds whole = sys_days{ymd} + hours{hour} + minutes{minute} + seconds{second} - minutes{offset_minutes};
  constexpr auto kFirst = floor<seconds>(Timestamp::min()) + seconds{1};
  constexpr auto kLast = floor<seconds>(Timestamp::max()) - seconds{1};
  if (whole < kFirst || whole > kLast) {
    return Error{"parsing time \"" + std::string(text) + "\" as RFC 3339: outside 1677-09-22 to 2262-04-10"};
  }
  return Timestamp{whole} + nanoseconds{fraction_ns};
}

std::string format_micro_time(Timestamp t) {
  using namespace std::chrono;
  auto text = format_time(t);
  auto micros = duration_cast<microseconds>(t - floor<seconds>(t)).count();
  std::array<char, 24> buf{};  // micros is in [0, 999999]: ".dddddd"
  std::snprintf(buf.data(), buf.size(), ".%06lld", static_cast<long long>(micros));
  text.insert(text.size() - 1, buf.data());
  return text;
}

std::string format_time(Timestamp t) {
  using namespace std::chrono;
  auto secs = floor<seconds>(t);
  auto days = floor<std::chrono::days>(secs);
  year_month_day ymd{days};
  hh_mm_ss<seconds> hms{secs - days};
  const int year = static_cast<int>(ymd.year());
  // Every answer carries two of these per item: digits by hand, not snprintf.
  // Nanosecond timestamps span 1677 to 2262; snprintf stays for any other year.
  if (year >= 0 && year <= 9999) {
    std::string out = "0000-00-00T00:00:00Z";
    const auto put = [&out](std::size_t at, int value, int width) {
      for (int i = width - 1; i >= 0; --i, value /= 10)
        out[at + static_cast<std::size_t>(i)] = static_cast<char>('0' + value % 10);
    };
    put(0, year, 4);
    put(5, static_cast<int>(static_cast<unsigned>(ymd.month())), 2);
    put(8, static_cast<int>(static_cast<unsigned>(ymd.day())), 2);
    put(11, static_cast<int>(hms.hours().count()), 2);
    put(14, static_cast<int>(hms.minutes().count()), 2);
    put(17, static_cast<int>(hms.seconds().count()), 2);
    return out;
  }
  std::array<char, 32> buf{};
  int n =
      std::snprintf(buf.data(), buf.size(), "%04d-%02u-%02uT%02d:%02d:%02dZ", year, static_cast<unsigned>(ymd.month()),
                    static_cast<unsigned>(ymd.day()), static_cast<int>(hms.hours().count()),
                    static_cast<int>(hms.minutes().count()), static_cast<int>(hms.seconds().count()));
  return std::string(buf.data(), static_cast<std::size_t>(n));
}

namespace {

Error duration_error(std::string_view text) { return Error{"time: invalid duration \"" + std::string(text) + "\""}; }

// Unit lengths in nanoseconds, as Go's time.unitMap.
bool unit_nanos(std::string_view unit, std::uint64_t& out) {
  static constexpr std::pair<std::string_view, std::uint64_t> units[] = {
      {"ns", 1},
      {"us", 1'000},
      {"\xC2\xB5s", 1'000},  // U+00B5 micro sign
      {"\xCE\xBCs", 1'000},  // U+03BC Greek mu
      {"ms", 1'000'000},
      {"s", 1'000'000'000},
      {"m", 60'000'000'000},
      {"h", 3'600'000'000'000},
  };
  for (const auto& [name, nanos] : units) {
    if (name == unit) {
      out = nanos;
      return true;
    }
  }
  return false;
}

}  // namespace

// Follows Go's time.ParseDuration: [-+]? (decimal unit)+, or "0".
Expected<nanoseconds> parse_duration(std::string_view text) {
  std::string_view s = text;
  bool negative = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s == "0") return nanoseconds{0};
  if (s.empty()) return duration_error(text);
  constexpr std::uint64_t max_magnitude = std::uint64_t{1} << 63;  // |min int64|
  std::uint64_t total = 0;
  while (!s.empty()) {
    if (!(s[0] == '.' || (s[0] >= '0' && s[0] <= '9'))) return duration_error(text);
    // Integer part.
    std::uint64_t whole = 0;
    std::size_t i = 0;
    bool overflow = false;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      if (whole > max_magnitude / 10) overflow = true;
      else whole = whole * 10 + static_cast<std::uint64_t>(s[i] - '0');
      if (whole > max_magnitude) overflow = true;
      ++i;
    }
    if (overflow) return duration_error(text);
    bool had_whole = i > 0;
    // Fraction part, as Go's leadingFraction: digits beyond int64 are dropped.
    std::uint64_t frac = 0;
    double frac_scale = 1;
    bool had_frac = false, frac_overflow = false;
    if (i < s.size() && s[i] == '.') {
      ++i;
      while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
        had_frac = true;
        if (!frac_overflow) {
          if (frac > static_cast<std::uint64_t>(INT64_MAX) / 10) {
            frac_overflow = true;
          } else {
            frac = frac * 10 + static_cast<std::uint64_t>(s[i] - '0');
            frac_scale *= 10;
          }
        }
        ++i;
      }
    }
    if (!had_whole && !had_frac) return duration_error(text);
    std::size_t unit_start = i;
    while (i < s.size() && s[i] != '.' && (s[i] < '0' || s[i] > '9')) ++i;
    std::string_view unit = s.substr(unit_start, i - unit_start);
    if (unit.empty()) return Error{"time: missing unit in duration \"" + std::string(text) + "\""};
    std::uint64_t unit_ns = 0;
    if (!unit_nanos(unit, unit_ns))
      return Error{"time: unknown unit \"" + std::string(unit) + "\" in duration \"" + std::string(text) + "\""};
    if (whole > max_magnitude / unit_ns) return duration_error(text);
    std::uint64_t value = whole * unit_ns;
    if (frac > 0) {
      // Go computes the fractional part in float64; doing the same keeps
      // "0.3333333333333333333h" at exactly 20m as Go has it.
      value += static_cast<std::uint64_t>(static_cast<double>(frac) * (static_cast<double>(unit_ns) / frac_scale));
      if (value > max_magnitude) return duration_error(text);
    }
    total += value;
    if (total > max_magnitude) return duration_error(text);
    s.remove_prefix(i);
  }
  if (!negative && total > max_magnitude - 1) return duration_error(text);
  auto signed_total = negative ? -static_cast<std::int64_t>(total - 1) - 1 : static_cast<std::int64_t>(total);
  return nanoseconds{signed_total};
}

namespace {

// Go's time.Duration.format writes backwards into a 32-byte buffer; so does
// this, with the same fmtFrac and fmtInt steps, and no allocation but the result.
class BackwardBuffer {
 public:
  void put(char c) { buffer_[--pos_] = c; }
  void put(std::string_view s) {
    pos_ -= s.size();
    std::copy(s.begin(), s.end(), buffer_.begin() + static_cast<std::ptrdiff_t>(pos_));
  }
  // fmtFrac: the `precision` fraction digits of v without trailing zeros, and
  // the '.' (nothing when the fraction is zero); returns v / 10^precision.
  std::uint64_t fraction(std::uint64_t v, int precision) {
    bool printing = false;
    for (int i = 0; i < precision; ++i) {
      const auto digit = static_cast<char>('0' + v % 10);
      printing = printing || digit != '0';
      if (printing) put(digit);
      v /= 10;
    }
    if (printing) put('.');
    return v;
  }
  // fmtInt.
  void integer(std::uint64_t v) {
    do {
      put(static_cast<char>('0' + v % 10));
      v /= 10;
    } while (v != 0);
  }
  [[nodiscard]] std::string text() const { return std::string(buffer_.data() + pos_, buffer_.size() - pos_); }

 private:
  std::array<char, 32> buffer_{};
  std::size_t pos_ = buffer_.size();
};

}  // namespace

std::string format_duration(nanoseconds d) {
  const std::int64_t raw = d.count();
  const bool negative = raw < 0;
  std::uint64_t u = negative ? static_cast<std::uint64_t>(-(raw + 1)) + 1 : static_cast<std::uint64_t>(raw);
  BackwardBuffer out;
  out.put('s');
  if (u == 0) {
    out.put('0');
  } else if (u < 1'000'000'000ULL) {
    // Less than a second: ns, µs or ms, with a fraction where needed.
    int precision = 0;
    if (u < 1'000) {
      out.put('n');
    } else if (u < 1'000'000) {
      precision = 3;
      out.put("\xC2\xB5");  // U+00B5 micro sign
    } else {
      precision = 6;
      out.put('m');
    }
    out.integer(out.fraction(u, precision));
  } else {
    u = out.fraction(u, 9);
    out.integer(u % 60);
    u /= 60;
    if (u > 0) {
      out.put('m');
      out.integer(u % 60);
      u /= 60;
      if (u > 0) {
        out.put('h');
        out.integer(u);
      }
    }
  }
  if (negative) out.put('-');
  return out.text();
}

}  // namespace fedmetrics::k8s
