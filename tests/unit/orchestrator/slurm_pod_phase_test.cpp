// docs/slurm.md "States": what a pod of a gang shows, from what slurmctld holds of its
// allocation. One test per row of the table there, named by its row.
#include <gtest/gtest.h>

#include "orchestrator/slurm/slurm_state.h"

namespace gf::slurm {
namespace {

AllocationView with_job(std::string state, std::string reason = "None", bool started = false,
                        std::optional<int64_t> exit_code = std::nullopt) {
  AllocationView a;
  a.submitted = true;
  JobState j;
  j.id = 7;
  j.name = "gf-job-1-1";
  j.state = std::move(state);
  j.reason = std::move(reason);
  j.exit_code = exit_code;
  a.job = j;
  a.step_started = started;
  return a;
}

TEST(SlurmPodPhase, Row01_NotSubmittedYetIsPending) {
  AllocationView a;
  a.submitted = false;
  const PodPhase p = slurm_pod_phase(a);
  EXPECT_EQ(p.phase, "Pending");
  EXPECT_NE(p.message.find("submitted"), std::string::npos) << p.message;
}

TEST(SlurmPodPhase, Row02_SlurmctldNotAnsweringIsUnknownNeverRunning) {
  AllocationView a = with_job("RUNNING", "None", true);
  a.answered = false;
  a.error = "squeue: timed out";
  const PodPhase p = slurm_pod_phase(a);
  EXPECT_EQ(p.phase, "Unknown");
  EXPECT_NE(p.message.find("squeue: timed out"), std::string::npos) << p.message;
}

TEST(SlurmPodPhase, Row03_AllocationNotListedIsUnknown) {
  AllocationView a;
  a.submitted = true;
  EXPECT_EQ(slurm_pod_phase(a).phase, "Unknown");
}

TEST(SlurmPodPhase, Row04_PendingShowsSlurmsReason) {
  const PodPhase p = slurm_pod_phase(with_job("PENDING", "Resources"));
  EXPECT_EQ(p.phase, "Pending");
  EXPECT_EQ(p.message, "Slurm job 7 PENDING (Resources)");
  EXPECT_FALSE(p.cancel);
}

TEST(SlurmPodPhase, Row05_PendingOnADrainedNodeShowsReqNodeNotAvail) {
  const PodPhase p =
      slurm_pod_phase(with_job("PENDING", "ReqNodeNotAvail, UnavailableNodes:worker-gpu-a-1"));
  EXPECT_EQ(p.phase, "Pending");
  EXPECT_NE(p.message.find("UnavailableNodes:worker-gpu-a-1"), std::string::npos);
}

TEST(SlurmPodPhase, Row06_LaunchFailedRequeuedHeldIsFailedWithSlurmsWordsAndCancelled) {
  const PodPhase p = slurm_pod_phase(with_job("PENDING", "launch failed requeued held"));
  EXPECT_EQ(p.phase, "Failed");
  EXPECT_EQ(p.exit_code, kLaunchFailedExitCode);
  EXPECT_EQ(p.message, "Slurm job 7 PENDING (launch failed requeued held)");
  EXPECT_TRUE(p.cancel);
}

TEST(SlurmPodPhase, Row07_HeldByAPersonStaysPendingWithTheirReason) {
  const PodPhase p = slurm_pod_phase(with_job("PENDING", "JobHeldAdmin"));
  EXPECT_EQ(p.phase, "Pending");
  EXPECT_EQ(p.message, "Slurm job 7 PENDING (JobHeldAdmin)");
  EXPECT_FALSE(p.cancel);
  EXPECT_EQ(slurm_pod_phase(with_job("PENDING", "JobHeldUser")).phase, "Pending");
}

TEST(SlurmPodPhase, Row07b_AfterTheGangCancelledAFailedLaunchItStaysThatFailure) {
  const std::string said = "Slurm job 7 PENDING (launch failed requeued held)";
  AllocationView a = with_job("CANCELLED", "None", false, 0);
  a.launch_failed = said;
  PodPhase p = slurm_pod_phase(a);
  EXPECT_EQ(p.phase, "Failed");
  EXPECT_EQ(p.exit_code, kLaunchFailedExitCode);
  EXPECT_EQ(p.message, said);
  EXPECT_FALSE(p.cancel);
  a.job.reset();  // Slurm forgot it
  EXPECT_EQ(slurm_pod_phase(a).exit_code, kLaunchFailedExitCode);
}

TEST(SlurmPodPhase, Row08_ConfiguringOrRequeuedIsPending) {
  EXPECT_EQ(slurm_pod_phase(with_job("CONFIGURING")).phase, "Pending");
  EXPECT_EQ(slurm_pod_phase(with_job("REQUEUED")).phase, "Pending");
}

TEST(SlurmPodPhase, Row09_RunningAllocationWhoseStepHasNotStartedIsPending) {
  const PodPhase p = slurm_pod_phase(with_job("RUNNING", "None", false));
  EXPECT_EQ(p.phase, "Pending");
  EXPECT_NE(p.message.find("step has not started"), std::string::npos) << p.message;
}

TEST(SlurmPodPhase, Row10_RunningAllocationWithItsStepStartedIsRunning) {
  const PodPhase p = slurm_pod_phase(with_job("RUNNING", "None", true));
  EXPECT_EQ(p.phase, "Running");
  EXPECT_EQ(p.message, "Slurm job 7 RUNNING");
}

TEST(SlurmPodPhase, Row11_CompletingAfterItsStepStartedIsStillRunning) {
  EXPECT_EQ(slurm_pod_phase(with_job("COMPLETING", "None", true)).phase, "Running");
}

TEST(SlurmPodPhase, Row12_SuspendedIsPending) {
  EXPECT_EQ(slurm_pod_phase(with_job("SUSPENDED", "None", true)).phase, "Pending");
}

TEST(SlurmPodPhase, Row13_CompletedIsSucceeded) {
  const PodPhase p = slurm_pod_phase(with_job("COMPLETED", "None", true, 0));
  EXPECT_EQ(p.phase, "Succeeded");
  EXPECT_EQ(p.exit_code, 0);
}

TEST(SlurmPodPhase, Row14_FailedCarriesItsExitCode) {
  const PodPhase p = slurm_pod_phase(with_job("FAILED", "NonZeroExitCode", true, 3));
  EXPECT_EQ(p.phase, "Failed");
  EXPECT_EQ(p.exit_code, 3);
  EXPECT_EQ(p.message, "Slurm job 7 FAILED (NonZeroExitCode)");
}

TEST(SlurmPodPhase, Row15_OtherEndsAreFailedNeverWithExitCodeZero) {
  for (const char* end : {"CANCELLED", "TIMEOUT", "NODE_FAIL", "PREEMPTED", "OUT_OF_MEMORY",
                          "BOOT_FAIL", "DEADLINE"}) {
    const PodPhase p = slurm_pod_phase(with_job(end, "None", true, 0));
    EXPECT_EQ(p.phase, "Failed") << end;
    EXPECT_NE(p.exit_code, 0) << end;
  }
}

}  // namespace
}  // namespace gf::slurm
