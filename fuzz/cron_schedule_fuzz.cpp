// Schedule::parse on any text never crashes; a schedule it accepts answers
// next() strictly after the instant asked, previous() of that firing is the
// firing itself, and format() reads back as the same instant. The zone and
// the instant come from a hash of the input, so the seeds stay plain schedules
// (fuzz/corpus/cron_schedule/) and every input meets a DST zone sometimes.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string_view>

#include "fedmetrics/cron/schedule.hpp"
#include "fedmetrics/k8s/time.hpp"
#include "fuzz_check.hpp"

using fedmetrics::cron::Schedule;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto text = fedmetrics::fuzz::as_text(data, size);
  std::uint64_t hash = 14695981039346656037ull;  // FNV-1a
  for (char c : text) hash = (hash ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  static constexpr std::string_view zones[] = {
      "UTC",         "Europe/Berlin", "America/New_York", "Australia/Sydney", "America/Santiago", "Australia/Lord_Howe",
      "Asia/Kolkata"};
  auto parsed = Schedule::parse(text, zones[hash % std::size(zones)]);
  if (!parsed) {
    FUZZ_CHECK(parsed.error().message.find(std::string_view("time zone")) != std::string::npos ||
                   parsed.error().message.starts_with("invalid schedule \""),
               "error without the schedule: %s", parsed.error().message.c_str());
    return 0;
  }
  // An instant between 1900 and 2200, at a whole minute or not.
  // (Summed in seconds: 300 years of nanoseconds alone would overflow.)
  const fedmetrics::k8s::Timestamp from{
      std::chrono::seconds{-2208988800LL + static_cast<long long>((hash >> 8) % (300ULL * 366 * 86400))}};
  const auto next = parsed->next(from, from);
  if (!next) return 0;
  FUZZ_CHECK(*next > from, "\"%.*s\": next is not after from", static_cast<int>(size), text.data());
  if (!parsed->every().count()) {
    const auto back = parsed->previous(*next);
    FUZZ_CHECK(back == next, "\"%.*s\": previous(next) is not next", static_cast<int>(size), text.data());
  }
  const auto formatted = parsed->format(*next);
  const auto reread = fedmetrics::k8s::parse_time(formatted);
  // To the second, but for a local mean time's offset seconds (Santiago's
  // -04:42:46 before 1927), which RFC 3339 cannot write.
  const auto drift = reread.ok() ? *reread - std::chrono::floor<std::chrono::seconds>(*next) : std::chrono::hours{1};
  FUZZ_CHECK(drift > -std::chrono::minutes{1} && drift < std::chrono::minutes{1}, "\"%.*s\": %s does not read back",
             static_cast<int>(size), text.data(), formatted.c_str());
  return 0;
}
