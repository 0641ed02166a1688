// Publishing the read view (docs/performance.md "Publishing the read view"): the loop changes one
// job (a job.waiting event, as the scheduler writes them) and copies the state's view, as it does
// after each batch; the old view is dropped. O(what changed) means the same time per publish with
// a thousand jobs in the fleet as with a hundred thousand.
//   build/bench/view_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <string>

#include "journal/journal.h"
#include "state/fleet_state.h"
#include "state/job_events.h"

namespace gf {
namespace {

Job bench_job(int64_t i) {
  Job job;
  job.id = "job-" + std::to_string(i);
  job.name = "train-" + std::to_string(i);
  return job;
}

void BM_PublishAfterOneJobChange(benchmark::State& st) {
  const int64_t jobs = st.range(0);
  FleetState state;
  Seq seq = 0;
  for (int64_t i = 0; i < jobs; ++i) {
    const EventRecord rec{++seq, std::string(job_events::Submitted::kType), "", "", Time{}};
    if (!state.apply_submitted(rec, bench_job(i)).ok()) st.SkipWithError("submit failed");
  }
  int64_t next = 0;
  for (auto _ : st) {
    job_events::Waiting w;
    w.id = "job-" + std::to_string(next);
    w.waiting.kind = "Quota";
    w.waiting.requested = seq;
    next = (next + 7919) % jobs;
    const Event ev = job_events::to_event(w);
    const EventRecord rec{++seq, ev.type, "", "", Time{}};
    if (!state.apply(rec, ev.payload).ok()) st.SkipWithError("apply failed");
    FleetView published = state.view();
    benchmark::DoNotOptimize(published.jobs.size());
  }
  st.counters["jobs"] = static_cast<double>(jobs);
}
BENCHMARK(BM_PublishAfterOneJobChange)->Arg(1000)->Arg(10000)->Arg(100000);

}  // namespace
}  // namespace gf
