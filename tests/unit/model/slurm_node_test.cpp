// docs/slurm.md "Remediation through Slurm": the rules over what slurmctld says of a node.
#include "model/slurm_node.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gf {
namespace {

using ::testing::HasSubstr;

TEST(SlurmNodeRules, DrainReasonNamesTheRemediationAndTheFaultAfterOurPrefix) {
  EXPECT_EQ(slurm_drain_reason("rem-7", "xid:79"), "gpufleet:rem-7 xid:79");
  SlurmNodeReport r{"IDLE+DRAIN", slurm_drain_reason("rem-7", "xid:79"), {}};
  EXPECT_TRUE(r.ours());
  EXPECT_TRUE(r.drained());
  EXPECT_FALSE(SlurmNodeReport({"IDLE+DRAIN", "disk swap by ops", {}}).ours());
}

TEST(SlurmNodeRules, DownAndNotRespondingCountAsDown) {
  EXPECT_TRUE(SlurmNodeReport({"DOWN", "Not responding", {}}).down());
  EXPECT_TRUE(SlurmNodeReport({"IDLE+NOT_RESPONDING", "", {}}).down());
  EXPECT_FALSE(SlurmNodeReport({"MIXED", "", {"12"}}).down());
}

TEST(SlurmNodeRules, NotIdleUntilTheAgentReported) {
  EXPECT_THAT(slurm_not_idle(std::nullopt).value_or(""), HasSubstr("report"));
}

TEST(SlurmNodeRules, NotIdleUntilSlurmShowsTheDrainBecauseAJobMayStartMeanwhile) {
  EXPECT_THAT(slurm_not_idle(SlurmNodeReport{"IDLE", "", {}}).value_or(""),
              HasSubstr("drained (State=IDLE)"));
}

TEST(SlurmNodeRules, NotIdleWhileAnAllocationRemainsOnTheDrainedNode) {
  auto why = slurm_not_idle(SlurmNodeReport{"MIXED+DRAIN", "gpufleet:rem-1 xid:79", {"41", "42"}});
  ASSERT_TRUE(why);
  EXPECT_THAT(*why, HasSubstr("2 Slurm allocation(s)"));
  EXPECT_THAT(*why, HasSubstr("41, 42"));
}

TEST(SlurmNodeRules, NotIdleWhileSlurmSaysAllocatedEvenWithAnEmptyJobList) {
  EXPECT_THAT(
      slurm_not_idle(SlurmNodeReport{"MIXED+DRAIN", "gpufleet:rem-1 xid:79", {}}).value_or(""),
      HasSubstr("MIXED"));
  EXPECT_TRUE(slurm_not_idle(SlurmNodeReport{"COMPLETING+DRAIN", "gpufleet:rem-1 x", {}}));
}

TEST(SlurmNodeRules, IdleOnceDrainedByAnyoneOrDownWithNoJob) {
  EXPECT_FALSE(slurm_not_idle(SlurmNodeReport{"IDLE+DRAIN", "gpufleet:rem-1 xid:79", {}}));
  EXPECT_FALSE(slurm_not_idle(SlurmNodeReport{"IDLE+DRAIN", "disk swap by ops", {}}));
  EXPECT_FALSE(slurm_not_idle(SlurmNodeReport{"DOWN", "Not responding", {}}));
}

// docs/slurm.md "Placement follows Slurm": a node Slurm starts nothing on is not schedulable,
// whoever drained it.
TEST(SlurmNodeRules, UnschedulableWhenDrainedByAnyoneWithTheirReason) {
  EXPECT_EQ(slurm_unschedulable(SlurmNodeReport{"IDLE+DRAIN", "ops: fan replaced", {}}),
            "DRAIN (ops: fan replaced)");
  EXPECT_EQ(slurm_unschedulable(SlurmNodeReport{"MIXED+DRAIN", "gpufleet:rem-1 xid:79", {"4"}}),
            "DRAIN (gpufleet:rem-1 xid:79)");
}

TEST(SlurmNodeRules, UnschedulableWhenDownFailedOrNotResponding) {
  EXPECT_TRUE(slurm_unschedulable(SlurmNodeReport{"DOWN", "Not responding", {}}));
  EXPECT_TRUE(slurm_unschedulable(SlurmNodeReport{"IDLE+NOT_RESPONDING", "", {}}));
  EXPECT_TRUE(slurm_unschedulable(SlurmNodeReport{"IDLE+FAIL", "bad gpu", {}}));
  EXPECT_TRUE(slurm_unschedulable(SlurmNodeReport{"UNKNOWN", "", {}}));
}

TEST(SlurmNodeRules, SchedulableWhenIdleAllocatedOrMixed) {
  for (const char* s : {"IDLE", "ALLOCATED", "MIXED", "COMPLETING"})
    EXPECT_FALSE(slurm_unschedulable(SlurmNodeReport{s, "", {}})) << s;
}

}  // namespace
}  // namespace gf
