// PyTorchJob parsing (docs/workloads.md, docs/dispatch.md): the published example verbatim, request
// defaulting from limits, the pods Kubeflow's operator creates, and every refusal naming its field.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "workload/pytorchjob.h"
#include "workload_test_util.h"

namespace gf::workload {
namespace {

using testing::error_of;
using testing::read_example;
using testing::yaml;

// A small job; `master_resources` / `worker_resources` are the YAML of the containers'
// `resources` (indented under the container), `extra_spec` lines are added to spec.
std::string job_yaml(const std::string& master_resources, const std::string& worker_block = "",
                     const std::string& extra_spec = "") {
  return "apiVersion: kubeflow.org/v1\n"
         "kind: PyTorchJob\n"
         "metadata:\n"
         "  name: small\n"
         "spec:\n" +
         extra_spec +
         "  pytorchReplicaSpecs:\n"
         "    Master:\n"
         "      replicas: 1\n"
         "      template:\n"
         "        spec:\n"
         "          containers:\n"
         "          - name: main\n"
         "            image: busybox\n"
         "            resources:\n" +
         master_resources + worker_block;
}

std::string worker_block(const std::string& replicas_line, const std::string& resources) {
  return "    Worker:\n" + replicas_line +
         "      template:\n"
         "        spec:\n"
         "          containers:\n"
         "          - name: main\n"
         "            resources:\n" +
         resources;
}

const std::string kCpu1 = "              requests:\n                cpu: \"1\"\n";

Result<PyTorchJob> parse(const std::string& text) { return parse_pytorchjob(yaml(text)); }

TEST(PyTorchJob, PublishedExampleParsesVerbatim) {
  Result<PyTorchJob> job = parse(read_example("pytorchjob.yaml"));
  ASSERT_TRUE(job.ok()) << job.status().to_string();
  EXPECT_EQ(job->name, "pytorch-test");
  EXPECT_EQ(job->ns, "default");
  EXPECT_EQ(job->labels.at("app"), "pytorchjob");
  EXPECT_EQ(job->master.type, "Master");
  EXPECT_EQ(job->master.replicas, 1);
  EXPECT_EQ(job->master.restart, RestartPolicy::kNever);
  ASSERT_TRUE(job->worker.has_value());
  EXPECT_EQ(job->worker->replicas, 2);
  EXPECT_EQ(job->worker->restart, RestartPolicy::kOnFailure);
  EXPECT_EQ(job->master.requests, (Json{{"cpu", "10m"}}));
  EXPECT_EQ(job->worker->requests, (Json{{"cpu", "2"}, {"memory", "2Gi"}}));
  EXPECT_FALSE(job->duration.has_value());
  EXPECT_TRUE(job->local_queue.empty());
  EXPECT_FALSE(job->suspend);
  EXPECT_EQ(job->doc, yaml(read_example("pytorchjob.yaml")));
}

TEST(PyTorchJob, PublishedExamplePodSetsAreMasterThenWorkers) {
  Result<PyTorchJob> job = parse(read_example("pytorchjob.yaml"));
  ASSERT_TRUE(job.ok()) << job.status().to_string();
  const std::vector<JobPodSet> sets = job->pod_sets();
  ASSERT_EQ(sets.size(), 2u);
  EXPECT_EQ(sets[0].role, "master");
  EXPECT_EQ(sets[0].count, 1);
  EXPECT_EQ(sets[0].requests, (Json{{"cpu", "10m"}}));
  EXPECT_EQ(sets[1].role, "worker");
  EXPECT_EQ(sets[1].count, 2);
  EXPECT_EQ(sets[1].requests, (Json{{"cpu", "2"}, {"memory", "2Gi"}}));
}

TEST(PyTorchJob, SeedExampleParsesWithoutWarnings_CleanPodPolicyIncluded) {
  Result<PyTorchJob> job = parse(read_example("pytorchjob.yaml"));
  ASSERT_TRUE(job.ok()) << job.status().to_string();
  EXPECT_TRUE(job->warnings.empty()) << job->warnings.front();
  EXPECT_EQ(job->clean_pod_policy, "None");
}

TEST(PyTorchJob, CleanPodPolicyMustBeNoneRunningOrAll) {
  std::string y = read_example("pytorchjob.yaml");
  y.replace(y.find("cleanPodPolicy: None"), 20, "cleanPodPolicy: Some");
  Result<PyTorchJob> job = parse(y);
  ASSERT_FALSE(job.ok());
  EXPECT_NE(
      job.status().message().find("spec.cleanPodPolicy: \"Some\" is not one of None, Running, All"),
      std::string::npos)
      << job.status().message();
}

TEST(PyTorchJob, UnknownFieldsWarnButNothingUnderTemplate) {
  std::string y = read_example("pytorchjob.yaml");
  y.replace(y.find("  cleanPodPolicy: None"), 21, "  cleanupPolicy: None");
  Result<PyTorchJob> job = parse(y);
  ASSERT_TRUE(job.ok()) << job.status().to_string();
  EXPECT_NE(std::find(job->warnings.begin(), job->warnings.end(),
                      "spec.cleanupPolicy: unknown field, ignored"),
            job->warnings.end());
  for (const std::string& w : job->warnings) {
    EXPECT_EQ(w.find("template"), std::string::npos) << w;
  }
}

TEST(PyTorchJob, PodsHaveKubeflowNamesLabelsAndEnv) {
  Result<PyTorchJob> job = parse(read_example("pytorchjob.yaml"));
  ASSERT_TRUE(job.ok()) << job.status().to_string();
  const std::vector<PyTorchJob::Pod> pods = job->pods();
  ASSERT_EQ(pods.size(), 3u);
  EXPECT_EQ(pods[0].name, "pytorch-test-master-0");
  EXPECT_EQ(pods[1].name, "pytorch-test-worker-0");
  EXPECT_EQ(pods[2].name, "pytorch-test-worker-1");

  const PyTorchJob::Pod& master = pods[0];
  EXPECT_EQ(master.role, "master");
  EXPECT_EQ(master.labels.at("training.kubeflow.org/replica-type"), "master");
  EXPECT_EQ(master.labels.at("training.kubeflow.org/replica-index"), "0");
  EXPECT_EQ(master.labels.at("pytorch-replica-index"), "0");
  EXPECT_EQ(master.labels.at("job-name"), "pytorch-test");
  EXPECT_EQ(master.labels.at("training.kubeflow.org/job-name"), "pytorch-test");
  EXPECT_EQ(master.labels.at("app"), "pytorchjob");  // from the template
  EXPECT_EQ(master.env.at("RANK"), "0");

  const PyTorchJob::Pod& w1 = pods[2];
  EXPECT_EQ(w1.role, "worker");
  EXPECT_EQ(w1.index, 1);
  EXPECT_EQ(w1.labels.at("training.kubeflow.org/replica-type"), "worker");
  EXPECT_EQ(w1.labels.at("pytorch-replica-index"), "1");
  EXPECT_EQ(w1.labels.at("training.kubeflow.org/replica-index"), "1");
  EXPECT_EQ(w1.env.at("MASTER_ADDR"), "pytorch-test-master-0");
  EXPECT_EQ(w1.env.at("MASTER_PORT"), "23456");
  EXPECT_EQ(w1.env.at("WORLD_SIZE"), "3");
  EXPECT_EQ(w1.env.at("RANK"), "2");
}

TEST(PyTorchJob, LimitOnlyResourceDefaultsToTheLimit) {
  Result<PyTorchJob> job =
      parse(job_yaml("              limits:\n"
                     "                cpu: \"4\"\n"
                     "                nvidia.com/gpu: 8\n"
                     "              requests:\n"
                     "                cpu: 500m\n"));
  ASSERT_TRUE(job.ok()) << job.status().to_string();
  EXPECT_EQ(job->master.requests, (Json{{"cpu", "500m"}, {"nvidia.com/gpu", 8}}));
}

TEST(PyTorchJob, RequestsAreSummedOverContainers) {
  const std::string text =
      "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata:\n  name: two\nspec:\n"
      "  pytorchReplicaSpecs:\n    Master:\n      template:\n        spec:\n          containers:\n"
      "          - resources:\n              requests: {cpu: 500m, memory: 1Gi}\n"
      "          - resources:\n              limits: {cpu: \"1\", nvidia.com/gpu: 1}\n";
  Result<PyTorchJob> job = parse(text);
  ASSERT_TRUE(job.ok()) << job.status().to_string();
  EXPECT_EQ(job->master.requests,
            (Json{{"cpu", "1500m"}, {"memory", "1Gi"}, {"nvidia.com/gpu", 1}}));
  EXPECT_EQ(job->master.replicas, 1);  // defaulted
  EXPECT_EQ(job->master.restart, RestartPolicy::kOnFailure);
  EXPECT_FALSE(job->worker.has_value());
  ASSERT_EQ(job->pod_sets().size(), 1u);
  EXPECT_EQ(job->pods().at(0).env.at("WORLD_SIZE"), "1");
}

TEST(PyTorchJob, RequestAboveLimitRefused) {
  Result<PyTorchJob> job =
      parse(job_yaml("              limits:\n                cpu: \"1\"\n"
                     "              requests:\n                cpu: \"2\"\n"));
  EXPECT_EQ(error_of(job),
            "spec.pytorchReplicaSpecs.Master.template.spec.containers[0].resources.requests.cpu: "
            "\"2\" exceeds the limit \"1\"");
}

TEST(PyTorchJob, MasterReplicasOtherThanOneRefused) {
  std::string text = job_yaml(kCpu1);
  text.replace(text.find("replicas: 1"), 11, "replicas: 2");
  Result<PyTorchJob> job = parse(text);
  EXPECT_EQ(error_of(job), "spec.pytorchReplicaSpecs.Master.replicas: must be 1, got 2");
}

TEST(PyTorchJob, MissingMasterRefused) {
  const std::string text =
      "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata:\n  name: x\nspec:\n"
      "  pytorchReplicaSpecs:\n" +
      worker_block("      replicas: 1\n", kCpu1);
  EXPECT_EQ(error_of(parse(text)),
            "spec.pytorchReplicaSpecs.Master: is required (a PyTorchJob has exactly one Master)");
}

TEST(PyTorchJob, NegativeWorkerReplicasRefused) {
  Result<PyTorchJob> job = parse(job_yaml(kCpu1, worker_block("      replicas: -1\n", kCpu1)));
  EXPECT_NE(error_of(job).find("spec.pytorchReplicaSpecs.Worker.replicas: must be between 0"),
            std::string::npos)
      << error_of(job);
}

TEST(PyTorchJob, WorkerReplicasDefaultToOneAndZeroWorkersLeaveNoWorkerPodSet) {
  Result<PyTorchJob> one = parse(job_yaml(kCpu1, worker_block("", kCpu1)));
  ASSERT_TRUE(one.ok()) << one.status().to_string();
  EXPECT_EQ(one->worker->replicas, 1);
  EXPECT_EQ(one->pod_sets().size(), 2u);

  Result<PyTorchJob> zero = parse(job_yaml(kCpu1, worker_block("      replicas: 0\n", kCpu1)));
  ASSERT_TRUE(zero.ok()) << zero.status().to_string();
  EXPECT_EQ(zero->worker->replicas, 0);
  EXPECT_EQ(zero->pod_sets().size(), 1u);
  EXPECT_EQ(zero->pods().size(), 1u);
}

TEST(PyTorchJob, MissingContainerResourcesRefusedNamingTheField) {
  Result<PyTorchJob> job =
      parse(job_yaml(kCpu1, worker_block("      replicas: 2\n", "              {}\n")));
  EXPECT_EQ(error_of(job),
            "spec.pytorchReplicaSpecs.Worker.template.spec.containers: no resource requests or "
            "limits (gpufleet needs them to place the pod)");
}

TEST(PyTorchJob, OnlyOtherResourcesRefused) {
  Result<PyTorchJob> job =
      parse(job_yaml("              requests:\n"
                     "                ephemeral-storage: 1Gi\n"));
  EXPECT_EQ(error_of(job),
            "spec.pytorchReplicaSpecs.Master.template.spec.containers: no cpu, memory or "
            "nvidia.com/gpu request or limit (gpufleet needs them to place the pod)");
}

TEST(PyTorchJob, EmptyContainersRefused) {
  const std::string text =
      "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata:\n  name: x\nspec:\n"
      "  pytorchReplicaSpecs:\n    Master:\n      template:\n        spec:\n"
      "          containers: []\n";
  EXPECT_EQ(error_of(parse(text)),
            "spec.pytorchReplicaSpecs.Master.template.spec.containers: is required: a pod "
            "template needs at least one container");
}

TEST(PyTorchJob, UnknownReplicaTypeRefused) {
  std::string text = job_yaml(kCpu1, worker_block("      replicas: 1\n", kCpu1));
  text.replace(text.find("    Worker:"), 11, "    Chief:");
  EXPECT_EQ(error_of(parse(text)),
            "spec.pytorchReplicaSpecs.Chief: unknown replica type \"Chief\" (a PyTorchJob has "
            "Master and Worker)");
}

TEST(PyTorchJob, BadQuantityRefusedWithPath) {
  Result<PyTorchJob> job =
      parse(job_yaml("              requests:\n"
                     "                memory: 5Gb\n"));
  const std::string prefix =
      "spec.pytorchReplicaSpecs.Master.template.spec.containers[0].resources.requests.memory: "
      "invalid quantity \"5Gb\"";
  EXPECT_EQ(error_of(job).substr(0, prefix.size()), prefix) << error_of(job);
}

TEST(PyTorchJob, BadRestartPolicyRefused) {
  std::string text = job_yaml(kCpu1);
  text.replace(text.find("      replicas: 1\n"), 18, "      restartPolicy: Sometimes\n");
  EXPECT_EQ(error_of(parse(text)),
            "spec.pytorchReplicaSpecs.Master.restartPolicy: \"Sometimes\" is not a restart "
            "policy (expected Always, OnFailure, Never or ExitCode)");
}

TEST(PyTorchJob, InvalidNameRefused) {
  std::string text = job_yaml(kCpu1);
  text.replace(text.find("name: small"), 11, "name: Small_Job");
  EXPECT_EQ(error_of(parse(text)).substr(0, 29), "metadata.name: \"Small_Job\" is");
  text = job_yaml(kCpu1);
  text.replace(text.find("name: small"), 11, "name: " + std::string(64, 'a'));
  EXPECT_NE(error_of(parse(text)).find("at most 63 characters"), std::string::npos);
}

TEST(PyTorchJob, WrongKindRefused) {
  std::string text = job_yaml(kCpu1);
  text.replace(text.find("kind: PyTorchJob"), 16, "kind: TFJob");
  EXPECT_EQ(error_of(parse(text)),
            "kind: kubeflow.org/v1 TFJob is not a PyTorchJob (expected kubeflow.org/v1 "
            "PyTorchJob)");
  EXPECT_TRUE(is_pytorchjob("kubeflow.org/v1", "PyTorchJob"));
  EXPECT_FALSE(is_pytorchjob("kubeflow.org/v2", "PyTorchJob"));
}

TEST(PyTorchJob, RunPolicyAndLegacyFields) {
  Result<PyTorchJob> job = parse(job_yaml(kCpu1, "",
                                          "  runPolicy:\n"
                                          "    backoffLimit: 3\n"
                                          "    activeDeadlineSeconds: 3600\n"
                                          "    suspend: true\n"
                                          "  ttlSecondsAfterFinished: 60\n"));
  ASSERT_TRUE(job.ok()) << job.status().to_string();
  EXPECT_EQ(job->backoff_limit, 3);
  EXPECT_EQ(job->active_deadline_seconds, 3600);
  EXPECT_EQ(job->ttl_seconds_after_finished, 60);
  EXPECT_TRUE(job->suspend);
  EXPECT_TRUE(job->warnings.empty()) << job->warnings.front();

  EXPECT_EQ(error_of(parse(job_yaml(kCpu1, "", "  runPolicy:\n    activeDeadlineSeconds: 0\n"))),
            "spec.runPolicy.activeDeadlineSeconds: must be > 0 and at most 3153600000 (100 years), "
            "got 0");
  EXPECT_EQ(error_of(parse(job_yaml(kCpu1, "", "  ttlSecondsAfterFinished: -1\n"))),
            "spec.ttlSecondsAfterFinished: must be between 0 and 3153600000 (100 years), got -1");
  EXPECT_NE(error_of(parse(job_yaml(kCpu1, "", "  runPolicy:\n    backoffLimit: -1\n")))
                .find("spec.runPolicy.backoffLimit: must be between 0"),
            std::string::npos);
}

TEST(PyTorchJob, QueueLabelsAndDurationAnnotation) {
  std::string text = job_yaml(kCpu1);
  text.replace(text.find("  name: small\n"), 14,
               "  name: small\n  namespace: team-a\n"
               "  labels:\n    kueue.x-k8s.io/queue-name: lq\n"
               "    kueue.x-k8s.io/priority-class: high\n"
               "  annotations:\n    gpufleet.io/duration: 1h30m\n");
  Result<PyTorchJob> job = parse(text);
  ASSERT_TRUE(job.ok()) << job.status().to_string();
  EXPECT_EQ(job->ns, "team-a");
  EXPECT_EQ(job->local_queue, "lq");
  EXPECT_EQ(job->priority_class, "high");
  EXPECT_EQ(job->duration, hours(1) + minutes(30));

  text.replace(text.find("1h30m"), 5, "soon");
  EXPECT_EQ(error_of(parse(text)).substr(0, 48),
            "metadata.annotations.gpufleet.io/duration: inval");
}

}  // namespace
}  // namespace gf::workload
