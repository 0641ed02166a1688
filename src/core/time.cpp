#include "core/time.h"

#include <charconv>
#include <cstdio>
#include <limits>

namespace gf {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

Result<Duration> parse_duration(std::string_view text) {
  const std::string quoted = "\"" + std::string(text) + "\"";
  if (text.empty()) return validation_error("empty duration; expected e.g. 30s, 5m, 1h30m, 7d");
  // A bare integer means seconds.
  bool all_digits = true;
  for (char c : text) all_digits = all_digits && is_digit(c);

  int64_t total_us = 0;
  size_t i = 0;
  bool any = false;
  while (i < text.size()) {
    size_t start = i;
    while (i < text.size() && is_digit(text[i])) ++i;
    if (start == i) {
      return validation_error("invalid duration " + quoted +
                              ": expected a number before each unit (e.g. 30s, 5m, 1h30m, 7d)");
    }
    int64_t n = 0;
    auto [ptr, ec] = std::from_chars(text.data() + start, text.data() + i, n);
    if (ec != std::errc() || ptr != text.data() + i) {
      return validation_error("invalid duration " + quoted + ": number too large");
    }
    size_t ustart = i;
    while (i < text.size() && !is_digit(text[i])) ++i;
    std::string_view unit = text.substr(ustart, i - ustart);
    int64_t mult = 0;
    if (unit.empty() && all_digits)
      mult = 1'000'000;
    else if (unit == "us")
      mult = 1;  // what format_duration writes below a millisecond
    else if (unit == "ms")
      mult = 1'000;
    else if (unit == "s")
      mult = 1'000'000;
    else if (unit == "m")
      mult = 60'000'000;
    else if (unit == "h")
      mult = 3'600'000'000LL;
    else if (unit == "d")
      mult = 86'400'000'000LL;
    else if (unit.empty()) {
      return validation_error("invalid duration " + quoted +
                              ": missing unit after the number (use ms, s, m, h or d)");
    } else {
      return validation_error("invalid duration " + quoted + ": unknown unit '" +
                              std::string(unit) + "' (use ms, s, m, h or d)");
    }
    if (n > std::numeric_limits<int64_t>::max() / mult ||
        total_us > std::numeric_limits<int64_t>::max() - n * mult) {
      return validation_error("invalid duration " + quoted + ": too large");
    }
    total_us += n * mult;
    any = true;
  }
  if (!any) return validation_error("invalid duration " + quoted);
  return Duration(total_us);
}

std::string format_duration(Duration d) {
  // Unsigned, so that the magnitude of the most negative duration is representable.
  uint64_t us = static_cast<uint64_t>(d.count());
  if (us == 0) return "0s";
  std::string out;
  if (d.count() < 0) {
    out = "-";
    us = 0 - us;
  }
  struct Unit {
    uint64_t us;
    const char* name;
  };
  static constexpr Unit kUnits[] = {{86'400'000'000LL, "d"}, {3'600'000'000LL, "h"},
                                    {60'000'000, "m"},       {1'000'000, "s"},
                                    {1'000, "ms"},           {1, "us"}};
  for (const Unit& u : kUnits) {
    if (us >= u.us) {
      out += std::to_string(us / u.us) + u.name;
      us %= u.us;
    }
  }
  return out;
}

std::string format_iso8601(Time t) {
  auto secs = std::chrono::floor<std::chrono::seconds>(t);
  auto days = std::chrono::floor<std::chrono::days>(secs);
  std::chrono::year_month_day ymd(days);
  std::chrono::hh_mm_ss hms(secs - days);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02ld:%02ld:%02ldZ", int(ymd.year()),
                unsigned(ymd.month()), unsigned(ymd.day()), long(hms.hours().count()),
                long(hms.minutes().count()), long(hms.seconds().count()));
  return buf;
}

Result<Time> parse_iso8601(std::string_view text) {
  const std::string quoted = "\"" + std::string(text) + "\"";
  // Fixed layout "YYYY-MM-DDTHH:MM:SS", then optional ".fraction", then "Z". Every field has
  // exactly its digit count: no signs, spaces or short fields slip through.
  static constexpr std::string_view kLayout = "dddd-dd-ddTdd:dd:dd";
  bool layout_ok = text.size() > kLayout.size();
  for (size_t i = 0; layout_ok && i < kLayout.size(); ++i) {
    layout_ok = kLayout[i] == 'd' ? is_digit(text[i]) : text[i] == kLayout[i];
  }
  if (!layout_ok) {
    return validation_error("invalid time " + quoted +
                            ": expected ISO 8601 UTC like 2026-01-01T02:00:00Z");
  }
  auto field = [&](size_t pos, size_t len) {
    int v = 0;
    for (size_t i = pos; i < pos + len; ++i) v = v * 10 + (text[i] - '0');
    return v;
  };
  const int y = field(0, 4), mo = field(5, 2), d = field(8, 2);
  const int h = field(11, 2), mi = field(14, 2), s = field(17, 2);
  std::string_view rest = text.substr(kLayout.size());
  int64_t frac_us = 0;
  if (rest[0] == '.') {
    size_t i = 1;
    int64_t scale = 100'000;
    while (i < rest.size() && is_digit(rest[i])) {
      frac_us += (rest[i] - '0') * scale;
      scale /= 10;
      ++i;
    }
    if (i == 1) {
      return validation_error("invalid time " + quoted + ": expected digits after '.'");
    }
    rest = rest.substr(i);
  }
  if (rest != "Z") {
    return validation_error("invalid time " + quoted + ": must be UTC and end in 'Z'");
  }
  std::chrono::year_month_day ymd{std::chrono::year(y), std::chrono::month(unsigned(mo)),
                                  std::chrono::day(unsigned(d))};
  if (!ymd.ok() || h > 23 || mi > 59 || s > 60) {
    return validation_error("invalid time " + quoted + ": no such date or time of day");
  }
  Time t = Time(std::chrono::sys_days(ymd)) + std::chrono::hours(h) + std::chrono::minutes(mi) +
           std::chrono::seconds(s) + Duration(frac_us);
  // A leap second at the very end of 9999 lands in year 10000, which format_iso8601 cannot
  // write in this layout (so the time would not read back).
  if (t >= Time(std::chrono::sys_days(std::chrono::year(10000) / 1 / 1))) {
    return validation_error("invalid time " + quoted + ": after 9999-12-31T23:59:59Z");
  }
  return t;
}

}  // namespace gf
