// Durable append throughput of the SQLite journal (WAL, synchronous=FULL: one fsync per batch),
// on a fresh temp file per run. items_per_second is events per second of wall-clock time.
//
//   build/bench/journal_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "journal/sqlite/sqlite_journal.h"

namespace gf {
namespace {

// A directory under $TMPDIR (default /tmp), removed with its files when the run ends.
class BenchDir {
 public:
  BenchDir() {
    const char* tmp = std::getenv("TMPDIR");
    std::string tmpl =
        std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/gf-journal-bench-XXXXXX";
    if (::mkdtemp(tmpl.data()) != nullptr) path_ = tmpl;
  }
  ~BenchDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  BenchDir(const BenchDir&) = delete;
  BenchDir& operator=(const BenchDir&) = delete;

  bool ok() const { return !path_.empty(); }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// About 200 bytes of the canonical JSON a node transition produces.
std::string json_payload(int64_t n) {
  std::string id = std::to_string(n);
  id.insert(0, id.size() < 8 ? 8 - id.size() : 0, '0');
  return R"({"cluster_id":"cl-)" + id + R"(","node_id":"nd-)" + id +
         R"(","from":"provisioning","to":"running","instance_type":"gpu-h200-8x",)"
         R"("zone":"eu-west-1a","gpus":8,"labels":{"team":"ml-infra","tier":"prod"},)"
         R"("reason":"boot-complete"})";
}

void run_append(benchmark::State& state, bool keyed, bool fsync) {
  const int64_t batch_size = state.range(0);
  BenchDir dir;
  if (!dir.ok()) {
    state.SkipWithError("mkdtemp failed");
    return;
  }
  auto opened = SqliteJournal::open(dir.file("bench.db"), {.fsync = fsync});
  if (!opened.ok()) {
    state.SkipWithError(opened.status().to_string().c_str());
    return;
  }
  SqliteJournal& journal = **opened;

  std::vector<NewEvent> batch(static_cast<size_t>(batch_size));
  for (int64_t i = 0; i < batch_size; ++i) {
    batch[static_cast<size_t>(i)] =
        NewEvent{"node.state_changed", json_payload(i), "", kSimEpoch + Duration(i)};
  }
  int64_t next_key = 0;
  for (auto _ : state) {
    if (keyed) {
      // Fresh keys every batch, so each one pays the unique-index insert rather than dedup.
      state.PauseTiming();
      for (NewEvent& event : batch) event.idempotency_key = "req-" + std::to_string(next_key++);
      state.ResumeTiming();
    }
    auto result = journal.append(batch);
    if (!result.ok()) {
      state.SkipWithError(result.status().to_string().c_str());
      break;
    }
    benchmark::DoNotOptimize(result->seqs.data());
  }
  state.SetItemsProcessed(state.iterations() * batch_size);
  state.SetBytesProcessed(state.iterations() * batch_size *
                          static_cast<int64_t>(batch[0].payload.size()));
}

void BM_DurableAppend(benchmark::State& state) { run_append(state, false, true); }
void BM_DurableAppendWithKeys(benchmark::State& state) { run_append(state, true, true); }
// For comparison only: synchronous=NORMAL (no fsync per commit in WAL mode).
void BM_AppendNoFsync(benchmark::State& state) { run_append(state, false, false); }

// Real time: an fsync waits without using CPU, so CPU-time rates would flatter every figure.
BENCHMARK(BM_DurableAppend)->ArgName("batch")->Arg(1)->Arg(100)->Arg(1000)->UseRealTime();
BENCHMARK(BM_DurableAppendWithKeys)->ArgName("batch")->Arg(1000)->UseRealTime();
BENCHMARK(BM_AppendNoFsync)->ArgName("batch")->Arg(1)->UseRealTime();

// Opening a journal of `events` events whose latest snapshot is at its end, with and without the
// check at open (PRAGMA integrity_check and every event's checksum below the snapshot;
// docs/operations.md "A damaged journal"): what the check adds to a start.
void run_open(benchmark::State& state, bool verify) {
  const int64_t events = state.range(0);
  BenchDir dir;
  if (!dir.ok()) {
    state.SkipWithError("mkdtemp failed");
    return;
  }
  {
    auto opened = SqliteJournal::open(dir.file("bench.db"), {.fsync = false});
    if (!opened.ok()) {
      state.SkipWithError(opened.status().to_string().c_str());
      return;
    }
    std::vector<NewEvent> batch(1000);
    for (int64_t done = 0; done < events; done += 1000) {
      for (int64_t i = 0; i < 1000; ++i) {
        batch[static_cast<size_t>(i)] = NewEvent{"node.state_changed", json_payload(done + i),
                                                 "req-" + std::to_string(done + i), kSimEpoch};
      }
      if (!(*opened)->append(batch).ok()) {
        state.SkipWithError("append failed");
        return;
      }
    }
    (void)(*opened)->save_snapshot({events, "state"});
  }
  for (auto _ : state) {
    auto opened =
        SqliteJournal::open(dir.file("bench.db"), {.fsync = false, .verify_on_open = verify});
    if (!opened.ok()) {
      state.SkipWithError(opened.status().to_string().c_str());
      break;
    }
    benchmark::DoNotOptimize(opened->get());
  }
  state.SetItemsProcessed(state.iterations() * events);
}
void BM_OpenVerified(benchmark::State& state) { run_open(state, true); }
void BM_OpenUnverified(benchmark::State& state) { run_open(state, false); }
BENCHMARK(BM_OpenVerified)->ArgName("events")->Arg(100000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_OpenUnverified)->ArgName("events")->Arg(100000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace gf
