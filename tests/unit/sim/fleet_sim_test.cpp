// Fleet-scale simulation (docs/scenarios.md "Traces", "Failures", "Lost work", "Fleet KPIs"):
// a real ITP slice replayed on a fleet, GPU-hours conserved, every lost GPU-hour attributed,
// automatic remediation raising goodput on the same seed, the report page, and byte-identical
// outputs per seed.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "sim/report.h"
#include "sim/simulation.h"
#include "support/fleet_harness.h"
#include "support/temp_dir.h"

namespace gf {
namespace {

using testing::TempDir;

std::string read(const std::string& path) { return testing::read_file(path); }

const std::string kExamples = std::string(GPUFLEET_SOURCE_DIR) + "/examples/";

// The two ITP slices on `nodes` p5 nodes, with a quota tree as big as the fleet, then `extra`.
std::string fleet_scenario(int nodes, const std::string& extra) {
  const int gpus = nodes * 8;
  std::string s = "name: fleet-test\nseed: 11\nsteps:\n";
  s += "  - at: 0s\n    call: POST /v1/clusters\n    body: {ClusterName: fleet, "
       "NodeProvisioningMode: Continuous, InstanceGroups: [{InstanceGroupName: gpu, InstanceType: "
       "ml.p5.48xlarge, InstanceCount: " +
       std::to_string(nodes) + "}]}\n";
  s += "  - at: 0s\n    apply:\n";
  s += "      - {apiVersion: scheduling.sigs.k8s.io/v1beta1, kind: ElasticQuotaTree, metadata: "
       "{name: "
       "t, namespace: kube-system}, spec: {root: {name: root, max: {nvidia.com/gpu: " +
       std::to_string(gpus) + "}, min: {nvidia.com/gpu: " + std::to_string(gpus) +
       "}, children: [{name: a, max: {nvidia.com/gpu: " + std::to_string(gpus) +
       "}, min: {nvidia.com/gpu: " + std::to_string(gpus / 2) +
       "}, namespaces: [team-a]}, {name: b, max: {nvidia.com/gpu: " + std::to_string(gpus) +
       "}, min: {nvidia.com/gpu: " + std::to_string(gpus / 2) + "}, namespaces: [team-b]}]}}}\n";
  for (const char* ns : {"team-a", "team-b"}) {
    s += std::string(
             "      - {apiVersion: policy.one.alibabacloud.com/v1alpha1, kind: "
             "PropagationPolicy, metadata: {name: training, namespace: ") +
         ns +
         "}, spec: {suspension: {scheduling: true}, placement: {replicaScheduling: "
         "{replicaSchedulingType: Divided, customSchedulingType: Gang}}, resourceSelectors: "
         "[{apiVersion: kubeflow.org/v1, kind: PyTorchJob}]}}\n";
  }
  s += "traces:\n";
  s += "  - {file: " + kExamples +
       "traces/itp-cluster04-2d.csv, namespace: team-a, "
       "checkpointInterval: 1h, restartOverhead: 5m}\n";
  s += "  - {file: " + kExamples +
       "traces/itp-cluster02-2d.csv, namespace: team-b, "
       "checkpointInterval: 30m, restartOverhead: 5m}\n";
  return s + extra;
}

Scenario scenario_of(const std::string& text) {
  auto s = parse_scenario(text, ".");
  EXPECT_TRUE(s.ok()) << s.status().message();
  if (!s.ok()) return {};
  s->name = "fleet-test";
  EXPECT_TRUE(load_traces(*s, s->seed.value_or(1)).ok());
  return *s;
}

SimulationReport run(const Scenario& s, const std::string& out,
                     std::optional<Duration> until = std::nullopt) {
  SimulationOptions opts;
  opts.out_dir = out;
  opts.until = until;
  auto report = run_simulation(s, opts);
  EXPECT_TRUE(report.ok()) << report.status().message();
  return report.ok() ? *report : SimulationReport{};
}

double gh(const SimulationReport& r, const char* key) {
  return r.metrics["fleet"]["gpuHours"].value(key, -1.0);
}

TEST(FleetSimTest, ConservationWithoutFailuresOnABigFleetEveryTraceGpuHourIsWorkKept) {
  TempDir dir;
  const Scenario s = scenario_of(fleet_scenario(48, ""));
  // Long enough for every job to finish: reservations for the large gangs (docs/scheduling.md
  // "Reservation and backfill") make some long jobs wait past the default end.
  const SimulationReport r = run(s, dir.path(), days(20));
  const Json& traces = r.metrics["traces"];
  EXPECT_EQ(traces["submitted"], 225);
  EXPECT_EQ(traces["refused"], 0) << read(dir.file("calls.jsonl"));
  double trace_hours = 0;
  for (const Json& t : traces["files"]) trace_hours += t["gpuHours"].get<double>();
  EXPECT_NEAR(gh(r, "kept"), trace_hours, 0.01);
  EXPECT_NEAR(gh(r, "finishedJobsWork"), trace_hours, 0.01);
  EXPECT_EQ(gh(r, "lostToFailures"), 0);
  EXPECT_EQ(gh(r, "lostToPreemption"), 0);
  EXPECT_EQ(gh(r, "lostOther"), 0);
  EXPECT_EQ(gh(r, "inProgress"), 0);
  EXPECT_NEAR(gh(r, "busy"), trace_hours, 0.01);
  EXPECT_LT(r.metrics["fleet"]["goodput"].get<double>(), 1.0);  // idle nodes are paid too
  EXPECT_EQ(r.metrics["fleet"]["jobs"], 225);
}

TEST(FleetSimTest, WithTheFailureModelGoodputFallsAndEveryLostGpuHourIsAttributed) {
  TempDir dir;
  const Scenario s = scenario_of(
      fleet_scenario(16, "failures: {ratePer1000NodeDays: 200, operator: {responseTime: 1h}}\n"));
  const SimulationReport r = run(s, dir.path(), days(12));
  const Json& fleet = r.metrics["fleet"];
  ASSERT_TRUE(fleet.contains("failures"));
  EXPECT_GT(fleet["failures"]["injected"].get<int64_t>(), 5);
  EXPECT_GT(gh(r, "lostToFailures"), 0);
  EXPECT_LT(fleet["goodput"].get<double>(), 1.0);
  EXPECT_LT(fleet["jobGoodput"].get<double>(), 1.0);
  // Busy GPU-hours = kept + lost (failures, preemption, other) + in progress at the end.
  const double parts = gh(r, "kept") + gh(r, "lostToFailures") + gh(r, "lostToPreemption") +
                       gh(r, "lostOther") + gh(r, "inProgress");
  EXPECT_NEAR(gh(r, "busy"), parts, 0.01);
  EXPECT_GT(r.metrics["remediations"]["succeeded"].get<int64_t>(), 0);
  EXPECT_GT(fleet["mttr"]["incidents"]["count"].get<int64_t>(), 0);
  EXPECT_GT(fleet["mttr"]["automatic"]["total"]["count"].get<int64_t>(), 0);
  EXPECT_TRUE(fleet["series"].is_array());
  EXPECT_GT(fleet["series"].size(), 100u);
  EXPECT_TRUE(fleet["tenants"].contains("team-a"));
  EXPECT_TRUE(fleet["tenants"]["team-b"]["queueingDelay"].contains("p99Seconds"));
}

TEST(FleetSimTest, AutomaticRemediationRaisesGoodputOnTheSameSeed) {
  TempDir dir;
  const std::string faults = "failures: {ratePer1000NodeDays: 300, operator: {responseTime: 8h}}\n";
  const Scenario automatic = scenario_of(fleet_scenario(16, faults));
  std::string manual_text = fleet_scenario(16, faults);
  // The same fleet with NodeRecovery None: nothing is approved until the on-call person acts.
  const std::string key = "NodeProvisioningMode: Continuous,";
  manual_text.replace(manual_text.find(key), key.size(), key + " NodeRecovery: None,");
  const Scenario manual = scenario_of(manual_text);
  const SimulationReport a = run(automatic, dir.file("auto"), days(12));
  const SimulationReport m = run(manual, dir.file("manual"), days(12));
  const double ga = a.metrics["fleet"]["goodput"].get<double>();
  const double gm = m.metrics["fleet"]["goodput"].get<double>();
  EXPECT_GT(ga, gm) << "automatic " << ga << " manual " << gm;
  EXPECT_GT(a.metrics["remediations"]["autoApproved"].get<int64_t>(), 0);
  EXPECT_EQ(m.metrics["remediations"]["autoApproved"].get<int64_t>(), 0);
  EXPECT_GT(m.metrics["operator"]["approve"].get<int64_t>(), 0);
  // The same seed draws the same faults until the runs diverge: both see many.
  EXPECT_GT(m.metrics["fleet"]["failures"]["injected"].get<int64_t>(), 5);
}

TEST(FleetSimTest, SameSeedSameOutputsByteForByte) {
  TempDir dir;
  const Scenario s = scenario_of(fleet_scenario(16, "failures: {ratePer1000NodeDays: 200}\n"));
  run(s, dir.file("one"), days(4));
  run(s, dir.file("two"), days(4));
  for (const char* f : {"metrics.json", "events.jsonl", "state.json", "calls.jsonl"}) {
    const std::string a = read(dir.file(std::string("one/") + f));
    EXPECT_FALSE(a.empty()) << f;
    EXPECT_EQ(std::hash<std::string>{}(a),
              std::hash<std::string>{}(read(dir.file(std::string("two/") + f))))
        << f;
  }
}

TEST(FleetSimTest, ReportIsOneSelfContainedPageWithTheKpisAndCharts) {
  TempDir dir;
  const Scenario s = scenario_of(fleet_scenario(16, "failures: {ratePer1000NodeDays: 200}\n"));
  const SimulationReport r = run(s, dir.path(), days(6));
  const std::string html = render_report({ReportRun{"fleet-test", r.metrics}});
  EXPECT_TRUE(html.starts_with("<!DOCTYPE html>"));
  EXPECT_TRUE(html.ends_with("</html>\n"));
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("http://"), std::string::npos);  // nothing fetched
  EXPECT_EQ(html.find("https://"), std::string::npos);
  size_t svgs = 0;
  for (size_t p = html.find("<svg"); p != std::string::npos; p = html.find("<svg", p + 1)) ++svgs;
  EXPECT_EQ(svgs, 5u);
  for (const char* text :
       {"GPUs offered and busy over time", "Queue depth over time", "Where the paid GPU-hours went",
        "Repair time by phase", "Queueing delay per tenant", "goodput (work kept / GPU-h paid)",
        "team-a", "<polyline"}) {
    EXPECT_NE(html.find(text), std::string::npos) << text;
  }
  // Every opened element of the charts is closed.
  size_t open = 0, close = 0;
  for (size_t p = html.find("<figure>"); p != std::string::npos; p = html.find("<figure>", p + 1))
    ++open;
  for (size_t p = html.find("</figure>"); p != std::string::npos; p = html.find("</figure>", p + 1))
    ++close;
  EXPECT_EQ(open, close);
  // A comparison has a column per variant and their changes.
  const std::string two = render_report({ReportRun{"a", r.metrics}, ReportRun{"b", r.metrics}});
  EXPECT_NE(two.find("&Delta; b"), std::string::npos);
  EXPECT_NE(two.find(">0 pts<"), std::string::npos);
}

TEST(FleetSimTest, LostWorkModelKeepsWholeCheckpointsAndChargesRestartOverhead) {
  // One 8-GPU job of 10 h checkpointing every hour; its node is removed at 3h30m: the run keeps
  // 3 h, loses 30 min; the restart pays 5 min of overhead, then runs the 7 h left.
  TempDir dir;
  const std::string text =
      "seed: 3\nsteps:\n"
      "  - {at: 0s, call: POST /v1/clusters, body: {ClusterName: c, NodeProvisioningMode: "
      "Continuous, InstanceGroups: [{InstanceGroupName: gpu, InstanceType: ml.p5.48xlarge, "
      "InstanceCount: 2}]}}\n"
      "  - {at: 0s, apply: {apiVersion: policy.one.alibabacloud.com/v1alpha1, kind: "
      "PropagationPolicy, metadata: {name: p, namespace: default}, spec: {placement: "
      "{replicaScheduling: {replicaSchedulingType: Divided, customSchedulingType: Gang}}, "
      "resourceSelectors: [{apiVersion: kubeflow.org/v1, kind: PyTorchJob}]}}}\n"
      "  - {at: 20m, apply: {apiVersion: kubeflow.org/v1, kind: PyTorchJob, metadata: {name: "
      "train, annotations: {gpufleet.io/duration: 10h, gpufleet.io/checkpoint-interval: 1h, "
      "gpufleet.io/restart-overhead: 5m}}, spec: {pytorchReplicaSpecs: {Master: {replicas: 1, "
      "restartPolicy: OnFailure, template: {spec: {containers: [{name: p, image: i, resources: "
      "{requests: {nvidia.com/gpu: 8}}}]}}}}}}}\n"
      "  - {at: 3h50m, fault: {node: gpu/0, signal: {unreachable: true}}}\n"
      "  - {at: 3h50m, fault: {node: gpu/1, signal: {unreachable: true}}}\n";
  auto s = parse_scenario(text, ".");
  ASSERT_TRUE(s.ok()) << s.status().message();
  const SimulationReport r = run(*s, dir.path(), hours(20));
  const Json& fleet = r.metrics["fleet"];
  // kept: 10 h of work on 8 GPUs when it finishes.
  EXPECT_NEAR(fleet["gpuHours"]["kept"].get<double>(), 80.0, 0.01) << fleet.dump(2);
  // Lost to the failure: the part of the first run after its last checkpoint, and the overhead.
  EXPECT_GT(fleet["gpuHours"]["lostToFailures"].get<double>(), 8 * (5.0 / 60));
  EXPECT_LT(fleet["gpuHours"]["lostToFailures"].get<double>(), 8 * (1.0 + 5.0 / 60));
  // Restarted once, or twice when placed on the other node just before its own fault.
  EXPECT_GE(fleet["largeJobs"]["jobs"][0]["restarts"].get<int64_t>(), 1);
  const double parts = fleet["gpuHours"]["kept"].get<double>() +
                       fleet["gpuHours"]["lostToFailures"].get<double>() +
                       fleet["gpuHours"]["lostOther"].get<double>();
  EXPECT_NEAR(fleet["gpuHours"]["busy"].get<double>(), parts, 0.001);
  EXPECT_EQ(fleet["largeJobs"]["jobs"][0]["finished"], true);
}

// The on-call rule: a proposal that repeats an action which already failed on that node for the
// same alert is rejected and the node replaced. A hung task that only new hardware fixes (its
// fault class has no hardware step after a failure: the ladder's reboot comes again), with every
// remediation left to the on-call: without the rule, the reboot a person approves fails, comes
// back after the cooldown, is approved again, for ever.
TEST(FleetSimTest, OnCall_ARepeatOfAFailedActionIsRejectedAndTheNodeReplaced_NoRemediationStorm) {
  TempDir dir;
  const Scenario s = scenario_of(fleet_scenario(
      16,
      "failures: {ratePer1000NodeDays: 300, mix: {software: 1}, causes: {software: {fix: "
      "{replace: 1}}}, operator: {responseTime: 1h}, remediation: manual}\n"));
  const SimulationReport r = run(s, dir.path(), days(12));
  const Json& ops = r.metrics["operator"];
  EXPECT_GT(ops.value("reject", 0), 0) << ops.dump();
  EXPECT_EQ(ops.value("replace", 0), ops.value("reject", 0)) << ops.dump();
  const Json state = Json::parse(read(dir.file("state.json")));
  // No (alert, action) pair failed twice, and every replacement a person asked for ran.
  std::map<std::pair<std::string, std::string>, int> failed;
  int deletes = 0;
  for (const Json& rem : state.at("remediations")) {
    if (rem.at("EffectiveAction") == "delete") {
      ++deletes;
      EXPECT_EQ(rem.at("Requester"), "oncall");
      EXPECT_EQ(rem.at("Approver"), "oncall-2");
    }
    if (rem.at("Status") != "Failed") continue;
    for (const Json& alert : rem.at("Evidence")) {
      const int n = ++failed[{alert.get<std::string>(), rem.at("EffectiveAction")}];
      EXPECT_EQ(n, 1) << alert << " " << rem.at("EffectiveAction") << " failed again";
    }
  }
  EXPECT_EQ(deletes, ops.value("replace", 0));
}

// Common random numbers (docs/scenarios.md "What-if"): every variant of a run draws the same
// faults — the same nodes, times, causes, effects and fixes — from streams of their own, whatever
// the remediation did. Only a node moved to new hardware may then differ (a lemon is a host).
TEST(FleetSimTest, CommonRandomNumbers_TwoVariantsDrawByteIdenticalFaults) {
  TempDir dir;
  const std::string faults = "failures: {ratePer1000NodeDays: 300, operator: {responseTime: 1h}";
  const Scenario automatic = scenario_of(fleet_scenario(16, faults + "}\n"));
  const Scenario none = scenario_of(fleet_scenario(16, faults + ", remediation: none}\n"));
  run(automatic, dir.file("a"), days(8));
  run(none, dir.file("n"), days(8));
  auto lines = [&](const std::string& run) {
    std::vector<Json> out;
    std::istringstream in(read(dir.file(run + "/faults.jsonl")));
    for (std::string line; std::getline(in, line);) out.push_back(Json::parse(line));
    return out;
  };
  const std::vector<Json> a = lines("a"), n = lines("n");
  ASSERT_GT(a.size(), 10u);
  std::set<std::string> moved;  // nodes the automatic run put on new hardware
  for (const Json& f : a)
    if (f["host"].get<std::string>().starts_with("host-m")) moved.insert(f["node"]);
  auto drawn = [&](const std::vector<Json>& fs) {
    std::string out;
    for (Json f : fs) {
      if (moved.contains(f["node"].get<std::string>())) continue;
      f.erase("injected");  // a node still failing in one variant absorbs the fault
      out += f.dump() + "\n";
    }
    return out;
  };
  EXPECT_FALSE(drawn(a).empty());
  EXPECT_EQ(drawn(a), drawn(n));
  // And the variants did differ: nobody repaired anything in the second.
  const Json rn = Json::parse(read(dir.file("n/metrics.json")));
  EXPECT_EQ(rn.at("remediations").at("succeeded"), 0);
}

}  // namespace
}  // namespace gf
