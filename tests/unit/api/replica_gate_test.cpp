// The API's replica rules (docs/replication.md): a follower redirects writes to the leader (307,
// same path and query) or answers 503 while no leader is known; every answer carries the applied
// seq; ?minSeq= is checked and never waits on a leader; /healthz and /v1/replicas say the role.
#include <gtest/gtest.h>

#include "api/api.h"
#include "journal/sqlite/sqlite_journal.h"
#include "support/temp_dir.h"

namespace gf {
namespace {

class ReplicaGateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    journal_ = std::move(SqliteJournal::open(dir_.file("journal.db"), {.fsync = false})).value();
    loop_ = std::make_unique<ControlLoop>(LoopOptions{}, clock_, *journal_, metrics_);
    ASSERT_TRUE(loop_->recover().ok());
    ApiOptions opts;
    opts.drive_loop_inline = true;
    api_ = std::make_unique<Api>(opts, *loop_, metrics_, clock_);
  }
  void as_replica(ReplicaState state) {
    state.store = "postgres";
    api_->set_replica([state] { return state; },
                      [] {
                        return Result<Json>(Json::array({{{"Id", "r0"}}}));
                      });
  }
  HttpResponse call(const std::string& method, const std::string& path,
                    std::map<std::string, std::string> query = {}, std::string body = "") {
    HttpRequest req;
    req.method = method;
    req.path = path;
    req.query = std::move(query);
    req.body = std::move(body);
    return api_->handle(req);
  }

  testing::TempDir dir_;
  VirtualClock clock_;
  Metrics metrics_;
  std::unique_ptr<SqliteJournal> journal_;
  std::unique_ptr<ControlLoop> loop_;
  std::unique_ptr<Api> api_;
};

TEST_F(ReplicaGateTest, AFollowerRedirectsAWriteToTheLeaderWithPathAndQuery) {
  as_replica({.role = "follower", .epoch = 4, .leader_url = "http://10.0.0.7:8470"});
  HttpResponse r = call("POST", "/v1/clusters", {{"dryRun", "All"}}, "{}");
  EXPECT_EQ(r.status, 307);
  EXPECT_EQ(r.headers["Location"], "http://10.0.0.7:8470/v1/clusters?dryRun=All");
  EXPECT_EQ(r.headers["X-Gpufleet-Leader"], "http://10.0.0.7:8470");
  EXPECT_NE(r.body.find("writes go to the leader at http://10.0.0.7:8470"), std::string::npos);
}

TEST_F(ReplicaGateTest, AFollowerWithNoLeaderKnownAnswers503WithRetryAfter) {
  as_replica({.role = "follower"});
  HttpResponse r = call("DELETE", "/v1/clusters/a");
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(r.headers["Retry-After"], "1");
  EXPECT_NE(r.body.find("no leader is elected"), std::string::npos) << r.body;
}

TEST_F(ReplicaGateTest, AFollowerServesReads) {
  as_replica({.role = "follower", .leader_url = "http://leader"});
  EXPECT_EQ(call("GET", "/v1/version").status, 200);
}

TEST_F(ReplicaGateTest, TheLeaderRunsWritesItself) {
  as_replica({.role = "leader", .leader_url = "http://me"});
  HttpResponse r = call("POST", "/v1/clusters", {}, "{}");
  EXPECT_NE(r.status, 307);
  // This Api has no cluster routes: the router answered, so the gate let the write through.
  EXPECT_EQ(r.status, 404) << r.body;
}

TEST_F(ReplicaGateTest, EveryAnswerCarriesTheAppliedSeq) {
  HttpResponse r = call("GET", "/v1/version");
  EXPECT_EQ(r.headers["X-Gpufleet-Seq"], std::to_string(loop_->view()->applied_seq));
  EXPECT_EQ(call("GET", "/nope").headers.count("X-Gpufleet-Seq"), 1u);
}

TEST_F(ReplicaGateTest, MinSeqMustBeANumberAndNamesTheField) {
  for (const char* bad : {"soon", "-1", "1e3", "", "99999999999999999999"}) {
    HttpResponse r = call("GET", "/v1/version", {{"minSeq", bad}});
    EXPECT_EQ(r.status, 400) << bad;
    EXPECT_NE(r.body.find("minSeq"), std::string::npos) << r.body;
  }
}

TEST_F(ReplicaGateTest, MinSeqAlreadyAppliedAnswersAtOnceAndBeyondTheEndIsAClientErrorOnALeader) {
  EXPECT_EQ(call("GET", "/v1/version", {{"minSeq", "0"}}).status, 200);
  // A single server and a leader published every committed event: no answer carried this seq.
  for (bool leader : {false, true}) {
    if (leader) as_replica({.role = "leader"});
    HttpResponse r = call("GET", "/v1/version", {{"minSeq", "1000000"}});
    EXPECT_EQ(r.status, 400) << leader;
    EXPECT_NE(r.body.find("minSeq: seq 1000000 is past the end of the journal"), std::string::npos)
        << r.body;
  }
}

TEST_F(ReplicaGateTest, MinSeqFarBeyondWhatAFollowerKnowsIsRetriedNotHeld) {
  as_replica({.role = "follower", .leader_url = "http://leader", .known_seq = 5});
  HttpResponse r = call("GET", "/v1/version", {{"minSeq", "1000000"}});
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(r.headers["Retry-After"], "1");
  EXPECT_NE(r.body.find("has not reached 1000000"), std::string::npos) << r.body;
}

TEST_F(ReplicaGateTest, HealthzAndReplicasSayTheRole) {
  as_replica({.role = "follower", .id = "r1", .epoch = 3, .known_seq = 5, .lag_seconds = 0.25});
  HttpResponse h = call("GET", "/healthz");
  EXPECT_EQ(h.status, 200);
  EXPECT_EQ(h.body.rfind("ok\nrole: follower\nepoch: 3\n", 0), 0u) << h.body;
  EXPECT_NE(h.body.find("lag_seconds: 0.250"), std::string::npos) << h.body;
  Json j = Json::parse(call("GET", "/v1/replicas").body);
  EXPECT_EQ(j["Self"]["Role"], "follower");
  EXPECT_EQ(j["Self"]["Id"], "r1");
  EXPECT_EQ(j["Replicas"][0]["Id"], "r0");
}

TEST_F(ReplicaGateTest, ASingleSqliteServerIsItsOwnLeader) {
  EXPECT_EQ(call("GET", "/healthz").body, "ok\n");
  Json j = Json::parse(call("GET", "/v1/replicas").body);
  EXPECT_EQ(j["Self"]["Role"], "leader");
  EXPECT_EQ(j["Self"]["Store"], "sqlite");
  EXPECT_EQ(j["Replicas"].size(), 1u);
}

}  // namespace
}  // namespace gf
