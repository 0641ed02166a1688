// A control plane that runs for a year, killed as it goes (docs/operations.md "What is kept
// where"): the real `serve`, sped up so that snapshots, compaction (with an archive) and job
// retention happen all the time, is killed with SIGKILL while two writers submit jobs, five times;
// every acknowledged job is still reachable afterwards (in memory or in history), the journal
// verifies, and compaction did run.
#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "core/json.h"
#include "support/gpufleet_server.h"
#include "support/process.h"
#include "support/temp_dir.h"

namespace gf {
namespace {

using testing::CommandResult;
using testing::run_command;
using testing::TempDir;
using Server = testing::GpufleetServer;

void set_up_fleet(const Server& s) {
  httplib::Client c(s.url());
  Json cluster = {
      {"ClusterName", "fleet"},
      {"NodeProvisioningMode", "Continuous"},
      {"InstanceGroups",
       {{{"InstanceGroupName", "g5"}, {"InstanceType", "ml.g5.xlarge"}, {"InstanceCount", 8}}}}};
  auto r = c.Post("/v1/clusters", cluster.dump(), "application/json");
  ASSERT_TRUE(r && r->status == 200) << (r ? r->body : "unreachable");
  s.poll("/v1/clusters/fleet", [](const Json& j) {
    return j.is_object() && j.value("ClusterStatus", "") == "InService";
  });
  std::ifstream in(std::string(GPUFLEET_EXAMPLES_DIR) + "/quota-shares.json");
  const std::string quota((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  r = c.Post("/v1/apply", quota, "application/json");
  ASSERT_TRUE(r && r->status == 200) << (r ? r->body : "unreachable");
}

std::string job_body(const std::string& name) {
  return Json{{"jobName", name},
              {"jobQueue", "shared-training-queue"},
              {"quotaShareName", "QS1"},
              {"serviceJobType", "SAGEMAKER_TRAINING"},
              {"tags", {{"gpufleet.io/duration", "10m"}}},
              {"serviceRequestPayload",
               {{"ResourceConfig", {{"InstanceType", "ml.g5.xlarge"}, {"InstanceCount", 1}}}}}}
      .dump();
}

TEST(RetentionCrash, Kill9DuringSnapshotsCompactionAndRetentionLosesNothingAcknowledged) {
  TempDir dir;
  const std::string data = dir.path() + "/d", archive = dir.path() + "/archive";
  // 100,000 times real time: a day of journal retention passes in under a second, so every
  // round snapshots, compacts and retires while the writers write.
  const std::vector<std::string> flags = {
      "--sim-speed",       "100000", "--snapshot-every",    "1",   "--job-retention",   "1h",
      "--event-retention", "1h",     "--journal-retention", "24h", "--journal-archive", archive};
  std::mutex mu;
  std::vector<std::string> acked;
  for (int round = 0; round < 5; ++round) {
    Server s(data, flags);
    ASSERT_FALSE(s.url().empty()) << s.process().read_rest();
    if (round == 0) {
      ASSERT_NO_FATAL_FAILURE(set_up_fleet(s));
    }
    std::atomic<bool> stop{false};
    std::atomic<int> this_round{0};
    auto writer = [&](int w) {
      httplib::Client c(s.url());
      c.set_connection_timeout(2);
      for (int n = 0; !stop; ++n) {
        auto r = c.Post("/v1/service-jobs", job_body(fmt::format("r{}-w{}-{}", round, w, n)),
                        "application/json");
        if (!r) break;  // killed
        if (r->status != 200) continue;
        std::lock_guard lock(mu);
        acked.push_back(Json::parse(r->body)["jobId"].get<std::string>());
        ++this_round;
      }
    };
    std::thread a(writer, 0), b(writer, 1);
    // Kill at a different point of each round, with the writers still writing; the last two
    // rounds only once compaction has archived something (snapshots are serialized beside the
    // loop, so how many a round saves depends on the machine's speed), within a bound.
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    auto compacted = [&] {
      return round < 3 ||
             (std::filesystem::exists(archive) && !std::filesystem::is_empty(archive)) ||
             std::chrono::steady_clock::now() > give_up;
    };
    while (this_round < 150 + 70 * round || !compacted()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    s.process().signal(SIGKILL);
    EXPECT_EQ(s.process().wait(), 128 + SIGKILL);
    stop = true;
    a.join();
    b.join();
  }
  Server s(data, flags);
  ASSERT_FALSE(s.url().empty());
  httplib::Client c(s.url());
  int missing = 0;
  for (const std::string& id : acked) {
    auto r = c.Get("/v1/jobs/" + id);
    if (!r || r->status != 200) ++missing;
  }
  EXPECT_EQ(missing, 0) << "of " << acked.size() << " acknowledged jobs";
  EXPECT_GT(Json::parse(c.Get("/v1/history/jobs?limit=1")->body)["jobs"].size(), 0u)
      << "jobs were retired to history";
  EXPECT_TRUE(std::filesystem::exists(archive) && !std::filesystem::is_empty(archive))
      << "compaction ran and archived what it removed";
  CommandResult verify = run_command({GPUFLEET_BINARY, "journal", "verify", data});
  EXPECT_EQ(verify.exit_code, 0) << verify.out;
}

}  // namespace
}  // namespace gf
