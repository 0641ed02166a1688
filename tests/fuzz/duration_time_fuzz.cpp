// Durations ("1h30m", "250ms", a bare integer of seconds) and ISO 8601 times (core/time.h): API
// query parameters (EventTimeAfter), policy windows, scenario `at:` fields, PyTorchJob's
// gpufleet.io/duration annotation. Each line of the input is read both ways; the first 8 bytes
// also serve as a raw microsecond count for the formatters.
//
// Invariants checked:
//  - a parsed duration is >= 0, formats to a text that parses back to the same value, and that
//    text is canonical (formatting the re-parsed value gives it again);
//  - format_duration of any value (negative included) is "-" + the magnitude's text;
//  - a parsed time formats to a text that parses back to the time cut to whole seconds, and a
//    time written without fraction and with seconds below 60 formats back to its own text;
//  - any time between years 0 and 9999 formats to a text that parses back to it (cut to
//    seconds).
#include <chrono>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#include "core/time.h"
#include "fuzz_support.h"

namespace gf {
namespace {

void check_duration(std::string_view text) {
  const Result<Duration> d = parse_duration(text);
  if (!d.ok()) {
    FUZZ_CHECK_ERROR(d.status());
    return;
  }
  FUZZ_CHECK(d->count() >= 0, std::to_string(d->count()));
  const std::string formatted = format_duration(*d);
  const Result<Duration> again = parse_duration(formatted);
  FUZZ_CHECK(again.ok() && *again == *d,
             std::string(text) + " -> " + std::to_string(d->count()) + "us -> \"" + formatted +
                 "\" -> " +
                 (again.ok() ? std::to_string(again->count()) : again.status().to_string()));
  FUZZ_CHECK(format_duration(*again) == formatted, formatted);
}

void check_format_duration(int64_t us) {
  const std::string s = format_duration(Duration(us));
  FUZZ_CHECK(!s.empty(), std::to_string(us));
  if (us >= 0) {
    const Result<Duration> back = parse_duration(s);
    FUZZ_CHECK(back.ok() && back->count() == us, std::to_string(us) + " -> " + s);
  } else {
    FUZZ_CHECK(s[0] == '-', s);
    if (us != std::numeric_limits<int64_t>::min()) {
      FUZZ_CHECK(s.substr(1) == format_duration(Duration(-us)), s);
    }
  }
}

void check_time(std::string_view text) {
  const Result<Time> t = parse_iso8601(text);
  if (!t.ok()) {
    FUZZ_CHECK_ERROR(t.status());
    return;
  }
  const std::string formatted = format_iso8601(*t);
  const Result<Time> again = parse_iso8601(formatted);
  const Time whole = std::chrono::floor<std::chrono::seconds>(*t);
  FUZZ_CHECK(again.ok() && *again == whole, std::string(text) + " -> " + formatted);
  // "YYYY-MM-DDTHH:MM:SSZ" exactly, second 60 (a leap second) rolls over to the next minute.
  if (text.size() == 20 && text.substr(17, 2) < "60") {
    FUZZ_CHECK(formatted == text, std::string(text) + " -> " + formatted);
  }
}

void check_format_time(int64_t us) {
  const Time lo = Time(std::chrono::sys_days(std::chrono::year(0) / 1 / 1));
  const Time hi = Time(std::chrono::sys_days(std::chrono::year(10000) / 1 / 1));
  if (us < to_micros(lo) || us >= to_micros(hi)) return;
  const Time t = from_micros(us);
  const std::string s = format_iso8601(t);
  const Result<Time> back = parse_iso8601(s);
  FUZZ_CHECK(back.ok() && *back == std::chrono::floor<std::chrono::seconds>(t),
             std::to_string(us) + " -> " + s);
}

}  // namespace
}  // namespace gf

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > gf::fuzz::kMaxInputBytes) return -1;
  const std::string_view text = gf::fuzz::as_text(data, size);
  for (std::string_view rest = text; !rest.empty();) {
    auto [line, tail] = gf::fuzz::split_once(rest, "\n");
    gf::check_duration(line);
    gf::check_time(line);
    rest = tail;
  }
  if (size >= sizeof(int64_t)) {
    int64_t us = 0;
    std::memcpy(&us, data, sizeof us);
    gf::check_format_duration(us);
    gf::check_format_time(us);
  }
  return 0;
}
