// A real Slurm cluster on the local cloud (docs/slurm.md): the seed's create_cluster.json, run by
// a real `serve --cloud local` whose controller node's agent runs munged and slurmctld and whose
// workers' agents run `slurmd -N`. The test reads Slurm with its own client tools (SLURM_CONF of
// that cluster), submits a job to it as a user would, and stops every agent it caused by its pid
// file (the daemons die with their agents). Every wait is bounded.
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
#include "support/gpufleet_server.h"
#include "support/local_slurm.h"
#include "support/temp_dir.h"

namespace gf {
namespace {

namespace fs = std::filesystem;
using testing::CommandResult;
using testing::eventually;
using testing::GpufleetServer;
using testing::kExamplesDir;
using testing::LocalSlurmTest;
using testing::slurp;
using testing::TempDir;

// How many nodes the managed block declares as running (not State=FUTURE).
int declared_running(const std::string& nodes_block) {
  std::istringstream in(nodes_block);
  int n = 0;
  for (std::string line; std::getline(in, line);)
    n += line.rfind("NodeName=", 0) == 0 && line.find("State=FUTURE") == std::string::npos;
  return n;
}

// The text between a managed block's BEGIN and END markers.
std::string block(const std::string& conf, const std::string& kind) {
  const size_t begin = conf.find("# BEGIN gpufleet managed " + kind);
  const size_t end = conf.find("# END gpufleet managed " + kind);
  if (begin == std::string::npos || end == std::string::npos) return "";
  return conf.substr(begin, end - begin);
}

TEST_F(LocalSlurmTest, SeedClusterBecomesARealSlurmClusterWhoseWorkersJoinAsCapacityArrives) {
  CommandResult r = cli({"cluster", "create", "-f", kExamplesDir + "create_cluster.json"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  ASSERT_TRUE(eventually([&] { return idle_workers() == 10; }, std::chrono::seconds(150)))
      << slurm({"sinfo"}) << "\n"
      << slurp(conf()) << "\n"
      << slurp(root_ + "/slurm/my-training-cluster/log/slurmctld.log");
  // The cluster is in service with its controller, login node and 10 of 16 workers.
  EXPECT_TRUE(eventually([&] {
    return server_->get("/v1/clusters/my-training-cluster").value("ClusterStatus", "") ==
           "InService";
  }));

  // The controller's agent rewrites the managed block as the server's layout follows (every 2 s).
  ASSERT_TRUE(eventually([&] { return declared_running(block(slurp(conf()), "nodes")) == 10; }))
      << block(slurp(conf()), "nodes");
  // A person edits slurm.conf outside the managed blocks.
  const std::string before = slurp(conf());
  { std::ofstream(conf(), std::ios::app) << "# site note: added by hand\nTmpFS=/tmp\n"; }
  const std::string nodes_before = block(before, "nodes");
  ASSERT_NE(nodes_before.find("State=FUTURE"), std::string::npos)
      << "no node declared ahead (State=FUTURE)";

  std::ofstream(root_ + "/capacity.json") << R"({"ml.p5.48xlarge": 16})";
  ASSERT_TRUE(eventually([&] { return idle_workers() == 16; }, std::chrono::seconds(150)))
      << slurm({"sinfo"}) << "\n"
      << slurp(conf());
  EXPECT_TRUE(eventually([&] { return declared_running(block(slurp(conf()), "nodes")) == 16; }))
      << block(slurp(conf()), "nodes");
  const std::string after = slurp(conf());
  EXPECT_NE(after.find("# site note: added by hand\nTmpFS=/tmp\n"), std::string::npos) << after;
  EXPECT_EQ(after.substr(0, after.find("# BEGIN gpufleet managed")),
            before.substr(0, before.find("# BEGIN gpufleet managed")));
  // Read again while slurmctld is busy taking the rewritten slurm.conf (a reconfigure may leave
  // one call unanswered: "Unexpected missing socket error").
  std::string partition;
  EXPECT_TRUE(eventually(
      [&] {
        partition = slurm({"scontrol", "show", "partition", "gpu-training", "-o"});
        return partition.find("TotalNodes=") != std::string::npos;
      },
      std::chrono::seconds(30)))
      << partition;
}

TEST_F(LocalSlurmTest, RemediationDrainsWithOurReasonWaitsForTheSlurmJobRebootsAndResumes) {
  // A smaller cluster of the seed's shape: controller, login, 3 workers.
  ASSERT_NO_FATAL_FAILURE(create_seed_cluster(3));
  // The Xid line is injected: the Slurm job really runs on. Fatal faults wait for it here, and
  // the detector's reboot runs (not the usual fix), so the test follows Slurm's drain and reboot.
  std::ofstream(dir_.file("policy.yaml"))
      << "AlertPersistence: 1s\nWaitForIdle: {FatalFaults: Wait}\nUsualFixFirst: false\n";
  ASSERT_EQ(cli({"policy", "set", "my-training-cluster", "-f", dir_.file("policy.yaml")}).exit_code,
            0);
  ASSERT_EQ(workers().size(), 3u);
  const std::string node = workers()[0].value("InstanceId", "");
  const std::string name = workers()[0].value("SlurmNodeName", "");
  ASSERT_FALSE(name.empty()) << workers().dump();

  // A user's job on that node, submitted to Slurm directly.
  const std::string job = slurm({"sbatch", "--parsable", "-w", name, "-p", "gpu-training", "-o",
                                 "/dev/null", "--wrap", "sleep 12"});
  ASSERT_FALSE(job.empty());
  ASSERT_TRUE(eventually([&] {
    return slurm({"squeue", "-h", "-j", job.substr(0, job.find_first_of(";\n")), "-o", "%T"})
               .find("RUNNING") != std::string::npos;
  }));
  const pid_t agent_before = *os::read_pid_file(root_ + "/" + node + "/agent.pid");

  std::ofstream(root_ + "/" + node + "/kern.log", std::ios::app)
      << "Dec  2 06:03:28 node kernel: NVRM: Xid (PCI:0000:53:00): 79, pid=1234, name=python, "
         "GPU has fallen off the bus.\n";

  // Drained in Slurm with our reason while the job still runs; the remediation waits for it.
  ASSERT_TRUE(eventually([&] {
    const std::string line = node_line(name);
    return line.find("DRAIN") != std::string::npos &&
           line.find("Reason=gpufleet:rem-") != std::string::npos;
  })) << node_line(name);
  EXPECT_NE(node_line(name).find("xid:79"), std::string::npos) << node_line(name);
  EXPECT_TRUE(eventually([&] {
    const Json list =
        server_->get("/v1/remediations?node=" + node).value("Remediations", Json::array());
    return !list.empty() && list[0].value("Status", "") == "WaitingForIdle" &&
           list[0].value("Reason", "").find("Slurm allocation") != std::string::npos;
  })) << server_->get("/v1/remediations?node=" + node).dump();

  // The job ends; the node is rebooted (a new agent) and resumed in Slurm.
  Json rem;
  ASSERT_TRUE(eventually(
      [&] {
        const Json list =
            server_->get("/v1/remediations?node=" + node).value("Remediations", Json::array());
        if (list.empty()) return false;
        rem = list[0];
        return rem.value("Status", "") == "Succeeded";
      },
      std::chrono::seconds(120)))
      << rem.dump();
  EXPECT_NE(*os::read_pid_file(root_ + "/" + node + "/agent.pid"), agent_before);
  CommandResult r = cli({"remediation", "describe", rem.value("RemediationId", "")});
  size_t at = 0;
  for (const char* step :
       {"WaitingForIdle", "Slurm allocation", "Draining", "Executing", "Succeeded"}) {
    const size_t found = r.out.find(step, at);
    ASSERT_NE(found, std::string::npos) << step << " after offset " << at << ":\n" << r.out;
    at = found;
  }
  EXPECT_TRUE(eventually([&] {
    const std::string line = node_line(name);
    return line.find("State=IDLE ") != std::string::npos;
  })) << node_line(name);

  // A drain someone else set: an alert, and their reason stays.
  const std::string other = workers()[1].value("InstanceId", "");
  const std::string other_name = workers()[1].value("SlurmNodeName", "");
  slurm({"scontrol", "update", "NodeName=" + other_name, "State=DRAIN", "Reason=disk swap by ops"});
  ASSERT_TRUE(eventually([&] {
    for (const Json& a : server_->get("/v1/alerts?node=" + other).value("Alerts", Json::array())) {
      if (a.value("Fault", "").rfind("slurm:drain", 0) == 0) return true;
    }
    return false;
  })) << server_->get("/v1/alerts?node=" + other).dump();
  EXPECT_NE(node_line(other_name).find("Reason=disk swap by ops"), std::string::npos)
      << node_line(other_name);
}

TEST_F(LocalSlurmTest, AWorkerWhoseSlurmdStopsAnsweringIsDownInSlurmAndAnAlert) {
  ASSERT_NO_FATAL_FAILURE(create_seed_cluster(2));
  const std::string node = workers()[0].value("InstanceId", "");
  const std::string name = workers()[0].value("SlurmNodeName", "");
  // slurmd runs in a PID namespace of its own: its pid file holds its pid there, not here.
  auto pid = slurmd_pid(name);
  ASSERT_TRUE(pid.has_value()) << cluster_processes().size();
  // A hung slurmd (its agent still runs it, so it is not restarted): slurmctld stops hearing
  // from it and sets the node DOWN after SlurmdTimeout; its agent reads that as an alert.
  ASSERT_EQ(::kill(*pid, SIGSTOP), 0);
  EXPECT_TRUE(eventually(
      [&] {
        for (const Json& a :
             server_->get("/v1/alerts?node=" + node).value("Alerts", Json::array())) {
          if (a.value("Fault", "") == "slurm:down") return true;
        }
        return false;
      },
      std::chrono::seconds(90)))
      << node_line(name) << server_->get("/v1/alerts?node=" + node).dump();
  EXPECT_NE(node_line(name).find("DOWN"), std::string::npos) << node_line(name);
  ::kill(*pid, SIGCONT);
}

// A PyTorchJob of a master and two workers that each want a whole p5 (8 GPUs): three nodes.
constexpr const char* kGangJob = R"(apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: gang3, namespace: default, labels: {app: pytorchjob}}
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      restartPolicy: Never
      template:
        spec:
          containers:
          - name: pytorch
            image: x
            command: [bash, -c, 'echo "rank $RANK of $WORLD_SIZE on $SLURMD_NODENAME"; sleep 4']
            resources: {limits: {nvidia.com/gpu: 8}, requests: {nvidia.com/gpu: 8}}
    Worker:
      replicas: 2
      restartPolicy: Never
      template:
        spec:
          containers:
          - name: pytorch
            image: x
            command: [bash, -c, 'echo "rank $RANK of $WORLD_SIZE on $SLURMD_NODENAME"; sleep 4']
            resources: {limits: {nvidia.com/gpu: 8}, requests: {nvidia.com/gpu: 8}}
)";

TEST_F(LocalSlurmTest, GangOfThreeRunsAsOneSlurmAllocationOnThreeNodesAndItsEndIsMirrored) {
  ASSERT_NO_FATAL_FAILURE(create_seed_cluster(3));
  CommandResult r = cli({"apply", "-f", kExamplesDir + "propagationpolicy-gang.yaml"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  std::ofstream(dir_.file("gang.yaml")) << kGangJob;
  r = cli({"apply", "-f", dir_.file("gang.yaml")});
  ASSERT_EQ(r.exit_code, 0) << r.out;

  // One allocation of three nodes, running.
  std::string line;
  ASSERT_TRUE(eventually([&] {
    line = slurm({"squeue", "-h", "-o", "%j|%T|%D|%N"});
    return line.find("|RUNNING|3|worker-gpu-a-[1-3]") != std::string::npos;
  })) << line;
  EXPECT_EQ(line.rfind("gf-", 0), 0u) << line;
  EXPECT_EQ(std::count(line.begin(), line.end(), '\n'), 1) << "one allocation: " << line;
  EXPECT_TRUE(eventually([&] {
    return cli({"get", "pytorchjob", "gang3"}).out.find("Running") != std::string::npos;
  })) << cli({"get", "pytorchjob", "gang3"}).out;

  // It ends: the job is Succeeded, each pod's output in its log.
  ASSERT_TRUE(eventually([&] {
    return cli({"get", "pytorchjob", "gang3"}).out.find("Succeeded") != std::string::npos;
  })) << cli({"get", "pytorchjob", "gang3"}).out
      << slurm({"squeue"});
  r = cli({"logs", "gang3-worker-1"});
  EXPECT_NE(r.out.find("rank 2 of 3 on worker-gpu-a-"), std::string::npos) << r.out;

  // Deleting a running gang cancels its allocation.
  std::string again = kGangJob;
  again.replace(again.find("name: gang3"), 11, "name: gang4");
  while (again.find("sleep 4") != std::string::npos)
    again.replace(again.find("sleep 4"), 7, "sleep 300");
  std::ofstream(dir_.file("gang4.yaml")) << again;
  ASSERT_EQ(cli({"apply", "-f", dir_.file("gang4.yaml")}).exit_code, 0);
  ASSERT_TRUE(eventually([&] {
    return slurm({"squeue", "-h", "-t", "running", "-o", "%D"}).find('3') != std::string::npos;
  })) << slurm({"squeue"});
  r = cli({"delete", "pytorchjob", "gang4"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(eventually([&] {
    return slurm({"squeue", "-h", "-t", "pending,running", "-o", "%i"}).empty();
  })) << slurm({"squeue"});
}

}  // namespace
}  // namespace gf
