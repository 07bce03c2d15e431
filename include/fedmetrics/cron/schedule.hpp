#pragma once
// A CronFederatedHPA rule's schedule (docs/cron.md, "Schedules"): the dialect of
// Kubernetes CronJob and of Karmada's runtime (robfig/cron v3's standard
// parser), matched on the wall clock of an IANA time zone.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "fedmetrics/k8s/expected.hpp"
#include "fedmetrics/k8s/time.hpp"

namespace date {
class time_zone;  // Howard Hinnant's date/tz; only src/cron/ sees its definition
}

namespace fedmetrics::cron {

// The five fields as sets of matching values: bit i set, value i matches.
struct CronFields {
  std::uint64_t minutes = 0;
  std::uint32_t hours = 0;
  std::uint32_t days_of_month = 0;  // bits 1..31
  std::uint16_t months = 0;         // bits 1..12
  std::uint8_t days_of_week = 0;    // bits 0..6, 0 = Sunday (7 folded into 0)
  // A day field written with an unstepped '*' or '?' (robfig/cron's starBit):
  // when both are restricted, a day matches when either matches.
  bool day_of_month_star = false;
  bool day_of_week_star = false;
};

// How far next() and previous() look, in wall-clock time, before they give up:
// longer than the longest gap of any schedule that fires at all ("0 0 29 2 *"
// after 2096 fires next in 2104, as 2100 is no leap year), with room for the
// days a daylight-saving gap can take. Searches stay within the years
// 1700..2250 (k8s::Timestamp spans 1677..2262).
inline constexpr int search_years = 30;

class Schedule {
 public:
  // Parses five fields (minute, hour, day of month, month, day of week: each
  // '*', '?', a number or a name, a range "a-b", a step "*/n", "a-b/n" or
  // "a/n" (a to the field's maximum, as robfig/cron), or a comma list of
  // those; 7 is Sunday too), a descriptor (@yearly @annually @monthly @weekly
  // @daily @midnight @hourly), or "@every <Go duration>" (at least 1s;
  // fractions of a second are dropped, as robfig/cron does). A leading
  // "CRON_TZ=<zone> " or "TZ=<zone> " wins over `default_zone`; an empty
  // zone name is UTC, as Go's time.LoadLocation. Every error names the
  // schedule and the offending field or value:
  //   invalid schedule "0 0 13 *": expected 5 fields, found 4
  //   unknown time zone "Mars/Olympus"                 (default_zone)
  static k8s::Expected<Schedule> parse(std::string_view text, std::string_view default_zone = "UTC");

  // The first firing time strictly after `after`, or nullopt when there is
  // none within search_years (e.g. "0 0 30 2 *"). For @every the firings are
  // origin + k * every, k >= 1, with origin = `every_origin`, or `after` when
  // absent; other schedules ignore it.
  std::optional<k8s::Timestamp> next(k8s::Timestamp after, std::optional<k8s::Timestamp> every_origin = {}) const;
  // The most recent firing time at or before `at`, looking back at most
  // search_years; nullopt when there is none. For @every it needs the origin
  // (without one there is no past firing) and is nullopt before origin + every.
  std::optional<k8s::Timestamp> previous(k8s::Timestamp at, std::optional<k8s::Timestamp> every_origin = {}) const;

  const std::string& text() const { return text_; }
  // The effective IANA zone: the prefix's, else the default.
  const std::string& zone_name() const { return zone_name_; }
  // The interval of an "@every" schedule, zero for the others.
  std::chrono::nanoseconds every() const { return every_; }

  // RFC 3339 on the zone's wall clock with its UTC offset and seconds
  // precision, e.g. 2026-03-29T03:30:00+02:00; a zero offset is written "Z",
  // as Go's time.RFC3339.
  std::string format(k8s::Timestamp t) const;

 private:
  Schedule() = default;

  std::string text_;
  std::string zone_name_;
  const date::time_zone* zone_ = nullptr;  // owned by the process-wide tz database
  CronFields fields_;
  std::chrono::nanoseconds every_{0};  // > 0 for "@every"
};

}  // namespace fedmetrics::cron
