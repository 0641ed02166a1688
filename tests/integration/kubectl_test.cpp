// Real Kubernetes clients against a real `gpufleet serve` with TLS and tokens
// (docs/kubernetes.md): kubectl 1.32 and 1.27 (the image's versioned binaries), Debian's kubectl
// 1.20 (unpacked by scripts/setup) and Debian's python3-kubernetes, each with a fresh HOME (their
// discovery caches), through a kubeconfig `gpufleet kubeconfig` wrote. The product document's
// commands run verbatim, `kubectl amc` included.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <fstream>
#include <regex>

#include "support/gpufleet_server.h"
#include "support/process.h"
#include "support/temp_dir.h"

namespace gf {
namespace {

using testing::CommandResult;
using testing::GpufleetServer;
using testing::run_command;
using testing::TempDir;

const std::string& kExamples = testing::kExamplesDir;
const std::string kCloudSdk = "/usr/lib/google-cloud-sdk/bin/";

std::string kubectl_120() {
  return std::string(GPUFLEET_SOURCE_DIR) + "/.cache/kubectl-1.20/usr/bin/kubectl";
}

bool executable(const std::string& path) { return ::access(path.c_str(), X_OK) == 0; }

std::string token_of(const CommandResult& r) {
  std::smatch m;
  return std::regex_search(r.out, m, std::regex(R"(\n  (gf_[A-Za-z0-9_-]+)\n)")) ? m[1].str() : "";
}
std::string entry_of(const CommandResult& r) {
  const size_t at = r.out.find("  - sha256:");
  return at == std::string::npos ? "" : r.out.substr(at);
}

class KubernetesDoor : public ::testing::Test {
 protected:
  void SetUp() override {
    CommandResult gen =
        run_command({"openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                     "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout",
                     dir_.file("key.pem"), "-out", dir_.file("cert.pem")});
    ASSERT_EQ(gen.exit_code, 0) << gen.out;
    CommandResult admin =
        run_command({GPUFLEET_BINARY, "token", "create", "--subject", "ada", "--role", "admin"});
    CommandResult viewer =
        run_command({GPUFLEET_BINARY, "token", "create", "--subject", "vic", "--role", "viewer"});
    admin_ = token_of(admin);
    viewer_ = token_of(viewer);
    ASSERT_FALSE(admin_.empty() || viewer_.empty()) << admin.out << viewer.out;
    std::ofstream(dir_.file("auth.yaml")) << "tokens:\n" << entry_of(admin) << entry_of(viewer);
    std::ofstream(dir_.file("cloud.json"))
        << R"({"launchLatency":"1m","lifecycleDuration":"1m","topology":{"nodesPerBlock":16}})";
    server_ = std::make_unique<GpufleetServer>(
        dir_.file("data"),
        std::vector<std::string>{"--tls-cert", dir_.file("cert.pem"), "--tls-key",
                                 dir_.file("key.pem"), "--auth-file", dir_.file("auth.yaml"),
                                 "--sim-speed", "600", "--sim-cloud", dir_.file("cloud.json"),
                                 "--rate-limit", "0"});
    ASSERT_EQ(server_->url().rfind("https://", 0), 0u) << server_->process().output();
    server_->set_ca_cert(dir_.file("cert.pem"));
    server_->set_token(admin_);
    kubeconfig_ = write_kubeconfig(admin_, "admin.kubeconfig");
  }

  std::string write_kubeconfig(const std::string& token, const std::string& name) {
    CommandResult k = server_->cli_as(token, {"kubeconfig", "--file", dir_.file(name)});
    EXPECT_EQ(k.exit_code, 0) << k.out;
    return dir_.file(name);
  }

  // `kubectl ARGS` with this kubeconfig and a HOME of its own (the discovery cache), and the
  // build folder on PATH (kubectl finds its amc plugin there).
  CommandResult kubectl(const std::string& binary, std::vector<std::string> args,
                        const std::string& kubeconfig = "") {
    std::string build = GPUFLEET_BINARY;
    build = build.substr(0, build.rfind('/'));
    std::vector<std::string> full = {
        "env", "KUBECONFIG=" + (kubeconfig.empty() ? kubeconfig_ : kubeconfig),
        "HOME=" + dir_.file("home-" + std::to_string(++homes_)), "PATH=" + build + ":/usr/bin:/bin",
        binary};
    full.insert(full.end(), args.begin(), args.end());
    return run_command(full);
  }

  void create_member_cluster() {
    std::ofstream(dir_.file("cluster.json"))
        << R"({"ClusterName":"member-a","InstanceGroups":[{"InstanceGroupName":"gpu",)"
        << R"("InstanceType":"ml.g5.12xlarge","InstanceCount":2,"ExecutionRole":"arn:aws:iam::000000000000:role/x",)"
        << R"("LifeCycleConfig":{"SourceS3Uri":"s3://b/p","OnCreate":"on_create.sh"}}]})";
    CommandResult c = server_->cli({"cluster", "create", "-f", dir_.file("cluster.json")});
    ASSERT_EQ(c.exit_code, 0) << c.out;
  }

  TempDir dir_;
  std::unique_ptr<GpufleetServer> server_;
  std::string admin_, viewer_, kubeconfig_;
  int homes_ = 0;
};

TEST_F(KubernetesDoor, TheProductDocumentsCommandsWorkVerbatimWithKubectl132) {
  const std::string k = kCloudSdk + "kubectl.1.32";
  ASSERT_TRUE(executable(k)) << k << " is missing (the image's kubectl package)";
  CommandResult v = kubectl(k, {"version"});
  EXPECT_EQ(v.exit_code, 0) << v.out;
  EXPECT_NE(v.out.find("Server Version: v1.32.0+gpufleet."), std::string::npos) << v.out;
  for (const char* f :
       {"elasticquotatree.yaml", "propagationpolicy-gang.yaml", "pytorchjob.yaml"}) {
    CommandResult a = kubectl(k, {"apply", "-f", kExamples + f});
    EXPECT_EQ(a.exit_code, 0) << a.out;
    EXPECT_NE(a.out.find(" created"), std::string::npos) << a.out;
  }
  EXPECT_NE(kubectl(k, {"apply", "-f", kExamples + "pytorchjob.yaml"})
                .out.find("pytorchjob.kubeflow.org/pytorch-test unchanged"),
            std::string::npos);
  // kubectl get queue -n kube-queue: the ElasticQuotaTree's queues, as old as the tree.
  CommandResult q = kubectl(k, {"get", "queue", "-n", "kube-queue"});
  EXPECT_EQ(q.exit_code, 0) << q.out;
  EXPECT_TRUE(std::regex_search(q.out, std::regex(R"(NAME\s+AGE\n)"))) << q.out;
  EXPECT_TRUE(std::regex_search(q.out, std::regex(R"(\nroot-child-2-\w+\s+\d+[smhd])"))) << q.out;

  // kubectl get -w: the list, then the job's changes as gpufleet places it and it runs.
  testing::Process watcher({"/usr/bin/env", "KUBECONFIG=" + kubeconfig_,
                            "HOME=" + dir_.file("home-watch"), k, "get", "pytorchjobs", "-w",
                            "--output-watch-events", "--request-timeout=60s"});
  EXPECT_NE(watcher.wait_for_line("pytorch-test"), "") << watcher.output();
  create_member_cluster();
  const std::string running = watcher.wait_for_line("Running");
  EXPECT_TRUE(std::regex_search(running, std::regex(R"(^MODIFIED\s+pytorch-test\s+Running)")))
      << watcher.output();
  watcher.signal(SIGTERM);
  watcher.wait();
  CommandResult w =
      kubectl(k, {"wait", "--for=condition=Running", "pytorchjob/pytorch-test", "--timeout=120s"});
  ASSERT_EQ(w.exit_code, 0) << w.out;
  EXPECT_NE(w.out.find("condition met"), std::string::npos) << w.out;
  CommandResult get = kubectl(k, {"get", "pytorchjob"});
  EXPECT_TRUE(
      std::regex_search(get.out, std::regex(R"(NAME\s+STATE\s+AGE\npytorch-test\s+Running\s+\S+)")))
      << get.out;
  CommandResult wide =
      kubectl(k, {"get", "pytorchjob", "-o", "wide", "-A", "-l", "app=pytorchjob"});
  EXPECT_TRUE(std::regex_search(
      wide.out, std::regex(R"(NAMESPACE\s+NAME\s+STATE\s+AGE\s+QUEUE\s+CLUSTER\s+GPUS)")))
      << wide.out;
  EXPECT_NE(wide.out.find("member-a"), std::string::npos) << wide.out;
  CommandResult d = kubectl(k, {"describe", "pytorchjob", "pytorch-test"});
  EXPECT_NE(d.out.find("Events:"), std::string::npos) << d.out;
  EXPECT_NE(d.out.find("ScheduleBindingSucceed"), std::string::npos) << d.out;
  // The amc plugin: the member clusters' copies.
  CommandResult m = kubectl(k, {"amc", "get", "pytorchjob", "-M"});
  EXPECT_TRUE(std::regex_search(
      m.out,
      std::regex(
          R"(NAME\s+CLUSTER\s+STATE\s+AGE\s+ADOPTION\npytorch-test\s+member-a\s+Running\s+\S+\s+Y)")))
      << m.out;
  CommandResult mp = kubectl(k, {"amc", "get", "pod", "-M"});
  EXPECT_TRUE(
      std::regex_search(mp.out, std::regex(R"(pytorch-test-worker-1\s+member-a\s+1/1\s+Running)")))
      << mp.out;
  CommandResult my =
      kubectl(k, {"amc", "get", "pytorchjob", "pytorch-test", "-m", "member-a", "-oyaml"});
  EXPECT_EQ(my.exit_code, 0) << my.out;
  EXPECT_NE(my.out.find("kind: PyTorchJob"), std::string::npos) << my.out;
  // Nodes and pods, with the columns users know.
  CommandResult nodes = kubectl(k, {"get", "nodes"});
  EXPECT_TRUE(std::regex_search(
      nodes.out, std::regex(R"(NAME\s+STATUS\s+ROLES\s+AGE\s+VERSION\ni-\w+\s+Ready\s+gpu)")))
      << nodes.out;
  // The nodes' network topology labels (docs/scheduling.md "Topology"), as kubectl -L shows them.
  CommandResult blocks =
      kubectl(k, {"get", "nodes", "-L", "topology.k8s.aws/network-node-layer-3"});
  EXPECT_TRUE(std::regex_search(blocks.out, std::regex(R"(NETWORK-NODE-LAYER-3
i-\w+\s.*nn-)")))
      << blocks.out;
  CommandResult pods = kubectl(k, {"get", "pods", "-o", "wide"});
  EXPECT_TRUE(std::regex_search(
      pods.out, std::regex(R"(NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\s+IP\s+NODE)")))
      << pods.out;
  EXPECT_NE(pods.out.find("pytorch-test-master-0"), std::string::npos) << pods.out;
  CommandResult explain = kubectl(k, {"explain", "pytorchjob.spec.runPolicy"});
  EXPECT_NE(explain.out.find("suspend"), std::string::npos) << explain.out;
  // Delete: deleted, then NotFound in kubectl's words.
  CommandResult del = kubectl(k, {"delete", "pytorchjob", "pytorch-test"});
  EXPECT_NE(del.out.find("pytorchjob.kubeflow.org \"pytorch-test\" deleted"), std::string::npos)
      << del.out;
  CommandResult again = kubectl(k, {"delete", "pytorchjob", "pytorch-test"});
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_NE(
      again.out.find(
          "Error from server (NotFound): pytorchjobs.kubeflow.org \"pytorch-test\" not found"),
      std::string::npos)
      << again.out;
}

TEST_F(KubernetesDoor, ValidationErrorsAndRolesReadAsKubectlPrintsThem) {
  const std::string k = kCloudSdk + "kubectl.1.32";
  ASSERT_TRUE(executable(k)) << k << " is missing (the image's kubectl package)";
  ASSERT_EQ(kubectl(k, {"apply", "-f", kExamples + "propagationpolicy-gang.yaml"}).exit_code, 0);
  std::string typo;
  {
    std::ifstream in(kExamples + "pytorchjob.yaml");
    std::stringstream ss;
    ss << in.rdbuf();
    typo = std::regex_replace(ss.str(), std::regex("cleanPodPolicy: None"),
                              "cleanPodPolicy: None\n  bogusField: 1");
    typo = std::regex_replace(typo, std::regex("name: pytorch-test\n  namespace"),
                              "name: typo\n  namespace");
  }
  std::ofstream(dir_.file("typo.yaml")) << typo;
  CommandResult strict = kubectl(k, {"apply", "-f", dir_.file("typo.yaml")});
  EXPECT_EQ(strict.exit_code, 1) << strict.out;
  EXPECT_NE(strict.out.find("strict decoding error: spec.bogusField"), std::string::npos)
      << strict.out;
  CommandResult dry =
      kubectl(k, {"apply", "-f", kExamples + "pytorchjob.yaml", "--dry-run=server"});
  EXPECT_EQ(dry.exit_code, 0) << dry.out;
  EXPECT_EQ(kubectl(k, {"get", "pytorchjob", "pytorch-test"}).exit_code, 1)
      << "a dry run writes nothing";
  CommandResult warn = kubectl(k, {"apply", "-f", dir_.file("typo.yaml"), "--validate=warn"});
  EXPECT_EQ(warn.exit_code, 0) << warn.out;
  EXPECT_NE(warn.out.find("Warning: spec.bogusField"), std::string::npos) << warn.out;
  // Server-side apply: created, then a changed field conflicts until --force-conflicts.
  CommandResult ssa =
      kubectl(k, {"apply", "--server-side", "-f", kExamples + "propagationpolicy-gang.yaml"});
  EXPECT_NE(ssa.out.find("example-policy serverside-applied"), std::string::npos) << ssa.out;
  {
    std::ifstream in(kExamples + "propagationpolicy-gang.yaml");
    std::stringstream ss;
    ss << in.rdbuf();
    std::ofstream(dir_.file("pp60.yaml")) << std::regex_replace(
        ss.str(), std::regex("tolerationSeconds: 30"), "tolerationSeconds: 60");
  }
  CommandResult conflict = kubectl(k, {"apply", "--server-side", "-f", dir_.file("pp60.yaml")});
  EXPECT_EQ(conflict.exit_code, 1);
  EXPECT_NE(conflict.out.find("Apply failed with 1 conflict"), std::string::npos) << conflict.out;
  EXPECT_NE(conflict.out.find(".spec.failover.application.decisionConditions.tolerationSeconds"),
            std::string::npos)
      << conflict.out;
  CommandResult forced =
      kubectl(k, {"apply", "--server-side", "--force-conflicts", "-f", dir_.file("pp60.yaml")});
  EXPECT_EQ(forced.exit_code, 0) << forced.out;
  // A viewer reads but may not write; a token the server does not know is not logged in.
  const std::string viewer = write_kubeconfig(viewer_, "viewer.kubeconfig");
  EXPECT_EQ(kubectl(k, {"get", "pytorchjobs"}, viewer).exit_code, 0);
  CommandResult forbidden = kubectl(k, {"delete", "pytorchjob", "typo"}, viewer);
  EXPECT_EQ(forbidden.exit_code, 1);
  EXPECT_NE(forbidden.out.find("Error from server (Forbidden)"), std::string::npos)
      << forbidden.out;
  const std::string stranger = write_kubeconfig("gf_not_a_token_of_this_server", "bad.kubeconfig");
  CommandResult who = kubectl(k, {"get", "pytorchjobs"}, stranger);
  EXPECT_EQ(who.exit_code, 1);
  EXPECT_NE(who.out.find("You must be logged in to the server"), std::string::npos) << who.out;
}

TEST_F(KubernetesDoor, AFolderWhoseJobSortsBeforeItsPolicyHoldsTheJobThenQueuesIt) {
  const std::string k = kCloudSdk + "kubectl.1.32";
  ASSERT_TRUE(executable(k)) << k << " is missing (the image's kubectl package)";
  const std::string folder = dir_.file("manifests");
  ASSERT_EQ(run_command({"mkdir", "-p", folder}).exit_code, 0);
  ASSERT_EQ(run_command({"cp", kExamples + "pytorchjob.yaml", folder + "/a-job.yaml"}).exit_code,
            0);
  ASSERT_EQ(
      run_command({"cp", kExamples + "propagationpolicy-gang.yaml", folder + "/b-policy.yaml"})
          .exit_code,
      0);
  CommandResult a = kubectl(k, {"apply", "-f", folder});
  EXPECT_EQ(a.exit_code, 0) << a.out;
  EXPECT_NE(a.out.find("Warning: metadata: no PropagationPolicy in namespace default selects "
                       "PyTorchJob default/pytorch-test yet: it is held"),
            std::string::npos)
      << a.out;
  EXPECT_NE(a.out.find("example-policy created"), std::string::npos) << a.out;
  CommandResult policy = kubectl(
      k, {"get", "pytorchjob", "pytorch-test", "-o", "jsonpath={.status.propagationPolicy}"});
  EXPECT_EQ(policy.out, "example-policy");
  CommandResult d = kubectl(k, {"describe", "pytorchjob", "pytorch-test"});
  EXPECT_NE(d.out.find("PolicySelected"), std::string::npos) << d.out;
}

TEST_F(KubernetesDoor, OlderKubectlsApplyGetAndDelete) {
  std::vector<std::string> clients = {kubectl_120(), kCloudSdk + "kubectl.1.27"};
  for (const std::string& k : clients) {
    SCOPED_TRACE(k);
    ASSERT_TRUE(executable(k)) << k << " is missing (scripts/setup unpacks kubectl 1.20)";
    CommandResult a = kubectl(k, {"apply", "-f", kExamples + "kueue/"});
    EXPECT_EQ(a.exit_code, 0) << a.out;
    EXPECT_NE(a.out.find("pytorchjob.kubeflow.org/llm-pretrain"), std::string::npos) << a.out;
    CommandResult cq = kubectl(k, {"get", "clusterqueues"});
    EXPECT_TRUE(std::regex_search(
        cq.out,
        std::regex(
            R"(NAME\s+COHORT\s+PENDING WORKLOADS\s+ADMITTED WORKLOADS\s+AGE\nteam-a\s+research)")))
        << cq.out;
    CommandResult get = kubectl(k, {"get", "pytorchjobs", "-n", "team-a"});
    EXPECT_TRUE(std::regex_search(get.out, std::regex(R"(NAME\s+STATE\s+AGE\nllm-pretrain\s+)")))
        << get.out;
    CommandResult del = kubectl(k, {"delete", "-f", kExamples + "kueue/training-job.yaml"});
    EXPECT_EQ(del.exit_code, 0) << del.out;
  }
}

TEST_F(KubernetesDoor, PythonClient) {
  ASSERT_TRUE(executable("/usr/bin/python3"));
  ASSERT_EQ(kubectl(kCloudSdk + "kubectl.1.32",
                    {"apply", "-f", kExamples + "propagationpolicy-gang.yaml"})
                .exit_code,
            0);
  ASSERT_EQ(
      kubectl(kCloudSdk + "kubectl.1.32", {"apply", "-f", kExamples + "pytorchjob.yaml"}).exit_code,
      0);
  create_member_cluster();
  ASSERT_EQ(kubectl(kCloudSdk + "kubectl.1.32", {"wait", "--for=condition=Running",
                                                 "pytorchjob/pytorch-test", "--timeout=120s"})
                .exit_code,
            0);
  CommandResult py = run_command(
      {"/usr/bin/python3",
       std::string(GPUFLEET_SOURCE_DIR) + "/tests/integration/k8s/client_test.py", kubeconfig_});
  EXPECT_EQ(py.exit_code, 0) << py.out;
  EXPECT_NE(py.out.find("watched MODIFIED"), std::string::npos) << py.out;
  EXPECT_NE(py.out.find("pods 3 ['Running', 'Running', 'Running']"), std::string::npos) << py.out;
  EXPECT_NE(py.out.find("dynamic ['pytorch-test']"), std::string::npos) << py.out;
  EXPECT_NE(py.out.find("\nok"), std::string::npos) << py.out;
}

}  // namespace
}  // namespace gf
