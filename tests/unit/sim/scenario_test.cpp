// Scenario parsing (docs/scenarios.md): every step kind, `$file` resolution, ordering, and errors
// that name the field path.
#include "sim/scenario.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "support/temp_dir.h"

namespace gf {
namespace {

using testing::TempDir;

void write(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path) << text;
}

Scenario parse_ok(const std::string& text, const std::string& base = ".") {
  auto s = parse_scenario(text, base);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return s.ok() ? *s : Scenario{};
}

std::string parse_error(const std::string& text, const std::string& base = ".") {
  auto s = parse_scenario(text, base);
  EXPECT_FALSE(s.ok()) << text;
  return s.ok() ? "" : s.status().message();
}

TEST(Scenario, ParsesTheSpecExampleWithEveryStepKind) {
  TempDir dir;
  write(dir.file("create_cluster.json"), R"({"ClusterName": "c1", "InstanceGroups": []})");
  write(dir.file("pytorchjob.yaml"),
        "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\n"
        "metadata: { name: j1 }\n");
  write(dir.file("scenarios/x.yaml"), "");
  const std::string text = R"(
name: seed-example
seed: 7
config: { minCountTimeout: 3h, retryBase: 10s, retryMax: 5m }
cloud:
  launchLatency: 4m
  lifecycleDuration: 6m
  capacity: { ml.m5.xlarge: 10, ml.p5.48xlarge: 10 }
  changes:
    - { at: 2h, capacity: { ml.p5.48xlarge: 16 } }
  launchFaults:
    - { group: controller-group, attempt: 1, outcome: UnhealthyInstance }
steps:
  - { at: 0s,  call: POST /v1/clusters, body: { $file: ../create_cluster.json } }
  - { at: 30m, call: PUT /v1/clusters/c1, body: { InstanceGroups: [] }, as: bob }
  - { at: 1h,  apply: { $file: ../pytorchjob.yaml } }
  - { at: 2h,  fault: { node: worker-gpu-a/3, signal: "NVRM: Xid 79", clearedBy: [reboot], recurs: 0 } }
  - { at: 3h,  clear: { node: worker-gpu-a/3 } }
  - { at: 3h,  approve: { node: workers/2 } }
  - { at: 3h,  reject: { node: i-0abc } }
  - { at: 3h,  cancel: { node: workers/1 } }
  - { at: 4h,  request: { node: workers/0, action: migrate, detector: ops, requestId: r-1 } }
  - { at: 5h,  priority: { serviceJob: svc, value: 7 } }
  - { at: 6h,  call: "GET /v1/billing?groupBy=group&cluster=my%20c" }
)";
  Scenario s = parse_ok(text, dir.file("scenarios"));
  EXPECT_EQ(s.name, "seed-example");
  ASSERT_TRUE(s.seed);
  EXPECT_EQ(*s.seed, 7u);
  EXPECT_EQ(s.config.min_count_timeout, hours(3));
  ProvisionOptions p;
  s.config.apply_to(p);
  EXPECT_EQ(p.retry_base, seconds(10));
  EXPECT_EQ(p.retry_max, minutes(5));
  EXPECT_EQ(s.cloud.launch_latency, minutes(4));
  EXPECT_EQ(s.cloud.capacity.at("ml.p5.48xlarge"), 10);
  ASSERT_EQ(s.cloud.changes.size(), 1u);
  EXPECT_EQ(s.cloud.changes[0].at, hours(2));
  ASSERT_EQ(s.cloud.faults.size(), 1u);
  EXPECT_EQ(s.last_scheduled(), hours(6));

  ASSERT_EQ(s.steps.size(), 11u);
  const ScenarioStep& create = s.steps[0];
  EXPECT_EQ(create.kind, StepKind::kCall);
  EXPECT_EQ(create.method, "POST");
  EXPECT_EQ(create.path, "/v1/clusters");
  EXPECT_EQ(create.as, "anonymous");
  ASSERT_TRUE(create.body);
  EXPECT_EQ((*create.body)["ClusterName"], "c1");  // resolved from ../create_cluster.json
  EXPECT_EQ(s.steps[1].as, "bob");
  EXPECT_EQ(s.steps[1].at, minutes(30));
  EXPECT_EQ(s.steps[2].kind, StepKind::kApply);
  EXPECT_EQ(s.steps[2].value["kind"], "PyTorchJob");  // YAML through $file
  EXPECT_EQ(s.steps[3].kind, StepKind::kFault);
  EXPECT_EQ(s.steps[3].value["node"], "worker-gpu-a/3");
  std::vector<StepKind> kinds;
  for (const auto& st : s.steps) kinds.push_back(st.kind);
  EXPECT_EQ(kinds, (std::vector<StepKind>{StepKind::kCall, StepKind::kCall, StepKind::kApply,
                                          StepKind::kFault, StepKind::kClear, StepKind::kApprove,
                                          StepKind::kReject, StepKind::kCancel, StepKind::kRequest,
                                          StepKind::kPriority, StepKind::kCall}));
  const ScenarioStep& billing = s.steps[10];
  EXPECT_EQ(billing.path, "/v1/billing");
  EXPECT_EQ(billing.query.at("groupBy"), "group");
  EXPECT_EQ(billing.query.at("cluster"), "my c");
  EXPECT_FALSE(billing.body);
  EXPECT_EQ(s.steps[5].label(), "approve");
}

TEST(Scenario, JsonScenariosWorkToo) {
  Scenario s = parse_ok(R"({"name": "j", "steps": [{"at": 60, "call": "DELETE /v1/clusters/x"}]})");
  ASSERT_EQ(s.steps.size(), 1u);
  EXPECT_EQ(s.steps[0].at, seconds(60));  // a bare number is seconds
  EXPECT_EQ(s.steps[0].method, "DELETE");
  EXPECT_FALSE(s.seed);
}

TEST(Scenario, StepsAreOrderedByTimeKeepingFileOrderForEqualTimes) {
  Scenario s = parse_ok(R"(
steps:
  - { at: 2h, call: GET /v1/clusters/a }
  - { at: 1h, call: GET /v1/clusters/b }
  - { at: 2h, call: GET /v1/clusters/c }
  - { at: 0s, call: GET /v1/clusters/d }
  - { at: 1h, call: GET /v1/clusters/e }
)");
  std::string order;
  std::vector<size_t> indexes;
  for (const auto& st : s.steps) {
    order += st.path.back();
    indexes.push_back(st.index);
  }
  EXPECT_EQ(order, "dbeac");
  EXPECT_EQ(indexes, (std::vector<size_t>{3, 1, 4, 0, 2}));
}

TEST(Scenario, FileReferencesResolveRelativeToTheScenarioFileAndNest) {
  TempDir dir;
  write(dir.file("bodies/group.yaml"), "InstanceGroupName: g\nInstanceCount: 2\n");
  write(dir.file("jobs.yaml"), "kind: A\n---\nkind: B\n");
  write(dir.file("s/sc.yaml"), R"(
steps:
  - { at: 1m, call: PUT /v1/clusters/c, body: { InstanceGroups: [ { $file: ../bodies/group.yaml } ] } }
  - { at: 2m, apply: { $file: ../jobs.yaml } }
)");
  auto s = load_scenario(dir.file("s/sc.yaml"));
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->name, "sc");  // no name: the file's stem
  EXPECT_EQ((*s->steps[0].body)["InstanceGroups"][0]["InstanceCount"], 2);
  ASSERT_TRUE(s->steps[1].value.is_array());  // several documents
  EXPECT_EQ(s->steps[1].value[1]["kind"], "B");
}

TEST(Scenario, FileErrorsNameTheFieldAndTheFile) {
  TempDir dir;
  write(dir.file("bad.json"), "{ \"a\": ");
  write(dir.file("two.yaml"), "a: 1\n---\nb: 2\n");
  std::string e = parse_error(
      "steps:\n  - { at: 0s, call: POST /v1/clusters, body: { $file: missing.json } }\n",
      dir.path());
  EXPECT_NE(e.find("steps[0].body.$file: cannot read"), std::string::npos) << e;
  EXPECT_NE(e.find("missing.json"), std::string::npos) << e;
  e = parse_error("steps:\n  - { at: 0s, call: POST /v1/clusters, body: { $file: bad.json } }\n",
                  dir.path());
  EXPECT_EQ(e.rfind("steps[0].body.$file (", 0), 0u) << e;
  e = parse_error("steps:\n  - { at: 0s, call: POST /v1/clusters, body: { $file: two.yaml } }\n",
                  dir.path());
  EXPECT_NE(e.find("holds 2 documents; expected one"), std::string::npos) << e;
  e = parse_error("steps:\n  - { at: 0s, call: POST /v1/x, body: { $file: two.yaml, extra: 1 } }\n",
                  dir.path());
  EXPECT_EQ(e, "steps[0].body: a { $file: PATH } value takes no other keys");
}

TEST(Scenario, ErrorsNameTheFieldPath) {
  EXPECT_EQ(
      parse_error("steps:\n  - { at: 0s, call: GET /v1/clusters }\n  - { at: 1h, call: GET /x }\n"
                  "  - { at: 2h, call: GET /x }\n  - { at: 5x, call: GET /x }\n"),
      "steps[3].at: invalid duration \"5x\": unknown unit 'x' (use ms, s, m, h or d)");
  EXPECT_EQ(parse_error("steps:\n  - { at: 0s, call: GET /x }\n  - { at: 1h }\n"),
            "steps[1]: expected exactly one of call, apply, fault, clear, approve, reject, cancel, "
            "request, priority, delete, got none");
  EXPECT_EQ(parse_error("steps:\n  - { at: 1h, call: GET /x, fault: { node: a/1, signal: x } }\n"),
            "steps[0]: expected exactly one of call, apply, fault, clear, approve, reject, cancel, "
            "request, priority, delete, got call and fault");
  EXPECT_EQ(parse_error("steps:\n  - { call: GET /x }\n"), "steps[0].at: is required");
  EXPECT_EQ(parse_error("steps:\n  - { at: -5, call: GET /x }\n"),
            "steps[0].at: must not be negative");
  EXPECT_EQ(parse_error("config: { minCountTimeout: 3h, maxNodes: 4 }\n"),
            "config.maxNodes: unknown option; supported: minCountTimeout, retryBase, retryMax, "
            "region, account, reservation, backfill");
  EXPECT_EQ(
      parse_error("config: { retryBase: soon }\n").rfind("config.retryBase: invalid duration", 0),
      0u);
  EXPECT_EQ(parse_error("config: { retryBase: 20m, retryMax: 10m }\n"),
            "config.retryMax: retryMax (10m) must not be below retryBase (20m)");
  EXPECT_EQ(parse_error("steps:\n  - { at: 0s, call: FETCH /x }\n"),
            "steps[0].call: unknown method \"FETCH\"; expected GET, POST, PUT, PATCH or DELETE");
  EXPECT_EQ(parse_error("steps:\n  - { at: 0s, call: POST }\n")
                .rfind("steps[0].call: expected \"METHOD /path\"", 0),
            0u);
  EXPECT_EQ(parse_error("steps:\n  - { at: 0s, call: GET v1/x }\n"),
            "steps[0].call: the path must start with /, got \"v1/x\"");
  EXPECT_EQ(parse_error("steps:\n  - { at: 0s, call: GET /x, bdy: {} }\n"),
            "steps[0].bdy: unknown field; expected one of at, as, call, body");
  EXPECT_EQ(parse_error("steps:\n  - { at: 0s, clear: { node: a/1 }, body: {} }\n"),
            "steps[0].body: only a call step takes a body (this step is clear)");
  EXPECT_EQ(parse_error("steps:\n  - { at: 0s, fault: { node: workers, signal: x } }\n"),
            "steps[0].fault.node: expected GROUP/INDEX (workers/2) or an instance id (i-…), got "
            "\"workers\"");
  EXPECT_EQ(parse_error("steps:\n  - { at: 0s, fault: { node: w/1 } }\n"),
            "steps[0].fault.signal: is required");
  EXPECT_EQ(parse_error("steps:\n  - { at: 0s, request: { node: w/1 } }\n"),
            "steps[0].request.action: is required");
  EXPECT_EQ(parse_error("steps:\n  - { at: 0s, priority: { serviceJob: s, value: high } }\n"),
            "steps[0].priority.value: expected integer, got \"high\"");
  EXPECT_EQ(parse_error("steps:\n  - { at: 0s, approve: { node: w/1, why: x } }\n"),
            "steps[0].approve.why: unknown field; expected one of node, reason");
  EXPECT_EQ(parse_error("steps:\n  - { at: 0s, as: 3, call: GET /x }\n"),
            "steps[0].as: expected an identity string, got 3");
  EXPECT_EQ(parse_error("steps:\n  - 5\n"), "steps[0]: expected a step object, got 5");
  EXPECT_EQ(parse_error("steps: { at: 0s }\n"), "steps: expected a list of steps, got an object");
  EXPECT_EQ(parse_error("seed: -1\n"), "seed: expected an integer >= 0, got -1");
  EXPECT_EQ(
      parse_error("nmae: x\n"),
      "nmae: unknown field; expected one of name, seed, config, cloud, steps, traces, failures");
  EXPECT_EQ(parse_error("cloud: { capacty: { ml.c5.xlarge: 1 } }\n"),
            "cloud.capacty: unknown field; expected one of launchLatency, lifecycleDuration, "
            "failureLatency, terminateLatency, capacity, changes, launchFaults, rebootDuration, "
            "reprovisionDuration, migrateDuration, deleteDuration, burnInDuration, "
            "softwareUpdateDuration, burnIn, topology");
  EXPECT_EQ(parse_error("cloud: { changes: [ { at: 1h, capacity: {}, extra: 1 } ] }\n"),
            "cloud.changes[0].extra: unknown field; expected one of at, capacity");
  EXPECT_EQ(parse_error("cloud: { launchFaults: [ { group: g, attempt: 1, outcome: Boom } ] }\n")
                .rfind("cloud.launchFaults[0].outcome:", 0),
            0u);
  EXPECT_EQ(parse_error("cloud: { capacity: { ml.c5.xlarge: -1 } }\n")
                .rfind("cloud.capacity.ml.c5.xlarge:", 0),
            0u);
  EXPECT_EQ(parse_error("- a\n- b\n").rfind("scenario: expected a map", 0), 0u);
}

TEST(Scenario, LoadNamesAMissingFile) {
  auto s = load_scenario("/nonexistent/scenario.yaml");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("/nonexistent/scenario.yaml"), std::string::npos);
}

TEST(Scenario, EveryShippedExampleParses) {
  const std::filesystem::path dir =
      std::filesystem::path(GPUFLEET_SOURCE_DIR) / "examples/scenarios";
  size_t n = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".yaml") continue;
    auto s = load_scenario(entry.path().string());
    EXPECT_TRUE(s.ok()) << entry.path() << ": " << s.status().message();
    ++n;
  }
  EXPECT_GE(n, 5u);
}

}  // namespace
}  // namespace gf
