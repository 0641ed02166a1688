// The project's one hash (core/hash.h), its one home for ids (core/ids.h) and GF_CHECK_OK.
#include <gtest/gtest.h>

#include <set>

#include "core/hash.h"
#include "core/ids.h"
#include "core/metrics.h"
#include "core/result.h"

namespace gf {
namespace {

// The published FNV-1a 64 test vectors: "" is the offset basis itself, "a" and "foobar" are
// from the reference implementation's test suite.
TEST(Fnv1a, MatchesThePublishedTestVectors) {
  EXPECT_EQ(fnv1a(""), 14695981039346656037ull);
  EXPECT_EQ(fnv1a("a"), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(fnv1a("foobar"), 0x85944171f73967e8ull);
  // Continuing from a partial hash is hashing the concatenation.
  EXPECT_EQ(fnv1a("bar", fnv1a("foo")), fnv1a("foobar"));
  // Eight bytes of a word, least significant first.
  EXPECT_EQ(fnv1a_u64(0x61), fnv1a(std::string_view("a\0\0\0\0\0\0\0", 8)));
}

TEST(Ids, AreDeterministicShapedAndDistinctPerCounter) {
  std::set<std::string> jobs, instances, clusters;
  for (int64_t n = 1; n <= 1000; ++n) {
    const std::string job = job_id(n, "train");
    ASSERT_EQ(job.size(), 36u) << job;
    EXPECT_EQ(job[14], '4') << job;  // UUID version 4
    EXPECT_EQ(job[19], '8') << job;  // variant 1
    EXPECT_EQ(job, job_id(n, "train"));
    jobs.insert(job);
    const std::string inst = instance_id(7, n);
    ASSERT_EQ(inst.size(), 19u);
    EXPECT_EQ(inst.substr(0, 2), "i-");
    instances.insert(inst);
    const std::string cluster = cluster_id(7, n);
    ASSERT_EQ(cluster.size(), 10u);
    EXPECT_EQ(cluster.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789"), std::string::npos);
    clusters.insert(cluster);
  }
  EXPECT_EQ(jobs.size(), 1000u);
  EXPECT_EQ(instances.size(), 1000u);
  EXPECT_EQ(clusters.size(), 1000u);
  EXPECT_NE(job_id(1, "a"), job_id(1, "b"));
  EXPECT_NE(instance_id(7, 1), instance_id(8, 1));
  EXPECT_EQ(numbered_id("rem", 12), "rem-000012");
  EXPECT_EQ(numbered_id("alert", 1234567), "alert-1234567");
  EXPECT_EQ(event_id(42, 0), "ev-000000000042-0");
  EXPECT_EQ(make_arn(ArnConfig{}, "service-job", "x"),
            "arn:gpufleet:local:000000000000:service-job/x");
}

// Release builds log and count a failed internal check and go on; debug builds abort, so a
// test that reaches one fails.
TEST(CheckOk, AFailedCheckAbortsInDebugAndIsCountedInRelease) {
  GF_CHECK_OK(ok_status());
#ifdef NDEBUG
  const uint64_t before = check_ok_failures();
  GF_CHECK_OK(internal_error("broken invariant"));
  EXPECT_EQ(check_ok_failures(), before + 1);
  Metrics metrics;
  EXPECT_NE(
      metrics.render().find("gpufleet_internal_check_failures_total " + std::to_string(before + 1)),
      std::string::npos);
#else
  EXPECT_DEATH(GF_CHECK_OK(internal_error("broken invariant")), "internal check failed");
#endif
}

}  // namespace
}  // namespace gf
