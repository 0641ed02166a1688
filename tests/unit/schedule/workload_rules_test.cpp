// The rules the workload controller applies by time and on interrupts (docs/dispatch.md):
// when a workload is due for failover, copy purge, activeDeadlineSeconds or
// ttlSecondsAfterFinished (state/workload_state.h), and when an interrupt may restart it.
#include <gtest/gtest.h>

#include "schedule/workload_controller.h"
#include "state/workload_state.h"

namespace gf {
namespace {

const Time t0 = kSimEpoch;

Job workload(std::optional<int64_t> toleration = 30) {
  Job j;
  j.id = "j";
  j.name = "train";
  j.kind = "PyTorchJob";
  j.admitted = true;
  j.status = JobStatus::kRunnable;
  Dispatch d;
  d.toleration_seconds = toleration;
  d.cluster = "a";
  d.not_running_since = t0;
  d.restart_policy = {{"master", "OnFailure"}, {"worker", "OnFailure"}};
  j.dispatch = d;
  return j;
}

TEST(WorkloadDeadline, Failover_DueTolerationSecondsAfterPodsStoppedRunningOnItsCluster) {
  EXPECT_EQ(workload_deadline(workload()), t0 + seconds(30));
  EXPECT_EQ(workload_deadline(workload(0)), t0);  // tolerationSeconds 0: at once
}

TEST(WorkloadDeadline, Failover_NoneWithoutFailoverPolicyWhileRunningUnboundOrSuspended) {
  EXPECT_EQ(workload_deadline(workload(std::nullopt)), std::nullopt);
  Job running = workload();
  running.status = JobStatus::kRunning;
  EXPECT_EQ(workload_deadline(running), std::nullopt);
  Job unbound = workload();
  unbound.dispatch->cluster.clear();  // failed over, waiting to be placed: nothing to leave
  EXPECT_EQ(workload_deadline(unbound), std::nullopt);
  Job suspended = workload();
  suspended.dispatch->suspended = true;
  EXPECT_EQ(workload_deadline(suspended), std::nullopt);
}

TEST(WorkloadDeadline, GracefullyCopy_PurgedAtGracePeriodOrAsSoonAsTheNewPlacementRuns) {
  Job j = workload(std::nullopt);
  j.dispatch->left.push_back(MemberCopy{"old", "Restarting", t0, t0 + seconds(600), 0});
  EXPECT_EQ(workload_deadline(j), t0 + seconds(600));
  j.status = JobStatus::kRunning;
  j.started_at = t0 + seconds(90);
  EXPECT_EQ(workload_deadline(j), t0 + seconds(90));
  j.dispatch->left.back().purge_at.reset();  // purgeMode Never: never due
  EXPECT_EQ(workload_deadline(j), std::nullopt);
}

TEST(WorkloadDeadline, ActiveDeadlineSeconds_CountsFromTheFirstStart) {
  Job j = workload(std::nullopt);
  j.status = JobStatus::kRunning;
  j.dispatch->active_deadline_seconds = 120;
  j.dispatch->first_started_at = t0 + seconds(5);
  EXPECT_EQ(workload_deadline(j), t0 + seconds(125));
}

TEST(WorkloadDeadline, TtlSecondsAfterFinished_CountsFromTheEnd) {
  Job j = workload();
  j.status = JobStatus::kSucceeded;
  j.stopped_at = t0 + minutes(10);
  EXPECT_EQ(workload_deadline(j), std::nullopt);
  j.dispatch->ttl_seconds_after_finished = 60;
  EXPECT_EQ(workload_deadline(j), t0 + minutes(11));
}

TEST(RestartRule, RestartPolicyNeverOnAFailedPodFailsTheJob) {
  Job j = workload();
  j.dispatch->restart_policy["master"] = "Never";
  EXPECT_EQ(restart_refusal(j, {"worker"}), std::nullopt);  // only the master may not restart
  const auto refusal = restart_refusal(j, {"master"});
  ASSERT_TRUE(refusal);
  EXPECT_NE(refusal->find("restartPolicy is Never"), std::string::npos) << *refusal;
}

TEST(RestartRule, BackoffLimitCountsCompletedRestarts) {
  Job j = workload();
  j.dispatch->backoff_limit = 2;
  j.dispatch->restarts = 1;
  EXPECT_EQ(restart_refusal(j, {"worker"}), std::nullopt);
  j.dispatch->restarts = 2;
  const auto refusal = restart_refusal(j, {"worker"});
  ASSERT_TRUE(refusal);
  EXPECT_NE(refusal->find("backoffLimit is 2"), std::string::npos) << *refusal;
}

TEST(RestartRule, ExitCodeAndAlwaysRestartAfterNodeLoss) {
  Job j = workload();
  j.dispatch->restart_policy = {{"master", "ExitCode"}, {"worker", "Always"}};
  EXPECT_EQ(restart_refusal(j, {"master", "worker"}), std::nullopt);
}

}  // namespace
}  // namespace gf
