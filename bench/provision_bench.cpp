// The whole provisioning simulation for a 2,000-node cluster: 4 worker groups of 500
// ml.p5.48xlarge, capacity arriving in 10 steps over 6 virtual hours, run by the real
// controllers on a virtual clock (journal on a temp file, no fsync, as `simulate` does).
// Reports wall time per run, the controllers' time per loop batch (p50, p99) and events/s.
// Goal: the whole scenario in under 1 s.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <filesystem>

#include "cloud/sim/sim_cloud.h"
#include "journal/sqlite/sqlite_journal.h"
#include "loop/virtual_runner.h"
#include "runtime/runtime.h"

namespace gf {
namespace {

std::string cluster_json() {
  Json groups = Json::array();
  groups.push_back(
      {{"InstanceGroupName", "controller"},
       {"InstanceType", "ml.m5.xlarge"},
       {"InstanceCount", 1},
       {"LifeCycleConfig", {{"SourceS3Uri", "s3://b/lc/"}, {"OnCreate", "on_create.sh"}}},
       {"SlurmConfig", {{"NodeType", "Controller"}}}});
  for (int i = 0; i < 4; ++i) {
    groups.push_back(
        {{"InstanceGroupName", "workers-" + std::to_string(i)},
         {"InstanceType", "ml.p5.48xlarge"},
         {"InstanceCount", 500},
         {"LifeCycleConfig", {{"SourceS3Uri", "s3://b/lc/"}, {"OnCreate", "on_create.sh"}}},
         {"SlurmConfig", {{"NodeType", "Compute"}, {"PartitionNames", {"gpu"}}}}});
  }
  return Json{
      {"ClusterName", "big"}, {"NodeProvisioningMode", "Continuous"}, {"InstanceGroups", groups}}
      .dump();
}

void BM_Provision2000Nodes(benchmark::State& state) {
  SimCloudConfig cloud;
  cloud.capacity = {{"ml.p5.48xlarge", 200}};
  for (int step = 1; step <= 10; ++step) {
    cloud.changes.push_back({minutes(36) * step, {{"ml.p5.48xlarge", 200 * (step + 1)}}});
  }
  const std::string body = cluster_json();
  std::vector<int64_t> timings;
  int64_t events = 0;
  double seconds_total = 0;
  for (auto _ : state) {
    state.PauseTiming();
    const auto dir =
        std::filesystem::temp_directory_path() / ("gf-bench-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    auto journal =
        std::move(SqliteJournal::open((dir / "j.db").string(), {.fsync = false})).value();
    VirtualClock clock;
    RuntimeOptions opts;
    opts.cloud = sim_cloud(cloud);
    opts.api.drive_loop_inline = true;
    opts.loop.snapshot_every_events = 0;
    Runtime rt(opts, clock, *journal);
    (void)rt.recover();
    rt.loop().record_controller_timings(&timings);
    VirtualRunner runner(rt.loop(), clock);
    state.ResumeTiming();

    const int64_t t0 = monotonic_nanos();
    HttpRequest req;
    req.method = "POST";
    req.path = "/v1/clusters";
    req.body = body;
    rt.api().handle(req);
    runner.run_for(hours(7));
    seconds_total += static_cast<double>(monotonic_nanos() - t0) / 1e9;

    state.PauseTiming();
    events += rt.loop().state().applied_seq();
    const Cluster* c = rt.loop().state().view().find_cluster("big");
    int64_t running = 0;
    for (int i = 0; i < 4; ++i) running += c->current_count("workers-" + std::to_string(i));
    if (running != 2000) state.SkipWithError("not every worker came up");
    std::filesystem::remove_all(dir);
    state.ResumeTiming();
  }
  std::sort(timings.begin(), timings.end());
  auto pct = [&](double p) {
    return timings.empty()
               ? 0.0
               : static_cast<double>(timings[static_cast<size_t>(p * (timings.size() - 1))]) / 1e3;
  };
  state.counters["batches"] =
      static_cast<double>(timings.size()) / static_cast<double>(state.iterations());
  state.counters["controller_p50_us"] = pct(0.5);
  state.counters["controller_p99_us"] = pct(0.99);
  state.counters["events_per_s"] = static_cast<double>(events) / seconds_total;
  state.counters["events"] = static_cast<double>(events) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_Provision2000Nodes)->Unit(benchmark::kMillisecond)->Iterations(1)->Repetitions(3);

}  // namespace
}  // namespace gf
