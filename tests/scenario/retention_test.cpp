// A control plane that runs for a year (docs/operations.md "What is kept where"), on a virtual
// clock through the real API: a finished job leaves memory after its retention and answers from
// history, billing over a window across the retention boundary is unchanged, compaction keeps a
// restart's state identical, and a watch resuming from before the kept events gets 410.
#include <gtest/gtest.h>

#include "support/fleet_harness.h"

namespace gf {
namespace {

using testing::Fleet;
using testing::shared_example;

RuntimeOptions compacting() {
  RuntimeOptions o;
  o.loop.snapshot_every_events = 40;
  o.loop.journal_retention = hours(24);
  return o;
}

class RetentionScenario : public ::testing::Test {
 protected:
  void SetUp() override {
    Json c = {
        {"ClusterName", "training"},
        {"NodeProvisioningMode", "Continuous"},
        {"InstanceGroups",
         {{{"InstanceGroupName", "g5"}, {"InstanceType", "ml.g5.xlarge"}, {"InstanceCount", 3}}}}};
    ASSERT_EQ(f.call("POST", "/v1/clusters", c.dump()).status, 200);
    f.run_for(hours(1));
    ASSERT_EQ(f.call("POST", "/v1/apply", shared_example("quota-shares.json")).status, 200);
  }
  std::string submit(const std::string& name, const std::string& run) {
    Json job = Json::parse(shared_example("service-job.json"));
    job["jobName"] = name;
    job["tags"] = {{"gpufleet.io/duration", run}};
    HttpResponse r = f.call("POST", "/v1/service-jobs", job.dump());
    EXPECT_EQ(r.status, 200) << r.body;
    return Json::parse(r.body).value("jobId", "");
  }
  bool in_memory(const std::string& id) {
    return f.runtime().loop().state().view().job(id) != nullptr;
  }
  Fleet f{SimCloudConfig{}, compacting()};
};

TEST_F(RetentionScenario, AFinishedJobLeavesMemoryAfterSevenDaysAndAnswersFromHistory) {
  const std::string id = submit("short", "2h");
  f.run_for(hours(3));
  ASSERT_EQ(f.json("GET", "/v1/jobs/" + id)["status"], "SUCCEEDED");
  f.run_for(days(7) - hours(2));
  EXPECT_TRUE(in_memory(id)) << "not before its seven days";
  f.run_for(hours(2));
  EXPECT_FALSE(in_memory(id));
  const Json described = f.json("GET", "/v1/jobs/" + id);
  EXPECT_EQ(described["status"], "SUCCEEDED");
  EXPECT_EQ(described["fromHistory"], true);
  EXPECT_EQ(f.json("GET", "/v1/jobs/short")["jobId"], id) << "by name too";
  EXPECT_EQ(f.json("GET", "/v1/service-jobs/" + id)["jobName"], "short");
  const Json page =
      Json::parse(f.call("GET", "/v1/history/jobs", "", {{"tenant", "QS1"}}).body)["jobs"];
  ASSERT_EQ(page.size(), 1u);
  EXPECT_EQ(page[0]["jobId"], id);
  EXPECT_EQ(page[0]["historyState"], "SUCCEEDED");
  EXPECT_EQ(
      Json::parse(f.call("GET", "/v1/history/jobs", "", {{"tenant", "QS2"}}).body)["jobs"].size(),
      0u);
  EXPECT_EQ(f.call("GET", "/v1/jobs/never-was").status, 404);
}

TEST_F(RetentionScenario, BillingByShareAcrossTheRetentionBoundaryIsUnchanged) {
  submit("a", "5h");
  f.run_for(hours(1));
  submit("b", "30m");
  f.run_for(hours(6));
  const std::map<std::string, std::string> q{{"groupBy", "share"}, {"from", "8h"}};
  const Json before = Json::parse(f.call("GET", "/v1/billing", "", q).body);
  ASSERT_GT(before["TotalMicros"].get<int64_t>(), 0);
  f.run_for(days(8));
  ASSERT_TRUE(f.runtime().loop().state().view().jobs.empty()) << "both retired";
  // The same window, named as times now that "8h" would mean another one.
  const std::map<std::string, std::string> same{
      {"groupBy", "share"}, {"from", before["From"]}, {"to", before["To"]}};
  const Json after = Json::parse(f.call("GET", "/v1/billing", "", same).body);
  EXPECT_EQ(after["TotalMicros"], before["TotalMicros"]);
  EXPECT_EQ(after["Items"], before["Items"]);
}

TEST_F(RetentionScenario, ARestartAfterCompactionRebuildsTheSameState) {
  for (int d = 0; d < 30; ++d) {
    for (int k = 0; k < 4; ++k) submit("daily-" + std::to_string(d * 4 + k), "1h");
    f.run_for(days(1));
  }
  EXPECT_GT(*f.journal().compacted_through(), 0) << "compaction ran";
  const uint64_t hash = f.runtime().loop().state().hash();
  const Seq seq = f.runtime().loop().state().applied_seq();
  f.restart();
  EXPECT_EQ(f.runtime().loop().state().applied_seq(), seq);
  EXPECT_EQ(f.runtime().loop().state().hash(), hash);
  // And it carries on: a new job runs and leaves memory as the others did.
  const std::string id = submit("after-restart", "1h");
  f.run_for(days(8));
  EXPECT_FALSE(in_memory(id));
  EXPECT_EQ(f.json("GET", "/v1/jobs/" + id)["fromHistory"], true);
}

TEST_F(RetentionScenario, AWatchFromBeforeTheKeptEventsGets410) {
  // A chunk of user events (256) on day 0, then nine days.
  for (int i = 0; i < 100; ++i) submit("w-" + std::to_string(i), "1m");
  f.run_for(hours(12));
  ASSERT_GT(f.runtime().loop().state().view().events.size(), EventLog::kChunkSize);
  f.run_for(days(9));
  const Seq dropped = f.runtime().loop().state().view().events.dropped_through();
  ASSERT_GT(dropped, 0) << "events older than seven days were dropped";
  HttpResponse old = f.call("GET", "/v1/watch", "", {{"sinceSeq", "1"}});
  EXPECT_EQ(old.status, 410);
  EXPECT_NE(old.body.find("ExpiredException"), std::string::npos);
  HttpResponse fresh = f.call("GET", "/v1/watch", "", {{"sinceSeq", std::to_string(dropped)}});
  EXPECT_EQ(fresh.status, 200);
}

}  // namespace
}  // namespace gf
