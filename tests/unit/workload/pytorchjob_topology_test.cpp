// Kueue's topology annotations on a PyTorchJob (docs/scheduling.md "Topology"): per replica on its
// pod template, or for the whole job on the PyTorchJob; refusals name the annotation.
#include <gtest/gtest.h>

#include <string>

#include "workload/pytorchjob.h"
#include "workload_test_util.h"

namespace gf::workload {
namespace {

using testing::error_of;
using testing::yaml;

// A job with one master and four 8-GPU workers; `job_annotations` and `worker_annotations` are
// YAML maps' lines (already indented for their place), empty for none.
std::string topo_job(const std::string& job_annotations, const std::string& worker_annotations) {
  std::string out =
      "apiVersion: kubeflow.org/v1\n"
      "kind: PyTorchJob\n"
      "metadata:\n"
      "  name: big\n";
  if (!job_annotations.empty()) out += "  annotations:\n" + job_annotations;
  out +=
      "spec:\n"
      "  pytorchReplicaSpecs:\n"
      "    Master:\n"
      "      template:\n"
      "        spec:\n"
      "          containers: [{name: main, image: busybox, resources: {limits: {nvidia.com/gpu: "
      "8}}}]\n"
      "    Worker:\n"
      "      replicas: 4\n"
      "      template:\n";
  if (!worker_annotations.empty())
    out += "        metadata:\n          annotations:\n" + worker_annotations;
  out +=
      "        spec:\n"
      "          containers: [{name: main, image: busybox, resources: {limits: {nvidia.com/gpu: "
      "8}}}]\n";
  return out;
}

TEST(PyTorchJobTopology, WorkerTemplateAnnotation_AppliesToTheWorkerPodSetOnly) {
  auto job = parse_pytorchjob(yaml(topo_job("",
                                            "            kueue.x-k8s.io/podset-required-topology: "
                                            "topology.k8s.aws/network-node-layer-3\n")));
  ASSERT_TRUE(job.ok()) << job.status().to_string();
  const std::vector<JobPodSet> sets = job->pod_sets();
  ASSERT_EQ(sets.size(), 2u);
  EXPECT_FALSE(sets[0].topology.has_value());
  ASSERT_TRUE(sets[1].topology.has_value());
  EXPECT_EQ(sets[1].topology->level, "topology.k8s.aws/network-node-layer-3");
  EXPECT_TRUE(sets[1].topology->required);
  EXPECT_FALSE(sets[1].topology->whole_job);
}

TEST(PyTorchJobTopology, JobAnnotation_AppliesToEveryPodSetAsOneGroup) {
  auto job = parse_pytorchjob(yaml(topo_job(
      "    kueue.x-k8s.io/podset-preferred-topology: topology.k8s.aws/network-node-layer-2\n",
      "")));
  ASSERT_TRUE(job.ok()) << job.status().to_string();
  for (const JobPodSet& ps : job->pod_sets()) {
    ASSERT_TRUE(ps.topology.has_value()) << ps.role;
    EXPECT_EQ(ps.topology->level, "topology.k8s.aws/network-node-layer-2");
    EXPECT_FALSE(ps.topology->required);
    EXPECT_TRUE(ps.topology->whole_job);
  }
}

TEST(PyTorchJobTopology, ReplicaAnnotationWinsOverTheJobs) {
  auto job = parse_pytorchjob(yaml(topo_job(
      "    kueue.x-k8s.io/podset-preferred-topology: topology.k8s.aws/network-node-layer-1\n",
      "            kueue.x-k8s.io/podset-required-topology: kubernetes.io/hostname\n")));
  ASSERT_TRUE(job.ok()) << job.status().to_string();
  const std::vector<JobPodSet> sets = job->pod_sets();
  EXPECT_EQ(sets[0].topology->level, "topology.k8s.aws/network-node-layer-1");
  EXPECT_EQ(sets[1].topology->level, "kubernetes.io/hostname");
  EXPECT_TRUE(sets[1].topology->required);
}

TEST(PyTorchJobTopology, UnknownLevelIsRefusedNamingTheAnnotationAndTheKnownLevels) {
  auto job = parse_pytorchjob(yaml(topo_job(
      "", "            kueue.x-k8s.io/podset-required-topology: cloud.provider.com/rack\n")));
  const std::string e = error_of(job);
  EXPECT_NE(e.find("spec.pytorchReplicaSpecs.Worker.template.metadata.annotations"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("\"cloud.provider.com/rack\" is not a topology level"), std::string::npos) << e;
  EXPECT_NE(e.find("topology.k8s.aws/network-node-layer-3"), std::string::npos) << e;
}

TEST(PyTorchJobTopology, RequiredAndPreferredTogetherAreRefused) {
  auto job = parse_pytorchjob(yaml(topo_job(
      "    kueue.x-k8s.io/podset-required-topology: topology.k8s.aws/network-node-layer-3\n"
      "    kueue.x-k8s.io/podset-preferred-topology: topology.k8s.aws/network-node-layer-2\n",
      "")));
  const std::string e = error_of(job);
  EXPECT_NE(e.find("metadata.annotations"), std::string::npos) << e;
  EXPECT_NE(e.find("is exclusive with kueue.x-k8s.io/podset-preferred-topology"), std::string::npos)
      << e;
}

TEST(PyTorchJobTopology, TemplateAnnotationsMustBeStrings) {
  auto job = parse_pytorchjob(yaml(topo_job("", "            gpufleet.io/x: {a: 1}\n")));
  EXPECT_NE(error_of(job).find("template.metadata.annotations"), std::string::npos)
      << error_of(job);
}

}  // namespace
}  // namespace gf::workload
