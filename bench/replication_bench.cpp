// The replicated control plane's figures (docs/replication.md, docs/performance.md), on a real
// PostgreSQL 15 started here on loopback with durable settings (fsync on, synchronous commit):
//   1. durable journal appends per second with group commit, fenced as a leader's are, at batch
//      1, 100 and 1,000 (and 1,000 with idempotency keys);
//   2. failover time over kill -9s of the leader of three replicas under a write load: from the
//      kill to a follower answering as leader (p50/p99/max);
//   3. follower lag under a steady write load: from a write's acknowledgement by the leader to a
//      follower having applied it (?minSeq= answers the moment it has), p50/p99.
//
//   build/bench/replication_bench                 (GF_REPL_BENCH_KILLS=30, GF_REPL_BENCH_LEASE=1s)
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "journal/postgres/postgres_journal.h"
#include "journal/postgres/postgres_lease.h"
#include "support/replica_set.h"

namespace gf {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

double pct(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

std::string payload(int64_t n) {
  return R"({"cluster_id":"cl-)" + std::to_string(n) + R"(","node_id":"nd-)" + std::to_string(n) +
         R"(","from":"provisioning","to":"running","instance_type":"gpu-h200-8x",)"
         R"("zone":"eu-west-1a","gpus":8,"labels":{"team":"ml-infra","tier":"prod"},)"
         R"("reason":"boot-complete"})";
}

// Events per second over ~2 s of appends of `batch` events, median of three runs.
void append_throughput() {
  testing::PostgresServer pg(/*durable=*/true);
  if (!pg.ok()) {
    std::printf("no PostgreSQL: %s\n", pg.error().c_str());
    return;
  }
  std::printf("durable appends (fsync on, synchronous_commit on, fenced by a lease epoch)\n");
  std::printf("%-22s %14s\n", "batch", "events/s");
  int db = 0;
  for (const auto& [batch_size, keyed] :
       std::vector<std::pair<int, bool>>{{1, false}, {100, false}, {1000, false}, {1000, true}}) {
    std::vector<double> rates;
    for (int run = 0; run < 3; ++run) {
      const std::string name = "bench" + std::to_string(++db);
      pg.psql("CREATE DATABASE " + name);
      auto lease = PostgresLease::open(pg.url(name), "bench");
      auto journal = PostgresJournal::open(pg.url(name));
      if (!lease.ok() || !journal.ok()) return;
      auto epoch = (*lease)->try_take(seconds(60), "http://bench");
      if (!epoch.ok() || !*epoch || !(*journal)->set_epoch(**epoch).ok()) return;
      std::vector<NewEvent> events(static_cast<size_t>(batch_size));
      for (int i = 0; i < batch_size; ++i) {
        events[static_cast<size_t>(i)] = NewEvent{"node.state_changed", payload(i), "", kSimEpoch};
      }
      int64_t appended = 0, key = 0;
      const auto t0 = Clock::now();
      while (ms_since(t0) < 2000) {
        if (keyed) {
          for (NewEvent& e : events) e.idempotency_key = "req-" + std::to_string(key++);
        }
        if (!(*journal)->append(events).ok()) return;
        appended += batch_size;
      }
      rates.push_back(static_cast<double>(appended) / (ms_since(t0) / 1000));
    }
    std::printf("%-22s %14.0f\n", (std::to_string(batch_size) + (keyed ? " (keyed)" : "")).c_str(),
                pct(rates, 0.5));
  }
}

std::string job_body(const std::string& name) {
  return R"({"jobName":")" + name +
         R"(","jobQueue":"shared-training-queue","serviceJobType":"SAGEMAKER_TRAINING",)"
         R"("quotaShareName":"QS1","serviceRequestPayload":{"ResourceConfig":)"
         R"({"InstanceType":"ml.g5.xlarge","InstanceCount":1}}})";
}

void failover_and_lag(int kills, const std::string& lease) {
  testing::ReplicaSet rs(3, lease, {}, /*durable=*/true);
  if (!rs.ok()) {
    std::printf("no PostgreSQL: %s\n", rs.error().c_str());
    return;
  }
  for (int i = 0; i < 3; ++i) rs.start(i);
  int leader = rs.wait_for_leader(std::chrono::seconds(10));
  if (leader < 0) return;
  rs.replica(leader).cli({"apply", "-f", testing::kExamplesDir + "quota-shares.json"});

  // 3. Lag first, with all three up: steady writes to the leader, reads of a follower.
  {
    const int follower = (leader + 1) % 3;
    std::vector<double> lag;
    httplib::Client read(rs.url(follower));
    const auto t0 = Clock::now();
    for (int n = 0; ms_since(t0) < 5000; ++n) {
      httplib::Client write(rs.url(leader));
      auto r =
          write.Post("/v1/service-jobs", job_body("lag-" + std::to_string(n)), "application/json");
      if (!r || r->status != 200) continue;
      const std::string seq = r->get_header_value("X-Gpufleet-Seq");
      const auto acked = Clock::now();
      auto seen = read.Get("/v1/version?minSeq=" + seq);
      if (seen && seen->status == 200) lag.push_back(ms_since(acked));
      std::this_thread::sleep_for(std::chrono::milliseconds(5));  // a steady ~150 writes/s
    }
    std::printf(
        "\nfollower lag (write acknowledged by the leader -> applied by a follower), %zu "
        "writes\n  p50 %.2f ms, p99 %.2f ms, max %.2f ms\n",
        lag.size(), pct(lag, 0.5), pct(lag, 0.99), pct(lag, 1.0));
  }

  // 2. Failover under a write load.
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    for (int n = 0; !stop.load(); ++n) {
      const std::string name = "fo-" + std::to_string(n);
      rs.write("POST", "/v1/service-jobs", job_body(name), "k-" + name, n,
               Clock::now() + std::chrono::seconds(30));
    }
  });
  std::mt19937 rng(7);
  std::vector<double> times;
  for (int k = 0; k < kills; ++k) {
    leader = rs.wait_for_leader(std::chrono::seconds(10));
    if (leader < 0) break;
    std::this_thread::sleep_for(
        std::chrono::milliseconds(std::uniform_int_distribution<int>(50, 600)(rng)));
    const auto t0 = Clock::now();
    rs.kill(leader);
    if (rs.wait_for_leader(std::chrono::seconds(20), leader) < 0) break;
    times.push_back(ms_since(t0));
    rs.start(leader);
  }
  stop = true;
  writer.join();
  std::printf(
      "\nfailover (kill -9 of the leader -> a follower answers as leader), lease %s, %zu "
      "kills\n  p50 %.0f ms, p99 %.0f ms, max %.0f ms\n",
      lease.c_str(), times.size(), pct(times, 0.5), pct(times, 0.99), pct(times, 1.0));
}

}  // namespace
}  // namespace gf

int main() {
  const char* kills = std::getenv("GF_REPL_BENCH_KILLS");
  const char* lease = std::getenv("GF_REPL_BENCH_LEASE");
  gf::append_throughput();
  gf::failover_and_lag(kills ? std::atoi(kills) : 30, lease ? lease : "1s");
  return 0;
}
