#pragma once
// metav1.Time (RFC 3339, UTC, written with second precision) and
// metav1.Duration (Go's time.Duration string form), as apimachinery's
// pkg/apis/meta/v1 (time.go, duration.go) writes them.
#include <chrono>
#include <string>
#include <string_view>

#include "fedmetrics/k8s/expected.hpp"

namespace fedmetrics::k8s {

using Timestamp = std::chrono::sys_time<std::chrono::nanoseconds>;

// Accepts "2026-08-22T10:15:30Z", fractional seconds and numeric offsets
// ("+02:00"), and lower-case 't'/'z' as Go's RFC 3339 parser does.
Expected<Timestamp> parse_time(std::string_view text);
// Writes UTC with second precision, as metav1.Time's MarshalJSON does
// (fractional seconds are truncated).
std::string format_time(Timestamp t);
// metav1.MicroTime: "2006-01-02T15:04:05.000000Z" (Lease acquireTime/renewTime).
std::string format_micro_time(Timestamp t);

// Go's time.ParseDuration: "300ms", "-1.5h", "2h45m", "1m0s", "0"; units
// ns, us, µs, ms, s, m, h.
Expected<std::chrono::nanoseconds> parse_duration(std::string_view text);
// Go's Duration.String(): "1m0s", "15.021s", "500ms", "0s", "1h2m3.5s".
std::string format_duration(std::chrono::nanoseconds d);

}  // namespace fedmetrics::k8s
