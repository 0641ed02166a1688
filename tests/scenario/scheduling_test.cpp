// Scheduling through the real API on a virtual clock (issue 4 acceptance 1 and 2): the published
// quota-share example step by step, ElasticQuotaTree max-jobs, describe-job explanations,
// restart, and bad input that changes nothing.
#include <gtest/gtest.h>

#include "state/job_events.h"
#include "support/fleet_harness.h"

namespace gf {
namespace {

using testing::Fleet;
using testing::shared_example;

// A Native cluster of `count` ml.g5.xlarge nodes, InService.
void g5_cluster(Fleet& f, const std::string& name, int count) {
  Json c = {{"ClusterName", name},
            {"NodeProvisioningMode", "Continuous"},
            {"InstanceGroups",
             {{{"InstanceGroupName", "g5"},
               {"InstanceType", "ml.g5.xlarge"},
               {"InstanceCount", count}}}}};
  HttpResponse r = f.call("POST", "/v1/clusters", c.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  f.run_for(hours(1));
  ASSERT_EQ(f.describe(name)["ClusterStatus"], "InService");
}

std::string submit(Fleet& f, const std::string& name, const std::string& share, int priority) {
  Json job = Json::parse(shared_example("service-job.json"));
  job["jobName"] = name;
  job["quotaShareName"] = share;
  job["schedulingPriority"] = priority;
  HttpResponse r = f.call("POST", "/v1/service-jobs", job.dump());
  EXPECT_EQ(r.status, 200) << r.body;
  return Json::parse(r.body).value("jobId", "");
}

Json job(Fleet& f, const std::string& id) { return f.json("GET", "/v1/jobs/" + id); }
std::string status(Fleet& f, const std::string& id) { return job(f, id).value("status", ""); }

class QuotaShareExample : public ::testing::Test {
 protected:
  void SetUp() override {
    g5_cluster(f, "training", 3);
    HttpResponse r = f.call("POST", "/v1/apply", shared_example("quota-shares.json"));
    ASSERT_EQ(r.status, 200) << r.body;
    ASSERT_EQ(Json::parse(r.body)["items"].size(), 6u);
  }
  Fleet f;
};

TEST_F(QuotaShareExample, PublishedExample_StepByStep) {
  const Json queue = f.json("GET", "/v1/job-queues/shared-training-queue");
  EXPECT_EQ(queue["state"], "ENABLED");
  EXPECT_EQ(queue["status"], "VALID");
  EXPECT_EQ(queue["statusReason"], "JobQueue Healthy");

  // The verbatim example job first (priority 3), then priorities 2 and 1 in QS1.
  HttpResponse r = f.call("POST", "/v1/service-jobs", shared_example("service-job.json"));
  ASSERT_EQ(r.status, 200) << r.body;
  const std::string p3 = Json::parse(r.body)["jobId"];
  const std::string p2 = submit(f, "qs1-mid", "QS1", 2);
  const std::string p1 = submit(f, "qs1-low", "QS1", 1);
  f.run_for(seconds(1));
  // The first runs on QS1's own instance, the second borrows QS2's, the third waits: QS3's
  // instance is never lent.
  EXPECT_EQ(status(f, p3), "RUNNING");
  EXPECT_EQ(status(f, p2), "RUNNING");
  EXPECT_EQ(status(f, p1), "RUNNABLE");
  EXPECT_NE(job(f, p2)["events"].dump().find("borrowing"), std::string::npos);
  const Json waiting = job(f, p1);
  EXPECT_EQ(waiting["explanation"]["kind"], "Quota") << waiting.dump(2);
  EXPECT_EQ(waiting["explanation"]["resource"], "ml.g5.xlarge");
  EXPECT_EQ(waiting["explanation"]["shortfall"], 1);

  // A QS2 job arrives: QS1's borrowing job is preempted (reclaim) and QS2's job runs.
  const std::string q2 = submit(f, "qs2-job", "QS2", 0);
  f.run_for(seconds(1));
  EXPECT_EQ(status(f, q2), "RUNNING");
  const Json reclaimed = job(f, p2);
  EXPECT_EQ(reclaimed["status"], "RUNNABLE");
  EXPECT_EQ(reclaimed["preemptionSummary"]["preemptedAttemptCount"], 1);
  EXPECT_EQ(reclaimed["preemptionSummary"]["recentPreemptedAttempts"][0]["rule"], "Reclaim");
  EXPECT_EQ(reclaimed["preemptionSummary"]["recentPreemptedAttempts"][0]["preemptedBy"], q2);
  EXPECT_EQ(status(f, p3), "RUNNING");  // inside its own share: never a reclaim victim

  // Raising QS1's waiting job to priority 4 displaces QS1's running priority-3 job.
  r = f.call("PATCH", "/v1/service-jobs/" + p1, R"({"schedulingPriority": 4})");
  ASSERT_EQ(r.status, 200) << r.body;
  f.run_for(seconds(1));
  EXPECT_EQ(status(f, p1), "RUNNING");
  const Json displaced = job(f, p3);
  EXPECT_EQ(displaced["status"], "RUNNABLE");
  EXPECT_EQ(displaced["preemptionSummary"]["recentPreemptedAttempts"][0]["rule"], "InQueue");
  EXPECT_EQ(status(f, q2), "RUNNING");

  // The job list filters by status.
  const Json all =
      Json::parse(f.call("GET", "/v1/service-jobs", "",
                         {{"jobQueue", "shared-training-queue"}, {"jobStatus", "RUNNING"}})
                      .body);
  EXPECT_EQ(all["jobSummaryList"].size(), 2u);
}

TEST_F(QuotaShareExample, FinishedJobsFreeCapacity_AndTheWaitingJobRuns) {
  Json first = Json::parse(shared_example("service-job.json"));
  first["tags"] = {{"gpufleet.io/duration", "30m"}};
  HttpResponse r = f.call("POST", "/v1/service-jobs", first.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  const std::string a = Json::parse(r.body)["jobId"];
  const std::string b = submit(f, "second", "QS1", 3);
  const std::string c = submit(f, "third", "QS1", 3);
  f.run_for(seconds(1));
  EXPECT_EQ(status(f, c), "RUNNABLE");
  f.run_for(minutes(31));
  EXPECT_EQ(status(f, a), "SUCCEEDED");
  EXPECT_EQ(status(f, b), "RUNNING");
  EXPECT_EQ(status(f, c), "RUNNING");
  // Metering by share: job a held one ml.g5.xlarge ($1.408/h) for exactly 30 minutes.
  const Json bill = Json::parse(f.call("GET", "/v1/billing", "", {{"groupBy", "share"}}).body);
  ASSERT_EQ(bill["Items"].size(), 1u) << bill.dump(2);
  EXPECT_EQ(bill["Items"][0]["QuotaShareName"], "QS1");
  EXPECT_EQ(bill["Items"][0]["Jobs"], 3);
  const Json a_only = job(f, a);
  const int64_t a_cost = 704000;  // 1.408 $/h x 0.5 h
  EXPECT_GT(bill["Items"][0]["CostMicros"].get<int64_t>(), a_cost);
  (void)a_only;
}

TEST_F(QuotaShareExample, TerminateAndRestartKeepEverything) {
  const std::string a = submit(f, "a", "QS1", 3);
  const std::string b = submit(f, "b", "QS1", 2);
  const std::string c = submit(f, "c", "QS1", 1);
  f.run_for(seconds(1));
  ASSERT_EQ(
      f.call("POST", "/v1/service-jobs/" + a + "/terminate", R"({"reason": "done early"})").status,
      200);
  f.run_for(seconds(1));
  EXPECT_EQ(status(f, a), "FAILED");
  EXPECT_EQ(status(f, c), "RUNNING");
  const Json before = job(f, b);
  f.restart();
  EXPECT_EQ(job(f, b)["placement"], before["placement"]);
  EXPECT_EQ(status(f, b), "RUNNING");
  EXPECT_EQ(status(f, c), "RUNNING");
  // Capacity is still fully accounted after the restart: a new QS1 job waits.
  const std::string d = submit(f, "d", "QS1", 0);
  f.run_for(seconds(1));
  EXPECT_EQ(status(f, d), "RUNNABLE");
}

TEST_F(QuotaShareExample, RepeatedSubmission_AnswersWithTheFirstJob) {
  Json first = Json::parse(shared_example("service-job.json"));
  first["clientToken"] = "retry-me";
  HttpResponse a = f.call("POST", "/v1/service-jobs", first.dump());
  ASSERT_EQ(a.status, 200) << a.body;
  submit(f, "in-between", "QS2", 0);
  HttpResponse again = f.call("POST", "/v1/service-jobs", first.dump());
  ASSERT_EQ(again.status, 200) << again.body;
  EXPECT_EQ(Json::parse(again.body)["jobId"], Json::parse(a.body)["jobId"]);
  EXPECT_EQ(f.json("GET", "/v1/service-jobs")["jobSummaryList"].size(), 2u);
}

TEST_F(QuotaShareExample, BadServiceJobsAreRefusedNamingTheField_AndChangeNothing) {
  struct Case {
    std::string patch;
    std::string field;
  };
  const std::vector<Case> cases = {
      {R"({"schedulingPriority": 10000})", "schedulingPriority"},
      {R"({"quotaShareName": "QS9"})", "quotaShareName"},
      {R"({"jobQueue": "nope"})", "jobQueue"},
      {R"({"serviceRequestPayload": {"ResourceConfig": {"InstanceType": "ml.p5.48xlarge", "InstanceCount": 1}}})",
       "serviceRequestPayload.ResourceConfig.InstanceType"},
      {R"({"serviceRequestPayload": {"ResourceConfig": {"InstanceType": "ml.g5.xlarge", "InstanceCount": 0}}})",
       "serviceRequestPayload.ResourceConfig.InstanceCount"},
      {R"({"jobName": "bad name!"})", "jobName"},
  };
  for (const Case& c : cases) {
    Json job = Json::parse(shared_example("service-job.json"));
    job.merge_patch(Json::parse(c.patch));
    HttpResponse r = f.call("POST", "/v1/service-jobs", job.dump());
    EXPECT_EQ(r.status, 400) << c.patch << " -> " << r.body;
    EXPECT_NE(r.body.find(c.field), std::string::npos) << r.body;
  }
  EXPECT_EQ(f.json("GET", "/v1/service-jobs")["jobSummaryList"].size(), 0u);
  // A 21st share, or a share on a queue that does not exist, is refused the same way.
  HttpResponse r = f.call(
      "POST", "/v1/quota-shares",
      R"({"quotaShareName": "QS4", "jobQueue": "missing", "capacityLimits": [{"capacityUnit": "ml.g5.xlarge", "maxCapacity": 1}], "resourceSharingConfiguration": {"strategy": "LEND"}})");
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_NE(r.body.find("missing"), std::string::npos) << r.body;
  EXPECT_EQ(f.json("GET", "/v1/quota-shares")["quotaShares"].size(), 3u);
}

TEST_F(QuotaShareExample, LoweringAShareLimitMakesItsJobsPreemptible) {
  // QS2 (LEND) gets 2 instances of capacity, runs two jobs, then is cut back to 1.
  Json qs2 = f.json("GET", "/v1/quota-shares/QS2");
  qs2["capacityLimits"][0]["maxCapacity"] = 2;
  qs2.erase("createdAt");
  qs2.erase("usage");
  qs2.erase("admittedJobs");
  qs2.erase("pendingJobs");
  ASSERT_EQ(f.call("PUT", "/v1/quota-shares/QS2", qs2.dump()).status, 200);
  const std::string a = submit(f, "a", "QS2", 0);
  f.run_for(minutes(5));
  const std::string b = submit(f, "b", "QS2", 0);
  f.run_for(seconds(1));
  ASSERT_EQ(status(f, a), "RUNNING");
  ASSERT_EQ(status(f, b), "RUNNING");
  qs2["capacityLimits"][0]["maxCapacity"] = 1;
  HttpResponse r = f.call("PUT", "/v1/quota-shares/QS2", qs2.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  f.run_for(seconds(1));
  EXPECT_EQ(status(f, a), "RUNNING");  // nobody needs the capacity yet
  EXPECT_EQ(status(f, b), "RUNNING");
  const std::string q1 = submit(f, "qs1", "QS1", 0);
  f.run_for(seconds(1));
  EXPECT_EQ(status(f, q1), "RUNNING");
  EXPECT_EQ(status(f, b), "RUNNABLE");  // the newer QS2 job above the new limit was reclaimed
  EXPECT_EQ(job(f, b)["preemptionSummary"]["recentPreemptedAttempts"][0]["rule"], "Reclaim");
}

// Restart from a snapshot taken mid-way (every 7 events) plus the journal after it: jobs,
// placements, backoffs and quota accounting come back exactly.
TEST(SchedulingRestart, SnapshotPlusReplayRestoresJobsPlacementsAndAccounting) {
  RuntimeOptions opts;
  opts.loop.snapshot_every_events = 7;
  Fleet f({}, opts);
  g5_cluster(f, "training", 3);
  ASSERT_EQ(f.call("POST", "/v1/apply", shared_example("quota-shares.json")).status, 200);
  const std::string p3 = submit(f, "p3", "QS1", 3);
  const std::string p2 = submit(f, "p2", "QS1", 2);
  const std::string p1 = submit(f, "p1", "QS1", 1);
  f.run_for(seconds(1));
  const std::string q2 = submit(f, "q2", "QS2", 0);  // reclaims p2: p2 in backoff
  f.run_for(seconds(1));
  auto jobs = [&] {
    Json out = Json::object();
    for (const std::string& id : {p3, p2, p1, q2}) {
      Json j = job(f, id);
      j.erase("explanation");
      j.erase("statusReason");
      out[id] = j;
    }
    return out;
  };
  const Json before = jobs();
  f.restart();
  EXPECT_EQ(jobs(), before);
  // Accounting survived: QS1 still cannot take a third instance, and raising p1 still preempts p3.
  ASSERT_EQ(f.call("PATCH", "/v1/service-jobs/" + p1, R"({"schedulingPriority": 4})").status, 200);
  f.run_for(seconds(1));
  EXPECT_EQ(status(f, p1), "RUNNING");
  EXPECT_EQ(status(f, p3), "RUNNABLE");
  EXPECT_EQ(status(f, q2), "RUNNING");
  f.restart();  // and once more, now from whatever snapshot is latest
  EXPECT_EQ(status(f, p1), "RUNNING");
  EXPECT_EQ(status(f, p3), "RUNNABLE");
}

// ElasticQuotaTree (acceptance 2): jobs from namespace `default` land in child-2, whose
// kube-queue/max-jobs is 1.
TEST(ElasticQuotaTreeExample, MaxJobsOne_SecondJobWaitsUntilTheFirstFinishes) {
  Fleet f;
  Json c = {
      {"ClusterName", "gpu"},
      {"NodeProvisioningMode", "Continuous"},
      {"InstanceGroups",
       {{{"InstanceGroupName", "p5"}, {"InstanceType", "ml.p5.48xlarge"}, {"InstanceCount", 2}}}}};
  ASSERT_EQ(f.call("POST", "/v1/clusters", c.dump()).status, 200);
  f.run_for(hours(1));
  HttpResponse r = f.call("POST", "/v1/apply", shared_example("elasticquotatree.yaml"));
  ASSERT_EQ(r.status, 200) << r.body;
  const Json listed =
      Json::parse(f.call("GET", "/v1/objects/queues", "", {{"namespace", "kube-queue"}}).body);
  ASSERT_EQ(listed["items"].size(), 2u) << listed.dump(2);
  EXPECT_EQ(listed["items"][1]["metadata"]["name"].get<std::string>().rfind("root-child-2-", 0),
            0u);

  // Two gang jobs in namespace default, journaled directly: the quota path on its own (the
  // PyTorchJob front end on top of it is tests/scenario/fleet_dispatch_test.cpp).
  auto submit_ns_job = [&](const std::string& id, int64_t key) {
    Job j;
    j.id = id;
    j.key = static_cast<uint64_t>(key);
    j.name = id;
    j.kind = "PyTorchJob";
    j.ns = "default";
    j.duration = minutes(10);
    j.pod_sets.push_back(
        JobPodSet{"master", 1, Json{{"cpu", "2"}, {"nvidia.com/gpu", 1}}, "", false});
    j.pod_sets.push_back(
        JobPodSet{"worker", 2, Json{{"cpu", "2"}, {"nvidia.com/gpu", 1}}, "", false});
    j.status = JobStatus::kRunnable;
    Request req;
    req.name = "SubmitTestJob";
    req.handle = [j](const FleetState&, Time) -> Result<Decision> {
      Decision d;
      d.events.push_back(
          Event{std::string(event_type::kJobSubmitted), Json{{"job", j.to_json()}}, ""});
      return d;
    };
    Outcome o = f.runtime().api().write(std::move(req));
    ASSERT_TRUE(o.status.ok()) << o.status.to_string();
  };
  submit_ns_job("first", 1);
  submit_ns_job("second", 2);
  f.run_for(seconds(1));
  EXPECT_EQ(status(f, "first"), "RUNNING");
  const Json second = job(f, "second");
  EXPECT_EQ(second["status"], "RUNNABLE");
  EXPECT_EQ(second["explanation"]["kind"], "Quota") << second.dump(2);
  EXPECT_EQ(second["explanation"]["resource"], "kube-queue/max-jobs");
  EXPECT_EQ(second["explanation"]["quotaNode"], "child-2");
  EXPECT_NE(second["statusReason"].get<std::string>().find("kube-queue/max-jobs"),
            std::string::npos);
  f.run_for(minutes(10));
  EXPECT_EQ(status(f, "first"), "SUCCEEDED");
  EXPECT_EQ(status(f, "second"), "RUNNING");
}

// Kueue's kinds through the API: a LocalQueue job is admitted on the ClusterQueue's flavor,
// placed on that flavor's instance type, and waits naming the ClusterQueue when quota runs out.
constexpr const char* kKueueSetup = R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: g5}
spec:
  nodeLabels: {node.kubernetes.io/instance-type: ml.g5.xlarge}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: team-a}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: ["cpu", "memory", "nvidia.com/gpu"]
    flavors:
    - name: g5
      resources:
      - {name: cpu, nominalQuota: 8}
      - {name: memory, nominalQuota: 32Gi}
      - {name: nvidia.com/gpu, nominalQuota: 2}
  preemption: {withinClusterQueue: LowerPriority}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {namespace: team-a, name: user-queue}
spec: {clusterQueue: team-a}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: WorkloadPriorityClass
metadata: {name: high-priority}
value: 1000
)";

TEST(KueueKinds, LocalQueueJobsUseTheFlavorAndWaitOnTheClusterQueue) {
  Fleet f;
  g5_cluster(f, "g5s", 3);
  HttpResponse r = f.call("POST", "/v1/apply", kKueueSetup);
  ASSERT_EQ(r.status, 200) << r.body;
  auto submit_lq = [&](const std::string& name, const std::string& priority_class) {
    Json job = {
        {"jobName", name},
        {"serviceRequestPayload",
         {{"ResourceConfig", {{"InstanceType", "ml.g5.xlarge"}, {"InstanceCount", 1}}}}},
        {"tags",
         {{"kueue.x-k8s.io/queue-name", "user-queue"}, {"kueue.x-k8s.io/namespace", "team-a"}}}};
    if (!priority_class.empty()) job["tags"]["kueue.x-k8s.io/priority-class"] = priority_class;
    HttpResponse resp = f.call("POST", "/v1/service-jobs", job.dump());
    EXPECT_EQ(resp.status, 200) << resp.body;
  };
  submit_lq("a", "");
  submit_lq("b", "");
  submit_lq("c", "");
  f.run_for(seconds(1));
  EXPECT_EQ(status(f, "a"), "RUNNING");
  EXPECT_EQ(status(f, "b"), "RUNNING");
  const Json c = job(f, "c");
  EXPECT_EQ(c.value("status", ""), "RUNNABLE") << c.dump(2);
  const Json why = c.value("explanation", Json::object());
  EXPECT_EQ(why.value("kind", ""), "Quota") << c.dump(2);
  EXPECT_EQ(why.value("quotaNode", ""), "clusterqueue:team-a") << c.dump(2);
  // A high-priority job displaces one of them (withinClusterQueue: LowerPriority).
  submit_lq("urgent", "high-priority");
  f.run_for(seconds(1));
  EXPECT_EQ(status(f, "urgent"), "RUNNING");
  EXPECT_EQ(job(f, "urgent")["schedulingPriority"], 1000);
  const Json cq = f.json("GET", "/v1/objects/clusterqueues/team-a");
  EXPECT_EQ(cq["status"]["admittedWorkloads"], 2) << cq.dump(2);
  EXPECT_EQ(cq["status"]["pendingWorkloads"], 2) << cq.dump(2);
}

TEST(ApplyQuotaObjects, UnknownKindAndMalformedInputChangeNothing) {
  Fleet f;
  HttpResponse r =
      f.call("POST", "/v1/apply", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n");
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("kind"), std::string::npos) << r.body;
  r = f.call("POST", "/v1/apply", "kind: [unclosed");
  EXPECT_EQ(r.status, 400) << r.body;
  std::string eqt = shared_example("elasticquotatree.yaml");
  const std::string bad =
      eqt.substr(0, eqt.find("cpu: 10000")) + "cpu: 10Zi" + eqt.substr(eqt.find("cpu: 10000") + 10);
  r = f.call("POST", "/v1/apply", bad);
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("spec.root.children[0].max.cpu"), std::string::npos) << r.body;
  EXPECT_EQ(f.json("GET", "/v1/objects/elasticquotatrees")["items"].size(), 0u);
}

}  // namespace
}  // namespace gf
