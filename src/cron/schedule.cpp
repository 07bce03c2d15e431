// Cron schedules on an IANA zone's wall clock (docs/cron.md, "Schedules").
//
// The parser follows robfig/cron v3's standard parser (what Kubernetes
// CronJob and Karmada's CronFederatedHPA controller run), with docs/cron.md's
// additions: 7 is Sunday and the daylight-saving rules below. Time zones come
// from date/tz reading the system's tzdata, never from rules of our own.
#include "fedmetrics/cron/schedule.hpp"

#include <date/date.h>
#include <date/tz.h>

#include <algorithm>
#include <bit>
#include <cstdio>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "fedmetrics/k8s/ascii.hpp"

namespace fedmetrics::cron {
namespace {

using k8s::Error;
using k8s::Expected;
using k8s::Timestamp;
using LocalMinutes = date::local_time<std::chrono::minutes>;

constexpr std::string_view month_names[] = {"jan", "feb", "mar", "apr", "may", "jun",
                                            "jul", "aug", "sep", "oct", "nov", "dec"};
constexpr std::string_view weekday_names[] = {"sun", "mon", "tue", "wed", "thu", "fri", "sat"};

struct FieldSpec {
  std::string_view name;
  int min;
  int max;
  int star_max;                             // what '*' and "a/n" run to: day of week stops at 6, 7 being Sunday again
  std::span<const std::string_view> names;  // names[i] is value i + names_base
  int names_base;
  std::string_view names_kind;
};

constexpr FieldSpec field_specs[5] = {
    {"minute", 0, 59, 59, {}, 0, ""},
    {"hour", 0, 23, 23, {}, 0, ""},
    {"day of month", 1, 31, 31, {}, 0, ""},
    {"month", 1, 12, 12, month_names, 1, "month"},
    {"day of week", 0, 7, 6, weekday_names, 0, "day"},
};

struct FieldSet {
  std::uint64_t bits = 0;
  bool star = false;
};

std::string quoted(std::string_view s) { return "\"" + std::string(s) + "\""; }

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split_fields(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && is_space(s[i])) ++i;
    std::size_t start = i;
    while (i < s.size() && !is_space(s[i])) ++i;
    if (i > start) out.push_back(s.substr(start, i - start));
  }
  return out;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  for (std::size_t start = 0;;) {
    std::size_t end = s.find(sep, start);
    if (end == std::string_view::npos) {
      out.push_back(s.substr(start));
      return out;
    }
    out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
}

// Digits only (no sign, as robfig/cron refuses negative numbers); nullopt
// for anything else or more than 9 digits, which is out of every range anyway.
std::optional<int> parse_digits(std::string_view s) {
  if (s.empty() || s.size() > 9) return std::nullopt;
  int v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v;
}

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

std::string out_of_range(std::string_view value, const FieldSpec& f) {
  return "value " + std::string(value) + " out of range " + std::to_string(f.min) + "-" + std::to_string(f.max);
}

// A number or (month, day of week) a name, case-insensitive, within the field's range.
Expected<int> parse_value(std::string_view token, const FieldSpec& f) {
  if (all_digits(token)) {
    auto v = parse_digits(token);
    if (!v || *v < f.min || *v > f.max) return Error{out_of_range(token, f)};
    return *v;
  }
  for (std::size_t i = 0; i < f.names.size(); ++i)
    if (k8s::iequals(token, f.names[i])) return static_cast<int>(i) + f.names_base;
  if (f.names.empty()) return Error{quoted(token) + " is not a number"};
  return Error{"unknown " + std::string(f.names_kind) + " name " + quoted(token)};
}

// One element of a comma list: '*', '?', a value, "a-b", each optionally "/step".
Expected<FieldSet> parse_element(std::string_view element, const FieldSpec& f) {
  if (element.empty()) return Error{"empty element in a list"};
  auto slash = split(element, '/');
  if (slash.size() > 2) return Error{quoted(element) + " has more than one '/'"};
  std::string_view range = slash[0];
  FieldSet set;
  int low = 0, high = 0;
  if (range == "*" || range == "?") {
    low = f.min;
    high = f.star_max;
    set.star = true;
  } else {
    auto dash = split(range, '-');
    if (dash.size() > 2) return Error{quoted(element) + " has more than one '-'"};
    for (std::string_view part : dash)
      if (part.empty()) return Error{quoted(element) + " is missing a value"};
    auto first = parse_value(dash[0], f);
    if (!first) return first.error();
    low = high = *first;
    if (dash.size() == 2) {
      auto last = parse_value(dash[1], f);
      if (!last) return last.error();
      high = *last;
      if (low > high) return Error{"range " + quoted(range) + " starts after it ends"};
    } else if (slash.size() == 2) {
      high = f.star_max;  // "a/n": from a to the field's end, as robfig/cron
      if (low > high) high = low;
    }
  }
  int step = 1;
  if (slash.size() == 2) {
    auto parsed = parse_digits(slash[1]);
    if (!parsed) return Error{"step " + quoted(slash[1]) + " in " + quoted(element) + " is not a number"};
    if (*parsed == 0) return Error{"step 0 in " + quoted(element) + " must be at least 1"};
    step = *parsed;
    if (step > 1) set.star = false;  // "*/2" restricts, "*/1" does not (robfig/cron's starBit)
  }
  for (int v = low; v <= high; v += step) {
    set.bits |= std::uint64_t{1} << v;
    if (high - v < step) break;  // no overflow of v for huge steps
  }
  return set;
}

Expected<FieldSet> parse_field(std::string_view field, const FieldSpec& f) {
  FieldSet out;
  for (std::string_view element : split(field, ',')) {
    auto set = parse_element(element, f);
    if (!set) return set.error().at(f.name);
    out.bits |= set->bits;
    out.star = out.star || set->star;
  }
  return out;
}

Expected<CronFields> parse_fields(std::span<const std::string_view> fields) {
  FieldSet sets[5];
  for (std::size_t i = 0; i < 5; ++i) {
    auto set = parse_field(fields[i], field_specs[i]);
    if (!set) return set.error();
    sets[i] = *set;
  }
  CronFields out;
  out.minutes = sets[0].bits;
  out.hours = static_cast<std::uint32_t>(sets[1].bits);
  out.days_of_month = static_cast<std::uint32_t>(sets[2].bits);
  out.months = static_cast<std::uint16_t>(sets[3].bits);
  // 7 is Sunday, as 0.
  out.days_of_week = static_cast<std::uint8_t>((sets[4].bits | (sets[4].bits >> 7)) & 0x7f);
  out.day_of_month_star = sets[2].star;
  out.day_of_week_star = sets[4].star;
  return out;
}

// The descriptors and what they stand for (robfig/cron's parseDescriptor).
struct Descriptor {
  std::string_view name;
  std::string_view fields;
};
constexpr Descriptor descriptors[] = {
    {"@yearly", "0 0 1 1 *"}, {"@annually", "0 0 1 1 *"}, {"@monthly", "0 0 1 * *"}, {"@weekly", "0 0 * * 0"},
    {"@daily", "0 0 * * *"},  {"@midnight", "0 0 * * *"}, {"@hourly", "0 * * * *"},
};

Expected<const date::time_zone*> find_zone(std::string_view name) {
  if (name.empty()) name = "UTC";  // Go's time.LoadLocation("")
  try {
    (void)date::get_tzdb();
  } catch (const std::exception& e) {
    return Error{"time zone database unavailable (tzdata in /usr/share/zoneinfo): " + std::string(e.what())};
  }
  try {
    return date::locate_zone(name);
  } catch (const std::exception&) {
    return Error{"unknown time zone " + quoted(name)};
  }
}

// Searches stay where k8s::Timestamp (nanoseconds, int64) can hold the result.
const LocalMinutes earliest_local{date::local_days{date::year{1700} / 1 / 1}};
const LocalMinutes latest_local{date::local_days{date::year{2250} / 1 / 1}};
constexpr date::days search_span{366 * search_years};

bool day_matches(const CronFields& f, date::local_days day) {
  const date::year_month_day ymd{day};
  const bool dom = (f.days_of_month >> static_cast<unsigned>(ymd.day())) & 1u;
  const bool dow = (f.days_of_week >> date::weekday{day}.c_encoding()) & 1u;
  if (f.day_of_month_star || f.day_of_week_star) return dom && dow;
  return dom || dow;  // both restricted: either, as in cron
}

// The first matching wall-clock minute in [from, limit): skips whole months,
// days and hours that cannot match, so a search over years takes a few
// hundred steps, not millions of minutes.
std::optional<LocalMinutes> next_match(const CronFields& f, LocalMinutes t, LocalMinutes limit) {
  while (t < limit) {
    const auto day = date::floor<date::days>(t);
    const date::year_month_day ymd{day};
    if (!((f.months >> static_cast<unsigned>(ymd.month())) & 1u)) {
      t = date::local_days{(ymd.year() / ymd.month() + date::months{1}) / 1};
      continue;
    }
    if (!day_matches(f, day)) {
      t = day + date::days{1};
      continue;
    }
    const auto hour = date::floor<std::chrono::hours>(t - day);
    if (!((f.hours >> hour.count()) & 1u)) {
      t = day + hour + std::chrono::hours{1};
      continue;
    }
    const auto minute = (t - day - hour).count();
    const std::uint64_t later = f.minutes >> minute;
    if (later == 0) {
      t = day + hour + std::chrono::hours{1};
      continue;
    }
    return day + hour + std::chrono::minutes{minute + std::countr_zero(later)};
  }
  return std::nullopt;
}

// The last matching wall-clock minute in [limit, t].
std::optional<LocalMinutes> previous_match(const CronFields& f, LocalMinutes t, LocalMinutes limit) {
  constexpr std::chrono::minutes one{1};
  while (t >= limit) {
    const auto day = date::floor<date::days>(t);
    const date::year_month_day ymd{day};
    if (!((f.months >> static_cast<unsigned>(ymd.month())) & 1u)) {
      t = LocalMinutes{date::local_days{ymd.year() / ymd.month() / 1}} - one;
      continue;
    }
    if (!day_matches(f, day)) {
      t = LocalMinutes{day} - one;
      continue;
    }
    const auto hour = date::floor<std::chrono::hours>(t - day);
    if (!((f.hours >> hour.count()) & 1u)) {
      t = day + hour - one;
      continue;
    }
    const auto minute = (t - day - hour).count();
    const std::uint64_t earlier = f.minutes & ((std::uint64_t{2} << minute) - 1);
    if (earlier == 0) {
      t = day + hour - one;
      continue;
    }
    return day + hour + std::chrono::minutes{63 - std::countl_zero(earlier)};
  }
  return std::nullopt;
}

// The instant a wall-clock minute fires at: none in a spring-forward gap, the
// first occurrence in a fall-back repeat (docs/cron.md, "Schedules").
std::optional<Timestamp> fire_time(const date::time_zone* zone, LocalMinutes wall) {
  const date::local_info info = zone->get_info(wall);
  if (info.result == date::local_info::nonexistent) return std::nullopt;
  // Ambiguous: `first` is the offset in force before the transition.
  return Timestamp{(wall - info.first.offset).time_since_epoch()};
}

LocalMinutes wall_minute(const date::time_zone* zone, Timestamp t) {
  const auto seconds = date::floor<std::chrono::seconds>(t);
  const auto info = zone->get_info(seconds);
  return date::floor<std::chrono::minutes>(date::local_seconds{seconds.time_since_epoch() + info.offset});
}

// The latest wall-clock minute whose first occurrence can be at or before
// `t`: t's own, or, after a fall back, up to the end of the repeated span
// (at 02:10 of the second 02:xx, 02:59's first occurrence is already past).
LocalMinutes latest_wall_fired_by(const date::time_zone* zone, Timestamp t) {
  const auto seconds = date::floor<std::chrono::seconds>(t);
  const auto info = zone->get_info(seconds);
  const auto before = zone->get_info(info.begin - std::chrono::seconds{1});
  const auto repeated = std::max(std::chrono::seconds{0}, before.offset - info.offset);
  return date::floor<std::chrono::minutes>(date::local_seconds{seconds.time_since_epoch() + info.offset + repeated});
}

}  // namespace

Expected<Schedule> Schedule::parse(std::string_view text, std::string_view default_zone) {
  const auto invalid = [&](const std::string& detail) {
    return Error{"invalid schedule " + quoted(text) + ": " + detail};
  };
  Schedule out;
  out.text_ = std::string(text);
  std::string_view rest = trim(text);

  // "CRON_TZ=<zone> " or "TZ=<zone> ": the zone named in the schedule wins.
  std::optional<std::string_view> prefix_zone;
  if (rest.starts_with("CRON_TZ=") || rest.starts_with("TZ=")) {
    const std::size_t eq = rest.find('=');
    const std::string_view key = rest.substr(0, eq + 1);
    std::size_t end = eq + 1;
    while (end < rest.size() && !is_space(rest[end])) ++end;
    prefix_zone = rest.substr(eq + 1, end - eq - 1);
    rest = trim(rest.substr(end));
    if (prefix_zone->empty()) return invalid("empty time zone after " + std::string(key));
    auto zone = find_zone(*prefix_zone);
    if (!zone) return invalid(zone.error().message);
    out.zone_ = *zone;
    out.zone_name_ = std::string(*prefix_zone);
  }

  const std::vector<std::string_view> words = split_fields(rest);
  if (!words.empty() && words[0].starts_with('@')) {
    if (words[0] == "@every") {
      if (words.size() != 2) return invalid("@every takes one duration, found " + std::to_string(words.size() - 1));
      auto every = k8s::parse_duration(words[1]);
      if (!every) return invalid("@every: " + quoted(words[1]) + " is not a duration (such as 90m or 1h30m)");
      // robfig/cron's Every: whole seconds only.
      const auto whole = std::chrono::duration_cast<std::chrono::seconds>(*every);
      if (whole.count() < 1) return invalid("@every: duration " + quoted(words[1]) + " is below the minimum of 1s");
      out.every_ = whole;
    } else {
      const Descriptor* found = nullptr;
      for (const auto& d : descriptors)
        if (words[0] == d.name) found = &d;
      if (!found) return invalid("unknown descriptor " + quoted(words[0]));
      if (words.size() != 1) return invalid(std::string(found->name) + " takes no fields, found " + quoted(words[1]));
      auto fields = parse_fields(split_fields(found->fields));
      if (!fields) return invalid(fields.error().message);
      out.fields_ = *fields;
    }
  } else {
    if (words.size() != 5) return invalid("expected 5 fields, found " + std::to_string(words.size()));
    auto fields = parse_fields(words);
    if (!fields) return invalid(fields.error().message);
    out.fields_ = *fields;
  }

  if (!prefix_zone) {
    auto zone = find_zone(default_zone);
    if (!zone) return zone.error();
    out.zone_ = *zone;
    out.zone_name_ = default_zone.empty() ? "UTC" : std::string(default_zone);
  }
  return out;
}

std::optional<Timestamp> Schedule::next(Timestamp after, std::optional<Timestamp> every_origin) const {
  if (every_.count() > 0) {
    // Firings origin + k * every, k >= 1; 128-bit so that no sum overflows.
    const __int128 origin = every_origin.value_or(after).time_since_epoch().count();
    const __int128 every = every_.count();
    const __int128 elapsed = static_cast<__int128>(after.time_since_epoch().count()) - origin;
    const __int128 k = elapsed < 0 ? 1 : elapsed / every + 1;
    const __int128 fire = origin + k * every;
    if (fire > std::numeric_limits<std::int64_t>::max()) return std::nullopt;
    return Timestamp{std::chrono::nanoseconds{static_cast<std::int64_t>(fire)}};
  }
  LocalMinutes wall = std::max(wall_minute(zone_, after), earliest_local);
  const LocalMinutes limit = std::min(wall + search_span, latest_local);
  while (auto candidate = next_match(fields_, wall, limit)) {
    // Only a repeated hour can give a candidate at or before `after`: its
    // first occurrence is past, and the second does not fire.
    if (auto fire = fire_time(zone_, *candidate); fire && *fire > after) return fire;
    wall = *candidate + std::chrono::minutes{1};
  }
  return std::nullopt;
}

std::optional<Timestamp> Schedule::previous(Timestamp at, std::optional<Timestamp> every_origin) const {
  if (every_.count() > 0) {
    if (!every_origin) return std::nullopt;
    const __int128 origin = every_origin->time_since_epoch().count();
    const __int128 every = every_.count();
    const __int128 elapsed = static_cast<__int128>(at.time_since_epoch().count()) - origin;
    if (elapsed < every) return std::nullopt;
    return Timestamp{std::chrono::nanoseconds{static_cast<std::int64_t>(origin + elapsed / every * every)}};
  }
  LocalMinutes wall = std::min(latest_wall_fired_by(zone_, at), latest_local);
  const LocalMinutes limit = std::max(wall - search_span, earliest_local);
  while (auto candidate = previous_match(fields_, wall, limit)) {
    if (auto fire = fire_time(zone_, *candidate); fire && *fire <= at) return fire;
    wall = *candidate - std::chrono::minutes{1};
  }
  return std::nullopt;
}

std::string Schedule::format(Timestamp t) const {
  const auto seconds = date::floor<std::chrono::seconds>(t);
  const auto offset = zone_->get_info(seconds).offset;
  const date::local_seconds local{seconds.time_since_epoch() + offset};
  const auto day = date::floor<date::days>(local);
  const date::year_month_day ymd{day};
  const date::hh_mm_ss<std::chrono::seconds> clock{local - day};
  char buf[64];
  int n = std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02d:%02d:%02d", static_cast<int>(ymd.year()),
                        static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                        static_cast<int>(clock.hours().count()), static_cast<int>(clock.minutes().count()),
                        static_cast<int>(clock.seconds().count()));
  std::string out(buf, static_cast<std::size_t>(n));
  if (offset.count() == 0) return out + "Z";
  // Whole minutes, as Go's RFC 3339 layout (a local mean time's seconds are dropped).
  const long long total = offset.count() / 60;
  const long long magnitude = total < 0 ? -total : total;
  std::snprintf(buf, sizeof buf, "%c%02lld:%02lld", total < 0 ? '-' : '+', magnitude / 60, magnitude % 60);
  return out + buf;
}

}  // namespace fedmetrics::cron
