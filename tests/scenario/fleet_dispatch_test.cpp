// Fleet dispatch of PyTorchJobs through the real API on a virtual clock (issue 5,
// docs/dispatch.md): the seed walkthrough, queueing by ElasticQuotaTree max-jobs, gangs that fit no
// single cluster, capacity estimate vs reservation on a fragmented fleet, failover per purgeMode,
// restarts per restartPolicy and backoffLimit, run policy, restart from the journal, and bad
// manifests.
#include <gtest/gtest.h>

#include "support/fleet_harness.h"

// Job specs below name only the fields a test cares about.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace gf {
namespace {

using testing::Fleet;
using testing::shared_example;

// A Continuous cluster of `count` nodes of `type`, InService.
void cluster(Fleet& f, const std::string& name, const std::string& type, int count) {
  Json c = {
      {"ClusterName", name},
      {"NodeProvisioningMode", "Continuous"},
      {"InstanceGroups",
       {{{"InstanceGroupName", "workers"}, {"InstanceType", type}, {"InstanceCount", count}}}}};
  HttpResponse r = f.call("POST", "/v1/clusters", c.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  f.run_for(hours(1));
  ASSERT_EQ(f.describe(name)["ClusterStatus"], "InService");
}

void apply_yaml(Fleet& f, const std::string& yaml) {
  HttpResponse r = f.call("POST", "/v1/apply", yaml);
  ASSERT_EQ(r.status, 200) << r.body;
}

Json pytorchjob(Fleet& f, const std::string& name, const std::string& query = "") {
  std::map<std::string, std::string> q;
  if (!query.empty()) q[query.substr(0, query.find('='))] = query.substr(query.find('=') + 1);
  HttpResponse r = f.call("GET", "/v1/objects/pytorchjobs/default/" + name, "", q);
  return Json::parse(r.body);
}
std::string state(Fleet& f, const std::string& name) {
  return pytorchjob(f, name)["status"].value("state", "");
}
Json members(Fleet& f, const std::string& name) { return pytorchjob(f, name)["status"]["members"]; }
Json pods(Fleet& f) { return f.json("GET", "/v1/objects/pods")["items"]; }
std::string events_text(Fleet& f, const std::string& name) {
  return pytorchjob(f, name, "describe=true")["events"].dump();
}

// A PyTorchJob: a master and `workers` workers, each pod asking for `gpus` GPUs (the master for
// `master_gpus`), with a label `app: <app>` for policies to select.
struct JobSpec {
  std::string name;
  std::string app = "train";
  int master_gpus = 1;
  int workers = 2;
  int gpus = 1;
  std::string duration;  // gpufleet.io/duration; "" = runs until deleted
  std::string master_restart = "OnFailure";
  std::string worker_restart = "OnFailure";
  std::string run_policy;  // YAML body of spec.runPolicy, "" = none
};
std::string job_yaml(const JobSpec& j) {
  std::string y = "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata:\n  name: " + j.name +
                  "\n  namespace: default\n  labels: {app: " + j.app + "}\n";
  if (!j.duration.empty()) y += "  annotations: {gpufleet.io/duration: " + j.duration + "}\n";
  y += "spec:\n";
  if (!j.run_policy.empty()) y += "  runPolicy: " + j.run_policy + "\n";
  auto replica = [](const std::string& type, int n, int gpus, const std::string& restart) {
    return "    " + type + ":\n      replicas: " + std::to_string(n) +
           "\n      restartPolicy: " + restart +
           "\n      template:\n        spec:\n          containers:\n          - name: pytorch\n   "
           "         image: x\n"
           "            resources:\n              requests: {cpu: \"1\", nvidia.com/gpu: " +
           std::to_string(gpus) + "}\n";
  };
  y += "  pytorchReplicaSpecs:\n" + replica("Master", 1, j.master_gpus, j.master_restart);
  if (j.workers > 0) y += replica("Worker", j.workers, j.gpus, j.worker_restart);
  return y;
}

// A policy in namespace default selecting PyTorchJobs labelled app=<app>.
std::string policy_yaml(const std::string& name, const std::string& app,
                        const std::string& extra = "", const std::string& purge = "Immediately",
                        int toleration = 30) {
  return "apiVersion: policy.one.alibabacloud.com/v1alpha1\nkind: PropagationPolicy\nmetadata: "
         "{name: " +
         name +
         ", namespace: default}\nspec:\n  failover:\n    application:\n      decisionConditions: "
         "{tolerationSeconds: " +
         std::to_string(toleration) + "}\n      purgeMode: " + purge +
         "\n      gracePeriodSeconds: 600\n  placement:\n    replicaScheduling: "
         "{replicaSchedulingType: Divided, "
         "customSchedulingType: Gang}\n" +
         extra +
         "  resourceSelectors:\n  - apiVersion: kubeflow.org/v1\n    kind: PyTorchJob\n    "
         "labelSelector:\n"
         "      matchLabels: {app: " +
         app + "}\n";
}
std::string affinity(const std::string& cluster) {
  return "    clusterAffinity: {clusterNames: [" + cluster + "]}\n";
}

// ---------------------------------------------------------------------------------------------
// The seed walkthrough (acceptance 1; the CLI version is tests/integration/dispatch_cli_test).

TEST(FleetDispatch, SeedWalkthrough_QueuedGangRunsWholeOnOneMemberCluster) {
  Fleet f;
  cluster(f, "cf-one", "ml.m5.4xlarge", 2);
  cluster(f, "cf-two", "ml.m5.4xlarge", 2);
  apply_yaml(f, shared_example("elasticquotatree.yaml"));
  EXPECT_EQ(
      Json::parse(
          f.call("GET", "/v1/objects/queues", "", {{"namespace", "kube-queue"}}).body)["items"]
          .size(),
      2u);
  apply_yaml(f, shared_example("propagationpolicy-gang-queue.yaml"));
  HttpResponse r = f.call("POST", "/v1/apply", shared_example("pytorchjob.yaml"));
  ASSERT_EQ(r.status, 200) << r.body;
  const Json item = Json::parse(r.body)["items"][0];
  EXPECT_EQ(item["result"], "created");
  EXPECT_EQ(item["policy"], "example-policy");
  EXPECT_FALSE(item.contains("warnings")) << item.dump();  // cleanPodPolicy is understood

  const Json created = pytorchjob(f, "pytorch-test");
  EXPECT_EQ(created["status"]["conditions"][0]["type"], "Created");
  EXPECT_FALSE(created["metadata"].value("uid", "").empty());
  f.run_for(seconds(1));
  const Json job = pytorchjob(f, "pytorch-test", "describe=true");
  EXPECT_EQ(job["status"]["state"], "Running");
  EXPECT_EQ(job["status"]["conditions"].back()["type"], "Running");
  const Json m = job["status"]["members"];
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0]["adoption"], "Y");
  const std::string member = m[0]["cluster"];
  bool binding = false;
  for (const Json& e : job["events"]) {
    if (e["reason"] == "ScheduleBindingSucceed") {
      binding = true;
      EXPECT_EQ(e["message"], "Binding has been scheduled successfully. Result: {" + member +
                                  ":0,[{master 1} {worker 2}]}");
      EXPECT_EQ(e["from"], "default-scheduler");
    }
  }
  EXPECT_TRUE(binding) << job["events"].dump(2);
  // The job's history is in the fleet's event stream too (GET /v1/events, events.jsonl).
  const auto bound = f.events_containing("ScheduleBindingSucceed");
  ASSERT_EQ(bound.size(), 1u);
  EXPECT_EQ(bound[0].resource_type, "Job");
  EXPECT_EQ(bound[0].cluster_name, member);

  const Json p = pods(f);
  ASSERT_EQ(p.size(), 3u);
  const std::vector<std::string> names{"pytorch-test-master-0", "pytorch-test-worker-0",
                                       "pytorch-test-worker-1"};
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(p[i]["metadata"]["name"], names[i]);
    EXPECT_EQ(p[i]["spec"]["clusterName"], member);
    EXPECT_FALSE(p[i]["spec"].value("nodeName", "").empty());
    EXPECT_EQ(p[i]["status"]["phase"], "Running");
  }
  // The labels and env Kubeflow's operator gives each pod.
  const Json& w1 = p[2];
  EXPECT_EQ(w1["metadata"]["labels"]["pytorch-replica-index"], "1");
  EXPECT_EQ(w1["metadata"]["labels"]["training.kubeflow.org/replica-index"], "1");
  EXPECT_EQ(w1["metadata"]["labels"]["training.kubeflow.org/replica-type"], "worker");
  EXPECT_EQ(w1["metadata"]["labels"]["job-name"], "pytorch-test");
  std::map<std::string, std::string> env;
  for (const Json& e : w1["spec"]["containers"][0]["env"]) env[e["name"]] = e["value"];
  EXPECT_EQ(env["MASTER_ADDR"], "pytorch-test-master-0");
  EXPECT_EQ(env["WORLD_SIZE"], "3");
  EXPECT_EQ(env["RANK"], "2");

  // The member cluster's copy.
  const Json copy = pytorchjob(f, "pytorch-test", "cluster=" + member);
  EXPECT_EQ(copy["metadata"]["annotations"]["gpufleet.io/member-cluster"], member);
  EXPECT_EQ(copy["status"]["state"], "Running");
  EXPECT_EQ(
      f.call("GET", "/v1/objects/pytorchjobs/default/pytorch-test", "", {{"cluster", "nowhere"}})
          .status,
      404);

  // Re-applying the same manifest changes nothing.
  r = f.call("POST", "/v1/apply", shared_example("pytorchjob.yaml"));
  EXPECT_EQ(Json::parse(r.body)["items"][0]["result"], "unchanged");
  // Deleting the job removes it and its pods.
  EXPECT_EQ(f.call("DELETE", "/v1/objects/pytorchjobs/default/pytorch-test").status, 200);
  EXPECT_EQ(pods(f).size(), 0u);
  EXPECT_EQ(f.json("GET", "/v1/objects/pytorchjobs")["items"].size(), 0u);
}

// ---------------------------------------------------------------------------------------------
// Acceptance 2: suspension.scheduling queues by the ElasticQuotaTree; without it, placement only.

TEST(FleetDispatch, QueuePolicyMaxJobsOne_SecondJobWaitsWithReasonUntilTheFirstFinishes) {
  Fleet f;
  cluster(f, "cf-one", "ml.p4d.24xlarge", 2);
  apply_yaml(f, shared_example("elasticquotatree.yaml"));
  apply_yaml(f, shared_example("propagationpolicy-gang-queue.yaml"));
  apply_yaml(f, job_yaml({.name = "first", .duration = "10m"}));
  apply_yaml(f, job_yaml({.name = "second", .duration = "10m"}));
  f.run_for(seconds(1));
  EXPECT_EQ(state(f, "first"), "Running");
  const Json second = pytorchjob(f, "second", "describe=true");
  EXPECT_EQ(second["status"]["state"], "Created");
  EXPECT_EQ(second["explanation"]["kind"], "Quota") << second.dump(2);
  EXPECT_EQ(second["explanation"]["quotaNode"], "child-2");
  EXPECT_NE(second["explanation"]["message"].get<std::string>().find("kube-queue/max-jobs"),
            std::string::npos);
  EXPECT_EQ(second["status"]["members"].size(), 0u);  // not dispatched anywhere yet
  // Rule: a waiting job says why in its own status, as a Queued condition naming the quota
  // node, the limit and the shortfall; the condition goes away on admission.
  const auto queued = [](const Json& job) {
    for (const Json& c : job["status"]["conditions"]) {
      if (c["type"] == "Queued") return c;
    }
    return Json();
  };
  const Json cond = queued(second);
  ASSERT_TRUE(cond.is_object()) << second["status"].dump(2);
  EXPECT_EQ(cond["status"], "True");
  EXPECT_EQ(cond["reason"], "MaxJobsReached");
  const std::string message = cond["message"].get<std::string>();
  EXPECT_NE(message.find("child-2"), std::string::npos) << message;
  EXPECT_NE(message.find("max jobs"), std::string::npos) << message;
  EXPECT_NE(message.find("short by 1"), std::string::npos) << message;
  EXPECT_FALSE(queued(pytorchjob(f, "first")).is_object());
  f.run_for(minutes(10));
  EXPECT_EQ(state(f, "first"), "Succeeded");
  EXPECT_EQ(state(f, "second"), "Running");
  EXPECT_FALSE(queued(pytorchjob(f, "second")).is_object()) << "removed once admitted";
  f.run_for(minutes(10));
  EXPECT_EQ(state(f, "second"), "Succeeded");
}

TEST(FleetDispatch, GangOnlyPolicy_BothJobsRunAtOnceDespiteMaxJobs) {
  Fleet f;
  cluster(f, "cf-one", "ml.p4d.24xlarge", 2);
  apply_yaml(f, shared_example("elasticquotatree.yaml"));
  apply_yaml(f, shared_example("propagationpolicy-gang.yaml"));
  apply_yaml(f, job_yaml({.name = "first"}));
  apply_yaml(f, job_yaml({.name = "second"}));
  f.run_for(seconds(1));
  EXPECT_EQ(state(f, "first"), "Running");
  EXPECT_EQ(state(f, "second"), "Running");
}

// ---------------------------------------------------------------------------------------------
// Acceptance 3: a gang that fits in no single cluster never starts partially.

TEST(FleetDispatch, GangFitsNoSingleCluster_NeverStartsPartially_AndSaysWhy) {
  Fleet f;
  cluster(f, "small-a", "ml.p4d.24xlarge", 1);
  cluster(f, "small-b", "ml.p4d.24xlarge", 1);
  apply_yaml(f, shared_example("propagationpolicy-gang.yaml"));
  // 12 GPUs: the fleet has 16, but each cluster only 8.
  apply_yaml(f, job_yaml({.name = "wide", .master_gpus = 4, .workers = 2, .gpus = 4}));
  f.run_for(minutes(5));
  const Json job = pytorchjob(f, "wide", "describe=true");
  EXPECT_EQ(job["status"]["state"], "Created");
  EXPECT_EQ(job["status"]["members"].size(), 0u);
  EXPECT_EQ(pods(f).size(), 0u);
  EXPECT_EQ(job["explanation"]["kind"], "Infeasible") << job.dump(2);
  EXPECT_NE(job["explanation"]["message"].get<std::string>().find("cluster"), std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// Acceptance 4: estimate vs reservation on a fragmented fleet. Cluster "frag" has three 8-GPU
// nodes each holding a 5-GPU filler (9 GPUs free in total, 3 per node); cluster "whole" has two
// empty 8-GPU nodes. The job wants a 1-GPU master and two 4-GPU workers: 9 GPUs.

void fragmented_fleet(Fleet& f) {
  cluster(f, "frag", "ml.p4d.24xlarge", 3);
  cluster(f, "whole", "ml.p4d.24xlarge", 2);
  apply_yaml(f, policy_yaml("fillers", "filler", affinity("frag")));
  for (int i = 0; i < 3; ++i)
    apply_yaml(f, job_yaml({.name = "filler-" + std::to_string(i),
                            .app = "filler",
                            .master_gpus = 5,
                            .workers = 0}));
  f.run_for(seconds(1));
  for (const Json& p : pods(f)) ASSERT_EQ(p["spec"]["clusterName"], "frag");
  apply_yaml(f, policy_yaml("main", "main"));
}

TEST(EstimateVsReservation, EstimatePicksTheFragmentedCluster_PodsPending_ThenFailsOverAndRuns) {
  RuntimeOptions opts;
  opts.scheduler.reservation = false;
  Fleet f({}, opts);
  fragmented_fleet(f);
  const Time submitted = f.now();
  apply_yaml(f,
             job_yaml({.name = "main", .app = "main", .master_gpus = 1, .workers = 2, .gpus = 4}));
  f.run_for(seconds(1));
  Json job = pytorchjob(f, "main", "describe=true");
  EXPECT_EQ(job["status"]["state"], "Created");
  ASSERT_EQ(job["status"]["members"].size(), 1u);
  EXPECT_EQ(job["status"]["members"][0]["cluster"], "frag");
  EXPECT_EQ(job["explanation"]["kind"], "PodsPending") << job.dump(2);
  int pending_on_frag = 0;
  for (const Json& p : pods(f)) {
    if (p["metadata"]["name"].get<std::string>().rfind("main-", 0) != 0) continue;
    EXPECT_EQ(p["status"]["phase"], "Pending");
    pending_on_frag += p["spec"]["clusterName"] == "frag";
  }
  EXPECT_EQ(pending_on_frag, 3);

  f.run_for(seconds(25));
  EXPECT_EQ(state(f, "main"), "Created");  // still within tolerationSeconds
  f.run_for(seconds(10));
  job = pytorchjob(f, "main", "describe=true");
  EXPECT_EQ(job["status"]["state"], "Running") << job.dump(2);
  ASSERT_EQ(job["status"]["members"].size(), 1u);  // purgeMode Immediately: no copy left on frag
  EXPECT_EQ(job["status"]["members"][0]["cluster"], "whole");
  EXPECT_EQ(job["status"]["failovers"], 1);
  const std::string events = job["events"].dump();
  EXPECT_NE(events.find("PodsPending"), std::string::npos);
  EXPECT_NE(events.find("Failover"), std::string::npos);
  EXPECT_NE(events.find("{whole:0,[{master 1} {worker 2}]}"), std::string::npos);
  const Time started = *f.runtime().loop().state().view().find_job("main")->started_at;
  EXPECT_GE(started - submitted, seconds(30));
}

TEST(EstimateVsReservation, ReservationPlacesTheGangRightTheFirstTime) {
  Fleet f;
  fragmented_fleet(f);
  const Time submitted = f.now();
  apply_yaml(f,
             job_yaml({.name = "main", .app = "main", .master_gpus = 1, .workers = 2, .gpus = 4}));
  f.run_for(seconds(1));
  const Json job = pytorchjob(f, "main", "describe=true");
  EXPECT_EQ(job["status"]["state"], "Running");
  EXPECT_EQ(job["status"]["members"][0]["cluster"], "whole");
  EXPECT_FALSE(job["status"].contains("failovers"));
  EXPECT_EQ(job["events"].dump().find("PodsPending"), std::string::npos);
  const Time started = *f.runtime().loop().state().view().find_job("main")->started_at;
  EXPECT_LT(started - submitted, seconds(1));
}

// ---------------------------------------------------------------------------------------------
// Acceptance 5: a member cluster deleted under a running job.

class ClusterDeleted : public ::testing::Test {
 protected:
  // Cluster "a" (chosen first: equal fit, name order) and "b"; the job runs on "a".
  void start(const std::string& purge) {
    cluster(f, "a", "ml.p4d.24xlarge", 2);
    cluster(f, "b", "ml.p4d.24xlarge", 2);
    apply_yaml(f, policy_yaml("main", "main", "", purge));
    apply_yaml(
        f, job_yaml({.name = "main", .app = "main", .master_gpus = 4, .workers = 2, .gpus = 4}));
    f.run_for(seconds(1));
    ASSERT_EQ(state(f, "main"), "Running");
    ASSERT_EQ(members(f, "main")[0]["cluster"], "a");
  }
  Fleet f;
};

TEST_F(ClusterDeleted, Immediately_AfterTolerationTheJobRunsOnTheOtherCluster) {
  start("Immediately");
  ASSERT_EQ(f.call("DELETE", "/v1/clusters/a").status, 200);
  f.run_for(seconds(5));
  EXPECT_NE(state(f, "main"), "Running");
  EXPECT_NE(state(f, "main"), "Failed");  // a cluster going away is not a pod failure
  f.run_for(seconds(40));
  EXPECT_EQ(state(f, "main"), "Running");
  const Json m = members(f, "main");
  ASSERT_EQ(m.size(), 1u) << m.dump();
  EXPECT_EQ(m[0]["cluster"], "b");
  for (const Json& p : pods(f)) EXPECT_EQ(p["spec"]["clusterName"], "b");
}

TEST_F(ClusterDeleted, Never_LeavesTheOldCopyInPlace) {
  start("Never");
  ASSERT_EQ(f.call("DELETE", "/v1/clusters/a").status, 200);
  f.run_for(seconds(45));
  EXPECT_EQ(state(f, "main"), "Running");
  const Json m = members(f, "main");
  ASSERT_EQ(m.size(), 2u) << m.dump();
  EXPECT_EQ(m[0]["cluster"], "b");
  EXPECT_EQ(m[0]["adoption"], "Y");
  EXPECT_EQ(m[1]["cluster"], "a");
  EXPECT_EQ(m[1]["adoption"], "N");
  f.run_for(hours(2));
  EXPECT_EQ(members(f, "main").size(), 2u);  // never purged
}

TEST_F(ClusterDeleted, Gracefully_RemovesTheOldCopyOnlyAfterTheNewOneRuns) {
  start("Gracefully");
  // "b" is busy until 5 minutes from now: the failed-over job must wait for it.
  apply_yaml(f, policy_yaml("blockers", "blocker", affinity("b")));
  apply_yaml(f, job_yaml({.name = "blocker",
                          .app = "blocker",
                          .master_gpus = 8,
                          .workers = 1,
                          .gpus = 8,
                          .duration = "5m"}));
  f.run_for(seconds(1));
  ASSERT_EQ(state(f, "blocker"), "Running");
  ASSERT_EQ(f.call("DELETE", "/v1/clusters/a").status, 200);
  f.run_for(seconds(45));
  Json m = members(f, "main");
  EXPECT_NE(state(f, "main"), "Running");
  ASSERT_EQ(m.size(), 1u) << m.dump();  // failed over, not placed yet: only the old copy
  EXPECT_EQ(m[0]["cluster"], "a");
  EXPECT_EQ(m[0]["adoption"], "N");
  f.run_for(minutes(5));
  EXPECT_EQ(state(f, "main"), "Running");
  m = members(f, "main");
  ASSERT_EQ(m.size(), 1u) << m.dump();  // the new one runs: the old copy is gone
  EXPECT_EQ(m[0]["cluster"], "b");
  EXPECT_NE(events_text(f, "main").find("CopyPurged"), std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// Acceptance 6: a worker node terminated under a running job.

class NodeLost : public ::testing::Test {
 protected:
  // One cluster of three 8-GPU nodes; the job's master and worker each fill a node.
  void start(const std::string& worker_restart, const std::string& run_policy) {
    cluster(f, "gpu", "ml.p4d.24xlarge", 3);
    apply_yaml(f, shared_example("propagationpolicy-gang.yaml"));
    apply_yaml(f, job_yaml({.name = "main",
                            .master_gpus = 8,
                            .workers = 1,
                            .gpus = 8,
                            .worker_restart = worker_restart,
                            .run_policy = run_policy}));
    f.run_for(seconds(1));
    ASSERT_EQ(state(f, "main"), "Running");
  }
  // Terminates the node under the worker pod.
  void lose_worker_node() {
    std::string node;
    for (const Json& p : pods(f)) {
      if (p["metadata"]["name"] == "main-worker-0") node = p["spec"]["nodeName"];
    }
    ASSERT_FALSE(node.empty());
    HttpResponse r = f.call("POST", "/v1/clusters/gpu/nodes/batch-delete",
                            Json{{"NodeIds", Json::array({node})}}.dump());
    ASSERT_EQ(r.status, 200) << r.body;
  }
  Fleet f;
};

TEST_F(NodeLost, OnFailure_RestartsAndRunsAgainOnHealthyNodes) {
  start("OnFailure", "");
  lose_worker_node();
  f.run_for(seconds(1));
  const Json job = pytorchjob(f, "main", "describe=true");
  EXPECT_EQ(job["status"]["state"], "Running") << job.dump(2);
  EXPECT_EQ(job["status"]["restartCount"], 1);
  EXPECT_NE(job["events"].dump().find("Restarting"), std::string::npos);
  for (const Json& p : pods(f)) {
    EXPECT_EQ(p["spec"]["clusterName"], "gpu");
    EXPECT_EQ(p["status"]["restartCount"], 1);
  }
}

TEST_F(NodeLost, NeverWithBackoffLimitZero_Fails) {
  start("Never", "{backoffLimit: 0}");
  lose_worker_node();
  f.run_for(seconds(1));
  const Json job = pytorchjob(f, "main", "describe=true");
  EXPECT_EQ(job["status"]["state"], "Failed") << job.dump(2);
  EXPECT_EQ(job["status"]["conditions"].back()["type"], "Failed");
  EXPECT_NE(job["status"]["conditions"].back()["message"].get<std::string>().find(
                "restartPolicy is Never"),
            std::string::npos);
}

TEST_F(NodeLost, OnFailureWithBackoffLimitZero_Fails) {
  start("OnFailure", "{backoffLimit: 0}");
  lose_worker_node();
  f.run_for(seconds(1));
  EXPECT_EQ(state(f, "main"), "Failed");
  EXPECT_NE(pytorchjob(f, "main")["status"]["conditions"].back()["message"].get<std::string>().find(
                "backoffLimit"),
            std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// Run policy.

TEST(RunPolicy, SuspendedJobWaitsUntilResumed_ThenRunsAndTtlDeletesItAfterFinishing) {
  Fleet f;
  cluster(f, "gpu", "ml.p4d.24xlarge", 1);
  apply_yaml(f, shared_example("propagationpolicy-gang.yaml"));
  JobSpec spec{.name = "main",
               .duration = "10m",
               .run_policy = "{suspend: true, ttlSecondsAfterFinished: 60}"};
  apply_yaml(f, job_yaml(spec));
  f.run_for(minutes(1));
  EXPECT_EQ(state(f, "main"), "Suspended");
  spec.run_policy = "{suspend: false, ttlSecondsAfterFinished: 60}";
  HttpResponse r = f.call("POST", "/v1/apply", job_yaml(spec));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Json::parse(r.body)["items"][0]["result"], "configured");
  f.run_for(seconds(1));
  EXPECT_EQ(state(f, "main"), "Running");
  f.run_for(minutes(10));
  EXPECT_EQ(state(f, "main"), "Succeeded");
  f.run_for(seconds(61));
  EXPECT_EQ(f.call("GET", "/v1/objects/pytorchjobs/default/main").status, 404);
}

TEST(RunPolicy, ActiveDeadlineFailsAJobThatRunsTooLong) {
  Fleet f;
  cluster(f, "gpu", "ml.p4d.24xlarge", 1);
  apply_yaml(f, shared_example("propagationpolicy-gang.yaml"));
  apply_yaml(f, job_yaml({.name = "main", .run_policy = "{activeDeadlineSeconds: 120}"}));
  f.run_for(seconds(119));
  EXPECT_EQ(state(f, "main"), "Running");
  f.run_for(seconds(2));
  EXPECT_EQ(state(f, "main"), "Failed");
  EXPECT_EQ(pods(f)[0]["status"]["phase"], "Failed");
}

// ---------------------------------------------------------------------------------------------
// Durability: a restart replays the journal into the same bindings, pending pods and clocks.

TEST(FleetDispatchRestart, PendingDispatchSurvivesARestart_AndFailsOverOnTime) {
  RuntimeOptions opts;
  opts.scheduler.reservation = false;
  Fleet f({}, opts);
  fragmented_fleet(f);
  apply_yaml(f,
             job_yaml({.name = "main", .app = "main", .master_gpus = 1, .workers = 2, .gpus = 4}));
  f.run_for(seconds(10));
  const Json before = pytorchjob(f, "main");
  f.restart();
  EXPECT_EQ(pytorchjob(f, "main")["status"], before["status"]);
  f.run_for(seconds(25));
  EXPECT_EQ(state(f, "main"), "Running");
  EXPECT_EQ(members(f, "main")[0]["cluster"], "whole");
  const uint64_t hash = f.runtime().loop().state().hash();
  f.restart();
  EXPECT_EQ(f.runtime().loop().state().hash(), hash);
}

// ---------------------------------------------------------------------------------------------
// Acceptance 7: bad manifests get errors naming the field, and nothing is created.

TEST(BadManifests, ClearErrorsNamingTheField_AndNothingIsCreated) {
  Fleet f;
  cluster(f, "gpu", "ml.p4d.24xlarge", 1);
  const std::string job = shared_example("pytorchjob.yaml");
  auto refused = [&](const std::string& body, const std::string& expect) {
    HttpResponse r = f.call("POST", "/v1/apply", body);
    EXPECT_EQ(r.status, 400) << body;
    EXPECT_NE(r.body.find(expect), std::string::npos) << r.body;
  };
  // A policy selecting nothing.
  refused(
      "apiVersion: policy.one.alibabacloud.com/v1alpha1\nkind: PropagationPolicy\nmetadata: {name: "
      "p}\nspec: {}\n",
      "spec.resourceSelectors");
  apply_yaml(f, shared_example("propagationpolicy-gang.yaml"));
  std::string two_masters = job;
  two_masters.replace(two_masters.find("replicas: 1"), 11, "replicas: 2");
  refused(two_masters, "spec.pytorchReplicaSpecs.Master.replicas: must be 1, got 2");
  refused("apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata: {name: x}\n", "kind");
  std::string no_resources = job_yaml({.name = "bare"});
  no_resources = no_resources.substr(0, no_resources.find("            resources:")) + "\n";
  refused(no_resources, "containers");
  refused("apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: [unclosed\n", "");
  // A valid policy and job followed by a bad document: none of them is created.
  refused(policy_yaml("extra", "x") + "---\n" + job_yaml({.name = "good", .app = "x"}) + "---\n" +
              two_masters,
          "document 3");
  EXPECT_EQ(f.json("GET", "/v1/objects/pytorchjobs")["items"].size(), 0u);
  EXPECT_EQ(f.json("GET", "/v1/objects/propagationpolicies")["items"].size(),
            1u);  // the gang policy
  // Changing a created job's spec is refused, naming what may change.
  apply_yaml(f, job);
  std::string changed = job;
  changed.replace(changed.find("replicas: 2"), 11, "replicas: 3");
  refused(changed, "only spec.runPolicy.suspend and metadata.annotations may change");
}

// issue 42: kubectl applies a folder a document at a time, so a PyTorchJob may come before the
// PropagationPolicy that selects it: it is accepted and held (not queued, whatever capacity there
// is) with a Queued condition naming why, and queued the moment a policy selects it.
TEST(HeldJobs, AJobBeforeItsPolicyIsHeldThenQueuedWhenAPolicySelectsIt) {
  Fleet f;
  cluster(f, "gpu", "ml.p4d.24xlarge", 2);
  HttpResponse r = f.call("POST", "/v1/apply", job_yaml({.name = "early", .app = "late"}));
  ASSERT_EQ(r.status, 200) << r.body;
  const Json item = Json::parse(r.body)["items"][0];
  EXPECT_EQ(item["result"], "created");
  EXPECT_NE(item["warnings"].dump().find("held (not queued) until one does"), std::string::npos)
      << item.dump();
  f.run_for(minutes(10));
  Json held = pytorchjob(f, "early");
  EXPECT_EQ(held["status"]["state"], "Created");
  EXPECT_EQ(held["status"]["conditions"].back()["reason"], "NoPropagationPolicy");
  EXPECT_TRUE(held["status"]["members"].empty()) << "capacity is free, but nothing selects it";
  // A policy for other jobs leaves it held; one whose selector matches it queues it.
  apply_yaml(f, policy_yaml("others", "someone-else"));
  f.run_for(seconds(1));
  EXPECT_EQ(pytorchjob(f, "early")["status"]["conditions"].back()["reason"], "NoPropagationPolicy");
  apply_yaml(f, policy_yaml("late-policy", "late"));
  f.run_for(seconds(1));
  const Json placed = pytorchjob(f, "early", "describe=true");
  EXPECT_EQ(placed["status"]["state"], "Running") << placed.dump();
  EXPECT_EQ(placed["status"]["propagationPolicy"], "late-policy");
  EXPECT_NE(placed["events"].dump().find("PolicySelected"), std::string::npos);
}

TEST(HeldJobs, AHeldJobSurvivesARestartStillHeld) {
  Fleet f;
  cluster(f, "gpu", "ml.p4d.24xlarge", 1);
  apply_yaml(f, job_yaml({.name = "early", .app = "late"}));
  f.restart();
  f.run_for(minutes(5));
  EXPECT_EQ(pytorchjob(f, "early")["status"]["conditions"].back()["reason"], "NoPropagationPolicy");
  apply_yaml(f, policy_yaml("late-policy", "late"));
  f.run_for(seconds(1));
  EXPECT_EQ(state(f, "early"), "Running");
}

}  // namespace
}  // namespace gf
