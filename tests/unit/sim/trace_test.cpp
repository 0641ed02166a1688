// Job traces as simulation input (docs/scenarios.md "Traces"): the ITP and Alibaba formats, gangs,
// sampling, namespaces, and errors that name the file, line and column.
#include "sim/trace.h"

#include <gtest/gtest.h>

#include "sim/scenario.h"

namespace gf {
namespace {

TraceSpec spec_of(const std::string& yaml) {
  auto doc = parse_yaml(yaml);
  EXPECT_TRUE(doc.ok()) << doc.status().message();
  auto spec = parse_trace_spec(*doc, "traces[0]", "/base");
  EXPECT_TRUE(spec.ok()) << spec.status().message();
  return spec.ok() ? *spec : TraceSpec{};
}

constexpr const char* kItp =
    "job_id,submission_time,duration,num_gpu\n"
    "c9c620ea-4336-c1a9-8abe-e26bd13076b8,5810,288476,16\n"
    "be631d51-a07b-5693-739f-f4379ec5d0cc,5813,600,1\n"
    "aaaaaaaa-0000-0000-0000-000000000001,100,3600,8\n";

TEST(TraceTest, ItpRowsBecomeJobsAtTheirSubmissionTimesInTimeOrder) {
  TraceSpec spec = spec_of("{file: c.csv, namespace: team-a}");
  auto jobs = parse_trace(kItp, spec, 0, 1, "cluster04.csv");
  ASSERT_TRUE(jobs.ok()) << jobs.status().message();
  ASSERT_EQ(jobs->size(), 3u);
  EXPECT_EQ((*jobs)[0].at, seconds(100));
  EXPECT_EQ((*jobs)[0].run, seconds(3600));
  EXPECT_EQ((*jobs)[0].gpus, 8);
  EXPECT_EQ((*jobs)[0].pods, 1);
  EXPECT_EQ((*jobs)[0].ns, "team-a");
  EXPECT_EQ((*jobs)[0].row, 3u);
  EXPECT_EQ((*jobs)[1].name, "cluster04-c9c620ea-4336-c1a9-8abe-e26bd13076b8");
  EXPECT_EQ(spec.path, "/base/c.csv");
  EXPECT_DOUBLE_EQ(trace_gpu_hours(*jobs), 8.0 + 16 * 288476 / 3600.0 + 600 / 3600.0);
}

TEST(TraceTest, ItpJobAboveGpusPerPodIsAGangOfFullPods) {
  TraceSpec spec = spec_of("{file: c.csv}");
  auto jobs = parse_trace(kItp, spec, 0, 1, "c.csv");
  ASSERT_TRUE(jobs.ok());
  const TraceJob& gang = (*jobs)[1];
  EXPECT_EQ(gang.gpus, 16);
  EXPECT_EQ(gang.pods, 2);
  const Json m = trace_job_manifest(gang, spec);
  EXPECT_EQ(m["kind"], "PyTorchJob");
  EXPECT_EQ(m["metadata"]["namespace"], "default");
  EXPECT_EQ(m["metadata"]["annotations"]["gpufleet.io/duration"], "288476s");
  const Json& specs = m["spec"]["pytorchReplicaSpecs"];
  EXPECT_EQ(specs["Master"]["replicas"], 1);
  EXPECT_EQ(specs["Worker"]["replicas"], 1);
  EXPECT_EQ(specs["Worker"]["template"]["spec"]["containers"][0]["resources"]["requests"]
                 ["nvidia.com/gpu"],
            8);
}

TEST(TraceTest, CheckpointAndRestartOverheadBecomeAnnotations) {
  TraceSpec spec = spec_of("{file: c.csv, checkpointInterval: 30m, restartOverhead: 5m}");
  auto jobs = parse_trace(kItp, spec, 0, 1, "c.csv");
  ASSERT_TRUE(jobs.ok());
  const Json m = trace_job_manifest(jobs->front(), spec);
  EXPECT_EQ(m["metadata"]["annotations"]["gpufleet.io/checkpoint-interval"], "30m");
  EXPECT_EQ(m["metadata"]["annotations"]["gpufleet.io/restart-overhead"], "5m");
}

TEST(TraceTest, SamplingIsSeededPerRowAndTimeScaleCompressesArrivals) {
  std::string text = "job_id,submission_time,duration,num_gpu\n";
  for (int i = 0; i < 2000; ++i)
    text += "job-" + std::to_string(i) + "," + std::to_string(i * 10) + ",600,1\n";
  TraceSpec half = spec_of("{file: c.csv, sample: 0.5, timeScale: 0.5, start: 1h}");
  auto a = parse_trace(text, half, 0, 7, "c.csv");
  auto b = parse_trace(text, half, 0, 7, "c.csv");
  auto c = parse_trace(text, half, 0, 8, "c.csv");
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_GT(a->size(), 850u);
  EXPECT_LT(a->size(), 1150u);
  ASSERT_EQ(a->size(), b->size());
  for (size_t i = 0; i < a->size(); ++i) EXPECT_EQ((*a)[i].name, (*b)[i].name);
  EXPECT_NE(a->front().name + a->back().name, c->front().name + c->back().name);
  // Row "job-10" was submitted at 100 s: at 1h + 50 s after scaling, if kept.
  for (const TraceJob& j : *a) {
    if (j.name == "c-job-10") {
      EXPECT_EQ(j.at, hours(1) + seconds(50));
    }
  }
  TraceSpec limited = spec_of("{file: c.csv, limit: 5}");
  EXPECT_EQ(parse_trace(text, limited, 0, 1, "c.csv")->size(), 5u);
}

TEST(TraceTest, AlibabaPodsThatRanBecomeSingleJobsAndAGpuShareTakesOneGpu) {
  constexpr const char* kOpenb =
      "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
      "deletion_time,scheduled_time\n"
      "openb-pod-0000,12000,16384,1,1000,,LS,Running,0,12537496,0\n"
      "openb-pod-0001,6000,12288,1,460,,LS,Running,427061,12902960,427061\n"
      "openb-pod-0002,88000,327680,0,0,,BE,Pending,500,,\n"
      "openb-pod-0003,4000,8192,8,1000,,BE,Failed,100,700,200\n";
  TraceSpec spec = spec_of("{file: p.csv, namespaceColumn: qos}");
  auto jobs = parse_trace(kOpenb, spec, 2, 1, "openb.csv");
  ASSERT_TRUE(jobs.ok()) << jobs.status().message();
  ASSERT_EQ(jobs->size(), 3u);  // the Pending pod never ran
  EXPECT_EQ((*jobs)[0].name, "openb-openb-pod-0000");
  EXPECT_EQ((*jobs)[0].ns, "ls");
  EXPECT_EQ((*jobs)[0].cpu_milli, 12000);
  EXPECT_EQ((*jobs)[1].gpus, 8);
  EXPECT_EQ((*jobs)[1].run, seconds(500));  // deletion - scheduled
  EXPECT_EQ((*jobs)[1].ns, "be");
  EXPECT_EQ((*jobs)[2].gpus, 1);  // 460 milli-GPU: one whole GPU
  EXPECT_EQ((*jobs)[2].trace, 2u);
  const Json m = trace_job_manifest((*jobs)[2], spec);
  const Json& req = m["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["containers"][0]
                     ["resources"]["requests"];
  EXPECT_EQ(req["cpu"], "6000m");
  EXPECT_EQ(req["memory"], "12288Mi");
  EXPECT_EQ(req["nvidia.com/gpu"], 1);
}

TEST(TraceTest, BadRowsAreRefusedNamingFileLineAndColumn) {
  TraceSpec spec = spec_of("{file: c.csv}");
  auto bad =
      parse_trace("job_id,submission_time,duration,num_gpu\nx,5,oops,1\n", spec, 0, 1, "c.csv");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "c.csv: line 2: duration: expected an integer, got \"oops\"");
  auto negative =
      parse_trace("job_id,submission_time,duration,num_gpu\nx,-5,10,1\n", spec, 0, 1, "c.csv");
  EXPECT_NE(negative.status().message().find("line 2: submission_time: -5 is outside"),
            std::string::npos);
  auto header = parse_trace("a,b\n1,2\n", spec, 0, 1, "c.csv");
  EXPECT_NE(header.status().message().find("not a known trace header"), std::string::npos);
  auto short_row =
      parse_trace("job_id,submission_time,duration,num_gpu\nx,5\n", spec, 0, 1, "c.csv");
  EXPECT_NE(short_row.status().message().find("too few columns"), std::string::npos);
  auto dup = parse_trace("job_id,submission_time,duration,num_gpu\nx,5,10,1\nx,6,10,1\n", spec, 0,
                         1, "c.csv");
  ASSERT_TRUE(dup.ok());  // a repeated id gets the row number added
  EXPECT_EQ((*dup)[1].name, "c-x-r2");
  auto quoted =
      parse_trace("job_id,submission_time,duration,num_gpu\n\"x\",5,10,1\n", spec, 0, 1, "c.csv");
  EXPECT_NE(quoted.status().message().find("quoted fields"), std::string::npos);
  EXPECT_FALSE(parse_trace("", spec, 0, 1, "c.csv").ok());
}

TEST(TraceTest, SpecFieldsAreCheckedByName) {
  auto doc = parse_yaml("{file: c.csv, sampel: 0.5}");
  auto bad = parse_trace_spec(*doc, "traces[1]", ".");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("traces[1].sampel: unknown field"), std::string::npos);
  doc = parse_yaml("{file: c.csv, sample: 0}");
  EXPECT_NE(parse_trace_spec(*doc, "traces[0]", ".")
                .status()
                .message()
                .find("traces[0].sample: must be above 0"),
            std::string::npos);
  doc = parse_yaml("{file: c.csv, namespace: Team_A}");
  EXPECT_NE(parse_trace_spec(*doc, "traces[0]", ".")
                .status()
                .message()
                .find("traces[0].namespace: expected a DNS-1123 label"),
            std::string::npos);
  doc = parse_yaml("{file: c.csv, format: csv}");
  EXPECT_NE(
      parse_trace_spec(*doc, "traces[0]", ".").status().message().find("expected itp or alibaba"),
      std::string::npos);
}

TEST(TraceTest, ScenarioTracesAreReadAndAMissingFileNamesTheEntry) {
  auto s = parse_scenario("traces: [{file: nowhere.csv}]\n", "/nonexistent");
  ASSERT_TRUE(s.ok()) << s.status().message();
  const Status st = load_traces(*s, 1);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("traces[0]: cannot read /nonexistent/nowhere.csv"),
            std::string::npos);
  auto example =
      load_scenario(std::string(GPUFLEET_SOURCE_DIR) + "/examples/scenarios/itp-fleet.yaml");
  ASSERT_TRUE(example.ok()) << example.status().message();
  ASSERT_TRUE(load_traces(*example, 1).ok());
  EXPECT_EQ(example->trace_jobs.size(), 84u + 141u);
  EXPECT_GT(example->last_scheduled(), hours(200));  // the last job's end in the trace
}

TEST(TraceTest, SetScenarioValueEditsDottedPathsAndRefusesBadKeys) {
  Json doc = Json::parse(R"({"steps":[{"at":0,"body":{"ClusterName":"c"}}],"config":{}})");
  ASSERT_TRUE(set_scenario_value(doc, "config.reservation=false").ok());
  EXPECT_EQ(doc["config"]["reservation"], false);
  ASSERT_TRUE(set_scenario_value(doc, "steps[0].body.NodeRecovery=None").ok());
  EXPECT_EQ(doc["steps"][0]["body"]["NodeRecovery"], "None");
  ASSERT_TRUE(set_scenario_value(doc, "failures.operator={responseTime: 1h}").ok());
  EXPECT_EQ(doc["failures"]["operator"]["responseTime"], "1h");
  ASSERT_TRUE(set_scenario_value(doc, "failures=").ok());
  EXPECT_FALSE(doc.contains("failures"));
  EXPECT_EQ(set_scenario_value(doc, "steps[3].at=1").message(),
            "--set steps[3].at: there is no item 3 there");
  EXPECT_FALSE(set_scenario_value(doc, "novalue").ok());
  EXPECT_FALSE(set_scenario_value(doc, "steps[x]=1").ok());
}

}  // namespace
}  // namespace gf
