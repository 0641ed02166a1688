// docs/slurm.md "One source of truth": on a real Slurm cluster of the local cloud, what gpufleet
// says is what slurmctld does. A gang is Running only once Slurm runs it; a node Slurm will not
// use takes no gang, whoever drained it; plain `sbatch` runs in the default partition and shows
// in `gpufleet squeue`; a launch failure is reported in Slurm's words; deleting the cluster ends
// every process it started. The local root is over 150 characters long, as a data directory
// under a home directory is: every socket path must still fit.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "core/json.h"
#include "os/process.h"
#include "support/eventually.h"
#include "support/local_slurm.h"

namespace gf {
namespace {

namespace fs = std::filesystem;
using testing::CommandResult;
using testing::eventually;
using testing::kExamplesDir;
using testing::slurp;

// A PyTorchJob of a master and `workers` workers, one whole 8-GPU node each, running `command`;
// with `sidecar`, every pod has a second container that runs it too.
std::string gang_job(const std::string& name, int workers, const std::string& command,
                     const std::string& restart = "Never", const std::string& sidecar = "") {
  auto replica = [&](const std::string& role, int n) {
    std::string out =
        "    " + role + ":\n      replicas: " + std::to_string(n) +
        "\n      restartPolicy: " + restart +
        "\n      template:\n        spec:\n          containers:\n          - name: pytorch\n"
        "            image: x\n            command: [bash, -c, '" +
        command +
        "']\n            resources: {limits: {nvidia.com/gpu: 8}, requests: {nvidia.com/gpu: "
        "8}}\n";
    if (!sidecar.empty())
      out += "          - name: sidecar\n            image: x\n            command: [bash, -c, '" +
             sidecar + "']\n";
    return out;
  };
  std::string out = "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: " + name +
                    ", namespace: default, labels: {app: pytorchjob}}\nspec:\n"
                    "  pytorchReplicaSpecs:\n" +
                    replica("Master", 1);
  if (workers > 0) out += replica("Worker", workers);
  return out;
}

class SlurmTruthTest : public testing::LocalSlurmTest {
 protected:
  // 150+ characters: the step sockets of the old layout (under the local root) would not fit.
  std::string local_root_name() const override {
    return "a-data-directory-as-deep-as-one-under-a-home-directory/with-a-project-folder/"
           "and-the-local-cloud-of-gpufleet-beneath-it/local";
  }

  void apply_gang(const std::string& name, int workers, const std::string& command,
                  const std::string& restart = "Never", const std::string& sidecar = "") {
    std::ofstream(dir_.file(name + ".yaml")) << gang_job(name, workers, command, restart, sidecar);
    CommandResult r = cli({"apply", "-f", dir_.file(name + ".yaml")});
    ASSERT_EQ(r.exit_code, 0) << r.out;
  }
  // The STATE column of `gpufleet get pytorchjob NAME`.
  std::string job_state(const std::string& name) const {
    std::istringstream in(cli({"get", "pytorchjob", name}).out);
    std::string header, row, word;
    std::getline(in, header);
    std::getline(in, row);
    std::istringstream cols(row);
    cols >> word >> word;
    return word;
  }
  // squeue's line for gpufleet's allocations: name|state|reason|requested nodes|nodes.
  std::string gangs() const {
    std::string out;
    std::istringstream in(slurm({"squeue", "-h", "-o", "%j|%T|%r|%n|%N"}));
    for (std::string line; std::getline(in, line);)
      if (line.rfind("gf-", 0) == 0) out += line + "\n";
    return out;
  }

  void SetUp() override {
    LocalSlurmTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    ASSERT_GE(root_.size(), 150u) << root_;
    CommandResult r = cli({"apply", "-f", kExamplesDir + "propagationpolicy-gang.yaml"});
    ASSERT_EQ(r.exit_code, 0) << r.out;
  }
};

TEST_F(SlurmTruthTest,
       FromALongDataDirAGangRunsInSlurmAndInGpufleetPlainSbatchRunsAndDeleteEndsEveryProcess) {
  ASSERT_NO_FATAL_FAILURE(create_seed_cluster(3));

  // A user's own job, without -p: the default partition takes it, and gpufleet's squeue, which
  // reads slurmctld, lists it.
  const std::string submitted = slurm(
      {"sbatch", "--parsable", "-o", dir_.file("hostname-%j.out"), "--wrap", "hostname; sleep 15"});
  ASSERT_NE(submitted.find_first_of("0123456789"), std::string::npos) << submitted;
  const std::string user_job = submitted.substr(0, submitted.find_first_not_of("0123456789"));
  CommandResult q;
  ASSERT_TRUE(eventually([&] {
    q = cli({"squeue", "my-training-cluster"});
    return q.out.find(user_job) != std::string::npos && q.out.find(" R ") != std::string::npos;
  })) << q.out
      << slurm({"squeue"});
  EXPECT_NE(q.out.find("gpu-training"), std::string::npos) << q.out;
  EXPECT_TRUE(eventually([&] { return fs::exists(dir_.file("hostname-" + user_job + ".out")); }))
      << slurm({"squeue"});

  // A gang of three reaches Running in Slurm, then in gpufleet, with its logs: every container
  // of each pod runs in the job's step.
  ASSERT_NO_FATAL_FAILURE(
      apply_gang("long3", 2, "echo \"rank $RANK of $WORLD_SIZE on $SLURMD_NODENAME\"; sleep 600",
                 "Never", "echo \"sidecar in job $SLURM_JOB_ID\"; sleep 600"));
  std::string line;
  ASSERT_TRUE(eventually(
      [&] {
        line = gangs();
        return line.find("|RUNNING|") != std::string::npos;
      },
      std::chrono::seconds(90)))
      << line << slurm({"squeue"});
  EXPECT_TRUE(eventually([&] { return job_state("long3") == "Running"; }))
      << cli({"describe", "pytorchjob", "long3"}).out;
  CommandResult logs;
  EXPECT_TRUE(eventually([&] {
    logs = cli({"logs", "long3-worker-1", "-c", "pytorch"});
    return logs.out.find("rank 2 of 3 on worker-gpu-a-") != std::string::npos;
  })) << logs.out;
  EXPECT_TRUE(eventually([&] {
    logs = cli({"logs", "long3-master-0", "-c", "sidecar"});
    return logs.out.find("sidecar in job ") != std::string::npos;
  })) << logs.out;
  q = cli({"squeue", "my-training-cluster"});
  EXPECT_NE(q.out.find("gpufleet:long3"), std::string::npos) << "gangs are marked: " << q.out;
  CommandResult sinfo = cli({"sinfo", "my-training-cluster"});
  EXPECT_NE(sinfo.out.find("gpu-training"), std::string::npos) << sinfo.out;
  // CR_CPU: a one-task step holds a CPU of each node, so slurmctld says mix.
  EXPECT_NE(sinfo.out.find("mix"), std::string::npos) << sinfo.out;

  // Deleting the cluster ends every process it started: daemons, slurmstepd, the steps and
  // their children (the gang's `sleep 600`).
  ASSERT_FALSE(cluster_processes().empty());
  CommandResult del = cli({"cluster", "delete", "my-training-cluster"});
  ASSERT_EQ(del.exit_code, 0) << del.out;
  std::vector<std::string> left;
  EXPECT_TRUE(eventually(
      [&] {
        left = cluster_processes();
        return left.empty();
      },
      std::chrono::seconds(90)))
      << [&] {
           std::string s;
           for (const std::string& p : left) s += p + "\n";
           return s;
         }();
}

TEST_F(SlurmTruthTest, ANodeDrainedInSlurmTakesNoGangAndAGangPlacedOnItBeforeItStartedMoves) {
  ASSERT_NO_FATAL_FAILURE(create_seed_cluster(3));
  // An operator drains worker 1 before anything is placed: the gang of two goes elsewhere.
  ASSERT_EQ(slurm({"scontrol", "update", "NodeName=worker-gpu-a-1", "State=DRAIN",
                   "Reason=ops: fan replaced"}),
            "");
  // The server knows before the gang is applied: the worker's agent reported the drain.
  ASSERT_TRUE(eventually([&] {
    for (const Json& n : server_->get("/v1/clusters/my-training-cluster/nodes")
                             .value("ClusterNodeSummaries", Json::array()))
      if (n.value("SlurmUnschedulable", "") == "DRAIN (ops: fan replaced)") return true;
    return false;
  })) << server_->get("/v1/clusters/my-training-cluster/nodes").dump();
  ASSERT_NO_FATAL_FAILURE(apply_gang("drained2", 1, "sleep 600"));
  std::string line;
  ASSERT_TRUE(eventually(
      [&] {
        line = gangs();
        return line.find("|RUNNING|") != std::string::npos;
      },
      std::chrono::seconds(90)))
      << line << slurm({"squeue"}) << cli({"describe", "pytorchjob", "drained2"}).out;
  EXPECT_NE(line.find("|worker-gpu-a-[2-3]"), std::string::npos) << line;
  ASSERT_EQ(cli({"delete", "pytorchjob", "drained2"}).exit_code, 0);
  ASSERT_TRUE(eventually([&] { return gangs().empty(); })) << slurm({"squeue"});
  ASSERT_EQ(slurm({"scontrol", "update", "NodeName=worker-gpu-a-1", "State=RESUME"}), "");
  ASSERT_TRUE(eventually([&] { return idle_workers() == 3; })) << slurm({"sinfo"});

  // A user's job holds every node: a gang placed now waits in Slurm (Resources), and gpufleet
  // says so rather than Running. (Without failover: the example policy's tolerationSeconds would
  // move a gang that waits 30 s to another cluster.)
  std::string policy = slurp(kExamplesDir + "propagationpolicy-gang.yaml");
  policy.replace(policy.find("  failover:"),
                 policy.find("  placement:") - policy.find("  failover:"), "");
  std::ofstream(dir_.file("policy.yaml")) << policy;
  ASSERT_EQ(cli({"apply", "-f", dir_.file("policy.yaml")}).exit_code, 0);
  const std::string blocker =
      slurm({"sbatch", "--parsable", "-N", "3", "--exclusive", "--wrap", "sleep 600"});
  ASSERT_TRUE(eventually([&] {
    return slurm({"squeue", "-h", "-t", "running", "-o", "%D"}).find('3') != std::string::npos;
  })) << slurm({"squeue"});
  ASSERT_NO_FATAL_FAILURE(apply_gang("moved2", 1, "echo moved; sleep 600"));
  ASSERT_TRUE(eventually([&] {
    line = gangs();
    return line.find("|PENDING|") != std::string::npos;
  })) << line
      << slurm({"squeue"});
  CommandResult describe;
  EXPECT_TRUE(eventually([&] {
    describe = cli({"describe", "pytorchjob", "moved2"});
    return describe.out.find("Resources") != std::string::npos;
  })) << describe.out;
  EXPECT_NE(job_state("moved2"), "Running") << describe.out;

  // The operator drains one of the gang's nodes: it is placed again, off that node, at once.
  const std::string first = line.substr(0, line.find('|'));
  const std::string requested = line.substr(0, line.find('\n'));
  const size_t at = requested.find("worker-gpu-a-");
  ASSERT_NE(at, std::string::npos) << requested;
  std::string drained = "worker-gpu-a-" + requested.substr(at + 13, 1);
  if (requested.find("worker-gpu-a-[") != std::string::npos)
    drained = "worker-gpu-a-" + requested.substr(requested.find('[') + 1, 1);
  ASSERT_EQ(slurm({"scontrol", "update", "NodeName=" + drained, "State=DRAIN",
                   "Reason=ops: cable reseat"}),
            "");
  ASSERT_TRUE(eventually([&] {
    line = gangs();
    return !line.empty() && line.find(first + "|") == std::string::npos;
  })) << line
      << slurm({"squeue"});
  // The user's job ends: the moved gang runs, not on the drained node.
  (void)slurm({"scancel", blocker.substr(0, blocker.find_first_not_of("0123456789"))});
  ASSERT_TRUE(eventually(
      [&] {
        line = gangs();
        return line.find("|RUNNING|") != std::string::npos;
      },
      std::chrono::seconds(90)))
      << line << slurm({"squeue"});
  EXPECT_EQ(line.substr(line.rfind('|')).find(drained.substr(13)), std::string::npos)
      << drained << " in " << line;
  EXPECT_TRUE(eventually([&] { return job_state("moved2") == "Running"; }))
      << cli({"describe", "pytorchjob", "moved2"}).out;
}

TEST_F(SlurmTruthTest, ALaunchFailureIsReportedInSlurmsWordsAndNeverAsRunning) {
  ASSERT_NO_FATAL_FAILURE(create_seed_cluster(1));
  // The node's spool is gone and a file stands in its place: slurmstepd cannot make its socket,
  // as with a path too long, and Slurm holds the job after the failed launch.
  std::string spool;
  for (const auto& e : fs::directory_iterator("/tmp")) {
    if (e.path().filename().string().rfind("gfs-", 0) != 0) continue;
    if (fs::exists(e.path() / "worker-gpu-a-1") &&
        slurp(slurm_dir() + "/slurm.conf").find(e.path().string()) != std::string::npos)
      spool = (e.path() / "worker-gpu-a-1").string();
  }
  ASSERT_FALSE(spool.empty()) << slurp(slurm_dir() + "/slurm.conf");
  fs::remove_all(spool);
  std::ofstream(spool) << "not a directory\n";

  ASSERT_NO_FATAL_FAILURE(apply_gang("fails1", 0, "echo started; sleep 600"));
  bool ever_running = false;
  std::string describe;
  const bool failed = eventually(
      [&] {
        const std::string state = job_state("fails1");
        ever_running = ever_running || state == "Running";
        return state == "Failed";
      },
      std::chrono::seconds(120));
  describe = cli({"describe", "pytorchjob", "fails1"}).out;
  EXPECT_TRUE(failed) << describe << slurm({"squeue"});
  EXPECT_FALSE(ever_running) << describe;
  EXPECT_NE(describe.find("launch failed"), std::string::npos) << describe;
  EXPECT_TRUE(eventually([&] { return gangs().empty(); }))
      << "the held job is cancelled: " << slurm({"squeue"});
  fs::remove(spool);
}

// docs/slurm.md "Paths that work anywhere": a Compute group whose node names could not name
// slurmd's step sockets is refused at create, naming the field, and nothing is created.
TEST_F(SlurmTruthTest, AGroupNameTooLongForItsStepSocketsIsRefusedAtCreate) {
  Json c = Json::parse(slurp(kExamplesDir + "create_cluster.json"));
  for (Json& g : c["InstanceGroups"]) {
    if (g["InstanceGroupName"] == "worker-gpu-a")
      g["InstanceGroupName"] = "worker-gpu-a-with-a-long-name";
  }
  std::ofstream(dir_.file("long-group.json")) << c.dump(2);
  CommandResult r = cli({"cluster", "create", "-f", dir_.file("long-group.json")});
  EXPECT_NE(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("InstanceGroups[2].InstanceGroupName"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("socket"), std::string::npos) << r.out;
  EXPECT_EQ(cli({"cluster", "list"}).out.find("my-training-cluster"), std::string::npos);
}

}  // namespace
}  // namespace gf
