// Time points and durations for the whole control plane. Microsecond resolution, UTC.
// Parsing and formatting only: reading the current time is the Clock's job (core/clock.h).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/result.h"

namespace gf {

using Duration = std::chrono::microseconds;
using Time = std::chrono::sys_time<Duration>;

constexpr Duration milliseconds(int64_t ms) { return std::chrono::milliseconds(ms); }
constexpr Duration seconds(int64_t s) { return std::chrono::seconds(s); }
constexpr Duration minutes(int64_t m) { return std::chrono::minutes(m); }
constexpr Duration hours(int64_t h) { return std::chrono::hours(h); }
constexpr Duration days(int64_t d) { return std::chrono::hours(24 * d); }

// The virtual calendar of simulations starts here (docs/scenarios.md).
constexpr Time kSimEpoch = Time(std::chrono::sys_days(std::chrono::year(2026) / 1 / 1));

// Parses "30s", "5m", "3h", "1h30m", "7d", "250ms", "0s"; a bare integer is seconds.
// Units: us, ms, s, m, h, d. Errors name what is wrong ("unknown unit 'x' in \"5x\"").
Result<Duration> parse_duration(std::string_view text);
// Shortest exact form: 5400s -> "1h30m", 0 -> "0s", 1500ms -> "1s500ms".
std::string format_duration(Duration d);

// ISO 8601 UTC with second precision: "2026-01-01T02:00:00Z".
std::string format_iso8601(Time t);
// Accepts "2026-01-01T02:00:00Z" and fractional seconds "…:00.123Z".
Result<Time> parse_iso8601(std::string_view text);

inline int64_t to_micros(Time t) { return t.time_since_epoch().count(); }
inline Time from_micros(int64_t us) { return Time(Duration(us)); }

}  // namespace gf
