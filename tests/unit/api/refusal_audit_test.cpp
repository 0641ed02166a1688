// Refused calls audited by aggregate (docs/security.md "What is audited"): the rules of
// RefusalAudit, one test each.
#include "api/refusal_audit.h"

#include <gtest/gtest.h>

namespace gf {
namespace {

const Time t0 = from_micros(int64_t{1'800'000'000} * 1'000'000);  // a minute's start

Json call(const std::string& path) { return Json{{"Path", path}, {"Code", 401}}; }

TEST(RefusalAudit, TheFirstRefusalOfASourceAndReasonInAMinuteIsRecordedAsItself) {
  RefusalAudit r;
  EXPECT_EQ(r.refused("peer:10.0.0.7", 401, "UnauthorizedException", call("/a"), t0),
            RefusalAudit::Verdict::kRecordNow);
  EXPECT_EQ(r.refused("peer:10.0.0.8", 401, "UnauthorizedException", call("/a"), t0),
            RefusalAudit::Verdict::kRecordNow);
  EXPECT_EQ(r.refused("peer:10.0.0.7", 403, "AccessDeniedException", call("/a"), t0),
            RefusalAudit::Verdict::kRecordNow);
  EXPECT_TRUE(r.take_ended(t0 + minutes(1)).empty()) << "nothing was counted";
}

TEST(RefusalAudit, TheRestOfTheMinuteAreCountedIntoOneRecordWrittenWhenTheMinuteEnds) {
  RefusalAudit r;
  ASSERT_EQ(r.refused("peer:10.0.0.7", 401, "UnauthorizedException", call("/a"), t0),
            RefusalAudit::Verdict::kRecordNow);
  EXPECT_EQ(r.refused("peer:10.0.0.7", 401, "UnauthorizedException", call("/b"), t0 + seconds(1)),
            RefusalAudit::Verdict::kCountedDue);
  for (int i = 0; i < 3726; ++i) {
    EXPECT_EQ(r.refused("peer:10.0.0.7", 401, "UnauthorizedException", call("/c"), t0 + seconds(2)),
              RefusalAudit::Verdict::kCounted);
  }
  EXPECT_EQ(RefusalAudit::window_end(t0 + seconds(2)), t0 + minutes(1));
  EXPECT_TRUE(r.take_ended(t0 + seconds(59)).empty()) << "the minute has not ended";
  const std::vector<Json> records = r.take_ended(t0 + minutes(1));
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0]["Count"], 3727);
  EXPECT_EQ(records[0]["Path"], "/b");  // the first call counted
  EXPECT_EQ(records[0]["Since"], format_iso8601(t0 + seconds(1)));
  EXPECT_TRUE(r.take_ended(t0 + minutes(2)).empty()) << "taken once";
}

TEST(RefusalAudit, ANewMinuteStartsAgainWithARecordOfItsOwn) {
  RefusalAudit r;
  (void)r.refused("id:alice", 403, "AccessDeniedException", call("/a"), t0);
  EXPECT_EQ(r.refused("id:alice", 403, "AccessDeniedException", call("/a"), t0 + minutes(1)),
            RefusalAudit::Verdict::kRecordNow);
}

TEST(RefusalAudit, SourcesBeyondTheBoundAreCountedTogetherUnderAStar) {
  RefusalAudit r;
  for (size_t i = 0; i < RefusalAudit::kMaxSources; ++i) {
    ASSERT_EQ(r.refused("peer:" + std::to_string(i), 401, "U", call("/a"), t0),
              RefusalAudit::Verdict::kRecordNow);
  }
  EXPECT_EQ(r.refused("peer:new-1", 401, "U", call("/a"), t0), RefusalAudit::Verdict::kCountedDue);
  EXPECT_EQ(r.refused("peer:new-2", 401, "U", call("/a"), t0), RefusalAudit::Verdict::kCounted);
  const std::vector<Json> records = r.take_ended(t0 + minutes(1));
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0]["Count"], 2);
  EXPECT_EQ(records[0]["Source"], "*");
}

}  // namespace
}  // namespace gf
