// core/time.h: durations ("1h30m") and ISO 8601 UTC timestamps.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <limits>
#include <string>

#include "core/time.h"

namespace gf {
namespace {

using std::chrono::milliseconds;

Duration dur(std::string_view text) {
  Result<Duration> r = parse_duration(text);
  EXPECT_TRUE(r.ok()) << text << ": " << r.status().to_string();
  return r.ok() ? *r : Duration(-1);
}

std::string dur_error(std::string_view text) {
  Result<Duration> r = parse_duration(text);
  EXPECT_FALSE(r.ok()) << text << " parsed as " << (r.ok() ? format_duration(*r) : "");
  if (r.ok()) return "";
  EXPECT_EQ(r.status().code(), ErrorCode::kValidation);
  return r.status().message();
}

TEST(Duration, EachUnitHasItsLength) {
  EXPECT_EQ(dur("30s"), seconds(30));
  EXPECT_EQ(dur("5m"), minutes(5));
  EXPECT_EQ(dur("3h"), hours(3));
  EXPECT_EQ(dur("7d"), hours(7 * 24));
  EXPECT_EQ(dur("250ms"), milliseconds(250));
  EXPECT_EQ(dur("0s"), Duration(0));
}

TEST(Duration, UnitsCombineBySum) {
  EXPECT_EQ(dur("1h30m"), minutes(90));
  EXPECT_EQ(dur("1d2h3m4s5ms"), hours(26) + minutes(3) + seconds(4) + milliseconds(5));
}

TEST(Duration, BareIntegerIsSeconds) {
  EXPECT_EQ(dur("90"), seconds(90));
  EXPECT_EQ(dur("0"), Duration(0));
}

TEST(Duration, MalformedTextIsAnErrorNamingTheProblem) {
  EXPECT_NE(dur_error("").find("empty"), std::string::npos);
  EXPECT_NE(dur_error("5x").find("unknown unit 'x'"), std::string::npos);
  EXPECT_NE(dur_error("h").find("expected a number"), std::string::npos);
  EXPECT_NE(dur_error("1h30").find("missing unit"), std::string::npos);
  EXPECT_NE(dur_error("5x").find("\"5x\""), std::string::npos);
  for (const char* text : {"-5s", "1.5h", " 5s", "5s ", "5 s", "5S", "s5", "5sec"}) dur_error(text);
}

TEST(Duration, OverflowIsAnError) {
  EXPECT_NE(dur_error("99999999999999999999s").find("too large"), std::string::npos);
  EXPECT_NE(dur_error("200000000d").find("too large"), std::string::npos);
  EXPECT_NE(dur_error("9223372036854775807ms").find("too large"), std::string::npos);
  EXPECT_NE(dur_error("106751991d106751991d").find("too large"), std::string::npos)
      << "the sum overflows though each part fits";
}

TEST(Duration, FormatIsShortestExactForm) {
  EXPECT_EQ(format_duration(seconds(5400)), "1h30m");
  EXPECT_EQ(format_duration(Duration(0)), "0s");
  EXPECT_EQ(format_duration(milliseconds(1500)), "1s500ms");
  EXPECT_EQ(format_duration(hours(24 * 7)), "7d");
  EXPECT_EQ(format_duration(seconds(-90)), "-1m30s");
}

TEST(Duration, FormatThenParseRoundTrips) {
  for (Duration d : {Duration(0), seconds(30), minutes(5), hours(3), minutes(90), hours(24 * 7),
                     Duration(milliseconds(250)), Duration(milliseconds(86'400'001)), Duration(1),
                     seconds(1) + Duration(7), Duration(std::numeric_limits<int64_t>::max())}) {
    Result<Duration> back = parse_duration(format_duration(d));
    ASSERT_TRUE(back.ok()) << format_duration(d) << ": " << back.status().to_string();
    EXPECT_EQ(*back, d) << format_duration(d);
  }
}

TEST(Duration, FormatOfMostNegativeDurationIsDefined) {
  EXPECT_EQ(format_duration(Duration(std::numeric_limits<int64_t>::min())),
            "-106751991d4h54s775ms808us");
}

TEST(Iso8601, FormatsUtcWithSecondPrecision) {
  EXPECT_EQ(format_iso8601(kSimEpoch), "2026-01-01T00:00:00Z");
  EXPECT_EQ(format_iso8601(kSimEpoch + hours(2)), "2026-01-01T02:00:00Z");
  EXPECT_EQ(format_iso8601(kSimEpoch + milliseconds(1999)), "2026-01-01T00:00:01Z")
      << "sub-second part is truncated";
  EXPECT_EQ(format_iso8601(from_micros(0)), "1970-01-01T00:00:00Z");
  EXPECT_EQ(format_iso8601(from_micros(-1'000'000)), "1969-12-31T23:59:59Z");
}

TEST(Iso8601, ParsesUtcTimestamps) {
  Result<Time> t = parse_iso8601("2026-01-01T02:00:00Z");
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  EXPECT_EQ(*t, kSimEpoch + hours(2));
  EXPECT_EQ(*parse_iso8601("2024-02-29T23:59:59Z"),
            Time(std::chrono::sys_days(std::chrono::year(2024) / 2 / 29)) + hours(24) - seconds(1));
}

TEST(Iso8601, FractionalSecondsAreMicrosecondsTruncated) {
  EXPECT_EQ(*parse_iso8601("2026-01-01T00:00:00.123Z"), kSimEpoch + milliseconds(123));
  EXPECT_EQ(*parse_iso8601("2026-01-01T00:00:00.000001Z"), kSimEpoch + Duration(1));
  EXPECT_EQ(*parse_iso8601("2026-01-01T00:00:00.1234567Z"), kSimEpoch + Duration(123456));
}

TEST(Iso8601, FormatThenParseRoundTrips) {
  for (Time t : {kSimEpoch, kSimEpoch + hours(12345) + seconds(17), from_micros(0)}) {
    Result<Time> back = parse_iso8601(format_iso8601(t));
    ASSERT_TRUE(back.ok()) << back.status().to_string();
    EXPECT_EQ(*back, t);
  }
}

TEST(Iso8601, MissingZIsAnError) {
  for (const char* text :
       {"2026-01-01T02:00:00", "2026-01-01T02:00:00+00:00", "2026-01-01T02:00:00.5"}) {
    Result<Time> t = parse_iso8601(text);
    ASSERT_FALSE(t.ok()) << text;
    EXPECT_EQ(t.status().code(), ErrorCode::kValidation);
  }
  EXPECT_NE(parse_iso8601("2026-01-01T02:00:00+01:00").status().message().find("end in 'Z'"),
            std::string::npos);
}

TEST(Iso8601, InvalidDateOrTimeIsAnError) {
  for (const char* text :
       {"2026-02-30T00:00:00Z", "2025-02-29T00:00:00Z", "2026-13-01T00:00:00Z",
        "2026-00-10T00:00:00Z", "2026-01-01T24:00:00Z", "2026-01-01T00:60:00Z"}) {
    Result<Time> t = parse_iso8601(text);
    ASSERT_FALSE(t.ok()) << text;
    EXPECT_NE(t.status().message().find("no such date"), std::string::npos) << text;
  }
}

TEST(Iso8601, MalformedLayoutIsAnError) {
  for (const char* text :
       {"", "2026", "2026-01-01", "2026-1-1T2:0:0Z", " 2026-01-01T02:00:00Z",
        "2026-01-01 02:00:00Z", "2026-01-01T02:00:00Z junk", "2026-01-01T02:00:00 Z",
        "2026-01-01T-1:00:00Z", "+2026-01-01T02:00:00Z", "2026-01-01T02:00:00.Z",
        "2026-01-01t02:00:00Z", "2026-01-01T02:00:00z"}) {
    Result<Time> t = parse_iso8601(text);
    EXPECT_FALSE(t.ok()) << '"' << text << "\" parsed as " << (t.ok() ? format_iso8601(*t) : "");
  }
}

}  // namespace
}  // namespace gf
