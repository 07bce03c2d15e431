// Cron schedules (docs/cron.md, "Schedules"): the dialect, the day rules, month
// ends and leap years, @every, zones and their daylight-saving transitions
// on both hemispheres, previous() against next(), and every error message.
#include "fedmetrics/cron/schedule.hpp"

#include <catch2/catch.hpp>

#include <ctime>
#include <random>
#include <string>
#include <vector>

namespace {

using fedmetrics::cron::Schedule;
using fedmetrics::k8s::Timestamp;

Timestamp at(const std::string& rfc3339) {
  auto t = fedmetrics::k8s::parse_time(rfc3339);
  REQUIRE(t.ok());
  return *t;
}

Schedule schedule(const std::string& text, const std::string& zone = "UTC") {
  auto s = Schedule::parse(text, zone);
  INFO(text << " in " << zone);
  if (!s) FAIL(s.error().message);
  return *s;
}

// The next firings after `from`, written by format() in the schedule's zone.
std::vector<std::string> firings(const Schedule& s, const std::string& from, std::size_t n) {
  std::vector<std::string> out;
  Timestamp t = at(from);
  const Timestamp origin = t;
  for (std::size_t i = 0; i < n; ++i) {
    auto next = s.next(t, origin);
    if (!next) break;
    out.push_back(s.format(*next));
    // The text names the same instant as the value.
    CHECK(at(out.back()) == *next);
    t = *next;
  }
  return out;
}

struct NextCase {
  std::string schedule;
  std::string zone;
  std::string from;
  std::vector<std::string> expected;
};

void check_next_cases(const std::vector<NextCase>& cases) {
  for (const auto& c : cases) {
    INFO("schedule \"" << c.schedule << "\" in " << c.zone << " after " << c.from);
    CHECK(firings(schedule(c.schedule, c.zone), c.from, c.expected.size()) == c.expected);
  }
}

}  // namespace

TEST_CASE("cron: every field form: '*', values, ranges, steps, lists, '?'", "[cron]") {
  check_next_cases({
      {"* * * * *", "UTC", "2026-01-01T00:00:00Z", {"2026-01-01T00:01:00Z", "2026-01-01T00:02:00Z"}},
      {"* * * * *", "UTC", "2026-01-01T00:00:30Z", {"2026-01-01T00:01:00Z"}},
      {"*/15 * * * *",
       "UTC",
       "2026-01-01T00:07:00Z",
       {"2026-01-01T00:15:00Z", "2026-01-01T00:30:00Z", "2026-01-01T00:45:00Z", "2026-01-01T01:00:00Z"}},
      {"1-30/7 * * * *",
       "UTC",
       "2026-01-01T00:00:00Z",
       {"2026-01-01T00:01:00Z", "2026-01-01T00:08:00Z", "2026-01-01T00:15:00Z", "2026-01-01T00:22:00Z",
        "2026-01-01T00:29:00Z", "2026-01-01T01:01:00Z"}},
      // "a/n": from a to the field's end, as robfig/cron.
      {"5/20 * * * *",
       "UTC",
       "2026-01-01T00:00:00Z",
       {"2026-01-01T00:05:00Z", "2026-01-01T00:25:00Z", "2026-01-01T00:45:00Z", "2026-01-01T01:05:00Z"}},
      {"0,30 9-17 * * *", "UTC", "2026-01-01T17:10:00Z", {"2026-01-01T17:30:00Z", "2026-01-02T09:00:00Z"}},
      {"15 10,14 * * *", "UTC", "2026-01-01T10:15:00Z", {"2026-01-01T14:15:00Z", "2026-01-02T10:15:00Z"}},
      {"0 */6 * * *", "UTC", "2026-01-01T01:00:00Z", {"2026-01-01T06:00:00Z", "2026-01-01T12:00:00Z"}},
      {"0 0 1-3,20 * *",
       "UTC",
       "2026-01-02T12:00:00Z",
       {"2026-01-03T00:00:00Z", "2026-01-20T00:00:00Z", "2026-02-01T00:00:00Z"}},
      {"0 0 1 */4 *", "UTC", "2026-01-01T00:00:00Z", {"2026-05-01T00:00:00Z", "2026-09-01T00:00:00Z"}},
      {"0 0 ? * ?", "UTC", "2026-01-01T00:00:00Z", {"2026-01-02T00:00:00Z"}},
      {"0 0 ? * 1", "UTC", "2026-01-01T00:00:00Z", {"2026-01-05T00:00:00Z", "2026-01-12T00:00:00Z"}},
      // Whitespace between fields is any run of blanks.
      {"  0\t12   * * *  ", "UTC", "2026-01-01T00:00:00Z", {"2026-01-01T12:00:00Z"}},
  });
}

TEST_CASE("cron: month and day names in any case, 7 as Sunday", "[cron]") {
  // 2026-01-01 is a Thursday.
  check_next_cases({
      {"30 8 * * 1-5", "UTC", "2026-01-02T09:00:00Z", {"2026-01-05T08:30:00Z", "2026-01-06T08:30:00Z"}},
      {"30 8 * * MON-FRI", "UTC", "2026-01-02T09:00:00Z", {"2026-01-05T08:30:00Z", "2026-01-06T08:30:00Z"}},
      {"30 8 * * mon-Fri", "UTC", "2026-01-02T09:00:00Z", {"2026-01-05T08:30:00Z"}},
      {"0 0 * * SUN", "UTC", "2026-01-01T00:00:00Z", {"2026-01-04T00:00:00Z", "2026-01-11T00:00:00Z"}},
      {"0 0 * * sun", "UTC", "2026-01-01T00:00:00Z", {"2026-01-04T00:00:00Z"}},
      {"0 0 * * 0", "UTC", "2026-01-01T00:00:00Z", {"2026-01-04T00:00:00Z"}},
      {"0 0 * * 7", "UTC", "2026-01-01T00:00:00Z", {"2026-01-04T00:00:00Z", "2026-01-11T00:00:00Z"}},
      {"0 0 * * 5-7",
       "UTC",
       "2026-01-01T00:00:00Z",
       {"2026-01-02T00:00:00Z", "2026-01-03T00:00:00Z", "2026-01-04T00:00:00Z", "2026-01-09T00:00:00Z"}},
      {"0 0 * * SAT,sun", "UTC", "2026-01-01T00:00:00Z", {"2026-01-03T00:00:00Z", "2026-01-04T00:00:00Z"}},
      {"0 0 1 JAN *", "UTC", "2026-01-01T00:00:00Z", {"2027-01-01T00:00:00Z"}},
      {"0 0 1 jan,Jul *", "UTC", "2026-01-01T00:00:00Z", {"2026-07-01T00:00:00Z", "2027-01-01T00:00:00Z"}},
      {"0 0 1 MAR-may *",
       "UTC",
       "2026-01-01T00:00:00Z",
       {"2026-03-01T00:00:00Z", "2026-04-01T00:00:00Z", "2026-05-01T00:00:00Z", "2027-03-01T00:00:00Z"}},
  });
}

TEST_CASE("cron: day of month and day of week: either when both are restricted", "[cron]") {
  check_next_cases({
      // The 13th or any Friday.
      {"0 0 13 * 5",
       "UTC",
       "2026-01-01T00:00:00Z",
       {"2026-01-02T00:00:00Z", "2026-01-09T00:00:00Z", "2026-01-13T00:00:00Z", "2026-01-16T00:00:00Z"}},
      {"0 0 13 * FRI", "UTC", "2026-01-01T00:00:00Z", {"2026-01-02T00:00:00Z"}},
      // A '*' on one side: the other alone decides.
      {"0 0 13 * *", "UTC", "2026-01-01T00:00:00Z", {"2026-01-13T00:00:00Z", "2026-02-13T00:00:00Z"}},
      {"0 0 * * 5", "UTC", "2026-01-01T00:00:00Z", {"2026-01-02T00:00:00Z", "2026-01-09T00:00:00Z"}},
      {"0 0 ? * 5", "UTC", "2026-01-01T00:00:00Z", {"2026-01-02T00:00:00Z", "2026-01-09T00:00:00Z"}},
      // A stepped '*' restricts (robfig/cron): days 1, 11, 21, 31, or Mondays.
      {"0 0 */10 * 1",
       "UTC",
       "2026-01-01T00:00:00Z",
       {"2026-01-05T00:00:00Z", "2026-01-11T00:00:00Z", "2026-01-12T00:00:00Z", "2026-01-19T00:00:00Z",
        "2026-01-21T00:00:00Z", "2026-01-26T00:00:00Z", "2026-01-31T00:00:00Z"}},
      // "*/1" is still '*': Mondays only.
      {"0 0 */1 * 1", "UTC", "2026-01-01T00:00:00Z", {"2026-01-05T00:00:00Z", "2026-01-12T00:00:00Z"}},
  });
}

TEST_CASE("cron: month ends and leap years", "[cron]") {
  check_next_cases({
      // The 31st skips the short months.
      {"0 0 31 * *",
       "UTC",
       "2026-01-31T00:00:00Z",
       {"2026-03-31T00:00:00Z", "2026-05-31T00:00:00Z", "2026-07-31T00:00:00Z", "2026-08-31T00:00:00Z",
        "2026-10-31T00:00:00Z", "2026-12-31T00:00:00Z", "2027-01-31T00:00:00Z"}},
      {"0 0 30 * *", "UTC", "2026-01-30T00:00:00Z", {"2026-03-30T00:00:00Z"}},
      {"0 12 29 * *", "UTC", "2027-01-29T12:00:00Z", {"2027-03-29T12:00:00Z"}},
      {"0 12 29 * *", "UTC", "2028-01-29T12:00:00Z", {"2028-02-29T12:00:00Z"}},
      // 29 February: every 4 years, but 2100 is no leap year (2000 was).
      {"0 0 29 2 *", "UTC", "2026-01-01T00:00:00Z", {"2028-02-29T00:00:00Z", "2032-02-29T00:00:00Z"}},
      {"0 0 29 2 *", "UTC", "2096-03-01T00:00:00Z", {"2104-02-29T00:00:00Z"}},
      {"0 0 29 2 *", "UTC", "1999-03-01T00:00:00Z", {"2000-02-29T00:00:00Z"}},
      {"0 0 29 FEB *", "UTC", "2028-02-29T00:00:00Z", {"2032-02-29T00:00:00Z"}},
      // The last day of February, with 29 and 28 listed: either.
      {"0 0 28,29 2 *", "UTC", "2027-03-01T00:00:00Z", {"2028-02-28T00:00:00Z", "2028-02-29T00:00:00Z"}},
  });

  SECTION("a day that never comes: no firing, and no endless search") {
    for (const char* text : {"0 0 30 2 *", "0 0 31 4,6,9,11 *", "0 0 31 2 *"}) {
      INFO(text);
      const Schedule s = schedule(text);
      CHECK_FALSE(s.next(at("2026-01-01T00:00:00Z")).has_value());
      CHECK_FALSE(s.previous(at("2026-01-01T00:00:00Z")).has_value());
    }
  }
}

TEST_CASE("cron: descriptors", "[cron]") {
  check_next_cases({
      {"@yearly", "UTC", "2026-03-01T00:00:00Z", {"2027-01-01T00:00:00Z", "2028-01-01T00:00:00Z"}},
      {"@annually", "UTC", "2026-03-01T00:00:00Z", {"2027-01-01T00:00:00Z"}},
      {"@monthly", "UTC", "2026-03-01T00:00:00Z", {"2026-04-01T00:00:00Z", "2026-05-01T00:00:00Z"}},
      {"@weekly", "UTC", "2026-01-01T00:00:00Z", {"2026-01-04T00:00:00Z", "2026-01-11T00:00:00Z"}},
      {"@daily", "UTC", "2026-01-01T00:00:00Z", {"2026-01-02T00:00:00Z", "2026-01-03T00:00:00Z"}},
      {"@midnight", "UTC", "2026-01-01T00:00:00Z", {"2026-01-02T00:00:00Z"}},
      {"@hourly", "UTC", "2026-01-01T00:30:00Z", {"2026-01-01T01:00:00Z", "2026-01-01T02:00:00Z"}},
      {"@daily", "Europe/Berlin", "2026-01-01T00:00:00Z", {"2026-01-02T00:00:00+01:00"}},
      {"CRON_TZ=Asia/Tokyo @daily", "UTC", "2026-01-01T00:00:00Z", {"2026-01-02T00:00:00+09:00"}},
  });
}

TEST_CASE("cron: @every counts from its origin", "[cron]") {
  const Schedule s = schedule("@every 90m");
  CHECK(s.every() == std::chrono::minutes{90});
  const Timestamp origin = at("2026-01-01T00:00:00Z");
  CHECK(s.next(origin, origin) == at("2026-01-01T01:30:00Z"));
  CHECK(s.next(at("2026-01-01T01:30:00Z"), origin) == at("2026-01-01T03:00:00Z"));
  CHECK(s.next(at("2026-01-01T02:00:00Z"), origin) == at("2026-01-01T03:00:00Z"));
  // Long after the origin: still on its grid.
  CHECK(s.next(at("2026-01-03T00:10:00Z"), origin) == at("2026-01-03T01:30:00Z"));
  // Before the origin: the first firing, origin + every.
  CHECK(s.next(at("2025-12-01T00:00:00Z"), origin) == at("2026-01-01T01:30:00Z"));
  // Without an origin, counted from `after`.
  CHECK(s.next(at("2026-01-01T02:00:00Z")) == at("2026-01-01T03:30:00Z"));

  CHECK(s.previous(at("2026-01-01T02:59:59Z"), origin) == at("2026-01-01T01:30:00Z"));
  CHECK(s.previous(at("2026-01-01T03:00:00Z"), origin) == at("2026-01-01T03:00:00Z"));
  CHECK_FALSE(s.previous(at("2026-01-01T01:29:59Z"), origin).has_value());
  CHECK_FALSE(s.previous(at("2026-01-01T05:00:00Z")).has_value());

  CHECK(schedule("@every 1h30m").every() == std::chrono::minutes{90});
  CHECK(schedule("@every 1s").next(origin, origin) == at("2026-01-01T00:00:01Z"));
  // Whole seconds only, as robfig/cron.
  CHECK(schedule("@every 2.5s").every() == std::chrono::seconds{2});
  // An @every ignores zones for its arithmetic; format() still uses the zone.
  const Schedule berlin = schedule("@every 24h", "Europe/Berlin");
  CHECK(berlin.format(*berlin.next(at("2026-03-28T12:00:00Z"))) == "2026-03-29T14:00:00+02:00");
}

TEST_CASE("cron: CRON_TZ= and TZ= prefixes win over the default zone", "[cron]") {
  const Schedule a = schedule("CRON_TZ=Europe/Berlin 30 8 * * *", "UTC");
  CHECK(a.zone_name() == "Europe/Berlin");
  CHECK(a.text() == "CRON_TZ=Europe/Berlin 30 8 * * *");
  const Schedule b = schedule("TZ=America/New_York 0 9 * * *", "Europe/Berlin");
  CHECK(b.zone_name() == "America/New_York");
  const Schedule c = schedule("0 9 * * *", "Asia/Tokyo");
  CHECK(c.zone_name() == "Asia/Tokyo");
  // No zone at all is UTC, as Go's time.LoadLocation("").
  CHECK(schedule("0 9 * * *", "").zone_name() == "UTC");
  check_next_cases({
      {"CRON_TZ=Europe/Berlin 30 8 * * *", "UTC", "2026-01-01T00:00:00Z", {"2026-01-01T08:30:00+01:00"}},
      {"TZ=America/New_York 0 9 * * *", "Europe/Berlin", "2026-01-01T00:00:00Z", {"2026-01-01T09:00:00-05:00"}},
      {"0 9 * * *", "Asia/Tokyo", "2025-12-31T12:00:00Z", {"2026-01-01T09:00:00+09:00"}},
      // Exactly at a firing time: strictly after, so the next day's.
      {"0 9 * * *", "Asia/Tokyo", "2026-01-01T00:00:00Z", {"2026-01-02T09:00:00+09:00"}},
      {"0 9 * * *", "Asia/Kolkata", "2026-01-01T00:00:00Z", {"2026-01-01T09:00:00+05:30"}},
      // A prefix with a bad default zone: the default is never looked at.
      {"CRON_TZ=UTC 0 9 * * *", "Mars/Olympus", "2026-01-01T00:00:00Z", {"2026-01-01T09:00:00Z"}},
  });
}

TEST_CASE("cron: daylight saving: the skipped hour does not fire, the repeated hour fires once", "[cron]") {
  check_next_cases({
      // Europe/Berlin: 02:00 CET -> 03:00 CEST on 2026-03-29; 03:00 CEST -> 02:00 CET on 2026-10-25.
      {"30 2 * * *",
       "Europe/Berlin",
       "2026-03-28T00:00:00Z",
       {"2026-03-28T02:30:00+01:00", "2026-03-30T02:30:00+02:00"}},
      {"0 * * * *",
       "Europe/Berlin",
       "2026-03-29T00:00:00Z",
       {"2026-03-29T03:00:00+02:00", "2026-03-29T04:00:00+02:00"}},
      {"30 2 * * *",
       "Europe/Berlin",
       "2026-10-24T12:00:00Z",
       {"2026-10-25T02:30:00+02:00", "2026-10-26T02:30:00+01:00"}},
      {"*/30 * * * *",
       "Europe/Berlin",
       "2026-10-25T00:00:00Z",
       {"2026-10-25T02:30:00+02:00", "2026-10-25T03:00:00+01:00", "2026-10-25T03:30:00+01:00"}},
      // From inside the second 02:xx: its first occurrence has passed.
      {"45 2 * * *", "Europe/Berlin", "2026-10-25T01:10:00Z", {"2026-10-26T02:45:00+01:00"}},
      // America/New_York: 02:00 EST -> 03:00 EDT on 2026-03-08; 02:00 EDT -> 01:00 EST on 2026-11-01.
      {"30 2 * * *",
       "America/New_York",
       "2026-03-07T00:00:00Z",
       {"2026-03-07T02:30:00-05:00", "2026-03-09T02:30:00-04:00"}},
      {"30 1 * * *",
       "America/New_York",
       "2026-10-31T12:00:00Z",
       {"2026-11-01T01:30:00-04:00", "2026-11-02T01:30:00-05:00"}},
      {"0 1-3 * * *",
       "America/New_York",
       "2026-11-01T04:00:00Z",
       {"2026-11-01T01:00:00-04:00", "2026-11-01T02:00:00-05:00", "2026-11-01T03:00:00-05:00"}},
      // Australia/Sydney (southern): 03:00 AEDT -> 02:00 AEST on 2026-04-05; 02:00 AEST -> 03:00 AEDT on 2026-10-04.
      {"30 2 * * *",
       "Australia/Sydney",
       "2026-10-02T00:00:00Z",
       {"2026-10-03T02:30:00+10:00", "2026-10-05T02:30:00+11:00"}},
      {"30 2 * * *",
       "Australia/Sydney",
       "2026-04-04T00:00:00Z",
       {"2026-04-05T02:30:00+11:00", "2026-04-06T02:30:00+10:00"}},
      // America/Santiago (southern, at midnight): 24:00 -03 -> 23:00 -04 on 2026-04-04;
      // 00:00 -04 -> 01:00 -03 on 2026-09-06.
      {"30 23 * * *",
       "America/Santiago",
       "2026-04-04T12:00:00Z",
       {"2026-04-04T23:30:00-03:00", "2026-04-05T23:30:00-04:00"}},
      {"30 0 * * *",
       "America/Santiago",
       "2026-09-05T00:00:00Z",
       {"2026-09-05T00:30:00-04:00", "2026-09-07T00:30:00-03:00"}},
      // Midnight of 2026-09-06 does not exist there: the next is a year later (DST began on the 5th).
      {"0 0 6 9 *", "America/Santiago", "2026-01-01T00:00:00Z", {"2027-09-06T00:00:00-03:00"}},
      // Australia/Lord_Howe moves by half an hour: 02:00 -> 02:30 on 2026-10-04, 02:00 -> 01:30 on 2026-04-05.
      {"15,45 2 * * *",
       "Australia/Lord_Howe",
       "2026-10-03T00:00:00Z",
       {"2026-10-04T02:45:00+11:00", "2026-10-05T02:15:00+11:00"}},
      {"45 1 * * *",
       "Australia/Lord_Howe",
       "2026-04-04T00:00:00Z",
       {"2026-04-05T01:45:00+11:00", "2026-04-06T01:45:00+10:30"}},
  });
}

TEST_CASE("cron: previous is the most recent firing at or before a time", "[cron]") {
  struct Case {
    std::string schedule, zone, at;
    std::optional<std::string> expected;
  };
  const std::vector<Case> cases = {
      {"30 8 * * 1-5", "UTC", "2026-01-05T08:29:00Z", "2026-01-02T08:30:00Z"},
      {"30 8 * * 1-5", "UTC", "2026-01-05T08:30:00Z", "2026-01-05T08:30:00Z"},
      {"0 0 31 * *", "UTC", "2026-03-01T00:00:00Z", "2026-01-31T00:00:00Z"},
      {"0 0 29 2 *", "UTC", "2104-01-01T00:00:00Z", "2096-02-29T00:00:00Z"},
      {"30 2 * * *", "Europe/Berlin", "2026-03-30T00:00:00Z", "2026-03-28T02:30:00+01:00"},
      // In the second 02:xx, the first occurrence of 02:30 is the most recent firing.
      {"30 2 * * *", "Europe/Berlin", "2026-10-25T01:45:00Z", "2026-10-25T02:30:00+02:00"},
      {"30 2 * * *", "Europe/Berlin", "2026-10-25T00:29:00Z", "2026-10-24T02:30:00+02:00"},
      {"30 0 * * *", "America/Santiago", "2026-09-07T00:00:00Z", "2026-09-05T00:30:00-04:00"},
      {"0 0 30 2 *", "UTC", "2026-01-01T00:00:00Z", std::nullopt},
  };
  for (const auto& c : cases) {
    INFO("schedule \"" << c.schedule << "\" in " << c.zone << " at " << c.at);
    const Schedule s = schedule(c.schedule, c.zone);
    auto previous = s.previous(at(c.at));
    REQUIRE(previous.has_value() == c.expected.has_value());
    if (previous) CHECK(s.format(*previous) == *c.expected);
  }
}

TEST_CASE("cron: format writes the zone's offset", "[cron]") {
  CHECK(schedule("* * * * *", "Europe/Berlin").format(at("2026-03-29T01:30:00Z")) == "2026-03-29T03:30:00+02:00");
  CHECK(schedule("* * * * *", "America/St_Johns").format(at("2026-01-01T12:00:59.9Z")) == "2026-01-01T08:30:59-03:30");
  CHECK(schedule("* * * * *", "UTC").format(at("2026-01-01T12:00:00Z")) == "2026-01-01T12:00:00Z");
  CHECK(schedule("* * * * *", "Europe/London").format(at("2026-01-01T12:00:00Z")) == "2026-01-01T12:00:00Z");
}

namespace {

// An independent reference for UTC: the fields as plain sets, matched
// minute by minute with gmtime.
struct Reference {
  std::vector<bool> minute = std::vector<bool>(60), hour = std::vector<bool>(24), dom = std::vector<bool>(32),
                    month = std::vector<bool>(13), dow = std::vector<bool>(7);
  bool dom_star = false, dow_star = false;

  bool matches(std::time_t t) const {
    std::tm tm{};
    gmtime_r(&t, &tm);
    if (!minute[tm.tm_min] || !hour[tm.tm_hour] || !month[tm.tm_mon + 1]) return false;
    const bool d = dom[tm.tm_mday], w = dow[tm.tm_wday];
    return (dom_star || dow_star) ? (d && w) : (d || w);
  }
};

std::string random_field(std::mt19937& rng, int min, int max, std::vector<bool>& set, bool& star) {
  std::uniform_int_distribution<int> kind(0, 4);
  const int k = kind(rng);
  if (k == 0) {
    for (int v = min; v <= max; ++v) set[v] = true;
    star = true;
    return "*";
  }
  std::uniform_int_distribution<int> value(min, max);
  if (k == 1) {  // a stepped range
    int a = value(rng), b = value(rng);
    if (a > b) std::swap(a, b);
    const int step = std::uniform_int_distribution<int>(1, 5)(rng);
    for (int v = a; v <= b; v += step) set[v] = true;
    return std::to_string(a) + "-" + std::to_string(b) + "/" + std::to_string(step);
  }
  std::string out;  // a list of 1..3 values
  const int n = std::uniform_int_distribution<int>(1, 3)(rng);
  for (int i = 0; i < n; ++i) {
    const int v = value(rng);
    set[v] = true;
    out += (i ? "," : "") + std::to_string(v);
  }
  return out;
}

}  // namespace

TEST_CASE("cron: next and previous agree with each other and with a minute-by-minute reference", "[cron]") {
  std::mt19937 rng(20261125);
  const std::vector<std::string> zones = {
      "UTC",         "Europe/Berlin", "America/New_York", "Australia/Sydney", "America/Santiago", "Australia/Lord_Howe",
      "Asia/Kolkata"};
  const auto base = at("2026-01-01T00:00:00Z");
  std::uniform_int_distribution<long long> offset_minutes(0, 3LL * 366 * 24 * 60);
  std::uniform_int_distribution<long long> offset_seconds(0, 59);
  int compared = 0;
  for (int i = 0; i < 400; ++i) {
    Reference ref;
    bool ignored = false;  // a '*' matters on the day fields only
    std::string text = random_field(rng, 0, 59, ref.minute, ignored);
    text += " " + random_field(rng, 0, 23, ref.hour, ignored);
    text += " " + random_field(rng, 1, 31, ref.dom, ref.dom_star);
    text += " " + random_field(rng, 1, 12, ref.month, ignored);
    text += " " + random_field(rng, 0, 6, ref.dow, ref.dow_star);
    const std::string zone = zones[static_cast<std::size_t>(i) % zones.size()];
    const Schedule s = schedule(text, zone);
    const Timestamp t = base + std::chrono::minutes{offset_minutes(rng)} + std::chrono::seconds{offset_seconds(rng)};
    INFO("schedule \"" << text << "\" in " << zone << " at " << s.format(t));

    const auto next = s.next(t);
    const auto previous = s.previous(t);
    if (next) {
      CHECK(*next > t);
      CHECK(s.previous(*next) == next);
      // Nothing fires in (t, next): the most recent firing before next is the one before t.
      CHECK(s.previous(*next - std::chrono::nanoseconds{1}) == previous);
    }
    if (previous) {
      CHECK(*previous <= t);
      CHECK(s.next(*previous) == next);
    }

    if (zone == "UTC") {
      // Minute by minute over 40 days: the first match is next(t), if any.
      const auto start = std::chrono::floor<std::chrono::minutes>(t) + std::chrono::minutes{1};
      std::optional<Timestamp> expected;
      for (auto m = start; m < start + std::chrono::hours{24 * 40}; m += std::chrono::minutes{1}) {
        if (ref.matches(std::chrono::system_clock::to_time_t(std::chrono::time_point_cast<std::chrono::seconds>(m)))) {
          expected = m;
          break;
        }
      }
      if (expected) {
        CHECK(next == expected);
        ++compared;
      } else if (next) {
        CHECK(*next >= start + std::chrono::hours{24 * 40});
      }
    }
  }
  CHECK(compared > 20);
}

TEST_CASE("cron: parse errors name the schedule and the offending field or value", "[cron]") {
  struct Case {
    std::string schedule, zone, message;
  };
  const std::vector<Case> cases = {
      {"0 0 13 *", "UTC", R"(invalid schedule "0 0 13 *": expected 5 fields, found 4)"},
      {"0 0 13 * * *", "UTC", R"(invalid schedule "0 0 13 * * *": expected 5 fields, found 6)"},
      {"", "UTC", R"(invalid schedule "": expected 5 fields, found 0)"},
      {"TZ=Europe/Berlin", "UTC", R"(invalid schedule "TZ=Europe/Berlin": expected 5 fields, found 0)"},
      {"60 * * * *", "UTC", R"(invalid schedule "60 * * * *": minute: value 60 out of range 0-59)"},
      {"0 24 * * *", "UTC", R"(invalid schedule "0 24 * * *": hour: value 24 out of range 0-23)"},
      {"0 0 0 * *", "UTC", R"(invalid schedule "0 0 0 * *": day of month: value 0 out of range 1-31)"},
      {"0 0 32 * *", "UTC", R"(invalid schedule "0 0 32 * *": day of month: value 32 out of range 1-31)"},
      {"0 0 1 13 *", "UTC", R"(invalid schedule "0 0 1 13 *": month: value 13 out of range 1-12)"},
      {"0 0 1 0 *", "UTC", R"(invalid schedule "0 0 1 0 *": month: value 0 out of range 1-12)"},
      {"0 0 * * 8", "UTC", R"(invalid schedule "0 0 * * 8": day of week: value 8 out of range 0-7)"},
      {"0 0 * * 1-9", "UTC", R"(invalid schedule "0 0 * * 1-9": day of week: value 9 out of range 0-7)"},
      {"0 0 * * 1,99999999999", "UTC",
       R"(invalid schedule "0 0 * * 1,99999999999": day of week: value 99999999999 out of range 0-7)"},
      {"*/0 * * * *", "UTC", R"(invalid schedule "*/0 * * * *": minute: step 0 in "*/0" must be at least 1)"},
      {"0 1-5/0 * * *", "UTC", R"(invalid schedule "0 1-5/0 * * *": hour: step 0 in "1-5/0" must be at least 1)"},
      {"*/x * * * *", "UTC", R"(invalid schedule "*/x * * * *": minute: step "x" in "*/x" is not a number)"},
      {"*/ * * * *", "UTC", R"(invalid schedule "*/ * * * *": minute: step "" in "*/" is not a number)"},
      {"*/2/3 * * * *", "UTC", R"(invalid schedule "*/2/3 * * * *": minute: "*/2/3" has more than one '/')"},
      {"0 5-2 * * *", "UTC", R"(invalid schedule "0 5-2 * * *": hour: range "5-2" starts after it ends)"},
      {"0 0 * DEC-JAN *", "UTC", R"(invalid schedule "0 0 * DEC-JAN *": month: range "DEC-JAN" starts after it ends)"},
      {"1-2-3 * * * *", "UTC", R"(invalid schedule "1-2-3 * * * *": minute: "1-2-3" has more than one '-')"},
      {"0 0 * FOO *", "UTC", R"(invalid schedule "0 0 * FOO *": month: unknown month name "FOO")"},
      {"0 0 * * MOO", "UTC", R"(invalid schedule "0 0 * * MOO": day of week: unknown day name "MOO")"},
      {"0 0 * * MONDAY", "UTC", R"(invalid schedule "0 0 * * MONDAY": day of week: unknown day name "MONDAY")"},
      {"0 0 JAN * *", "UTC", R"(invalid schedule "0 0 JAN * *": day of month: "JAN" is not a number)"},
      {"a * * * *", "UTC", R"(invalid schedule "a * * * *": minute: "a" is not a number)"},
      {"-5 * * * *", "UTC", R"(invalid schedule "-5 * * * *": minute: "-5" is missing a value)"},
      {"1,,2 * * * *", "UTC", R"(invalid schedule "1,,2 * * * *": minute: empty element in a list)"},
      {"1, * * * *", "UTC", R"(invalid schedule "1, * * * *": minute: empty element in a list)"},
      {"@every", "UTC", R"(invalid schedule "@every": @every takes one duration, found 0)"},
      {"@every 1h 2h", "UTC", R"(invalid schedule "@every 1h 2h": @every takes one duration, found 2)"},
      {"@every 5x", "UTC", R"(invalid schedule "@every 5x": @every: "5x" is not a duration (such as 90m or 1h30m))"},
      {"@every 90", "UTC", R"(invalid schedule "@every 90": @every: "90" is not a duration (such as 90m or 1h30m))"},
      {"@every 0s", "UTC", R"(invalid schedule "@every 0s": @every: duration "0s" is below the minimum of 1s)"},
      {"@every 500ms", "UTC",
       R"(invalid schedule "@every 500ms": @every: duration "500ms" is below the minimum of 1s)"},
      {"@every -1m", "UTC", R"(invalid schedule "@every -1m": @every: duration "-1m" is below the minimum of 1s)"},
      {"@fortnightly", "UTC", R"(invalid schedule "@fortnightly": unknown descriptor "@fortnightly")"},
      {"@DAILY", "UTC", R"(invalid schedule "@DAILY": unknown descriptor "@DAILY")"},
      {"@daily 5", "UTC", R"(invalid schedule "@daily 5": @daily takes no fields, found "5")"},
      {"CRON_TZ=Mars/Olympus 0 * * * *", "UTC",
       R"(invalid schedule "CRON_TZ=Mars/Olympus 0 * * * *": unknown time zone "Mars/Olympus")"},
      {"TZ=../../etc/passwd 0 * * * *", "UTC",
       R"(invalid schedule "TZ=../../etc/passwd 0 * * * *": unknown time zone "../../etc/passwd")"},
      {"CRON_TZ= 0 * * * *", "UTC", R"(invalid schedule "CRON_TZ= 0 * * * *": empty time zone after CRON_TZ=)"},
      {"0 * * * *", "Mars/Olympus", R"(unknown time zone "Mars/Olympus")"},
      {"0 * * * *", "europe/berlin", R"(unknown time zone "europe/berlin")"},
      // A bad schedule with a bad default zone: the schedule's error.
      {"0 * * *", "Mars/Olympus", R"(invalid schedule "0 * * *": expected 5 fields, found 4)"},
  };
  for (const auto& c : cases) {
    INFO("schedule \"" << c.schedule << "\" in \"" << c.zone << "\"");
    auto parsed = Schedule::parse(c.schedule, c.zone);
    REQUIRE_FALSE(parsed.ok());
    CHECK(parsed.error().message == c.message);
  }
}
