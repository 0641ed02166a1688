#include "cli/command_support.h"
#include "cli/output.h"

#include <gtest/gtest.h>

#include <sstream>

namespace gf {
namespace {

TEST(Table, EmptyTablePrintsNoResourcesFoundOnStderrAndNothingOnStdout) {
  std::ostringstream out, err;
  Table({"NAME", "STATUS"}).print(out, err);
  EXPECT_EQ(out.str(), "");
  EXPECT_EQ(err.str(), "No resources found.\n");
  Table t({"NAME", "STATUS"});
  t.add_row({"a", "Running"});
  t.print(out, err);
  EXPECT_EQ(out.str(), "NAME   STATUS\na      Running\n");
}

TEST(CommandSupport, DollarsAreRoundedToTheCentAndParsedFromWireMoney) {
  EXPECT_EQ(format_dollars(0), "$0.00");
  EXPECT_EQ(format_dollars(98'320'000), "$98.32");
  EXPECT_EQ(format_dollars(4'999), "$0.00");
  EXPECT_EQ(format_dollars(5'000), "$0.01");
  EXPECT_EQ(format_dollars(-1'234'567), "-$1.23");
  EXPECT_EQ(parse_micros("98.320000"), 98'320'000);
  EXPECT_EQ(parse_micros("12"), 12'000'000);
  EXPECT_EQ(parse_micros("0.5"), 500'000);
  EXPECT_EQ(parse_micros("-1.000001"), -1'000'001);
  EXPECT_EQ(parse_micros("abc"), 0);
}

TEST(CommandSupport, QueryStringsSkipEmptyValuesAndEncode) {
  EXPECT_EQ(QueryString().str(), "");
  EXPECT_EQ(QueryString().add("a", "").str(), "");
  EXPECT_EQ(QueryString().add("a", "1").add("b", "").add("c", "x y:z").str(), "?a=1&c=x%20y%3Az");
  EXPECT_EQ(cluster_path("my cluster"), "/v1/clusters/my%20cluster");
}

TEST(CommandSupport, FieldsReadTolerantly) {
  const Json j = {{"s", "x"}, {"n", 3}, {"b", true}, {"a", Json::array({1})}};
  EXPECT_EQ(text_field(j, "s"), "x");
  EXPECT_EQ(text_field(j, "n"), "3");
  EXPECT_EQ(text_field(j, "b"), "true");
  EXPECT_EQ(text_field(j, "missing"), "");
  EXPECT_EQ(text_field(Json::array(), "s"), "");
  EXPECT_EQ(int_field(j, "n"), 3);
  EXPECT_EQ(int_field(j, "s"), 0);
  EXPECT_EQ(array_field(j, "a").size(), 1u);
  EXPECT_TRUE(array_field(j, "s").is_array());
}

TEST(CommandSupport, FieldBlocksAlignAndLeaveOutEmptyValues) {
  std::ostringstream out;
  print_fields(out, {{"Name", "c1"}, {"FailureMessage", ""}, {"Orchestrator", "Slurm"}});
  EXPECT_EQ(out.str(), "Name:         c1\nOrchestrator: Slurm\n");
}

TEST(CommandSupport, TimeFlagsTakeADurationAgoOrATime) {
  EXPECT_TRUE(check_time_flag("--since", "1h").ok());
  EXPECT_TRUE(check_time_flag("--since", "2026-01-01T02:00:00Z").ok());
  Status bad = check_time_flag("--from", "yesterday");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("--from: expected a duration"), std::string::npos);
}

// Issue regression: MAX-JOBS showed 10000000000 (the example's "no limit").
TEST(CommandSupport, LargeRoundCountsAreShownInScientificForm) {
  EXPECT_EQ(compact_count("10000000000"), "1e10");
  EXPECT_EQ(compact_count("1500000"), "15e5");
  EXPECT_EQ(compact_count("1234567"), "1234567");  // not round: exact
  EXPECT_EQ(compact_count("999999"), "999999");
  EXPECT_EQ(compact_count("1"), "1");
  EXPECT_EQ(compact_count(""), "");
  EXPECT_EQ(compact_count("x"), "x");
}

TEST(CommandSupport, AgesCountFromTheGivenNowAsKubectlShowsThem) {
  const Time created = kSimEpoch;
  EXPECT_EQ(format_age(created, created + seconds(45)), "45s");
  EXPECT_EQ(format_age(created, created + minutes(12)), "12m");
  EXPECT_EQ(format_age(created, created + hours(5)), "5h");
  EXPECT_EQ(format_age(created, created + hours(72)), "3d");
  EXPECT_EQ(format_age(created, created - hours(1)), "0s");  // never negative
}

TEST(CommandSupport, MissingInputFilesAreNamed) {
  auto r = read_input_file("/no/such/dir/cluster.json");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("/no/such/dir/cluster.json"), std::string::npos);
  EXPECT_EQ(content_type_for("c.yaml"), "application/yaml");
  EXPECT_EQ(content_type_for("c.json"), "application/json");
}

}  // namespace
}  // namespace gf
