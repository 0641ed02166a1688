// What a node's agent runs for a pod when pods are real processes (docs/local-cloud.md "Pods"):
// the seed's PyTorchJob verbatim, the Kubeflow operator's variables, the downward API, GPUs, and
// service jobs. And the rules by which real pods end their job (workload/pod_rules.h).
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "workload/pod_rules.h"
#include "workload/pod_spec.h"
#include "workload/pytorchjob.h"
#include "workload_test_util.h"

namespace gf::workload {
namespace {

using testing::read_example;
using testing::yaml;

Job pytorch_job(const Json& doc, const std::string& id = "3f2a-job") {
  auto pj = parse_pytorchjob(doc);
  EXPECT_TRUE(pj.ok()) << pj.status().to_string();
  Job job;
  job.id = id;
  job.kind = std::string(kPyTorchJobKind);
  job.name = pj->name;
  job.ns = pj->ns;
  job.pod_sets = pj->pod_sets();
  job.request = doc;
  job.placements = 1;
  return job;
}

PodPlacement on(size_t index, std::vector<int32_t> gpus = {}) {
  PodPlacement p;
  p.index = index;
  p.node = "i-0node" + std::to_string(index);
  p.node_address = "10.0.0." + std::to_string(index + 1);
  p.master_address = "10.0.0.1";
  p.gpus = std::move(gpus);
  p.placement = 1;
  return p;
}

// The container's environment as a map (a later name has replaced an earlier one already).
std::map<std::string, std::string> env_of(const Json& pod, size_t container = 0) {
  std::map<std::string, std::string> out;
  for (const Json& e : pod["Containers"][container]["Env"])
    out[e["Name"].get<std::string>()] = e["Value"].get<std::string>();
  return out;
}

TEST(PodSpec, SeedPyTorchJobWorkerOneSeesItsReplicaIndexThroughFieldRef) {
  const Job job = pytorch_job(yaml(read_example("pytorchjob.yaml")));
  auto pod = pod_spec(job, on(2));  // master-0, worker-0, worker-1
  ASSERT_TRUE(pod.ok()) << pod.status().to_string();
  EXPECT_EQ((*pod)["Name"], "pytorch-test-worker-1");
  EXPECT_EQ((*pod)["RestartPolicy"], "OnFailure");
  EXPECT_EQ(env_of(*pod)["WORKER_INDEX"], "1");
  const Json& c = (*pod)["Containers"][0];
  EXPECT_EQ(c["Command"], Json::parse(R"(["bash", "-c", "echo \"$WORKER_INDEX\"\nsleep 1h\n"])"));
  EXPECT_EQ(c["WorkingDir"], "/root");
  EXPECT_EQ(c["Image"], "registry-cn-hangzhou.ack.aliyuncs.com/acs/nginx");
  EXPECT_TRUE((*pod)["Warnings"].empty());
}

TEST(PodSpec, KubeflowOperatorVariablesRankPodsMasterFirst) {
  const Job job = pytorch_job(yaml(read_example("pytorchjob.yaml")));
  const std::string port = std::to_string(master_port(job));
  for (size_t i = 0; i < 3; ++i) {
    auto pod = pod_spec(job, on(i));
    ASSERT_TRUE(pod.ok()) << pod.status().to_string();
    auto env = env_of(*pod);
    EXPECT_EQ(env["RANK"], std::to_string(i)) << i;
    EXPECT_EQ(env["PET_NODE_RANK"], std::to_string(i)) << i;
    EXPECT_EQ(env["WORLD_SIZE"], "3");
    EXPECT_EQ(env["PET_NNODES"], "3");
    EXPECT_EQ(env["MASTER_ADDR"], "10.0.0.1");  // the master pod's node: no cluster DNS here
    EXPECT_EQ(env["PET_MASTER_ADDR"], "10.0.0.1");
    EXPECT_EQ(env["MASTER_PORT"], port);
    EXPECT_EQ(env["PYTHONUNBUFFERED"], "0");
  }
  EXPECT_GE(master_port(job), 20000);
  EXPECT_LT(master_port(job), 40000);
}

TEST(PodSpec, ManifestEnvReplacesTheGpusTheNodeGave) {
  // The seed's containers set NVIDIA_VISIBLE_DEVICES=void themselves: as on Kubernetes, the
  // container's own env wins over what the node sets.
  const Job job = pytorch_job(yaml(read_example("pytorchjob.yaml")));
  auto pod = pod_spec(job, on(1, {0, 1}));
  ASSERT_TRUE(pod.ok());
  EXPECT_EQ(env_of(*pod)["NVIDIA_VISIBLE_DEVICES"], "void");
  EXPECT_EQ((*pod)["Gpus"], Json::parse("[0, 1]"));
}

const char* kGpuJob = R"(
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: gpu, namespace: team-a}
spec:
  nprocPerNode: 8
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      restartPolicy: ExitCode
      template:
        metadata:
          annotations: {owner: ana}
        spec:
          terminationGracePeriodSeconds: 5
          containers:
          - name: trainer
            command: [python, train.py]
            args: [--epochs, 3]
            ports: [{name: pytorchjob-port, containerPort: 29500}]
            resources: {limits: {nvidia.com/gpu: 2}}
            env:
            - {name: POD, valueFrom: {fieldRef: {fieldPath: metadata.name}}}
            - {name: NS, valueFrom: {fieldRef: {fieldPath: metadata.namespace}}}
            - {name: NODE, valueFrom: {fieldRef: {fieldPath: spec.nodeName}}}
            - {name: IP, valueFrom: {fieldRef: {fieldPath: status.podIP}}}
            - {name: OWNER, valueFrom: {fieldRef: {fieldPath: "metadata.annotations['owner']"}}}
            - {name: TOKEN, valueFrom: {secretKeyRef: {name: s, key: k}}}
)";

TEST(PodSpec, AssignedGpusBecomeNvidiaVisibleDevices) {
  const Job job = pytorch_job(yaml(kGpuJob));
  auto pod = pod_spec(job, on(0, {2, 3}));
  ASSERT_TRUE(pod.ok()) << pod.status().to_string();
  auto env = env_of(*pod);
  EXPECT_EQ(env["NVIDIA_VISIBLE_DEVICES"], "2,3");
  EXPECT_EQ(env["PET_NPROC_PER_NODE"], "8");
  EXPECT_EQ(pod_gpus(job.pod_sets[0], 8), 2);
}

TEST(PodSpec, DownwardApiFieldsResolveAndSecretsAreEmptyWithAWarning) {
  const Job job = pytorch_job(yaml(kGpuJob));
  auto pod = pod_spec(job, on(0));
  ASSERT_TRUE(pod.ok());
  auto env = env_of(*pod);
  EXPECT_EQ(env["POD"], "gpu-master-0");
  EXPECT_EQ(env["NS"], "team-a");
  EXPECT_EQ(env["NODE"], "i-0node0");
  EXPECT_EQ(env["IP"], "10.0.0.1");
  EXPECT_EQ(env["OWNER"], "ana");
  EXPECT_EQ(env["TOKEN"], "");
  ASSERT_EQ((*pod)["Warnings"].size(), 1u);
  EXPECT_NE((*pod)["Warnings"][0].get<std::string>().find("env TOKEN"), std::string::npos);
  EXPECT_EQ((*pod)["Containers"][0]["Args"], Json::parse(R"(["--epochs", "3"])"));
  EXPECT_EQ((*pod)["GracePeriodSeconds"], 5);
  EXPECT_EQ((*pod)["RestartPolicy"], "ExitCode");
}

TEST(PodSpec, MasterPortIsTheTemplatesPytorchjobPort) {
  EXPECT_EQ(master_port(pytorch_job(yaml(kGpuJob))), 29500);
  // Two jobs on one machine do not share Kubeflow's 23456: the port follows the job id.
  const Json seed = yaml(read_example("pytorchjob.yaml"));
  EXPECT_NE(master_port(pytorch_job(seed, "job-a")), master_port(pytorch_job(seed, "job-b")));
}

Job service_job(const Json& payload, std::optional<Duration> duration) {
  Job job;
  job.id = "svc-1";
  job.kind = "ServiceJob";
  job.name = "svc";
  JobPodSet node;
  node.role = "node";
  node.count = 1;
  job.pod_sets = {node};
  job.request = Json{{"serviceRequestPayload", payload.dump()}};
  job.duration = duration;
  return job;
}

TEST(PodSpec, ServiceJobRunsItsPayloadsEntrypoint) {
  const Json payload = Json::parse(R"js({"AlgorithmSpecification": {
      "TrainingImage": "train:1", "ContainerEntrypoint": ["python3"],
      "ContainerArguments": ["-c", "print(1)"]}, "Environment": {"LR": "0.1"}})js");
  auto pod = pod_spec(service_job(payload, std::nullopt), on(0, {0}));
  ASSERT_TRUE(pod.ok());
  const Json& c = (*pod)["Containers"][0];
  EXPECT_EQ(c["Command"], Json::parse(R"(["python3"])"));
  EXPECT_EQ(c["Args"], Json::parse(R"js(["-c", "print(1)"])js"));
  EXPECT_EQ(c["Image"], "train:1");
  auto env = env_of(*pod);
  EXPECT_EQ(env["LR"], "0.1");
  EXPECT_EQ(env["NVIDIA_VISIBLE_DEVICES"], "0");
  EXPECT_EQ((*pod)["RestartPolicy"], "Never");
}

TEST(PodSpec, ServiceJobWithoutEntrypointRunsForItsDuration) {
  auto pod = pod_spec(service_job(Json::object(), minutes(2)), on(0));
  ASSERT_TRUE(pod.ok());
  EXPECT_EQ((*pod)["Containers"][0]["Command"], Json::parse(R"(["sleep", "120"])"));
  auto forever = pod_spec(service_job(Json::object(), std::nullopt), on(0));
  ASSERT_TRUE(forever.ok());
  EXPECT_EQ((*forever)["Containers"][0]["Command"], Json::parse(R"(["sleep", "infinity"])"));
}

// A manifest is kept as submitted: a field of another type than Kubernetes gives it is ignored
// (empty), never an exception that would take the node's pod list down with it.
TEST(PodSpec, FieldsOfAnotherTypeInTheManifestAreIgnoredNotThrown) {
  Json doc = yaml(read_example("pytorchjob.yaml"));
  Json& c = doc["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0];
  c["image"] = 5;
  c["workingDir"] = Json::array({1});
  c["env"].push_back(Json{{"name", "X"}, {"valueFrom", {{"fieldRef", {{"fieldPath", 7}}}}}});
  c["ports"] = Json::array({Json{{"name", "pytorchjob-port"}, {"containerPort", 99999999}}});
  Job job;
  job.id = "3f2a-job";
  job.kind = std::string(kPyTorchJobKind);
  job.name = "pytorch-test";
  job.ns = "default";
  job.pod_sets = pytorch_job(yaml(read_example("pytorchjob.yaml"))).pod_sets;
  job.request = doc;
  job.placements = 1;
  auto pod = pod_spec(job, on(2));
  ASSERT_TRUE(pod.ok()) << pod.status().to_string();
  EXPECT_EQ((*pod)["Containers"][0]["Image"], "");
  EXPECT_EQ((*pod)["Containers"][0]["WorkingDir"], "");
  EXPECT_EQ(env_of(*pod)["X"], "");

  auto svc = pod_spec(service_job(Json::parse(R"({"AlgorithmSpecification": {"TrainingImage": 5,
                                   "ContainerEntrypoint": "python3"}, "Environment": []})"),
                                  std::nullopt),
                      on(0));
  ASSERT_TRUE(svc.ok()) << svc.status().to_string();
  EXPECT_EQ((*svc)["Containers"][0]["Image"], "");
}

TEST(PodSpec, PodIndexBeyondTheJobIsAnError) {
  const Job job = pytorch_job(yaml(read_example("pytorchjob.yaml")));
  EXPECT_FALSE(pod_spec(job, on(3)).ok());
}

// ---- pod rules ------------------------------------------------------------------------------

PodState state(const std::string& phase, int32_t exit_code = 0, int32_t restarts = 0) {
  PodState p;
  p.phase = phase;
  p.exit_code = exit_code;
  p.restarts = restarts;
  p.node = "i-1";
  return p;
}

Job seed_job() {
  Job job = pytorch_job(yaml(read_example("pytorchjob.yaml")));
  job.dispatch = Dispatch{};
  return job;
}

TEST(PodRules, PodNamesFollowPodSetOrder) {
  EXPECT_EQ(pod_names(seed_job()),
            (std::vector<std::string>{"pytorch-test-master-0", "pytorch-test-worker-0",
                                      "pytorch-test-worker-1"}));
}

TEST(PodRules, NoReportYetDecidesNothing) { EXPECT_FALSE(pod_verdict(seed_job()).has_value()); }

TEST(PodRules, MasterSucceededSucceedsThePyTorchJob) {
  Job job = seed_job();
  job.pod_states["pytorch-test-worker-0"] = state("Running");
  job.pod_states["pytorch-test-master-0"] = state("Running");
  EXPECT_FALSE(pod_verdict(job).has_value());
  job.pod_states["pytorch-test-master-0"] = state("Succeeded");
  auto v = pod_verdict(job);
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->status, JobStatus::kSucceeded);
  EXPECT_NE(v->reason.find("pytorch-test-master-0"), std::string::npos);
}

TEST(PodRules, WorkersSucceedingDoNotEndAJobWithAMaster) {
  Job job = seed_job();
  job.pod_states["pytorch-test-worker-0"] = state("Succeeded");
  job.pod_states["pytorch-test-worker-1"] = state("Succeeded");
  job.pod_states["pytorch-test-master-0"] = state("Running");
  EXPECT_FALSE(pod_verdict(job).has_value());
}

TEST(PodRules, AFailedPodFailsTheJobNamingItsExitCode) {
  Job job = seed_job();
  job.pod_states["pytorch-test-worker-1"] = state("Failed", 3);
  auto v = pod_verdict(job);
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->status, JobStatus::kFailed);
  EXPECT_NE(v->reason.find("pytorch-test-worker-1 failed with exit code 3"), std::string::npos);
}

TEST(PodRules, RestartsAboveBackoffLimitFailTheJob) {
  Job job = seed_job();
  job.dispatch->backoff_limit = 2;
  job.pod_states["pytorch-test-worker-0"] = state("Running", 1, 2);
  EXPECT_FALSE(pod_verdict(job).has_value());
  job.pod_states["pytorch-test-worker-1"] = state("Running", 1, 1);
  auto v = pod_verdict(job);
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->status, JobStatus::kFailed);
  EXPECT_NE(v->reason.find("backoffLimit is 2"), std::string::npos);
}

TEST(PodRules, ServiceJobSucceedsWhenItsPodDoes) {
  Job job = service_job(Json::object(), std::nullopt);
  job.pod_states["svc-node-0"] = state("Succeeded");
  auto v = pod_verdict(job);
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->status, JobStatus::kSucceeded);
}

TEST(PodRules, ExitCodePolicyRetriesSignalsNotErrors) {
  EXPECT_TRUE(retryable_exit_code(137));  // SIGKILL: the node or the OOM killer
  EXPECT_TRUE(retryable_exit_code(143));  // SIGTERM
  EXPECT_FALSE(retryable_exit_code(1));
  EXPECT_FALSE(retryable_exit_code(127));
}

}  // namespace
}  // namespace gf::workload
