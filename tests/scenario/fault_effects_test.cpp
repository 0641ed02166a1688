// Faults that act on jobs and the defaults by fault class (docs/remediation.md "Defaults by fault
// class", docs/scenarios.md "Failures"): a fatal fault ends the gang's run at the fault and the
// gang restarts from its checkpoint on a spare, the faulted node takes no gang, the node is
// drained at once and sent straight to the repair that usually fixes its cause; a host whose
// faults recur is suspect and kept out; a storm is held to the pool's disruption budget.
#include <gtest/gtest.h>

#include "scenario/remediation_support.h"
#include "workload/pod_rules.h"

namespace gf::testing {
namespace {

const Job* job_named(Fleet& f, const std::string& name) {
  for (const auto& [id, j] : f.runtime().loop().state().view().jobs)
    if (j->name == name) return j.get();
  return nullptr;
}

// A 4-node gang (a master and 3 workers, 8 GPUs each) of 10 h of work that checkpoints hourly
// and spends 5 minutes on each restart.
void run_gang(Fleet& f) {
  std::string job = train_job("train", 3, "10h");
  const std::string from = "annotations: {gpufleet.io/duration: 10h}";
  job.replace(job.find(from), from.size(),
              "annotations: {gpufleet.io/duration: 10h, gpufleet.io/checkpoint-interval: 1h, "
              "gpufleet.io/restart-overhead: 5m}");
  HttpResponse r = f.call("POST", "/v1/apply", kTrainPolicy + "---\n" + job);
  ASSERT_EQ(r.status, 200) << r.body;
  f.run_for(seconds(1));
}

// What a node agent reports when the fault kills the rank: the gang's pod on `node` failed.
void crash_pod_on(Fleet& f, const std::string& cluster, const std::string& node) {
  const Job* job = job_named(f, "train");
  ASSERT_NE(job, nullptr);
  const std::vector<std::string> pods = workload::pod_names(*job);
  for (size_t i = 0; i < job->pod_nodes.size(); ++i) {
    if (job->pod_nodes[i] != node) continue;
    const Json body{{"JobId", job->id},
                    {"Placement", job->placements},
                    {"Phase", "Failed"},
                    {"ExitCode", 1},
                    {"Message", "CUDA error: unspecified launch failure"}};
    HttpResponse r = f.call(
        "POST", "/v1/clusters/" + cluster + "/nodes/" + node + "/pods/" + pods[i] + "/status",
        body.dump());
    ASSERT_EQ(r.status, 200) << r.body;
    return;
  }
  FAIL() << "no pod of train on " << node;
}

// The fault and what it does: the Xid line, then the crashed rank.
void xid79_under_gang(Fleet& f, const std::string& node) {
  ASSERT_EQ(send_signal(f, "c", node, kXid79).status, 200);
  crash_pod_on(f, "c", node);
}

TEST(FaultEffects, FatalFault_EndsTheRunAtTheFault_GangResumesFromItsCheckpointOnTheSpare) {
  Fleet f;
  heal_cluster(f, "c", {{"gpu", 5}});
  run_gang(f);
  f.run_for(hours(2) + minutes(30));
  const std::vector<std::string> before = job_nodes(f, "train");
  ASSERT_EQ(before.size(), 4u);
  const std::string bad = before[0];
  xid79_under_gang(f, bad);
  f.run_for(seconds(30));
  // The run ended at the fault and kept its two whole checkpoints; the gang runs again at once,
  // on the spare: the faulted node takes no gang.
  const Job* job = job_named(f, "train");
  ASSERT_NE(job, nullptr);
  ASSERT_EQ(job->runs.size(), 2u);
  EXPECT_EQ(job->runs[0].ended_by, "interrupted");
  EXPECT_EQ(job->runs[0].kept, hours(2));
  EXPECT_LE(job->runs[1].start - *job->runs[0].end, seconds(30));
  EXPECT_EQ(job->runs[1].overhead, minutes(5));
  const std::vector<std::string> after = job_nodes(f, "train");
  ASSERT_EQ(after.size(), 4u);
  EXPECT_EQ(std::count(after.begin(), after.end(), bad), 0);
  EXPECT_TRUE(node_of(f, "c", bad).faulted);
}

TEST(FaultEffects, FatalFault_IsDrainedAtOnceAndGoesStraightToTheRepairThatUsuallyFixesIt) {
  Fleet f;
  heal_cluster(f, "c", {{"gpu", 5}});
  run_gang(f);
  f.run_for(hours(1));
  const std::string bad = job_nodes(f, "train")[0];
  xid79_under_gang(f, bad);
  f.run_for(hours(1));
  const Json rems = remediations(f, bad);
  ASSERT_EQ(rems.size(), 1u) << rems.dump(2);
  const Json& r = rems[0];
  EXPECT_EQ(r["Action"], "reboot");  // the detector table's action
  EXPECT_EQ(r["EffectiveAction"], "migrate") << r.dump(2);
  EXPECT_NE(r["EffectiveActionReason"].get<std::string>().find("usually needs migrate"),
            std::string::npos);
  EXPECT_EQ(r["AutoApproved"], true);
  EXPECT_EQ(r["Status"], "Succeeded") << r.dump(2);
  // No wait for idle: the fault had already stopped the job on the node.
  EXPECT_EQ(r["DrainedAt"], r["StartedAt"]);
  EXPECT_FALSE(node_of(f, "c", bad).faulted);
}

TEST(FaultEffects, WithoutSpareTheUsualFixWaitsNotTheNode_TheDetectorsActionRunsFirst) {
  SimCloudConfig cloud;
  cloud.capacity["ml.p5.48xlarge"] = 5;  // no spare instance to migrate onto
  Fleet f(cloud);
  heal_cluster(f, "c", {{"gpu", 5}});
  const std::string node = group_nodes(f, "c", "gpu")[0];
  ASSERT_EQ(send_signal(f, "c", node, kXid79).status, 200);
  f.run_for(minutes(6));
  const Json rems = remediations(f, node);
  ASSERT_EQ(rems.size(), 1u);
  EXPECT_EQ(rems[0]["EffectiveAction"], "reboot") << rems[0].dump(2);
  EXPECT_NE(rems[0]["EffectiveActionReason"].get<std::string>().find("no spare for migrate"),
            std::string::npos);
}

TEST(FaultEffects, WithoutRemediationTheFaultedNodeStaysOut_ASecondFaultLeavesTheGangWaiting) {
  // The same two faults with and without automatic remediation: with it, the first node is
  // back before the second fault and the gang resumes at once; without, it waits.
  Duration resumed[2] = {};
  for (int automatic = 0; automatic < 2; ++automatic) {
    Fleet f;
    heal_cluster(f, "c", {{"gpu", 5}}, "ml.p5.48xlarge", automatic ? "" : "None");
    run_gang(f);
    f.run_for(hours(1));
    xid79_under_gang(f, job_nodes(f, "train")[0]);
    f.run_for(hours(3));
    ASSERT_EQ(job_nodes(f, "train").size(), 4u);
    const Time second = f.now();
    xid79_under_gang(f, job_nodes(f, "train")[0]);
    f.run_for(hours(4));
    const Job* job = job_named(f, "train");
    ASSERT_NE(job, nullptr);
    ASSERT_EQ(job->runs.size(), automatic ? 3u : 2u);
    resumed[automatic] = job->runs.back().end ? Duration::max() : job->runs.back().start - second;
  }
  EXPECT_LE(resumed[1], seconds(30));
  EXPECT_EQ(resumed[0], Duration::max());  // its second run ended; no third run started
}

TEST(FaultEffects, DegradedNode_SlowsTheWholeGangUntilTheFaultGoes_ThenItsPaceComesBack) {
  // A thermal slowdown on one node of the gang from 1h to 4h: the gang runs 1.2 times slower for
  // those 3 hours (a straggler sets the pace), so its 10 h of work end 30 minutes late.
  Fleet f;
  heal_cluster(f, "c", {{"gpu", 5}});
  run_gang(f);
  const Job* job = job_named(f, "train");
  ASSERT_NE(job, nullptr);
  ASSERT_EQ(job->runs.size(), 1u);
  const Time start = job->runs[0].start;
  f.run_for(hours(1));
  const std::string node = job_nodes(f, "train")[0];
  const Json thermal{{"dcgm", {{"field", "DCGM_FI_DEV_CLOCKS_EVENT_REASONS"}, {"value", 64}}}};
  ASSERT_EQ(send_signal(f, "c", node, thermal).status, 200);
  f.run_for(minutes(1));
  job = job_named(f, "train");
  EXPECT_DOUBLE_EQ(job->runs[0].slow_factor, 1.2);
  EXPECT_TRUE(job->runs[0].slow_since.has_value());
  EXPECT_FALSE(node_of(f, "c", node).faulted);  // it keeps its gang: slow, not stopped
  f.run_until(start + hours(4));
  ASSERT_EQ(clear_signal(f, "c", node).status, 200);
  f.run_until(start + hours(12));
  job = job_named(f, "train");
  ASSERT_EQ(job->runs.size(), 1u);
  EXPECT_EQ(job->status, JobStatus::kSucceeded);
  EXPECT_EQ(job->runs[0].ended_by, "finished");
  const Duration late = *job->runs[0].end - start - hours(10);
  EXPECT_GE(late, minutes(29));
  EXPECT_LE(late, minutes(31));
  EXPECT_EQ(job->runs[0].kept, hours(10));
}

TEST(FaultEffects, AfterAFailedResetAGpuFaultGoesToNewHardwareNotUpTheLadder) {
  // An Xid 48 only new hardware fixes: the reset (reboot) fails; the next proposal is a migrate,
  // not a second reboot and two reprovisions.
  Fleet f;
  heal_cluster(f, "c", {{"gpu", 4}});
  const std::string node = group_nodes(f, "c", "gpu")[0];
  const std::string xid48 =
      "NVRM: Xid (PCI:0000:18:00): 48, pid=1, An uncorrectable double bit error (DBE) has been "
      "detected on GPU in the framebuffer at partition 6, subpartition 0.";
  ASSERT_EQ(send_signal(f, "c", node, xid48, Json{{"ClearedBy", {"migrate", "delete"}}}).status,
            200);
  f.run_for(hours(3));
  const Json rems = remediations(f, node);
  ASSERT_EQ(rems.size(), 2u) << rems.dump(2);
  EXPECT_EQ(rems[0]["EffectiveAction"], "reboot");
  EXPECT_EQ(rems[0]["Status"], "Failed");
  EXPECT_EQ(rems[1]["EffectiveAction"], "migrate");
  EXPECT_NE(rems[1]["EffectiveActionReason"].get<std::string>().find("came back after a reboot"),
            std::string::npos)
      << rems[1].dump(2);
  EXPECT_EQ(rems[1]["AutoApproved"], true);
  EXPECT_EQ(rems[1]["Status"], "Succeeded");
}

TEST(FaultEffects, SuspectHost_ItsThirdRepairedFaultReplacesItAndSendsTheHostToRepair) {
  Fleet f;
  heal_cluster(f, "c", {{"gpu", 4}});
  const std::string node = group_nodes(f, "c", "gpu")[0];
  const std::string host = node_of(f, "c", node).host();
  const std::string xid48 =
      "NVRM: Xid (PCI:0000:18:00): 48, pid=1, An uncorrectable double bit error (DBE) has been "
      "detected on GPU in the framebuffer at partition 6, subpartition 0.";
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(send_signal(f, "c", node, xid48).status, 200);
    f.run_for(hours(2));
  }
  const Json rems = remediations(f, node);
  ASSERT_EQ(rems.size(), 3u) << rems.dump(2);
  EXPECT_EQ(rems[0]["EffectiveAction"], "reboot");
  EXPECT_EQ(rems[1]["EffectiveAction"], "reboot");
  EXPECT_EQ(rems[2]["EffectiveAction"], "migrate");
  EXPECT_EQ(rems[2].value("Suspect", false), true) << rems[2].dump(2);
  EXPECT_NE(rems[2]["EffectiveActionReason"].get<std::string>().find("suspect host " + host),
            std::string::npos);
  EXPECT_EQ(rems[2]["Status"], "Succeeded");
  // The old host went to repair with a ticket, not back to the pool through a burn-in.
  const Json hosts = f.json("GET", "/v1/hosts")["Hosts"];
  bool repaired = false;
  for (const Json& h : hosts) repaired |= h["HostId"] == host && h["Status"] == "Repair";
  EXPECT_TRUE(repaired) << hosts.dump(2);
  EXPECT_EQ(f.json("GET", "/v1/tickets")["Tickets"].size(), 1u);
  EXPECT_NE(node_of(f, "c", node).host(), host);
}

TEST(FaultEffects, Storm_IsHeldToThePoolsDisruptionBudget) {
  Fleet f;
  heal_cluster(f, "c", {{"gpu", 10}});
  put_policy(f, "c",
             Json{{"DisruptionBudget", "20%"},
                  {"MaxConcurrent", "100%"},
                  {"CircuitBreaker", {{"MaxAuto", 100}, {"Window", "1h"}}}});
  const std::vector<std::string> nodes = group_nodes(f, "c", "gpu");
  for (int i = 0; i < 6; ++i) ASSERT_EQ(send_signal(f, "c", nodes[i], kXid119).status, 200);
  int64_t most = 0;
  for (int minute = 0; minute < 120; ++minute) {
    f.run_for(minutes(1));
    int64_t in_flight = 0;
    for (const Json& r : remediations(f)) {
      const std::string s = r["Status"];
      in_flight += s == "WaitingForIdle" || s == "Draining" || s == "Executing" || s == "Rejoining";
    }
    most = std::max(most, in_flight);
  }
  EXPECT_EQ(most, 2);  // 20 % of 10 nodes
  int64_t succeeded = 0;
  for (const Json& r : remediations(f)) succeeded += r["Status"] == "Succeeded";
  EXPECT_EQ(succeeded, 6);
  EXPECT_FALSE(f.events_containing("disruption budget of node pool gpu reached").empty());
}

}  // namespace
}  // namespace gf::testing
