// The replicated control plane against a real PostgreSQL 15 and real `serve` replicas
// (docs/replication.md): failover under load with kill -9, split brain by SIGSTOP, seed 003's one
// remediation from two replicas, a follower rebuilt from snapshot + replay, and what followers
// serve. PostgreSQL is started by the test on loopback and stopped by pid.
#include <gtest/gtest.h>
#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "support/replica_set.h"

namespace gf {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;
using testing::CommandResult;
using testing::ReplicaSet;

constexpr auto kLease = milliseconds(1000);
// The release build kills the leader 30 times. Under AddressSanitizer every restart of a replica
// replays the journal many times slower, so the same paths are run with fewer kills there, to
// keep the suite's time (docs/performance.md "Build and suite time").
#if defined(__SANITIZE_ADDRESS__)
constexpr int kKills = 8;
#else
constexpr int kKills = 30;
#endif

std::string job_body(const std::string& name) {
  return R"({"jobName":")" + name +
         R"(","jobQueue":"shared-training-queue","serviceJobType":"SAGEMAKER_TRAINING",)"
         R"("quotaShareName":"QS1","serviceRequestPayload":{"ResourceConfig":)"
         R"({"InstanceType":"ml.g5.xlarge","InstanceCount":1}}})";
}

// jobName → how many jobs of that name replica i holds (after it applied `min_seq`). A follower
// holds a ?minSeq= read 5 s and then answers 503; a replica restarted by the last kill may still
// be replaying the journal on a loaded machine, so the read is retried for up to a minute.
std::map<std::string, int> job_names(const ReplicaSet& rs, int i, int64_t min_seq) {
  const auto deadline = steady_clock::now() + std::chrono::seconds(60);
  Json j;
  for (;;) {
    j = rs.get(i, "/v1/service-jobs?minSeq=" + std::to_string(min_seq), /*timeout_ms=*/10000);
    if (j.is_object() || steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(milliseconds(200));
  }
  std::map<std::string, int> names;
  if (!j.is_object()) {
    ADD_FAILURE() << "replica " << i << " did not answer a read at seq " << min_seq
                  << " within a minute";
    return names;
  }
  for (const Json& job : j.value("jobSummaryList", Json::array())) {
    names[job.value("jobName", "")]++;
  }
  return names;
}

int64_t applied_seq(const ReplicaSet& rs, int i) {
  const Json j = rs.get(i, "/v1/version");
  return j.is_object() ? j.value("AppliedSeq", int64_t{-1}) : -1;
}

// Polls `pred` every 100 ms for up to 60 s.
bool eventually_true(const std::function<bool()>& pred) {
  const auto deadline = steady_clock::now() + std::chrono::seconds(60);
  while (steady_clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(milliseconds(100));
  }
  return pred();
}

// The names of the service jobs replica 0 holds now.
std::set<std::string> job_names_now(const ReplicaSet& rs) {
  std::set<std::string> out;
  for (const Json& job : rs.get(0, "/v1/service-jobs").value("jobSummaryList", Json::array()))
    out.insert(job.value("jobName", ""));
  return out;
}

class ReplicationTest : public ::testing::Test {
 protected:
  // The quota shares that service jobs name, applied through `via` (the CLI follows a
  // follower's redirect).
  void apply_quota_shares(ReplicaSet& rs, int via) {
    CommandResult r =
        rs.replica(via).cli({"apply", "-f", testing::kExamplesDir + "quota-shares.json"});
    ASSERT_EQ(r.exit_code, 0) << r.out;
  }
};

TEST_F(ReplicationTest,
       FailoverUnderLoad_ThirtyKillsOfTheLeader_LoseNoAcknowledgedWriteAndApplyNoneTwice) {
  ReplicaSet rs(3);
  ASSERT_TRUE(rs.ok()) << rs.error();
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(rs.start(i)) << i;
  int leader = rs.wait_for_leader(milliseconds(10000));
  ASSERT_GE(leader, 0);
  ASSERT_NO_FATAL_FAILURE(apply_quota_shares(rs, (leader + 1) % 3));

  std::mutex mu;
  std::set<std::string> acked;
  std::atomic<bool> stop{false};
  std::atomic<int> refused{0};
  auto writer = [&](int w) {
    for (int n = 0; !stop.load(); ++n) {
      const std::string name = "w" + std::to_string(w) + "-" + std::to_string(n);
      const int status = rs.write("POST", "/v1/service-jobs", job_body(name), "key-" + name, w,
                                  steady_clock::now() + std::chrono::seconds(30));
      if (status >= 200 && status < 300) {
        std::lock_guard lock(mu);
        acked.insert(name);
      } else if (status != 0) {
        refused++;
      }
    }
  };
  // Stopped and joined however the test ends (an ASSERT returns early).
  struct Writers {
    std::atomic<bool>& stop;
    std::vector<std::thread> threads;
    ~Writers() {
      stop = true;
      for (auto& t : threads) t.join();
    }
  } writers{stop, {}};
  for (int w = 0; w < 2; ++w) writers.threads.emplace_back(writer, w);

  std::mt19937 rng(20261203);
  std::vector<double> failover_ms;
  for (int kill = 0; kill < kKills; ++kill) {
    leader = rs.wait_for_leader(milliseconds(10000));
    ASSERT_GE(leader, 0) << "no leader before kill " << kill;
    std::this_thread::sleep_for(milliseconds(std::uniform_int_distribution<int>(50, 600)(rng)));
    const auto killed_at = steady_clock::now();
    rs.kill(leader);
    // That a follower takes over is the rule; how fast is a figure of bench/replication_bench
    // (docs/performance.md "Replication"), not a timed assertion on a shared machine: the bound
    // here only keeps a broken takeover from hanging the test.
    const int next = rs.wait_for_leader(kLease + milliseconds(20000), leader);
    const double ms =
        std::chrono::duration<double, std::milli>(steady_clock::now() - killed_at).count();
    ASSERT_GE(next, 0) << "no new leader after kill " << kill;
    failover_ms.push_back(ms);
    ASSERT_TRUE(rs.start(leader)) << "restart after kill " << kill;
  }
  stop = true;
  for (auto& t : writers.threads) t.join();
  writers.threads.clear();
  EXPECT_EQ(refused.load(), 0);

  std::sort(failover_ms.begin(), failover_ms.end());
  std::cout << "failover over " << failover_ms.size() << " kills: p50 "
            << failover_ms[failover_ms.size() / 2] << " ms, max " << failover_ms.back() << " ms; "
            << acked.size() << " acknowledged writes\n";
  ASSERT_GT(acked.size(), 30u) << "the writers should have got writes through between kills";

  leader = rs.wait_for_leader(milliseconds(10000));
  ASSERT_GE(leader, 0);
  const int64_t final_seq = applied_seq(rs, leader);
  for (int i = 0; i < 3; ++i) {
    const auto names = job_names(rs, i, final_seq);
    for (const std::string& name : acked) {
      auto it = names.find(name);
      EXPECT_TRUE(it != names.end()) << "replica " << i << " lost acknowledged write " << name;
    }
    for (const auto& [name, count] : names) {
      EXPECT_EQ(count, 1) << "replica " << i << " applied " << name << " " << count << " times";
    }
  }
  // Epochs only grow along the journal: no old leader wrote after a new one.
  CommandResult back = rs.postgres().psql(
      "SELECT count(*) FROM (SELECT epoch < lag(epoch) OVER (ORDER BY seq) AS back FROM "
      "gf_events) t WHERE back",
      "gpufleet");
  EXPECT_EQ(back.out, "0\n");
}

TEST_F(ReplicationTest, SplitBrain_ALeaderPausedPastItsLease_IsFencedAndStepsDown) {
  ReplicaSet rs(2);
  ASSERT_TRUE(rs.ok()) << rs.error();
  ASSERT_TRUE(rs.start(0));
  ASSERT_EQ(rs.wait_for_leader(milliseconds(10000)), 0);
  ASSERT_TRUE(rs.start(1));
  ASSERT_NO_FATAL_FAILURE(apply_quota_shares(rs, 0));
  const auto soon = [] { return steady_clock::now() + std::chrono::seconds(20); };
  ASSERT_EQ(rs.write("POST", "/v1/service-jobs", job_body("before"), "k-before", 0, soon()), 200);
  const Json old_self = rs.get(0, "/v1/replicas")["Self"];

  rs.kill(0, SIGSTOP);
  // A write reaches the paused leader's socket; it is answered only once the leader wakes.
  int paused_status = -1;
  std::string paused_body;
  std::jthread pending([&] {  // joined however the test ends
    httplib::Client c(rs.url(0));
    c.set_read_timeout(30, 0);
    auto r = c.Post("/v1/service-jobs", httplib::Headers{{"Idempotency-Key", "k-paused"}},
                    job_body("during-pause"), "application/json");
    paused_status = r ? r->status : 0;
    paused_body = r ? r->body : "";
  });
  // A follower takes over (how fast is bench/replication_bench's figure, not a timed assertion).
  const int next = rs.wait_for_leader(kLease + milliseconds(20000), 0);
  ASSERT_EQ(next, 1);
  ASSERT_EQ(rs.write("POST", "/v1/service-jobs", job_body("after"), "k-after", 1, soon()), 200);

  rs.kill(0, SIGCONT);
  pending.join();
  // Not acknowledged: refused by the fence (503), or redirected to the new leader (307).
  EXPECT_TRUE(paused_status == 503 || paused_status == 307) << paused_status << " " << paused_body;
  // The old leader steps down and follows the new one.
  const auto deadline = steady_clock::now() + std::chrono::seconds(10);
  Json self;
  while (steady_clock::now() < deadline) {
    self = rs.get(0, "/v1/replicas")["Self"];
    if (self.value("Role", "") == "follower" && self.value("Epoch", 0) > old_self.value("Epoch", 0))
      break;
    std::this_thread::sleep_for(milliseconds(50));
  }
  EXPECT_EQ(self.value("Role", ""), "follower") << self.dump();
  EXPECT_GT(self.value("Epoch", 0), old_self.value("Epoch", 0)) << self.dump();

  const int64_t seq = applied_seq(rs, 1);
  for (int i = 0; i < 2; ++i) {
    auto names = job_names(rs, i, seq);
    EXPECT_EQ(names["before"], 1) << i;
    EXPECT_EQ(names["after"], 1) << i;
    EXPECT_EQ(names.count("during-pause"), 0u) << "replica " << i << " holds a write nobody acked";
  }
  httplib::Client c(rs.url(0));
  auto health = c.Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_NE(health->body.find("role: follower"), std::string::npos) << health->body;
}

TEST_F(ReplicationTest, Seed003_OneRequestAndOneSignalSentToTwoReplicas_MakeOneRemediation) {
  testing::TempDir dir;
  const std::string cloud = dir.file("cloud.json");
  std::ofstream(cloud) << R"({"launchLatency":"1m","lifecycleDuration":"1m"})";
  ReplicaSet rs(2, "1s", {"--sim-speed", "600", "--sim-cloud", cloud});
  ASSERT_TRUE(rs.ok()) << rs.error();
  ASSERT_TRUE(rs.start(0));
  ASSERT_EQ(rs.wait_for_leader(milliseconds(10000)), 0);
  ASSERT_TRUE(rs.start(1));
  auto& follower = rs.replica(1);
  std::ofstream(dir.file("cluster.json"))
      << R"({"ClusterName":"hc","NodeProvisioningMode":"Continuous","InstanceGroups":[)"
      << R"({"InstanceGroupName":"workers","InstanceType":"ml.p5.48xlarge","InstanceCount":2}]})";
  CommandResult r = follower.cli({"cluster", "create", "-f", dir.file("cluster.json")});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  r = follower.cli({"cluster", "wait", "hc", "--full", "--timeout", "2m"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  r = follower.cli({"-o", "json", "node", "list", "hc"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  std::vector<std::string> nodes;
  const Json listed = testing::parse_out(r);
  for (const Json& n : listed["ClusterNodeSummaries"])
    nodes.push_back(n["InstanceId"].get<std::string>());
  ASSERT_EQ(nodes.size(), 2u) << r.out;
  std::ofstream(dir.file("policy.yaml"))
      << "AlertPersistence: 0s\nRules:\n  - Fault: \"xid:79\"\n    Action: reboot\n    Approval: "
         "manual\n";
  r = follower.cli({"policy", "set", "hc", "-f", dir.file("policy.yaml")});
  ASSERT_EQ(r.exit_code, 0) << r.out;

  // A request needs a firing alert as evidence: an Xid no rule maps (no proposal of its own).
  const std::string xid200 =
      "NVRM: Xid (PCI:0000:3b:00): 200, pid=4321, an Xid code no rule of the policy maps.";
  r = rs.replica(0).cli({"node", "signal", "hc", nodes[0], "--line", xid200});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto deadline = steady_clock::now() + std::chrono::seconds(20);
  while (steady_clock::now() < deadline && rs.get(1, "/v1/alerts?state=firing&node=" + nodes[0])
                                               .value("Alerts", Json::array())
                                               .empty()) {
    std::this_thread::sleep_for(milliseconds(50));
  }
  // The same request (detector, request id) to both replicas at once.
  std::vector<CommandResult> answers(2);
  {
    std::vector<std::thread> both;
    for (int i = 0; i < 2; ++i) {
      both.emplace_back([&, i] {
        answers[i] =
            rs.replica(i).cli({"remediation", "request", "--cluster", "hc", "--node", nodes[0],
                               "--action", "reboot", "--detector", "ops", "--request-id", "r-1"});
      });
    }
    for (auto& t : both) t.join();
  }
  for (const auto& a : answers) EXPECT_EQ(a.exit_code, 0) << a.out;
  // The same Xid line reported to both.
  const std::string xid = "NVRM: Xid (PCI:0000:18:00): 79, pid=1234, GPU has fallen off the bus.";
  {
    std::vector<std::thread> both;
    for (int i = 0; i < 2; ++i) {
      both.emplace_back([&, i] {
        answers[i] = rs.replica(i).cli({"node", "signal", "hc", nodes[1], "--line", xid});
      });
    }
    for (auto& t : both) t.join();
  }
  for (const auto& a : answers) EXPECT_EQ(a.exit_code, 0) << a.out;

  const int64_t seq = applied_seq(rs, 0);
  for (int i = 0; i < 2; ++i) {
    for (const std::string& node : nodes) {
      const Json rems =
          rs.get(i, "/v1/remediations?node=" + node + "&minSeq=" + std::to_string(seq), 10000);
      EXPECT_EQ(rems.value("Remediations", Json::array()).size(), 1u)
          << "replica " << i << " node " << node << ": " << rems.dump();
    }
  }
}

TEST_F(ReplicationTest, RestartFromSnapshotPlusReplay_GivesTheLiveLeadersStateHash) {
  ReplicaSet rs(3, "1s", {"--snapshot-every", "25"});
  ASSERT_TRUE(rs.ok()) << rs.error();
  ASSERT_TRUE(rs.start(0));
  ASSERT_EQ(rs.wait_for_leader(milliseconds(10000)), 0);
  ASSERT_NO_FATAL_FAILURE(apply_quota_shares(rs, 0));
  const auto soon = [] { return steady_clock::now() + std::chrono::seconds(20); };
  for (int n = 0; n < 40; ++n) {
    const std::string name = "job-" + std::to_string(n);
    ASSERT_EQ(rs.write("POST", "/v1/service-jobs", job_body(name), "k-" + name, 0, soon()), 200);
  }
  CommandResult snaps = rs.postgres().psql("SELECT count(*) > 0 FROM gf_snapshots", "gpufleet");
  EXPECT_EQ(snaps.out, "t\n") << "the leader should have saved a snapshot";

  auto hash_at = [&](int i, int64_t seq) {
    const Json h = rs.get(i, "/v1/debug/state-hash?minSeq=" + std::to_string(seq), 10000);
    return h.is_object() ? h.value("ModelHash", "") + "@" + std::to_string(h.value("AppliedSeq", 0))
                         : std::string("none");
  };
  // A new replica rebuilds from the latest snapshot plus the journal after it.
  ASSERT_TRUE(rs.start(1));
  const int64_t seq = applied_seq(rs, 0);
  EXPECT_EQ(hash_at(1, seq), hash_at(0, seq));

  // The leader is killed; the follower leads; a third replica started from the store agrees.
  rs.kill(0);
  ASSERT_EQ(rs.wait_for_leader(kLease + milliseconds(5000), 0), 1);
  ASSERT_TRUE(rs.start(2));
  const int64_t after = applied_seq(rs, 1);
  EXPECT_EQ(hash_at(2, after), hash_at(1, after));
}

TEST_F(ReplicationTest, Followers_ServeReadsWithTheirSeqAndTheCliFollowsToTheLeader) {
  ReplicaSet rs(2);
  ASSERT_TRUE(rs.ok()) << rs.error();
  ASSERT_TRUE(rs.start(0));
  ASSERT_EQ(rs.wait_for_leader(milliseconds(10000)), 0);
  ASSERT_TRUE(rs.start(1));
  auto& follower = rs.replica(1);
  // A write sent to the follower through the CLI lands on the leader…
  CommandResult r = follower.cli({"apply", "-f", testing::kExamplesDir + "quota-shares.json"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  r = follower.cli({"job", "submit", "-f", testing::kExamplesDir + "service-job.json"});
  ASSERT_EQ(r.exit_code, 0) << r.out;

  // …and a raw client sees the redirect and the leader's address.
  httplib::Client c(follower.url());
  auto redirect = c.Post("/v1/service-jobs", job_body("raw"), "application/json");
  ASSERT_TRUE(redirect);
  EXPECT_EQ(redirect->status, 307);
  EXPECT_EQ(redirect->get_header_value("Location"), rs.url(0) + "/v1/service-jobs");

  // Reads carry the applied seq; ?minSeq= waits for it (read-your-writes).
  httplib::Client leader(rs.url(0));
  auto written = leader.Get("/v1/version");
  ASSERT_TRUE(written);
  const std::string seq = written->get_header_value("X-Gpufleet-Seq");
  ASSERT_FALSE(seq.empty());
  auto read = c.Get("/v1/service-jobs?minSeq=" + seq);
  ASSERT_TRUE(read);
  EXPECT_EQ(read->status, 200);
  EXPECT_GE(std::stoll(read->get_header_value("X-Gpufleet-Seq")), std::stoll(seq));
  EXPECT_NE(read->body.find("qs1-high"), std::string::npos);
  auto bad = c.Get("/v1/service-jobs?minSeq=soon");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  EXPECT_NE(bad->body.find("minSeq"), std::string::npos);

  // /healthz, /metrics and `gpufleet status` say who leads.
  auto health = c.Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->body.rfind("ok\nrole: follower\n", 0), 0u) << health->body;
  auto metrics = leader.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("gpufleet_replica_leader 1"), std::string::npos);
  r = follower.cli({"status"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("follower"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("leader:  " + rs.url(0)), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("r0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("r1"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace gf

namespace gf {
namespace {

// PostgreSQL unreachable degrades, never kills (docs/operations.md "An unreachable database"):
// writes are refused with a 503 naming the cause, reads and /healthz (503 with the reason) go
// on, and once PostgreSQL is back the replica leads again and takes writes by itself; every
// acknowledged write is there and no refused one is.
TEST_F(ReplicationTest, PostgresUnreachable_WritesPauseReadsGoOnAndWritesResumeByThemselves) {
  // Durable: an immediate shutdown of PostgreSQL must not lose what it acknowledged.
  ReplicaSet rs(1, "1s", {}, /*durable=*/true);
  ASSERT_TRUE(rs.ok()) << rs.error();
  ASSERT_TRUE(rs.start(0));
  ASSERT_EQ(rs.wait_for_leader(std::chrono::seconds(30)), 0);
  apply_quota_shares(rs, 0);
  auto post = [&](const std::string& name) {
    httplib::Client c(rs.url(0));
    c.set_read_timeout(40, 0);
    auto r = c.Post("/v1/service-jobs", job_body(name), "application/json");
    return r ? std::pair{r->status, r->body} : std::pair{0, std::string()};
  };
  auto healthz = [&] {
    httplib::Client c(rs.url(0));
    auto r = c.Get("/healthz");
    return r ? std::pair{r->status, r->body} : std::pair{0, std::string()};
  };
  std::set<std::string> acknowledged, refused;
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(post("before-" + std::to_string(i)).first, 200);
    acknowledged.insert("before-" + std::to_string(i));
  }

  rs.postgres().stop();
  std::string refusal;
  for (int i = 0; i < 20 && refusal.empty(); ++i) {
    const std::string name = "down-" + std::to_string(i);
    auto [status, body] = post(name);
    ASSERT_NE(status, 0) << "the replica died when PostgreSQL went away";
    (status == 200 ? acknowledged : refused).insert(name);
    if (status != 200) refusal = body;
  }
  ASSERT_FALSE(refusal.empty());
  EXPECT_NE(refusal.find("writes are paused"), std::string::npos) << refusal;
  std::pair<int, std::string> health;
  EXPECT_TRUE(eventually_true([&] {
    health = healthz();
    return health.first == 503;
  })) << health.first
      << " " << health.second;
  EXPECT_NE(health.second.find("writes paused"), std::string::npos) << health.second;
  EXPECT_EQ(job_names_now(rs), acknowledged);

  ASSERT_TRUE(rs.postgres().restart());
  const auto deadline = steady_clock::now() + std::chrono::seconds(90);
  bool resumed = false;
  std::string last;
  while (!resumed && steady_clock::now() < deadline) {
    const std::string name = "up-" + std::to_string(acknowledged.size() + refused.size());
    auto [status, body] = post(name);
    last = std::to_string(status) + " " + body;
    (status == 200 ? acknowledged : refused).insert(name);
    resumed = status == 200;
    if (!resumed) std::this_thread::sleep_for(milliseconds(200));
  }
  if (!resumed) {
    rs.replica(0).process().signal(SIGTERM);
    ADD_FAILURE() << rs.replica(0).process().read_rest();
  }
  ASSERT_TRUE(resumed) << "writes did not resume after PostgreSQL came back: " << last;
  EXPECT_EQ(healthz().first, 200);
  EXPECT_EQ(job_names_now(rs), acknowledged);
}

}  // namespace
}  // namespace gf
