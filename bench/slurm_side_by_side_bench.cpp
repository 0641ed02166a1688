// Side by side, in one run: the same stream of gang jobs into (a) a real slurmctld and (b)
// gpufleet's control plane, on the same node shapes and counts (docs/performance.md "Side by side
// with Slurm").
//
// The stream: job sizes in GPUs drawn from the Microsoft ITP trace (itp_trace.h), capped at 64;
// a job of g <= 8 GPUs is one task/pod of g GPUs on one node, a larger one ceil(g/8) nodes of 8
// (gangs of 1-8 nodes). Jobs are drawn until they would fill 80% of the fleet's GPUs, so that both
// systems can start every job at once and what is measured is deciding, not waiting for room.
// The fleet: N nodes of 8 GPUs (Slurm: 8 CPU slots per node, one per GPU; gpufleet:
// ml.p5.48xlarge).
//
// Slurm: its own munged, slurmctld and one `slurmd -N` per node on this machine (Debian's
// slurm-wlm-emulator is not built with front-end support, so many slurmd is the way to give one
// slurmctld hundreds of nodes here), SchedulerParameters tuned for throughput
// (batch_sched_delay=0, sched_min_interval=0, default_queue_depth=1000). gpufleet: the whole
// control plane in process (API handlers, loop, journal on SQLite, scheduler), the cluster
// provisioned on the simulated cloud first (virtual time), every request through Api::handle.
//
// Three figures per system, on the same jobs:
//   submit throughput   jobs accepted per second by one client submitting back to back
//                       (Slurm: `sbatch` per job; gpufleet: POST /v1/apply per job), while
//                       scheduling is held (Slurm: partition DOWN; gpufleet: the jobs' namespace
//                       has no quota leaf yet)
//   decisions/s         the held backlog released at once (Slurm: partition UP; gpufleet: the
//                       ElasticQuotaTree that covers the namespace is applied): jobs started per
//                       second until the last one started (Slurm: polled with squeue every 50 ms)
//   submit -> start     a stream of single submissions into an idle fleet, each waiting for its
//                       start: wall time from the submission to the job running (Slurm: sbatch
//                       to squeue showing RUNNING, polled every 5 ms; gpufleet: the POST, which
//                       runs the scheduling pass that places it), p50 and p99
//
//   cmake --build build -j2 --target slurm_side_by_side_bench
//   build/bench/slurm_side_by_side_bench            # 128 nodes (GF_SLURM_BENCH_NODES=N for more)
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "cloud/sim/sim_cloud.h"
#include "core/json.h"
#include "itp_trace.h"
#include "journal/sqlite/sqlite_journal.h"
#include "loop/virtual_runner.h"
#include "os/process.h"
#include "runtime/runtime.h"
#include "support/slurm_daemons.h"
#include "support/temp_dir.h"

namespace gf {
namespace {

using WallClock = std::chrono::steady_clock;

double secs(WallClock::duration d) { return std::chrono::duration<double>(d).count(); }

struct Job {
  int64_t gpus = 0;
  int64_t nodes = 0;  // 1 for gpus <= 8, else gpus / 8
};

std::vector<Job> make_stream(int64_t fleet_gpus, uint64_t seed) {
  Random rng(seed);
  std::vector<Job> out;
  int64_t used = 0;
  for (int tries = 0; tries < 100000; ++tries) {
    int64_t g = std::min<int64_t>(bench::size_dist().sample(rng), 64);
    if (g > 8) g = (g + 7) / 8 * 8;
    if (used + g > fleet_gpus * 8 / 10) {
      if (fleet_gpus * 8 / 10 - used < 1) break;
      continue;  // too big for what is left: a smaller one may fit
    }
    used += g;
    out.push_back({g, g <= 8 ? 1 : g / 8});
  }
  return out;
}

struct Figures {
  double submit_per_s = 0;
  double decisions_per_s = 0;
  double controller_decisions_per_s = 0;  // gpufleet: per second of controller time alone
  double p50_ms = 0, p99_ms = 0;
  size_t started = 0, jobs = 0;
  std::string note;
};

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

// ---- Slurm ----------------------------------------------------------------------------------

std::vector<std::string> sbatch_args(const Job& j, const std::string& partition,
                                     const std::string& name) {
  const int64_t per_node = std::min<int64_t>(j.gpus, 8);
  return {"sbatch",
          "--parsable",
          "-J",
          name,
          "-p",
          partition,
          "-N",
          std::to_string(j.nodes),
          "-n",
          std::to_string(j.gpus),
          "--ntasks-per-node",
          std::to_string(per_node),
          "-o",
          "/dev/null",
          "--wrap",
          "sleep 3600"};
}

Result<std::string> tool(const testing::SlurmDaemons& s, std::vector<std::string> argv) {
  os::SpawnOptions o;
  o.argv = std::move(argv);
  o.env = {{"SLURM_CONF", s.conf()}};
  GF_ASSIGN_OR_RETURN(os::Output out, os::run(o, std::chrono::seconds(30)));
  if (out.exit.code != 0) return unavailable_error(o.argv[0] + ": " + out.out);
  return out.out;
}

size_t running_jobs(const testing::SlurmDaemons& s) {
  auto out = tool(s, {"squeue", "-h", "-t", "running", "-o", "%i"});
  if (!out.ok()) return 0;
  return static_cast<size_t>(std::count(out->begin(), out->end(), '\n'));
}

Figures run_slurm(int nodes, const std::vector<Job>& backlog, const std::vector<Job>& stream) {
  Figures f;
  f.jobs = backlog.size();
  testing::SlurmDaemons slurm(nodes, "gpu", 0, 8);
  const auto up0 = WallClock::now();
  if (std::string err = slurm.start(); !err.empty()) {
    f.note = "Slurm did not start: " + err;
    return f;
  }
  std::fprintf(stderr, "slurm: %d nodes idle after %.1f s\n", nodes, secs(WallClock::now() - up0));

  // submit -> start, one job at a time into the idle fleet.
  std::vector<double> latencies;
  for (size_t i = 0; i < stream.size(); ++i) {
    const auto t0 = WallClock::now();
    auto id = tool(slurm, sbatch_args(stream[i], "gpu", fmt::format("lat{}", i)));
    if (!id.ok()) break;
    const std::string job = id->substr(0, id->find_first_of(";\n"));
    for (auto end = t0 + std::chrono::seconds(30); WallClock::now() < end;) {
      auto st = tool(slurm, {"squeue", "-h", "-j", job, "-o", "%T"});
      if (st.ok() && st->rfind("RUNNING", 0) == 0) {
        latencies.push_back(secs(WallClock::now() - t0) * 1000);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  f.p50_ms = percentile(latencies, 0.5);
  f.p99_ms = percentile(latencies, 0.99);
  (void)tool(slurm, {"scancel", "--me"});
  for (auto end = WallClock::now() + std::chrono::seconds(60);
       WallClock::now() < end && running_jobs(slurm) > 0;)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));

  // The backlog: held, submitted, released.
  (void)tool(slurm, {"scontrol", "update", "PartitionName=gpu", "State=DOWN"});
  const auto s0 = WallClock::now();
  size_t submitted = 0;
  for (size_t i = 0; i < backlog.size(); ++i)
    submitted += tool(slurm, sbatch_args(backlog[i], "gpu", fmt::format("b{}", i))).ok();
  f.submit_per_s = static_cast<double>(submitted) / secs(WallClock::now() - s0);
  const auto r0 = WallClock::now();
  (void)tool(slurm, {"scontrol", "update", "PartitionName=gpu", "State=UP"});
  for (auto end = r0 + std::chrono::seconds(600); WallClock::now() < end;) {
    f.started = running_jobs(slurm);
    if (f.started >= submitted) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  f.decisions_per_s = static_cast<double>(f.started) / secs(WallClock::now() - r0);
  slurm.stop();
  return f;
}

// ---- gpufleet -------------------------------------------------------------------------------

std::string job_yaml(const Job& j, const std::string& ns, const std::string& name) {
  const int64_t pods = j.nodes;
  const int64_t per_pod = j.gpus <= 8 ? j.gpus : 8;
  std::string y = fmt::format(
      "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {{name: {}, namespace: {}, "
      "labels: {{app: bench}}}}\nspec:\n  pytorchReplicaSpecs:\n    Master:\n      replicas: 1\n"
      "      template:\n        spec:\n          containers:\n          - name: pytorch\n"
      "            image: x\n            resources: {{requests: {{nvidia.com/gpu: {}}}, limits: "
      "{{nvidia.com/gpu: {}}}}}\n",
      name, ns, per_pod, per_pod);
  if (pods > 1) {
    y += fmt::format(
        "    Worker:\n      replicas: {}\n      template:\n        spec:\n          containers:\n"
        "          - name: pytorch\n            image: x\n            resources: {{requests: "
        "{{nvidia.com/gpu: {}}}, limits: {{nvidia.com/gpu: {}}}}}\n",
        pods - 1, per_pod, per_pod);
  }
  return y;
}

std::string policy_yaml(const std::string& ns, bool suspend) {
  return fmt::format(
      "apiVersion: policy.one.alibabacloud.com/v1alpha1\nkind: PropagationPolicy\nmetadata: "
      "{{name: bench, namespace: {}}}\nspec:\n  suspension: {{scheduling: {}}}\n  placement:\n"
      "    replicaScheduling: {{replicaSchedulingType: Divided, customSchedulingType: Gang}}\n"
      "  resourceSelectors:\n  - apiVersion: kubeflow.org/v1\n    kind: PyTorchJob\n",
      ns, suspend ? "true" : "false");
}

std::string quota_yaml(const std::string& ns, int64_t gpus) {
  return fmt::format(
      "apiVersion: scheduling.sigs.k8s.io/v1beta1\nkind: ElasticQuotaTree\nmetadata: {{name: "
      "elasticquotatree, namespace: kube-system}}\nspec:\n  root:\n    name: root\n    max: "
      "{{nvidia.com/gpu: {0}, kube-queue/max-jobs: 1000000}}\n    min: {{nvidia.com/gpu: {0}}}\n"
      "    children:\n    - name: bench\n      max: {{nvidia.com/gpu: {0}, kube-queue/max-jobs: "
      "1000000}}\n      min: {{nvidia.com/gpu: {0}}}\n      namespaces: [{1}]\n",
      gpus, ns);
}

struct InProcess {
  testing::TempDir dir;
  VirtualClock clock;
  std::unique_ptr<SqliteJournal> journal;
  std::unique_ptr<Runtime> runtime;
  std::unique_ptr<VirtualRunner> runner;

  explicit InProcess(bool fsync) {
    RuntimeOptions o;
    o.cloud = sim_cloud(SimCloudConfig{});
    o.api.drive_loop_inline = true;
    journal = std::move(SqliteJournal::open(dir.file("journal.db"), {.fsync = fsync})).value();
    runtime = std::make_unique<Runtime>(o, clock, *journal);
    if (Status st = runtime->recover(); !st.ok()) throw std::runtime_error(st.to_string());
    runner = std::make_unique<VirtualRunner>(runtime->loop(), clock);
  }
  HttpResponse call(const std::string& method, const std::string& path, const std::string& body) {
    HttpRequest req;
    req.method = method;
    req.path = path;
    req.body = body;
    return runtime->api().handle(req);
  }
  size_t placed(const std::string& ns) {
    size_t n = 0;
    for (const auto& [id, job] : runtime->loop().state().view().jobs)
      n += job->ns == ns && job->admitted && !job->pod_nodes.empty();
    return n;
  }
};

Figures run_gpufleet(int nodes, const std::vector<Job>& backlog, const std::vector<Job>& stream,
                     bool fsync) {
  Figures f;
  f.jobs = backlog.size();
  InProcess g(fsync);
  Json cluster = {
      {"ClusterName", "bench"},
      {"NodeProvisioningMode", "Continuous"},
      {"Orchestrator", {{"Native", Json::object()}}},
      {"InstanceGroups", Json::array({{{"InstanceGroupName", "gpu"},
                                       {"InstanceType", "ml.p5.48xlarge"},
                                       {"InstanceCount", nodes},
                                       {"ExecutionRole", "arn:aws:iam::111122223333:role/r"}}})}};
  if (g.call("POST", "/v1/clusters", cluster.dump()).status != 200) {
    f.note = "gpufleet: cluster refused";
    return f;
  }
  g.runner->run_for(hours(1));

  // submit -> start, one job at a time (no suspension: straight to placement).
  if (g.call("POST", "/v1/apply", policy_yaml("lat", false)).status != 200) {
    f.note = "gpufleet: policy refused";
    return f;
  }
  std::vector<double> latencies;
  for (size_t i = 0; i < stream.size(); ++i) {
    const auto t0 = WallClock::now();
    HttpResponse r = g.call("POST", "/v1/apply", job_yaml(stream[i], "lat", fmt::format("l{}", i)));
    const double ms = secs(WallClock::now() - t0) * 1000;
    if (r.status == 200 && g.placed("lat") == i + 1) latencies.push_back(ms);
  }
  f.p50_ms = percentile(latencies, 0.5);
  f.p99_ms = percentile(latencies, 0.99);
  for (size_t i = 0; i < stream.size(); ++i)
    g.call("DELETE", fmt::format("/v1/objects/pytorchjobs/lat/l{}", i), "");
  g.runner->run_for(minutes(1));

  // The backlog: held (no quota leaf covers the namespace yet), submitted, released.
  g.call("POST", "/v1/apply", policy_yaml("bench", true));
  const auto s0 = WallClock::now();
  size_t submitted = 0;
  for (size_t i = 0; i < backlog.size(); ++i) {
    submitted +=
        g.call("POST", "/v1/apply", job_yaml(backlog[i], "bench", fmt::format("b{}", i))).status ==
        200;
  }
  f.submit_per_s = static_cast<double>(submitted) / secs(WallClock::now() - s0);
  std::vector<int64_t> controller_ns;
  g.runtime->loop().record_controller_timings(&controller_ns);
  const auto r0 = WallClock::now();
  g.call("POST", "/v1/apply", quota_yaml("bench", int64_t{nodes} * 8));
  for (int i = 0; i < 1000 && g.placed("bench") < submitted; ++i) g.runner->run_for(seconds(1));
  f.started = g.placed("bench");
  f.decisions_per_s = static_cast<double>(f.started) / secs(WallClock::now() - r0);
  g.runtime->loop().record_controller_timings(nullptr);
  int64_t spent = 0;
  for (int64_t ns : controller_ns) spent += ns;
  if (spent > 0) f.controller_decisions_per_s = static_cast<double>(f.started) * 1e9 / spent;
  return f;
}

int run() {
  const char* env = std::getenv("GF_SLURM_BENCH_NODES");
  const int nodes = env ? std::max(4, std::atoi(env)) : 128;
  const bool fsync = std::getenv("GF_BENCH_NO_FSYNC") == nullptr;
  const std::vector<Job> backlog = make_stream(int64_t{nodes} * 8, 42);
  std::vector<Job> stream(backlog.begin(), backlog.begin() + std::min<size_t>(50, backlog.size()));
  int64_t gpus = 0, gang_nodes = 0;
  for (const Job& j : backlog) {
    gpus += j.gpus;
    gang_nodes = std::max(gang_nodes, j.nodes);
  }
  std::printf("stream: %zu jobs, %lld GPUs (largest gang %lld nodes) on %d nodes x 8 GPUs; %s\n",
              backlog.size(), static_cast<long long>(gpus), static_cast<long long>(gang_nodes),
              nodes, bench::size_dist().label.c_str());
  std::printf("latency stream: the first %zu of them, one at a time\n", stream.size());
  std::fflush(stdout);
  // GF_SLURM_BENCH_ONLY_GPUFLEET=1: skip Slurm (profiling gpufleet's side alone).
  Figures s;
  if (std::getenv("GF_SLURM_BENCH_ONLY_GPUFLEET") != nullptr) {
    s.note = "skipped (GF_SLURM_BENCH_ONLY_GPUFLEET)";
  } else {
    s = run_slurm(nodes, backlog, stream);
  }
  const Figures g = run_gpufleet(nodes, backlog, stream, fsync);
  std::printf(
      "\n| | slurmctld 22.05 (%d slurmd) | gpufleet (in process, journal fsync %s) | "
      "ratio |\n|---|---|---|---|\n",
      nodes, fsync ? "on" : "off");
  auto ratio = [](double a, double b) { return b > 0 ? fmt::format("{:.0f}x", a / b) : "-"; };
  std::printf("| submit throughput (jobs/s) | %.0f | %.0f | %s |\n", s.submit_per_s, g.submit_per_s,
              ratio(g.submit_per_s, s.submit_per_s).c_str());
  std::printf(
      "| scheduling decisions/s (backlog of %zu released) | %.1f (%zu started) | %.0f (%zu "
      "placed) | %s |\n",
      s.jobs, s.decisions_per_s, s.started, g.decisions_per_s, g.started,
      ratio(g.decisions_per_s, s.decisions_per_s).c_str());
  std::printf(
      "| of which controllers alone (scheduler passes, no journal or API) | | %.0f | "
      "%s |\n",
      g.controller_decisions_per_s, ratio(g.controller_decisions_per_s, s.decisions_per_s).c_str());
  std::printf("| submit -> start p50 (ms) | %.1f | %.2f | %s |\n", s.p50_ms, g.p50_ms,
              ratio(s.p50_ms, g.p50_ms).c_str());
  std::printf("| submit -> start p99 (ms) | %.1f | %.2f | %s |\n", s.p99_ms, g.p99_ms,
              ratio(s.p99_ms, g.p99_ms).c_str());
  if (!s.note.empty()) std::printf("\nslurm: %s\n", s.note.c_str());
  if (!g.note.empty()) std::printf("\ngpufleet: %s\n", g.note.c_str());
  return s.note.empty() && g.note.empty() ? 0 : 1;
}

}  // namespace
}  // namespace gf

int main() { return gf::run(); }
