// docs/slurm.md "States": a pod of a gang on a real Slurm cluster that failed is not restarted by
// its node; its role's restartPolicy restarts the whole gang or fails the job.
#include <gtest/gtest.h>

#include "workload/pod_rules.h"

namespace gf::workload {
namespace {

Job gang(const std::string& worker_policy) {
  Job j;
  j.id = "job-1";
  j.name = "gang3";
  j.pod_sets = {JobPodSet{}, JobPodSet{}};
  j.pod_sets[0].role = "master";
  j.pod_sets[0].count = 1;
  j.pod_sets[1].role = "worker";
  j.pod_sets[1].count = 2;
  j.dispatch = Dispatch{};
  j.dispatch->restart_policy = {{"master", "Never"}, {"worker", worker_policy}};
  return j;
}

PodState failed(int code,
                std::string message = "Slurm job 4 PENDING (launch failed requeued held)") {
  PodState p;
  p.phase = "Failed";
  p.exit_code = code;
  p.message = std::move(message);
  return p;
}

TEST(SlurmGangRestart, OnFailureRestartsTheGangSayingWhy) {
  auto m = slurm_gang_restart(gang("OnFailure"), "gang3-worker-1", failed(128));
  ASSERT_TRUE(m);
  EXPECT_NE(m->find("launch failed requeued held"), std::string::npos) << *m;
  EXPECT_NE(m->find("restartPolicy is OnFailure"), std::string::npos) << *m;
}

TEST(SlurmGangRestart, NeverFailsTheJob) {
  EXPECT_FALSE(slurm_gang_restart(gang("OnFailure"), "gang3-master-0", failed(128)));
}

TEST(SlurmGangRestart, ExitCodeRestartsOnlyForARetryableCode) {
  EXPECT_TRUE(slurm_gang_restart(gang("ExitCode"), "gang3-worker-0", failed(128)));
  EXPECT_FALSE(slurm_gang_restart(gang("ExitCode"), "gang3-worker-0", failed(3)));
}

TEST(SlurmGangRestart, BackoffLimitReachedFailsTheJob) {
  Job j = gang("Always");
  j.dispatch->backoff_limit = 2;
  j.dispatch->restarts = 2;
  EXPECT_FALSE(slurm_gang_restart(j, "gang3-worker-0", failed(1)));
}

TEST(SlurmGangRestart, RestartsThatNeverRanCountTowardsTheBackoffLimit) {
  Job j = gang("OnFailure");
  j.dispatch->backoff_limit = 3;
  j.dispatch->restarts = 1;       // one restart ran
  j.dispatch->failed_starts = 1;  // one failed before it ran
  EXPECT_TRUE(slurm_gang_restart(j, "gang3-worker-0", failed(128)));
  j.dispatch->restarting = true;  // and this failure ends a third that never ran
  EXPECT_FALSE(slurm_gang_restart(j, "gang3-worker-0", failed(128)));
}

TEST(SlurmGangRestart, OnlyAFailedPodOfAWorkloadRestarts) {
  PodState running;
  running.phase = "Running";
  EXPECT_FALSE(slurm_gang_restart(gang("Always"), "gang3-worker-0", running));
  Job service = gang("Always");
  service.dispatch.reset();
  EXPECT_FALSE(slurm_gang_restart(service, "gang3-worker-0", failed(1)));
}

}  // namespace
}  // namespace gf::workload
