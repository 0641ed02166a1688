// Running scenarios in-process (docs/scenarios.md): determinism per seed, the outputs and their
// shapes, and what the shipped examples show.
#include "sim/simulation.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "journal/sqlite/sqlite_journal.h"
#include "state/fleet_state.h"
#include "support/temp_dir.h"

namespace gf {
namespace {

using testing::TempDir;

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string example(const std::string& name) {
  return std::string(GPUFLEET_SOURCE_DIR) + "/examples/scenarios/" + name;
}

// Every line of a .jsonl file, parsed; fails the test on a line that is not a JSON object.
std::vector<Json> read_jsonl(const std::string& path) {
  std::vector<Json> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    auto j = parse_json(line);
    EXPECT_TRUE(j.ok() && j->is_object()) << path << ": " << line;
    if (j.ok()) out.push_back(*j);
  }
  return out;
}

SimulationReport run(const std::string& scenario_file, const std::string& out,
                     std::optional<uint64_t> seed = std::nullopt,
                     std::optional<Duration> snapshot_every = std::nullopt,
                     std::optional<Duration> until = std::nullopt) {
  auto scenario = load_scenario(scenario_file);
  EXPECT_TRUE(scenario.ok()) << scenario.status().message();
  if (!scenario.ok()) return {};
  SimulationOptions opts;
  opts.out_dir = out;
  opts.seed = seed;
  opts.snapshot_every = snapshot_every;
  opts.until = until;
  auto report = run_simulation(*scenario, opts);
  EXPECT_TRUE(report.ok()) << report.status().message();
  return report.ok() ? *report : SimulationReport{};
}

std::vector<Json> events_containing(const std::vector<Json>& events, const std::string& text) {
  std::vector<Json> out;
  for (const auto& e : events) {
    if (e["Description"].get<std::string>().find(text) != std::string::npos) out.push_back(e);
  }
  return out;
}

const Json* group_of(const Json& state, const std::string& cluster, const std::string& group) {
  for (const auto& c : state["clusters"]) {
    if (c["ClusterName"] != cluster) continue;
    for (const auto& g : c["InstanceGroups"]) {
      if (g["InstanceGroupName"] == group) return &g;
    }
  }
  return nullptr;
}

TEST(Simulation, SameScenarioAndSeedGiveByteIdenticalEventsAndState) {
  TempDir a, b, c;
  run(example("seed-scarce-capacity.yaml"), a.path());
  run(example("seed-scarce-capacity.yaml"), b.path());
  const std::string events = read(a.file("events.jsonl"));
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events, read(b.file("events.jsonl")));
  EXPECT_EQ(read(a.file("state.json")), read(b.file("state.json")));
  EXPECT_EQ(read(a.file("calls.jsonl")), read(b.file("calls.jsonl")));
  EXPECT_EQ(read(a.file("metrics.json")), read(b.file("metrics.json")));

  // Another seed: other ids and jitter, the same outcome.
  SimulationReport other = run(example("seed-scarce-capacity.yaml"), c.path(), 12345);
  EXPECT_EQ(other.seed, 12345u);
  EXPECT_NE(read(c.file("events.jsonl")), events);
  const Json* workers = group_of(other.state, "my-training-cluster", "worker-gpu-a");
  ASSERT_TRUE(workers);
  EXPECT_EQ((*workers)["CurrentCount"], 16);
  EXPECT_FALSE(read_jsonl(c.file("events.jsonl")).empty());
}

TEST(Simulation, SeedScenarioWritesEveryOutputAndFillsTheGpuGroupWithoutRollback) {
  TempDir dir;
  SimulationReport r =
      run(example("seed-scarce-capacity.yaml"), dir.path(), std::nullopt, hours(1));
  EXPECT_EQ(r.scenario, "seed-scarce-capacity");
  EXPECT_EQ(r.seed, 7u);
  EXPECT_EQ(r.until, hours(3) + kDefaultSimTail);  // the last step is at 3h
  EXPECT_EQ(r.steps_failed, 0u);

  // calls.jsonl: one record per step, with t, EventTime, call, status and body.
  std::vector<Json> calls = read_jsonl(dir.file("calls.jsonl"));
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(calls[0]["call"], "POST /v1/clusters");
  EXPECT_EQ(calls[0]["status"], 200);
  EXPECT_EQ(calls[0]["as"], "alice");
  EXPECT_EQ(calls[0]["t"], 0);
  EXPECT_EQ(calls[0]["EventTime"], "2026-01-01T00:00:00Z");
  EXPECT_TRUE(calls[0]["body"].contains("ClusterArn"));
  EXPECT_EQ(calls[1]["t"], 3600);
  EXPECT_EQ(calls[1]["body"]["ClusterStatus"], "InService");
  EXPECT_EQ(calls[2]["body"]["ClusterNodeSummaries"].size(), 16u);  // the query string applied

  // events.jsonl: the GET /v1/events envelope plus t, oldest first, t matching EventTime.
  std::vector<Json> events = read_jsonl(dir.file("events.jsonl"));
  ASSERT_GT(events.size(), 20u);
  for (size_t i = 0; i < events.size(); ++i) {
    const Json& e = events[i];
    for (const char* key :
         {"EventId", "ResourceType", "EventTime", "EventLevel", "Description", "t"}) {
      ASSERT_TRUE(e.contains(key)) << key << " missing in " << e.dump();
    }
    auto at = parse_iso8601(e["EventTime"].get<std::string>());
    ASSERT_TRUE(at.ok());
    EXPECT_EQ(static_cast<int64_t>(e["t"].get<double>()), (*at - kSimEpoch).count() / 1'000'000);
    if (i > 0) {
      EXPECT_GE(e["t"].get<double>(), events[i - 1]["t"].get<double>());
    }
  }
  EXPECT_TRUE(events_containing(events, "rollback").empty());
  EXPECT_FALSE(events_containing(events, "Cluster my-training-cluster is InService").empty());

  // snapshots.jsonl: every hour through the end, in the API's shapes.
  std::vector<Json> snaps = read_jsonl(dir.file("snapshots.jsonl"));
  ASSERT_EQ(snaps.size(), 9u);
  for (size_t i = 0; i < snaps.size(); ++i) {
    EXPECT_EQ(snaps[i]["t"], 3600 * static_cast<int64_t>(i + 1));
    for (const char* key : {"clusters", "jobs", "pods", "serviceJobs", "alerts", "remediations"}) {
      EXPECT_TRUE(snaps[i][key].is_array()) << key;
    }
    ASSERT_EQ(snaps[i]["clusters"].size(), 1u);
    EXPECT_TRUE(snaps[i]["nodes"]["my-training-cluster"].is_array());
  }
  const Json* at1h = group_of(snaps[0], "my-training-cluster", "worker-gpu-a");
  ASSERT_TRUE(at1h);
  EXPECT_EQ((*at1h)["CurrentCount"], 10);  // 10 of 16 before capacity grows at 2h

  // state.json: the same object at the end: 16 workers Running.
  auto state = parse_json(read(dir.file("state.json")));
  ASSERT_TRUE(state.ok());
  EXPECT_EQ(*state, r.state);
  const Json* workers = group_of(*state, "my-training-cluster", "worker-gpu-a");
  ASSERT_TRUE(workers);
  EXPECT_EQ((*workers)["CurrentCount"], 16);
  int running = 0;
  for (const auto& n : (*state)["nodes"]["my-training-cluster"]) {
    running +=
        n["InstanceGroupName"] == "worker-gpu-a" && n["InstanceStatus"]["Status"] == "Running";
  }
  EXPECT_EQ(running, 16);

  // metrics.json: capacity delivered, provisioning counts, billing, labelled empty sections.
  auto m = parse_json(read(dir.file("metrics.json")));
  ASSERT_TRUE(m.ok());
  const Json& cd = (*m)["capacityDelivered"][0];
  EXPECT_EQ(cd["ClusterName"], "my-training-cluster");
  const Json& wg = cd["groups"][2];
  EXPECT_EQ(wg["InstanceGroupName"], "worker-gpu-a");
  EXPECT_GT(wg["delivered"].get<double>(), 0.5);
  EXPECT_LT(wg["delivered"].get<double>(), 1.0);
  EXPECT_LT(wg["runningInstanceHours"].get<double>(), wg["targetInstanceHours"].get<double>());
  EXPECT_GE(wg["timeToTargetSeconds"].get<int64_t>(), 2 * 3600);  // capacity arrives at 2h
  EXPECT_EQ(cd["timeToInServiceSeconds"], 1200);                  // controller 10m, then login 10m
  const Json& p = (*m)["provisioning"];
  EXPECT_GT(p["launches"].get<int64_t>(), 18);
  EXPECT_GT(p["launchFailures"].get<int64_t>(), 0);
  EXPECT_GT(p["retries"].get<int64_t>(), 3);
  EXPECT_EQ(p["rollbacks"], 0);
  EXPECT_GT((*m)["billing"]["byCluster"]["TotalMicros"].get<int64_t>(), 0);
  EXPECT_EQ((*m)["queueingDelay"]["measured"], true);
  EXPECT_EQ((*m)["queueingDelay"]["jobs"], 0);  // the seed scenario submits no jobs
  EXPECT_EQ((*m)["remediations"]["measured"], true);
  EXPECT_EQ((*m)["remediations"]["proposed"], 0);                 // no faults in the seed scenario
  EXPECT_FALSE(std::filesystem::exists(dir.file("journal.db")));  // not asked for one
}

TEST(Simulation, AJournalIsWrittenOnlyWhenAskedAndTheMetricsAreTheSameEitherWay) {
  TempDir plain, kept;
  // Jobs, node faults and remediations: every family of event.
  auto scenario = load_scenario(example("itp-fleet.yaml"));
  ASSERT_TRUE(scenario.ok());
  SimulationOptions opts;
  opts.out_dir = plain.path();
  auto without = run_simulation(*scenario, opts);
  ASSERT_TRUE(without.ok()) << without.status().message();
  opts.out_dir = kept.path();
  opts.keep_journal = true;
  auto with = run_simulation(*scenario, opts);
  ASSERT_TRUE(with.ok()) << with.status().message();
  EXPECT_FALSE(std::filesystem::exists(plain.file("journal.db")));
  ASSERT_TRUE(std::filesystem::exists(kept.file("journal.db")));
  EXPECT_EQ(without->metrics, with->metrics);
  EXPECT_EQ(read(plain.file("events.jsonl")), read(kept.file("events.jsonl")));
  EXPECT_GT(with->metrics["fleet"]["failures"]["injected"].get<int64_t>(), 0);

  // The kept journal holds the whole run: replayed into a fresh state it gives the run's events.
  // A state fed only its cluster and health events (what the metrics follow) has the same
  // clusters, health records and cluster revisions, and no jobs.
  auto journal = SqliteJournal::open(kept.file("journal.db"));
  ASSERT_TRUE(journal.ok());
  FleetState all, fleet_only;
  ASSERT_TRUE((*journal)
                  ->replay(0,
                           [&](const EventRecord& rec) -> Status {
                             GF_RETURN_IF_ERROR(all.apply(rec));
                             return fleet_only.apply_clusters_and_health(rec);
                           })
                  .ok());
  EXPECT_EQ(static_cast<size_t>(all.view().events.size()), with->events);
  // Jobs finished more than seven days before the end left the state for the journal's history.
  auto history = (*journal)->open_history_reader();
  ASSERT_TRUE(history.ok());
  EXPECT_GT(all.view().jobs.size() + static_cast<size_t>(*(*history)->count()), 100u);
  EXPECT_GT(*(*history)->count(), 0);
  EXPECT_EQ(fleet_only.view().jobs.size(), 0u);
  EXPECT_EQ(fleet_only.applied_seq(), all.applied_seq());
  const Json a = all.to_json(), f = fleet_only.to_json();
  EXPECT_EQ(a["clusters"], f["clusters"]);
  EXPECT_EQ(a["health"], f["health"]);
  EXPECT_NE(a["health"], Json(nullptr));
  EXPECT_EQ(all.cluster_revisions(), fleet_only.cluster_revisions());
}

TEST(Simulation, MinCountRollbackComesThreeHoursAfterTheUpdateNotAtThreeHours) {
  TempDir dir;
  SimulationReport r = run(example("mincount-rollback.yaml"), dir.path());
  EXPECT_EQ(r.steps_failed, 0u);
  std::vector<Json> events = read_jsonl(dir.file("events.jsonl"));
  auto rb = events_containing(events, "rollback initiated: InstanceGroup worker-group-1");
  ASSERT_EQ(rb.size(), 1u);
  EXPECT_EQ(rb[0]["t"], 5 * 3600);
  EXPECT_EQ(rb[0]["EventTime"], "2026-01-01T05:00:00Z");
  const Json* wg = group_of(r.state, "my-mincount-cluster", "worker-group-1");
  ASSERT_TRUE(wg);
  EXPECT_EQ((*wg)["TargetCount"], 0);
  EXPECT_EQ((*wg)["MinCount"], 0);
  EXPECT_EQ((*wg)["Status"], "InService");
  EXPECT_EQ(r.metrics["provisioning"]["minCountRollbacks"], 1);
  std::vector<Json> calls = read_jsonl(dir.file("calls.jsonl"));
  ASSERT_EQ(calls.size(), 4u);
  EXPECT_EQ(calls[1]["call"], "PUT /v1/clusters/my-mincount-cluster");
  EXPECT_EQ(calls[1]["status"], 200);
}

TEST(Simulation, EveryShippedExampleRunsCleanly) {
  for (const char* name :
       {"seed-mincount.yaml", "controller-failure.yaml", "legacy-all-or-nothing.yaml"}) {
    TempDir dir;
    SimulationReport r = run(example(name), dir.path());
    EXPECT_EQ(r.steps_failed, 0u) << name;
    EXPECT_GT(r.events, 0u) << name;
  }
  TempDir legacy;
  SimulationReport r = run(example("legacy-all-or-nothing.yaml"), legacy.path());
  ASSERT_EQ(r.state["clusters"].size(), 1u);
  EXPECT_EQ(r.state["clusters"][0]["ClusterStatus"], "Failed");
  EXPECT_TRUE(r.state["nodes"]["legacy-cluster"].empty());  // everything terminated
  TempDir cf;
  r = run(example("controller-failure.yaml"), cf.path());
  EXPECT_EQ(r.state["clusters"][0]["ClusterStatus"], "InService");
  EXPECT_EQ(r.metrics["provisioning"]["launchFailuresByReason"]["UnhealthyInstance"], 1);
}

// docs/dispatch.md: the same fragmented fleet with and without reservation. Apply and delete steps
// run through POST /v1/apply and DELETE /v1/objects; jobs, pods and the job metrics are measured.
TEST(Simulation, FragmentedFleet_EstimateModeWaitsForFailover_ReservationDoesNot) {
  Result<Scenario> s = load_scenario(example("fragmented-fleet.yaml"));
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  TempDir with_reservation;
  SimulationOptions o;
  o.out_dir = with_reservation.path();
  Result<SimulationReport> reserved = run_simulation(*s, o);
  ASSERT_TRUE(reserved.ok()) << reserved.status().to_string();
  s->config.reservation = false;
  TempDir estimate;
  o.out_dir = estimate.path();
  Result<SimulationReport> estimated = run_simulation(*s, o);
  ASSERT_TRUE(estimated.ok()) << estimated.status().to_string();
  for (const SimulationReport* r : {&*reserved, &*estimated}) {
    EXPECT_EQ(r->steps_failed, 0u);
    EXPECT_EQ(r->state["jobs"].size(), 5u);  // 3 trainings + 2 fillers left (filler-0 deleted)
    EXPECT_EQ(r->metrics["queueingDelay"]["jobs"], 5);  // a deleted job leaves no record
  }
  const double reserved_wait = reserved->metrics["queueingDelay"]["maxSeconds"].get<double>();
  const double estimated_wait = estimated->metrics["queueingDelay"]["maxSeconds"].get<double>();
  EXPECT_LT(reserved_wait, 1.0);
  EXPECT_GE(estimated_wait, 30.0);  // pods Pending on "frag" for tolerationSeconds
  for (const Json& j : estimated->state["jobs"]) {
    if (j["metadata"]["name"].get<std::string>().rfind("train-", 0) != 0) continue;
    EXPECT_EQ(j["status"]["state"], "Succeeded");
    EXPECT_EQ(j["status"]["failovers"], 1);
  }
}

// docs/scheduling.md "Topology": the simulated cloud labels nodes by block; the hub places a
// gang that requires a block on the cluster whose block holds it, not the tightest cluster, parks
// a gang no block could ever hold, and reports how many gang runs stayed inside one block.
TEST(Simulation, TopologyBlocks_HubChoosesClusterAndBlockTogether) {
  TempDir dir;
  SimulationReport r = run(example("topology-blocks.yaml"), dir.path());
  EXPECT_EQ(r.steps_failed, 0u);
  std::map<std::string, std::pair<std::string, std::string>> block_of;  // node -> cluster, block
  for (const auto& [cluster, nodes] : r.state["nodes"].items()) {
    for (const Json& n : nodes) {
      block_of[n["InstanceId"]] = {cluster,
                                   n["Labels"].value("topology.k8s.aws/network-node-layer-3", "")};
      EXPECT_EQ(n["Labels"].value("topology.k8s.aws/network-node-layer-1", ""), "nn-" + cluster);
    }
  }
  std::map<std::string, std::set<std::pair<std::string, std::string>>> blocks;  // job -> blocks
  for (const Json& p : r.state["pods"]) {
    const std::string job = p["metadata"]["labels"].value("training.kubeflow.org/job-name", "");
    blocks[job].insert(block_of.at(p["spec"]["nodeName"].get<std::string>()));
  }
  ASSERT_EQ(blocks["filler"].size(), 1u);
  EXPECT_EQ(blocks["filler"].begin()->first, "b");  // the tighter cluster, its 4-node block
  ASSERT_EQ(blocks["train-block"].size(), 1u);
  EXPECT_EQ(blocks["train-block"].begin()->first, "a");
  EXPECT_EQ(blocks["train-spread"].size(), 2u);  // no request: b's free nodes, over two blocks
  EXPECT_EQ(blocks["train-spread"].begin()->first, "b");
  for (const Json& j : r.state["jobs"]) {
    if (j["metadata"]["name"] != "train-too-big") continue;
    EXPECT_EQ(j["status"]["state"], "Created");
    EXPECT_NE(j.dump().find("infeasible"), std::string::npos) << j.dump();
  }
  const Json& placement = r.metrics["fleet"]["placement"];
  EXPECT_EQ(placement["gangRunsOnLabelledNodes"], 3);
  EXPECT_NEAR(placement["oneDomainShare"]["layer-3"].get<double>(), 2.0 / 3, 1e-3);
  EXPECT_EQ(placement["oneDomainShare"]["layer-1"], 1);
}

// docs/scheduling.md "Reservation and backfill": an 8-node gang behind a stream of one-node jobs
// starts once the nodes running at its arrival have ended, instead of after the whole stream.
TEST(Simulation, Backfill_TheGangBehindAStreamOfSmallJobsIsNotStarved) {
  Result<Scenario> s = load_scenario(example("backfill.yaml"));
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  ASSERT_TRUE(load_traces(*s, s->seed.value_or(1)).ok());
  auto gang_wait = [&](bool backfill) {
    s->config.backfill = backfill;
    TempDir dir;
    SimulationOptions o;
    o.out_dir = dir.path();
    Result<SimulationReport> r = run_simulation(*s, o);
    EXPECT_TRUE(r.ok()) << r.status().to_string();
    if (!r.ok()) return -1.0;
    EXPECT_EQ(r->metrics["fleet"]["jobs"], 37);
    return r->metrics["fleet"]["placement"]["queueingDelayBySize"]["32-64 GPUs"]["maxSeconds"]
        .get<double>();
  };
  const double with = gang_wait(true);
  const double without = gang_wait(false);
  // It arrives at 1h with 4 nodes busy until 3h-4h: it starts when the fourth ends.
  EXPECT_LE(with, 3 * 3600.0 + 60);
  EXPECT_GT(without, 10 * 3600.0);  // each freed node went to the next one-node job
}

// Issue 6 (docs/remediation.md, docs/scenarios.md): fault/clear/approve steps drive the real
// detectors, the policy and the simulated cloud's reboot/reprovision/migrate with the scenario's
// clearedBy and recurs.
TEST(Simulation, NodeFaultsScenario_DetectorsPolicyEscalationApprovalAndBurnIn) {
  TempDir dir;
  SimulationReport r =
      run(example("node-faults.yaml"), dir.path(), std::nullopt, std::nullopt, hours(14));
  EXPECT_EQ(r.steps_failed, 0u);
  EXPECT_EQ(r.steps_not_implemented, 0u);
  std::vector<Json> calls = read_jsonl(dir.file("calls.jsonl"));
  for (const Json& c : calls) EXPECT_LT(c["status"].get<int>(), 300) << c.dump();
  const Json& state = r.state;
  // Remediations by node, in order.
  std::map<std::string, std::vector<Json>> by_node;
  for (const Json& rem : state["remediations"]) by_node[rem["NodeId"]].push_back(rem);
  std::map<std::string, std::string> node_of_call;  // the node each fault step named
  for (const Json& c : calls) {
    if (c["call"] == "fault") node_of_call[std::to_string(c["step"].get<int>())] = "";
  }
  std::vector<std::string> ladder_79, hung;
  std::string migrated;
  for (const auto& [node, rems] : by_node) {
    if (rems.front()["Fault"] == "xid:119") {
      for (const Json& x : rems) ladder_79.push_back(x["EffectiveAction"]);
    } else if (rems.front()["Fault"].get<std::string>().rfind("npd-", 0) == 0) {
      for (const Json& x : rems)
        hung.push_back(x["EffectiveAction"].get<std::string>() + ":" +
                       x["Status"].get<std::string>());
    } else if (rems.front()["EffectiveAction"] == "migrate") {
      migrated = node;
      EXPECT_EQ(rems.front()["Approver"], "bob");
      EXPECT_EQ(rems.front()["Status"], "Succeeded");
    }
  }
  EXPECT_EQ(ladder_79, (std::vector<std::string>{"reboot", "reboot", "migrate"}));
  EXPECT_EQ(hung,
            (std::vector<std::string>{"reboot:Failed", "reboot:Failed", "reprovision:Succeeded"}));
  EXPECT_FALSE(migrated.empty());
  int discarded = 0, disk = 0;
  for (const Json& a : state["alerts"]) {
    discarded += a["State"] == "discarded";
    disk += a["Detector"] == "disk-pressure";
  }
  EXPECT_EQ(discarded, 1);
  EXPECT_EQ(disk, 1);
  // Two tickets: the host that failed its NCCL burn-in, and the suspect host (no burn-in).
  ASSERT_EQ(state["tickets"].size(), 2u);
  int burn_in_failed = 0, suspect = 0;
  for (const Json& t : state["tickets"]) {
    if (t["Checks"].size() > 1 && t["Checks"][1]["Result"] == "fail") ++burn_in_failed;
    if (t["Summary"].get<std::string>().find("suspect host") != std::string::npos) ++suspect;
  }
  EXPECT_EQ(burn_in_failed, 1);
  EXPECT_EQ(suspect, 1);
  auto m = parse_json(read(dir.file("metrics.json")));
  ASSERT_TRUE(m.ok());
  EXPECT_EQ((*m)["remediations"]["proposed"], 7);
  EXPECT_EQ((*m)["remediations"]["escalated"], 2);
  EXPECT_EQ((*m)["remediations"]["tickets"], 2);
  // The same seed gives the same run.
  TempDir again;
  SimulationReport r2 =
      run(example("node-faults.yaml"), again.path(), std::nullopt, std::nullopt, hours(14));
  EXPECT_EQ(r2.state, r.state);
}

TEST(Simulation, HealthStepOnANodeThatDoesNotExistIsAnsweredAndRecorded) {
  TempDir dir;
  const std::string file = dir.file("s.yaml");
  std::ofstream(file) << R"(
steps:
  - { at: 10m, fault: { node: workers/0, signal: "NVRM: Xid (PCI:0000:18:00): 79, pid=1, GPU has fallen off the bus." }, as: ops }
  - { at: 20m, priority: { serviceJob: s, value: 3 } }
  - { at: 30m, call: GET /v1/clusters/nope }
)";
  SimulationReport r = run(file, dir.path(), std::nullopt, std::nullopt, hours(1));
  EXPECT_EQ(r.until, hours(1));
  EXPECT_EQ(r.steps_run, 3u);
  EXPECT_EQ(r.steps_not_implemented, 0u);
  EXPECT_EQ(r.steps_failed, 3u);
  std::vector<Json> calls = read_jsonl(dir.file("calls.jsonl"));
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(calls[0]["call"], "fault");
  EXPECT_EQ(calls[0]["status"], 404);
  EXPECT_EQ(calls[0]["as"], "ops");
  EXPECT_EQ(calls[0]["t"], 600);
  EXPECT_NE(calls[0]["body"]["message"].get<std::string>().find(
                "no cluster has an instance group named workers"),
            std::string::npos)
      << calls[0].dump();
  EXPECT_EQ(calls[1]["status"], 404);  // the priority step runs: no service job "s"
  EXPECT_EQ(calls[2]["status"], 404);
}

TEST(Simulation, UntilCutsTheRunAndSkipsLaterStepsAndARerunReplacesTheOutputs) {
  TempDir dir;
  SimulationReport r =
      run(example("mincount-rollback.yaml"), dir.path(), std::nullopt, std::nullopt, hours(1));
  EXPECT_EQ(r.steps_run, 1u);
  EXPECT_EQ(r.steps_skipped, 3u);
  EXPECT_EQ(r.state["t"], 3600);
  // A second run into the same directory starts from an empty journal, not the previous one.
  SimulationReport again =
      run(example("mincount-rollback.yaml"), dir.path(), std::nullopt, std::nullopt, hours(1));
  EXPECT_EQ(again.state, r.state);
  EXPECT_EQ(again.events, r.events);
}

TEST(Simulation, TimesAreWholeSecondsOrFractions) {
  EXPECT_EQ(seconds_since_start(kSimEpoch + hours(2)), 7200);
  EXPECT_TRUE(seconds_since_start(kSimEpoch + hours(2)).is_number_integer());
  EXPECT_EQ(seconds_since_start(kSimEpoch + std::chrono::milliseconds(1500)).get<double>(), 1.5);
}

}  // namespace
}  // namespace gf
