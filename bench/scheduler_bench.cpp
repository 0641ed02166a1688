// The pure scheduler core (gf::sched::Scheduler) at fleet scale: 10,000 nodes x 8 GPUs in 4
// clusters of 2,500 (one instance type), a 3-level quota tree (root cohort -> 10 cohorts -> 20
// leaf queues each; 400 nominal GPUs per leaf, unlimited borrowing, withinQueue LowerPriority,
// reclaim Any) and 100,000 queued gang jobs whose GPU counts follow the Microsoft ITP trace
// (/work/shared/traces/microsoft-itp-elasticflow, MIT; the fixed fallback table is used, and
// named in the output, when the trace cannot be read). A job of g GPUs is one pod of g GPUs when
// g <= 8, else ceil(g/8) pods of 8. Priorities 0-3 and leaf queues are drawn from a seeded
// gf::Random; one JobShape is interned per distinct size.
//
//   BM_QueuedJobMemory       heap growth (mallinfo2 uordblks) per queued job; goal <= 1024 B
//   BM_AdmitBacklog          drain the backlog with schedule() passes until a pass admits and
//                            preempts nothing (decisions/s = admissions, each with its placement,
//                            per second of schedule()); then, on the full fleet, finish one random
//                            running job and run one pass, up to 2000 times: the time of the passes
//                            that admitted exactly one job is the per-decision latency (p50/p99)
//   BM_Steady                each step finishes 50 random running jobs, submits 50, runs one pass
//   BM_SteadyWithPreemption  as BM_Steady, 10% of arrivals at priority 10 (withinQueue preemption)
//
// Manual time = wall time of schedule() calls only (std::chrono::steady_clock). The drained world
// is shared: BM_AdmitBacklog builds it, the steady benchmarks continue from the full fleet it
// leaves (run alone, they build and drain their own, untimed). Each phase after the drain stops at
// its planned step count or its wall-clock budget (GF_SCHED_BENCH_PHASE_S, default 15 s),
// whichever comes first, and the summary says which; a pass that has begun always completes.
// Besides the counters, a summary table is printed to stdout at the end, including the failed
// admission attempts per pass read from the scheduler's decision log.
//
//   cmake --build build -j2 --target scheduler_bench && ./build/bench/scheduler_bench
//
// Environment: GF_TRACE_DIR = a folder with the ITP cluster*.csv files (else shared/traces/...,
// ../shared/traces/... and /work/shared/traces/... are tried); GF_SCHED_BENCH_SCALE = N divides
// the nodes, the leaf quota and the jobs by N (quicker runs, profiling); GF_SCHED_BENCH_BLOCK = N
// labels nodes in network blocks of N and makes gangs of 16 GPUs or more require one;
// GF_SCHED_BENCH_LIMITS = 1 gives every job a time limit (reservations and backfill).
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <malloc.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/random.h"
#include "core/resources.h"
#include "core/time.h"
#include "itp_trace.h"
#include "quota/quota_graph.h"
#include "schedule/scheduler.h"

namespace gf::sched {
namespace {

using Clock = std::chrono::steady_clock;

// ---------------------------------------------------------------------------------------------
// Scenario constants

constexpr int kClusters = 4;
constexpr int kInnerCohorts = 10;
constexpr int kLeavesPerCohort = 20;
constexpr int kLeaves = kInnerCohorts * kLeavesPerCohort;
constexpr int64_t kGpusPerNode = 8;
constexpr uint64_t kSeed = 0x5CED'0001;
constexpr int kLatencyPasses = 2000;
constexpr int kSteadySteps = 400;
constexpr int kChurn = 50;

// A positive integer from the environment; `fallback` when it is unset or not one.
int env_positive(const char* name, int fallback) {
  const char* v = std::getenv(name);
  const int n = v != nullptr ? std::atoi(v) : fallback;
  return n >= 1 ? n : fallback;
}
int scale() {
  static const int s = env_positive("GF_SCHED_BENCH_SCALE", 1);
  return s;
}
// GF_SCHED_BENCH_BLOCK=N (docs/scheduling.md "Topology"): nodes in blocks of N (network layer 3;
// 4 blocks to a layer-2 spine), and gangs of 16 GPUs or more require one block. 0 = no topology.
int block_size() {
  static const int b = env_positive("GF_SCHED_BENCH_BLOCK", 0);
  return b;
}
// GF_SCHED_BENCH_LIMITS=1 (docs/scheduling.md "Reservation and backfill"): every job has a time
// limit (1 to 12 hours, from its key), so waiting gangs make reservations and others backfill.
bool time_limits() {
  static const bool on = env_positive("GF_SCHED_BENCH_LIMITS", 0) == 1;
  return on;
}
int nodes_per_cluster() { return 2500 / scale(); }
int backlog_jobs() { return 100000 / scale(); }
int64_t fleet_gpus() { return int64_t{kClusters} * nodes_per_cluster() * kGpusPerNode; }
int64_t leaf_nominal() { return fleet_gpus() / kLeaves; }

double secs(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

using bench::size_dist;
using bench::SizeDist;

// ---------------------------------------------------------------------------------------------
// The world: a scheduler with the fleet and quota tree, a job generator and the running set.

ResourceVector node_capacity() {
  ResourceVector v;
  v.set(kGpu, kGpusPerNode);
  v.set(kCpu, 192000);
  v.set(kMemory, int64_t{2048} << 30);
  v.set(kPods, 110);
  return v;
}

ResourceVector pod_request(int64_t gpus) {
  ResourceVector v;
  v.set(kGpu, gpus);
  v.set(kCpu, gpus * 20000);                    // 20 cores per GPU
  v.set(kMemory, gpus * (int64_t{200} << 30));  // 200 GiB per GPU
  v.set(kPods, 1);
  return v;
}

struct PassStats {
  int64_t passes = 0;
  int64_t admits = 0;
  int64_t preemptions = 0;
  // From the scheduler's decision log (read outside the timed region): failed admission
  // attempts (kWait entries), and those that failed on quota, i.e. that ran plan_preemption
  // without finding victims (WaitKind::kQuota), or on placement (WaitKind::kPlacement).
  int64_t failed_tries = 0;
  int64_t quota_fails = 0;
  int64_t placement_fails = 0;
  double seconds = 0;
  std::vector<double> pass_us;

  double per_pass(int64_t v) const { return passes > 0 ? static_cast<double>(v) / passes : 0.0; }
};

class World {
 public:
  World() : rng_(kSeed) {
    build_quota();
    build_fleet();
    for (const auto& [g, n] : size_dist().cumulative) shape(g);  // intern every size up front
  }

  Scheduler& s() { return s_; }
  Random& rng() { return rng_; }
  Time now() const { return now_; }
  size_t running() const { return running_.size(); }
  size_t queued() const { return s_.job_count() - running_.size(); }

  int64_t free_gpus() const {
    int64_t free = 0;
    for (ClusterIdx c = 0; c < s_.placement().cluster_count(); ++c)
      free += s_.placement().free_gpus(c);
    return free;
  }

  ShapePtr shape(int64_t gpus) {
    auto it = shapes_.find(gpus);
    if (it != shapes_.end()) return it->second;
    auto shape = std::make_shared<JobShape>();
    Alternative alt;
    const int64_t per_pod = gpus <= kGpusPerNode ? gpus : kGpusPerNode;
    const auto pods = static_cast<int32_t>((gpus + per_pod - 1) / per_pod);
    alt.pods.push_back(PodSet{pods, pod_request(per_pod), ""});
    if (block_size() > 0 && gpus >= 16) {
      alt.pods.back().topology = 3;  // network-node-layer-3
      alt.pods.back().topology_required = true;
    }
    alt.quota_request.set(kGpu, per_pod * pods);
    shape->alternatives.push_back(std::move(alt));
    ShapePtr p = std::move(shape);
    shapes_.emplace(gpus, p);
    return p;
  }

  void submit(int32_t priority) {
    JobSpec spec;
    spec.key = next_key_++;
    spec.queue = leaves_[rng_.uniform(leaves_.size())];
    spec.priority = priority;
    spec.creation_seq = spec.key;
    spec.shape = shape(size_dist().sample(rng_));
    if (time_limits()) spec.time_limit = hours(1 + static_cast<int64_t>(spec.key % 12));
    const Status st = s_.submit(std::move(spec));
    if (!st.ok()) {
      std::fprintf(stderr, "submit failed: %s\n", st.to_string().c_str());
      std::abort();
    }
  }
  void submit_backlog(int jobs) {
    for (int i = 0; i < jobs; ++i) submit(static_cast<int32_t>(rng_.uniform(4)));
  }

  // One timed schedule() pass at the next virtual second; folds its actions into the running set.
  PassResult pass(PassStats& stats) {
    now_ += seconds(1);
    const size_t log_before = s_.log().entries().size();
    const auto t0 = Clock::now();
    PassResult r = s_.schedule(now_);
    const auto t1 = Clock::now();
    benchmark::DoNotOptimize(r.actions.data());
    const double dt = secs(t1 - t0);
    stats.passes += 1;
    stats.seconds += dt;
    stats.pass_us.push_back(dt * 1e6);
    for (const Action& a : r.actions) {
      if (a.kind == ActionKind::kAdmit && !a.replaced) {
        stats.admits += 1;
        add_running(a.job);
      } else if (a.kind == ActionKind::kPreempt) {
        stats.preemptions += 1;
        remove_running(a.job);
      }
    }
    const auto& log = s_.log().entries();
    for (size_t i = log_before; i < log.size(); ++i) {
      if (log[i].kind != quota::DecisionKind::kWait) continue;
      stats.failed_tries += 1;
      if (log[i].code == static_cast<uint8_t>(WaitKind::kQuota)) stats.quota_fails += 1;
      if (log[i].code == static_cast<uint8_t>(WaitKind::kPlacement)) stats.placement_fails += 1;
    }
    return r;
  }

  void finish_random() {
    if (running_.empty()) return;
    const JobKey key = running_[rng_.uniform(running_.size())];
    remove_running(key);
    const Status st = s_.finish(key);
    if (!st.ok()) {
      std::fprintf(stderr, "finish failed: %s\n", st.to_string().c_str());
      std::abort();
    }
  }

 private:
  void build_quota() {
    quota::QuotaGraph g;
    quota::NodeSpec root;
    root.name = "root";
    root.kind = quota::NodeKind::kCohort;
    const quota::NodeId root_id = g.add_node(root).value();
    for (int c = 0; c < kInnerCohorts; ++c) {
      quota::NodeSpec cohort;
      cohort.name = "cohort-" + std::to_string(c);
      cohort.kind = quota::NodeKind::kCohort;
      cohort.parent = root_id;
      const quota::NodeId cohort_id = g.add_node(cohort).value();
      for (int l = 0; l < kLeavesPerCohort; ++l) {
        quota::NodeSpec leaf;
        leaf.name = "queue-" + std::to_string(c) + "-" + std::to_string(l);
        leaf.kind = quota::NodeKind::kQueue;
        leaf.parent = cohort_id;
        leaf.quotas.push_back({kGpu, leaf_nominal(), std::nullopt, std::nullopt});
        leaf.preemption.within_queue = quota::WithinQueuePolicy::kLowerPriority;
        // GF_SCHED_BENCH_RECLAIM=never: borrowers are never reclaimed (FIFO lending only).
        const char* reclaim = std::getenv("GF_SCHED_BENCH_RECLAIM");
        leaf.preemption.reclaim = reclaim != nullptr && std::string(reclaim) == "never"
                                      ? quota::ReclaimPolicy::kNever
                                      : quota::ReclaimPolicy::kAny;
        leaves_.push_back(g.add_node(leaf).value());
      }
    }
    s_.set_quota(std::move(g), [](JobKey) { return quota::kNoNode; });
  }

  void build_fleet() {
    const std::map<std::string, ResourceVector, std::less<>> caps{{"p5.48xlarge", node_capacity()}};
    for (int c = 0; c < kClusters; ++c) {
      const std::string name = "cluster-" + std::to_string(c);
      std::vector<Scheduler::NodeDesc> nodes;
      nodes.reserve(static_cast<size_t>(nodes_per_cluster()));
      for (int i = 0; i < nodes_per_cluster(); ++i) {
        nodes.push_back({name + "-i" + std::to_string(i), "p5.48xlarge", node_capacity(), true});
        if (const int b = block_size(); b > 0) {
          nodes.back().topology = {"nn-" + name, fmt::format("nn-{}-s{}", name, i / b / 4),
                                   fmt::format("nn-{}-b{}", name, i / b), ""};
        }
      }
      s_.sync_cluster(name, nodes, {}, caps);
    }
  }

  void add_running(JobKey key) {
    if (pos_.contains(key)) return;
    pos_.emplace(key, running_.size());
    running_.push_back(key);
  }
  void remove_running(JobKey key) {
    auto it = pos_.find(key);
    if (it == pos_.end()) return;
    const size_t i = it->second;
    pos_.erase(it);
    if (i + 1 != running_.size()) {
      running_[i] = running_.back();
      pos_[running_[i]] = i;
    }
    running_.pop_back();
  }

  Scheduler s_;
  Random rng_;
  std::vector<quota::NodeId> leaves_;
  std::map<int64_t, ShapePtr> shapes_;
  JobKey next_key_ = 1;
  Time now_ = kSimEpoch;
  std::vector<JobKey> running_;
  std::unordered_map<JobKey, size_t> pos_;
};

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5)];
}

// Wall-clock budget of each measured phase after the drain (latency, steady, steady with
// preemption): GF_SCHED_BENCH_PHASE_S seconds, default 15. A phase stops at whichever comes
// first, its planned step count or its budget; a pass that has begun always completes.
Clock::duration phase_budget() {
  static const double s = [] {
    const char* v = std::getenv("GF_SCHED_BENCH_PHASE_S");
    return v != nullptr ? std::atof(v) : 15.0;
  }();
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

// Drains the backlog: passes until one admits nothing and preempts nothing (at most 500 passes
// or 120 s; `complete` says which).
PassStats drain(World& w, bool* complete) {
  PassStats stats;
  const auto end = Clock::now() + std::chrono::seconds(120);
  *complete = false;
  for (int i = 0; i < 500 && Clock::now() < end; ++i) {
    const int64_t before = stats.admits + stats.preemptions;
    w.pass(stats);
    if (stats.admits + stats.preemptions == before) {
      *complete = true;
      break;
    }
  }
  return stats;
}

// One world for the whole run: draining 100k jobs is the expensive part, so BM_AdmitBacklog
// builds and drains it (timed) and the steady benchmarks continue from the full fleet it leaves
// (BM_SteadyWithPreemption from where BM_Steady left it). Run alone, a steady benchmark builds
// and drains its own, untimed.
std::unique_ptr<World>& shared_world() {
  static std::unique_ptr<World> w;
  return w;
}
World& drained_world() {
  auto& w = shared_world();
  if (!w) {
    w = std::make_unique<World>();
    w->submit_backlog(backlog_jobs());
    bool complete = false;
    (void)drain(*w, &complete);
  }
  return *w;
}

// ---------------------------------------------------------------------------------------------
// Summary printed after the benchmarks.

std::vector<std::string>& summary() {
  static std::vector<std::string> rows;
  return rows;
}
template <typename... Args>
void add_row(const char* name, const char* fmt, Args... args) {
  char buf[1024];
  int n = std::snprintf(buf, sizeof buf, "%-24s", name);
  std::snprintf(buf + n, sizeof buf - static_cast<size_t>(n), fmt, args...);
  summary().emplace_back(buf);
}

void common_counters(benchmark::State& state, World& w, const PassStats& st) {
  state.counters["queued_jobs"] = static_cast<double>(w.queued());
  state.counters["running_jobs"] = static_cast<double>(w.running());
  state.counters["free_gpus"] = static_cast<double>(w.free_gpus());
  state.counters["failed_tries_per_pass"] = st.per_pass(st.failed_tries);
  state.counters["quota_fails_per_pass"] = st.per_pass(st.quota_fails);
  state.counters["decision_log_MiB"] =
      static_cast<double>(w.s().log().entries().capacity() * sizeof(quota::Decision)) / (1 << 20);
}

void add_attempt_row(const char* name, World& w, const PassStats& st) {
  add_row(
      name,
      "per pass: %.0f failed admission attempts (%.0f on quota = plan_preemption found no victims, "
      "%.0f on placement) with %zu jobs queued, %zu running; decision log now %zu entries (%.1f "
      "MiB)",
      st.per_pass(st.failed_tries), st.per_pass(st.quota_fails), st.per_pass(st.placement_fails),
      w.queued(), w.running(), w.s().log().entries().size(),
      static_cast<double>(w.s().log().entries().capacity() * sizeof(quota::Decision)) / (1 << 20));
}

// ---------------------------------------------------------------------------------------------
// Benchmarks

void BM_QueuedJobMemory(benchmark::State& state) {
  for (auto _ : state) {
    World w;
    const int jobs = backlog_jobs();
    malloc_trim(0);
    const size_t before = mallinfo2().uordblks;
    const auto t0 = Clock::now();
    w.submit_backlog(jobs);
    const auto t1 = Clock::now();
    const size_t after = mallinfo2().uordblks;
    state.SetIterationTime(secs(t1 - t0));
    const double per_job = static_cast<double>(after - before) / jobs;
    state.counters["bytes_per_queued_job"] = per_job;
    state.counters["submits_per_s"] = jobs / secs(t1 - t0);
    add_row("QueuedJobMemory",
            "%d jobs submitted: heap +%.1f MiB = %.0f bytes/queued job (goal <= 1024: %s); %.0f "
            "submits/s",
            jobs, static_cast<double>(after - before) / (1 << 20), per_job,
            per_job <= 1024 ? "met" : "MISSED", jobs / secs(t1 - t0));
  }
}

void BM_AdmitBacklog(benchmark::State& state) {
  for (auto _ : state) {
    auto& owned = shared_world();
    owned = std::make_unique<World>();
    World& w = *owned;
    w.submit_backlog(backlog_jobs());
    bool complete = false;
    const PassStats d = drain(w, &complete);
    state.SetIterationTime(d.seconds);
    const double dps = static_cast<double>(d.admits) / d.seconds;
    state.counters["drain_passes"] = static_cast<double>(d.passes);
    state.counters["drain_admits"] = static_cast<double>(d.admits);
    state.counters["drain_preemptions"] = static_cast<double>(d.preemptions);
    state.counters["drain_first_pass_s"] = d.pass_us.empty() ? 0.0 : d.pass_us[0] / 1e6;
    state.counters["decisions_per_s"] = dps;
    add_row("AdmitBacklog drain",
            "%lld admitted (+%lld preempted) in %lld passes (%s), %.3f s of schedule() -> %.0f "
            "decisions/s; "
            "first pass %.3f s; then %zu queued, %zu running, %lld free GPUs",
            static_cast<long long>(d.admits), static_cast<long long>(d.preemptions),
            static_cast<long long>(d.passes),
            complete ? "until a pass admitted nothing" : "STOPPED AT CAP", d.seconds, dps,
            d.pass_us.empty() ? 0.0 : d.pass_us[0] / 1e6, w.queued(), w.running(),
            static_cast<long long>(w.free_gpus()));

    // Per-decision latency: one random running job finishes, one pass refills the hole.
    PassStats lat;
    std::vector<double> single_us;
    const auto end = Clock::now() + phase_budget();
    for (int i = 0; i < kLatencyPasses && Clock::now() < end; ++i) {
      w.finish_random();
      const int64_t before = lat.admits;
      w.pass(lat);
      if (lat.admits - before == 1) single_us.push_back(lat.pass_us.back());
    }
    state.counters["lat_passes"] = static_cast<double>(lat.passes);
    state.counters["lat_single_admit_passes"] = static_cast<double>(single_us.size());
    if (!single_us.empty()) {  // absent, not 0, when no pass admitted exactly one job
      state.counters["lat_p50_us"] = percentile(single_us, 0.50);
      state.counters["lat_p99_us"] = percentile(single_us, 0.99);
    }
    state.counters["lat_all_p50_us"] = percentile(lat.pass_us, 0.50);
    state.counters["lat_all_p99_us"] = percentile(lat.pass_us, 0.99);
    common_counters(state, w, lat);
    char single[160] = "none, so no per-decision p50/p99";
    if (!single_us.empty()) {
      std::snprintf(single, sizeof single, "p50 %.0f us, p99 %.0f us", percentile(single_us, 0.5),
                    percentile(single_us, 0.99));
    }
    add_row("AdmitBacklog latency",
            "%lld of %d finish-1 + pass steps (%s): %zu passes admitted exactly 1 job: %s; "
            "all passes p50 %.0f us, p99 %.0f us (%lld admits, %lld preemptions)",
            static_cast<long long>(lat.passes), kLatencyPasses,
            lat.passes < kLatencyPasses ? "STOPPED BY PHASE BUDGET" : "complete", single_us.size(),
            single, percentile(lat.pass_us, 0.5), percentile(lat.pass_us, 0.99),
            static_cast<long long>(lat.admits), static_cast<long long>(lat.preemptions));
    add_attempt_row("AdmitBacklog latency", w, lat);
  }
}

void run_steady(benchmark::State& state, bool urgent_arrivals, const char* name) {
  for (auto _ : state) {
    World& w = drained_world();  // not timed: manual time counts the steady passes only
    PassStats st;
    const auto end = Clock::now() + phase_budget();
    for (int step = 0; step < kSteadySteps && Clock::now() < end; ++step) {
      for (int i = 0; i < kChurn; ++i) w.finish_random();
      for (int i = 0; i < kChurn; ++i) {
        const bool urgent = urgent_arrivals && w.rng().uniform(10) == 0;
        w.submit(urgent ? 10 : static_cast<int32_t>(w.rng().uniform(4)));
      }
      w.pass(st);
    }
    state.SetIterationTime(st.seconds);
    const double dps = static_cast<double>(st.admits) / st.seconds;
    state.counters["steps"] = static_cast<double>(st.passes);
    state.counters["admits"] = static_cast<double>(st.admits);
    state.counters["preemptions"] = static_cast<double>(st.preemptions);
    state.counters["decisions_per_s"] = dps;
    state.counters["pass_p50_us"] = percentile(st.pass_us, 0.50);
    state.counters["pass_p99_us"] = percentile(st.pass_us, 0.99);
    common_counters(state, w, st);
    add_row(name,
            "%lld of %d steps of finish %d + submit %d + 1 pass (%s): %lld admits, %lld "
            "preemptions in %.3f s "
            "-> %.0f decisions/s; pass p50 %.0f us, p99 %.0f us",
            static_cast<long long>(st.passes), kSteadySteps, kChurn, kChurn,
            st.passes < kSteadySteps ? "STOPPED BY PHASE BUDGET" : "complete",
            static_cast<long long>(st.admits), static_cast<long long>(st.preemptions), st.seconds,
            dps, percentile(st.pass_us, 0.5), percentile(st.pass_us, 0.99));
    add_attempt_row(name, w, st);
  }
}

void BM_Steady(benchmark::State& state) { run_steady(state, false, "Steady"); }
void BM_SteadyWithPreemption(benchmark::State& state) {
  run_steady(state, true, "SteadyWithPreemption");
}

BENCHMARK(BM_QueuedJobMemory)->Iterations(1)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_AdmitBacklog)->Iterations(1)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Steady)->Iterations(1)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SteadyWithPreemption)->Iterations(1)->UseManualTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace gf::sched

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  using namespace gf::sched;
  std::printf(
      "scheduler_bench: %d clusters x %d nodes x %lld GPUs = %lld GPUs; %d leaf queues x %lld "
      "nominal GPUs; "
      "%d queued jobs\njob sizes: %s\n",
      kClusters, nodes_per_cluster(), static_cast<long long>(kGpusPerNode),
      static_cast<long long>(fleet_gpus()), kLeaves, static_cast<long long>(leaf_nominal()),
      backlog_jobs(), size_dist().label.c_str());
  std::fflush(stdout);
  benchmark::RunSpecifiedBenchmarks();
  std::printf(
      "\n== scheduler_bench summary: %d nodes, %lld GPUs, %d leaf queues, %d queued jobs; job "
      "sizes: %s ==\n",
      kClusters * nodes_per_cluster(), static_cast<long long>(fleet_gpus()), kLeaves,
      backlog_jobs(), size_dist().label.c_str());
  for (const std::string& row : summary()) std::printf("%s\n", row.c_str());
  std::fflush(stdout);
  shared_world().reset();
  benchmark::Shutdown();
  return 0;
}
