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
    if (unit.empty() && all_digits) mult = 1'000'000;
    else if (unit == "ms") mult = 1'000;
    else if (unit == "s") mult = 1'000'000;
    else if (unit == "m") mult = 60'000'000;
    else if (unit == "h") mult = 3'600'000'000LL;
    else if (unit == "d") mult = 86'400'000'000LL;
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
  int64_t us = d.count();
  if (us == 0) return "0s";
  std::string out;
  if (us < 0) {
    out = "-";
    us = -us;
  }
  struct Unit {
    int64_t us;
    const char* name;
  };
  static constexpr Unit kUnits[] = {{86'400'000'000LL, "d"},
                                    {3'600'000'000LL, "h"},
                                    {60'000'000, "m"},
                                    {1'000'000, "s"},
                                    {1'000, "ms"},
                                    {1, "us"}};
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
  int y, mo, d, h, mi, s;
  char tail[32] = {0};
  std::string str(text);
  int n = std::sscanf(str.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%31s", &y, &mo, &d, &h, &mi, &s, tail);
  if (n < 7) {
    return validation_error("invalid time \"" + str +
                            "\": expected ISO 8601 UTC like 2026-01-01T02:00:00Z");
  }
  int64_t frac_us = 0;
  std::string_view rest(tail);
  if (!rest.empty() && rest[0] == '.') {
    size_t i = 1;
    int64_t scale = 100'000;
    while (i < rest.size() && is_digit(rest[i])) {
      frac_us += (rest[i] - '0') * scale;
      scale /= 10;
      ++i;
    }
    rest = rest.substr(i);
  }
  if (rest != "Z") {
    return validation_error("invalid time \"" + str + "\": must be UTC and end in 'Z'");
  }
  std::chrono::year_month_day ymd{std::chrono::year(y), std::chrono::month(unsigned(mo)),
                                  std::chrono::day(unsigned(d))};
  if (!ymd.ok() || h > 23 || mi > 59 || s > 60) {
    return validation_error("invalid time \"" + str + "\": no such date or time of day");
  }
  Time t = Time(std::chrono::sys_days(ymd)) + std::chrono::hours(h) + std::chrono::minutes(mi) +
           std::chrono::seconds(s) + Duration(frac_us);
  return t;
}

}  // namespace gf
