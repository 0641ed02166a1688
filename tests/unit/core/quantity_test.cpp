#include "core/quantity.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

namespace gf {
namespace {

using nlohmann::json;

constexpr int64_t kGi = int64_t{1} << 30;
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

int64_t unit(std::string_view text) {
  Result<int64_t> r = parse_quantity(text, QuantityScale::kUnit);
  EXPECT_TRUE(r.ok()) << text << ": " << r.status().to_string();
  return r.ok() ? *r : -1;
}

int64_t milli(std::string_view text) {
  Result<int64_t> r = parse_quantity(text, QuantityScale::kMilli);
  EXPECT_TRUE(r.ok()) << text << ": " << r.status().to_string();
  return r.ok() ? *r : -1;
}

// The error message of a quantity that must be rejected; "" (and a test failure) if accepted.
std::string unit_error(std::string_view text) {
  Result<int64_t> r = parse_quantity(text, QuantityScale::kUnit);
  EXPECT_FALSE(r.ok()) << text << " parsed as " << (r.ok() ? *r : 0);
  if (r.ok()) return "";
  EXPECT_EQ(r.status().code(), ErrorCode::kValidation);
  return r.status().message();
}

// Every quantity written in examples/ and the seed files, in the scale its resource uses.
TEST(Quantity, SeedAndExampleCpuValuesAreMillicores) {
  EXPECT_EQ(milli("10m"), 10);
  EXPECT_EQ(milli("3"), 3000);
  EXPECT_EQ(milli("2"), 2000);
  EXPECT_EQ(milli("999900"), int64_t{999'900'000});
  EXPECT_EQ(milli("10000"), 10'000'000);
}

TEST(Quantity, SeedAndExampleMemoryValuesAreBytes) {
  EXPECT_EQ(unit("2Gi"), 2 * kGi);
  EXPECT_EQ(unit("400000Gi"), 400000 * kGi);
  EXPECT_EQ(unit("10000Gi"), 10000 * kGi);
}

TEST(Quantity, SeedAndExampleCountsAreWholeUnits) {
  EXPECT_EQ(unit("10000000000"), int64_t{10'000'000'000});  // kube-queue/max-jobs, above 2^32
  EXPECT_EQ(unit("100000"), 100000);                        // nvidia.com/gpu
  EXPECT_EQ(unit("10000"), 10000);
  EXPECT_EQ(unit("1"), 1);
}

TEST(Quantity, CpuMilliSuffixIsThousandthsOfACore) {
  EXPECT_EQ(milli("500m"), 500);
  EXPECT_EQ(milli("1m"), 1);
  EXPECT_EQ(milli("0m"), 0);
}

TEST(Quantity, CpuDecimalIsConvertedExactlyToMillicores) {
  EXPECT_EQ(milli("0.5"), 500);
  EXPECT_EQ(milli("0.1"), 100);
  EXPECT_EQ(milli("1.25"), 1250);
  EXPECT_EQ(milli(".5"), 500);
  EXPECT_EQ(milli("5."), 5000);
}

TEST(Quantity, DecimalExponentMultipliesByPowerOfTen) {
  EXPECT_EQ(unit("1e3"), 1000);
  EXPECT_EQ(unit("1E3"), 1000);
  EXPECT_EQ(unit("1e+3"), 1000);
  EXPECT_EQ(unit("15e-1"), 2);  // 1.5 rounds up
  EXPECT_EQ(unit("1.5e3"), 1500);
  EXPECT_EQ(milli("1e3"), 1'000'000);
  EXPECT_EQ(milli("1e-3"), 1);
}

TEST(Quantity, MemoryGiSuffixIsPowerOfTwo) {
  EXPECT_EQ(unit("1Ki"), 1024);
  EXPECT_EQ(unit("1Mi"), 1024 * 1024);
  EXPECT_EQ(unit("1Gi"), kGi);
  EXPECT_EQ(unit("1Ti"), kGi * 1024);
  EXPECT_EQ(unit("1Pi"), kGi * 1024 * 1024);
  EXPECT_EQ(unit("1Ei"), kGi * kGi);
}

TEST(Quantity, DecimalSiSuffixesArePowersOfThousand) {
  EXPECT_EQ(unit("1k"), 1000);
  EXPECT_EQ(unit("1M"), 1'000'000);
  EXPECT_EQ(unit("1G"), 1'000'000'000);
  EXPECT_EQ(unit("1T"), int64_t{1'000'000'000'000});
  EXPECT_EQ(unit("1P"), int64_t{1'000'000'000'000'000});
  EXPECT_EQ(unit("1E"), int64_t{1'000'000'000'000'000'000});
}

TEST(Quantity, FractionalBinaryQuantityIsExact) {
  EXPECT_EQ(unit("1.5Gi"), 1610612736);
  EXPECT_EQ(unit("0.5Ki"), 512);
  EXPECT_EQ(unit("7.99Ei"), int64_t{9'211'842'821'808'707'339});  // ceil(...338.24), fits
}

TEST(Quantity, NonWholeResultRoundsUpToNextUnit) {
  EXPECT_EQ(milli("1n"), 1);
  EXPECT_EQ(milli("1u"), 1);
  EXPECT_EQ(milli("1000u"), 1);
  EXPECT_EQ(milli("1001u"), 2);
  EXPECT_EQ(milli("2000000u"), 2000);  // exact: no rounding
  EXPECT_EQ(milli("0.0001"), 1);
  EXPECT_EQ(unit("0.5"), 1);
  EXPECT_EQ(unit("1500m"), 2);
  EXPECT_EQ(unit("0.1Ki"), 103);  // 102.4 bytes
  EXPECT_EQ(unit("1e-100"), 1);
}

TEST(Quantity, ZeroIsZeroInEveryForm) {
  EXPECT_EQ(unit("0"), 0);
  EXPECT_EQ(unit("0Gi"), 0);
  EXPECT_EQ(unit("0.000"), 0);
  EXPECT_EQ(unit("0e99"), 0);
  EXPECT_EQ(unit("-0"), 0);
  EXPECT_EQ(milli("0n"), 0);
}

TEST(Quantity, LeadingPlusAndLeadingZerosAreAccepted) {
  EXPECT_EQ(unit("+5"), 5);
  EXPECT_EQ(unit("007"), 7);
  EXPECT_EQ(unit("+0.5Ki"), 512);
}

TEST(Quantity, LongMantissaIsExact) {
  EXPECT_EQ(unit("1.000000000000000000000000000000000000001"), 2);
  EXPECT_EQ(unit("9223372036854775807.000000000000000000000000"), kInt64Max);
  EXPECT_EQ(unit("0000000000000000000000000000000000000042"), 42);
}

TEST(Quantity, LargestValueFitsAndOneMoreOverflows) {
  EXPECT_EQ(unit("9223372036854775807"), kInt64Max);
  EXPECT_NE(unit_error("9223372036854775808").find("too large"), std::string::npos);
  EXPECT_NE(unit_error("9223372036854775807.5").find("too large"), std::string::npos) << "rounded";
  EXPECT_EQ(milli("9223372036854775807m"), kInt64Max);
  EXPECT_FALSE(parse_quantity("9223372036854776", QuantityScale::kMilli).ok());
}

TEST(Quantity, OverflowIsAnErrorNamingTheText) {
  for (const char* text :
       {"10000000Ei", "1e30", "8Ei", "1e1000000000000", "99999999999999999999", "10E"}) {
    std::string msg = unit_error(text);
    EXPECT_NE(msg.find("\"" + std::string(text) + "\""), std::string::npos) << msg;
    EXPECT_NE(msg.find("too large"), std::string::npos) << msg;
  }
}

TEST(Quantity, NegativeIsAnError) {
  for (const char* text : {"-1", "-500m", "-1Gi", "-1e30", "-0.001"}) {
    std::string msg = unit_error(text);
    EXPECT_NE(msg.find("must not be negative"), std::string::npos) << msg;
  }
}

TEST(Quantity, GarbageIsAnErrorNamingWhatIsWrong) {
  EXPECT_EQ(unit_error("5Gb"),
            "invalid quantity \"5Gb\": unknown suffix 'Gb' (use Ki Mi Gi Ti Pi "
            "Ei, n u m k M G T P E, or an exponent like 1e3)");
  EXPECT_NE(unit_error("").find("empty"), std::string::npos);
  EXPECT_NE(unit_error("abc").find("expected a number"), std::string::npos);
  EXPECT_NE(unit_error("--1").find("expected a number"), std::string::npos);
  EXPECT_NE(unit_error("1.2.3").find("unknown suffix '.3'"), std::string::npos);
  EXPECT_NE(unit_error("1e").find("unknown suffix 'e'"), std::string::npos);
  EXPECT_NE(unit_error("1e+").find("malformed exponent"), std::string::npos);
  EXPECT_NE(unit_error("1e3.5").find("malformed exponent"), std::string::npos);
  for (const char* text : {".", "+", "-", "Gi", " 1", "1 ", "1K", "1gi", "1KiB", "1mi", "0x10",
                           "1,000", "1_000", "1Gi1", "inf", "NaN", "1ee3", "1e3Gi"}) {
    unit_error(text);
  }
}

TEST(Quantity, FormatQuantityReadsBackToTheSameValue) {
  EXPECT_EQ(format_quantity(500, QuantityScale::kMilli), "500m");
  EXPECT_EQ(format_quantity(2000, QuantityScale::kMilli), "2");
  EXPECT_EQ(format_quantity(0, QuantityScale::kMilli), "0");
  EXPECT_EQ(format_quantity(2 * kGi, QuantityScale::kUnit), "2147483648");
  for (int64_t v :
       {int64_t{0}, int64_t{1}, int64_t{999}, int64_t{1000}, int64_t{1001}, kInt64Max}) {
    for (QuantityScale s : {QuantityScale::kUnit, QuantityScale::kMilli}) {
      Result<int64_t> back = parse_quantity(format_quantity(v, s), s);
      ASSERT_TRUE(back.ok()) << back.status().to_string();
      EXPECT_EQ(*back, v);
    }
  }
}

TEST(QuantityJson, StringsParseLikeText) {
  EXPECT_EQ(*parse_quantity_json(json("2Gi"), QuantityScale::kUnit), 2 * kGi);
  EXPECT_EQ(*parse_quantity_json(json("10m"), QuantityScale::kMilli), 10);
  EXPECT_FALSE(parse_quantity_json(json("5Gb"), QuantityScale::kUnit).ok());
}

TEST(QuantityJson, IntegersAreWholeUnitsOfTheResource) {
  EXPECT_EQ(*parse_quantity_json(json(999900), QuantityScale::kMilli), 999'900'000);
  EXPECT_EQ(*parse_quantity_json(json(8), QuantityScale::kUnit), 8);
  EXPECT_EQ(*parse_quantity_json(json(int64_t{10'000'000'000}), QuantityScale::kUnit),
            10'000'000'000);
  EXPECT_EQ(*parse_quantity_json(json::parse("10000000000"), QuantityScale::kUnit), 10'000'000'000);
  EXPECT_EQ(*parse_quantity_json(json(kInt64Max), QuantityScale::kUnit), kInt64Max);
}

TEST(QuantityJson, IntegerOverflowAndNegativeAreErrors) {
  Result<int64_t> big = parse_quantity_json(json(uint64_t{1} << 63), QuantityScale::kUnit);
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.status().message(),
            "invalid quantity 9223372036854775808: too large (at most 9223372036854775807)");
  EXPECT_FALSE(parse_quantity_json(json(kInt64Max / 1000 + 1), QuantityScale::kMilli).ok());
  Result<int64_t> neg = parse_quantity_json(json(-1), QuantityScale::kUnit);
  ASSERT_FALSE(neg.ok());
  EXPECT_NE(neg.status().message().find("must not be negative"), std::string::npos);
}

TEST(QuantityJson, FloatsInMilliScaleAreExactDecimals) {
  EXPECT_EQ(*parse_quantity_json(json(0.5), QuantityScale::kMilli), 500);
  EXPECT_EQ(*parse_quantity_json(json(0.1), QuantityScale::kMilli), 100);  // not 100.000000001
  EXPECT_EQ(*parse_quantity_json(json(2.675), QuantityScale::kMilli), 2675);
  EXPECT_EQ(*parse_quantity_json(json(0.0005), QuantityScale::kMilli), 1);  // rounded up
  EXPECT_EQ(*parse_quantity_json(json::parse("1.5e3"), QuantityScale::kMilli), 1'500'000);
}

TEST(QuantityJson, FloatsInUnitScaleRoundUpLikeTheSameText) {
  EXPECT_EQ(*parse_quantity_json(json(2.0), QuantityScale::kUnit), 2);
  EXPECT_EQ(*parse_quantity_json(json(1e3), QuantityScale::kUnit), 1000);
  EXPECT_EQ(*parse_quantity_json(json(1.5), QuantityScale::kUnit),
            *parse_quantity("1.5", QuantityScale::kUnit));
  EXPECT_EQ(*parse_quantity_json(json(1.5), QuantityScale::kUnit), 2);
  EXPECT_FALSE(parse_quantity_json(json(1e30), QuantityScale::kUnit).ok());
  EXPECT_FALSE(parse_quantity_json(json(-2.0), QuantityScale::kUnit).ok());
  EXPECT_FALSE(
      parse_quantity_json(json(std::numeric_limits<double>::infinity()), QuantityScale::kUnit)
          .ok());
}

TEST(QuantityJson, NonNumericJsonIsAnError) {
  for (const json& v : {json(nullptr), json(true), json::array({1}), json::object()}) {
    Result<int64_t> r = parse_quantity_json(v, QuantityScale::kUnit);
    ASSERT_FALSE(r.ok()) << v.dump();
    EXPECT_EQ(r.status().code(), ErrorCode::kValidation);
    EXPECT_NE(r.status().message().find(v.type_name()), std::string::npos);
  }
}

}  // namespace
}  // namespace gf
