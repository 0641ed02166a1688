// Journals written by earlier releases still replay (docs/architecture.md "Journal
// compatibility"): tests/fixtures/journal-compat/journal.jsonl is the journal that gpufleet wrote
// for scenario.yaml beside it before typed journal events (26 event types, 87 events). Loaded into
// a fresh SQLite journal and recovered by today's runtime, it must rebuild the same fleet, and the
// control plane must carry on from it.
#include <gtest/gtest.h>

#include <fstream>

#include "cloud/sim/sim_cloud.h"
#include "journal/sqlite/sqlite_journal.h"
#include "loop/virtual_runner.h"
#include "runtime/runtime.h"
#include "support/fleet_harness.h"
#include "support/temp_dir.h"

namespace gf {
namespace {

std::vector<NewEvent> fixture_events(Seq* last) {
  std::ifstream in(std::string(GPUFLEET_SOURCE_DIR) +
                   "/tests/fixtures/journal-compat/journal.jsonl");
  std::vector<NewEvent> out;
  std::string line;
  while (std::getline(in, line)) {
    const Json j = Json::parse(line);
    out.push_back(NewEvent{j.at("type").get<std::string>(), j.at("payload").dump(),
                           j.at("idempotency_key").get<std::string>(),
                           from_micros(j.at("time_us").get<int64_t>())});
    *last = j.at("seq").get<Seq>();
  }
  return out;
}

class JournalCompat : public ::testing::Test {
 protected:
  void SetUp() override {
    Seq last = 0;
    const std::vector<NewEvent> events = fixture_events(&last);
    ASSERT_EQ(events.size(), 87u);
    ASSERT_EQ(last, 87);
    journal_ = std::move(SqliteJournal::open(dir_.file("journal.db"), {.fsync = false})).value();
    for (const NewEvent& e : events) ASSERT_TRUE(journal_->append({&e, 1}).ok());
    clock_.set(events.back().time);
    RuntimeOptions opts;
    opts.api.drive_loop_inline = true;
    SimCloudConfig cloud;
    cloud.capacity = {{"ml.g5.xlarge", 6}, {"ml.p4d.24xlarge", 4}, {"ml.m5.xlarge", 4}};
    opts.cloud = sim_cloud(cloud);
    runtime_ = std::make_unique<Runtime>(opts, clock_, *journal_);
    const Status st = runtime_->recover();
    ASSERT_TRUE(st.ok()) << st.to_string();
    runner_ = std::make_unique<VirtualRunner>(runtime_->loop(), clock_);
  }
  Json get(const std::string& path) {
    HttpRequest req;
    req.method = "GET";
    req.path = path;
    HttpResponse r = runtime_->api().handle(req);
    EXPECT_EQ(r.status, 200) << path << ": " << r.body;
    return Json::parse(r.body);
  }
  std::string job_status(const std::string& name) {
    const Json list = get("/v1/service-jobs");
    for (const Json& j : list["jobSummaryList"]) {
      if (j["jobName"] == name) return j["status"];
    }
    return "";
  }

  testing::TempDir dir_;
  VirtualClock clock_;
  std::unique_ptr<SqliteJournal> journal_;
  std::unique_ptr<Runtime> runtime_;
  std::unique_ptr<VirtualRunner> runner_;
};

TEST_F(JournalCompat, AJournalWrittenBeforeTypedEventsRebuildsTheSameFleet) {
  const FleetView& v = runtime_->loop().state().view();
  EXPECT_EQ(v.applied_seq, 87);
  // What the writing release's state.json showed at the end of the run.
  ASSERT_NE(v.find_cluster("training"), nullptr);
  EXPECT_EQ(v.find_cluster("scratch"), nullptr) << "deleted in the run";
  const Json training = get("/v1/clusters/training");
  EXPECT_EQ(training["ClusterStatus"], "InService");
  for (const Json& g : training["InstanceGroups"]) {
    if (g["InstanceGroupName"] == "g5") {
      EXPECT_EQ(g["TargetCount"], 4);
    } else if (g["InstanceGroupName"] == "p4") {
      EXPECT_EQ(g["CurrentCount"], 2);
    }
  }
  EXPECT_EQ(job_status("qs1-a"), "SUCCEEDED");
  EXPECT_EQ(job_status("qs1-b"), "RUNNING");
  EXPECT_EQ(job_status("qs1-c"), "RUNNING");
  EXPECT_EQ(job_status("qs2-a"), "FAILED");
  EXPECT_EQ(get("/v1/objects/pytorchjobs")["items"].size(), 0u) << "deleted in the run";
  const Json alerts = get("/v1/alerts")["Alerts"];
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0]["Fault"], "xid:79");
  EXPECT_EQ(alerts[0]["State"], "resolved");
  const Json rem = get("/v1/remediations")["Remediations"];
  ASSERT_EQ(rem.size(), 1u);
  EXPECT_EQ(rem[0]["Status"], "Succeeded");
  // The quota the journal applied is compiled again, with its counts.
  EXPECT_EQ(get("/v1/quota-shares/QS1")["admittedJobs"], 2);
}

TEST_F(JournalCompat, TheRebuiltFleetSnapshotsAndCarriesOn) {
  const FleetState& s = runtime_->loop().state();
  auto again = FleetState::from_json(s.to_json());
  ASSERT_TRUE(again.ok()) << again.status().to_string();
  EXPECT_EQ(again->hash(), s.hash());
  EXPECT_TRUE(runtime_->scheduling_cache().scheduler(s).check_invariants().ok());
  // A new job queues behind the running ones and says why.
  Json job = Json::parse(testing::shared_example("service-job.json"));
  job["jobName"] = "after-replay";
  job.erase("clientToken");
  HttpRequest req;
  req.method = "POST";
  req.path = "/v1/service-jobs";
  req.body = job.dump();
  HttpResponse r = runtime_->api().handle(req);
  ASSERT_EQ(r.status, 200) << r.body;
  runner_->run_for(seconds(1));
  const Json d = get("/v1/jobs/" + Json::parse(r.body)["jobId"].get<std::string>());
  EXPECT_FALSE(d["status"].get<std::string>().empty());
  EXPECT_TRUE(d.contains("explanation")) << d.dump(2);
  EXPECT_GT(runtime_->loop().state().applied_seq(), 87);
}

}  // namespace
}  // namespace gf
