// Reads never go through the writer (docs/api.md "Reads"): every GET answers from the view the
// loop published, so a storm of reads runs no batch, no controller and changes nothing; and what
// the scheduler knows about a waiting job is in that view (its record), not asked of the writer.
#include <gtest/gtest.h>

#include "support/fleet_harness.h"

namespace gf {
namespace {

using testing::Fleet;
using testing::shared_example;

int64_t batches(Fleet& f) {
  const std::string text = f.call("GET", "/metrics").body;
  const std::string name = "gpufleet_loop_batches_total ";
  const size_t at = text.find("\n" + name);
  EXPECT_NE(at, std::string::npos) << text;
  return std::stoll(text.substr(at + 1 + name.size()));
}

// A fleet with something behind every read: a cluster, each quota front end, service jobs (one
// waiting), PyTorchJobs (one waiting), a remediation policy and audit records.
class ReadPath : public ::testing::Test {
 protected:
  void SetUp() override {
    Json c = {
        {"ClusterName", "training"},
        {"NodeProvisioningMode", "Continuous"},
        {"InstanceGroups",
         {{{"InstanceGroupName", "g5"}, {"InstanceType", "ml.g5.xlarge"}, {"InstanceCount", 3}},
          {{"InstanceGroupName", "p4"},
           {"InstanceType", "ml.p4d.24xlarge"},
           {"InstanceCount", 2}}}}};
    ok(f.call("POST", "/v1/clusters", c.dump()));
    f.run_for(hours(1));
    ok(f.call("POST", "/v1/apply", shared_example("quota-shares.json")));
    ok(f.call("POST", "/v1/apply", shared_example("elasticquotatree.yaml")));
    ok(f.call("POST", "/v1/apply", shared_example("propagationpolicy-gang-queue.yaml")));
    ok(f.call("PUT", "/v1/clusters/training/remediation-policy",
              shared_example("remediation-policy.yaml")));
    for (int i = 0; i < 4; ++i) {
      Json job = Json::parse(shared_example("service-job.json"));
      job["jobName"] = "svc-" + std::to_string(i);
      job.erase("clientToken");
      ok(f.call("POST", "/v1/service-jobs", job.dump()));
      job_ids.push_back(Json::parse(f.call("GET", "/v1/service-jobs").body)["jobSummaryList"]
                            .back()["jobId"]
                            .get<std::string>());
    }
    std::string torch = shared_example("pytorchjob.yaml");
    ok(f.call("POST", "/v1/apply", torch));
    const std::string name = "name: ";
    torch.replace(torch.find(name) + name.size(), 0, "second-");
    ok(f.call("POST", "/v1/apply", torch));
    f.run_for(seconds(5));
  }
  static void ok(const HttpResponse& r) { ASSERT_LT(r.status, 300) << r.body; }

  Fleet f;
  std::vector<std::string> job_ids;
};

TEST_F(ReadPath, ThousandGetsOfEveryKindRunNoBatchAndChangeNothing) {
  const Json items = f.json("GET", "/v1/objects/pytorchjobs")["items"];
  ASSERT_EQ(items.size(), 2u) << items.dump(2);
  const std::string torch = items[0]["metadata"]["name"];
  const Json alerts = f.json("GET", "/v1/alerts");
  std::vector<std::string> paths = {
      "/healthz",
      "/metrics",
      "/v1/version",
      "/v1/debug/state-hash",
      "/v1/audit",
      "/v1/events",
      "/v1/billing",
      "/v1/clusters",
      "/v1/clusters/training",
      "/v1/clusters/training/nodes",
      "/v1/clusters/training/events",
      "/v1/clusters/training/remediation-policy",
      "/v1/clusters/training/circuit-breaker",
      "/v1/alerts",
      "/v1/remediations",
      "/v1/hosts",
      "/v1/tickets",
      "/v1/service-jobs",
      "/v1/service-jobs/" + job_ids[0],
      "/v1/jobs/" + job_ids[3],
      "/v1/service-environments",
      "/v1/service-environments/training-env",
      "/v1/scheduling-policies",
      "/v1/job-queues",
      "/v1/job-queues/shared-training-queue",
      "/v1/quota-shares",
      "/v1/quota-shares/QS1",
      "/v1/objects/queues",
      "/v1/objects/elasticquotatrees",
      "/v1/objects/pytorchjobs",
      "/v1/objects/pytorchjobs/default/" + torch,
      "/v1/objects/pods",
      "/v1/objects/propagationpolicies",
  };
  const std::string node =
      f.json("GET", "/v1/clusters/training/nodes")["ClusterNodeSummaries"][0].value("InstanceId",
                                                                                    "");
  ASSERT_FALSE(node.empty());
  paths.push_back("/v1/clusters/training/nodes/" + node);

  const int64_t before = batches(f);
  const Seq seq = f.runtime().loop().state().applied_seq();
  const uint64_t hash = f.runtime().loop().state().model_hash();
  int calls = 0;
  while (calls < 1000) {
    for (const std::string& p : paths) {
      std::map<std::string, std::string> query;
      if (p.find("pytorchjobs/") != std::string::npos && calls % 2 == 0) query["describe"] = "true";
      HttpResponse r = f.call("GET", p, "", query);
      EXPECT_EQ(r.status, 200) << p << ": " << r.body;
      ++calls;
    }
  }
  EXPECT_EQ(batches(f), before) << calls << " GETs ran loop batches";
  EXPECT_EQ(f.runtime().loop().state().applied_seq(), seq);
  EXPECT_EQ(f.runtime().loop().state().model_hash(), hash);
  // A write still runs one.
  ok(f.call("PATCH", "/v1/service-jobs/" + job_ids[0], R"({"schedulingPriority": 4})"));
  EXPECT_GT(batches(f), before);
}

// Rule: describe answers from the job's record, which the scheduler's last pass wrote: a job
// waiting for quota names the node, limit and shortfall there, and snapshots keep it.
TEST_F(ReadPath, WaitingReasonIsInTheRecordAndSurvivesARestart) {
  Json waiting;
  for (const std::string& id : job_ids) {
    const Json j = f.json("GET", "/v1/jobs/" + id);
    if (j["status"] == "RUNNABLE") waiting = j;
  }
  ASSERT_TRUE(waiting.is_object()) << "one of the four service jobs waits";
  EXPECT_EQ(waiting["explanation"]["kind"], "Quota") << waiting.dump(2);
  EXPECT_EQ(waiting["explanation"]["reason"], "QuotaExceeded");
  EXPECT_FALSE(waiting["explanation"].value("quotaNode", "").empty());
  EXPECT_GT(waiting["explanation"].value("shortfall", 0), 0);
  EXPECT_EQ(waiting["statusReason"], waiting["explanation"]["message"]);
  const std::string id = waiting["jobId"];
  f.restart();
  const Json again = f.json("GET", "/v1/jobs/" + id);
  EXPECT_EQ(again["explanation"], waiting["explanation"]);
}

}  // namespace
}  // namespace gf
