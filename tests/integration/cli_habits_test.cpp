// The habits each world of our users brings (docs/cli.md "Habits, theirs → ours"), through the real
// CLI against a real `serve` whose clock runs 600x (a virtual minute is 0.1 s): HyperPod's list
// filters, kubectl's output formats, selectors, namespaces, watch, dry runs, apply/delete of files
// and folders, Kueue's workloads, Slurm's sinfo/squeue/slurm.conf, shell completion, and the
// server's clock behind every relative time.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <regex>

#include "core/json.h"
#include "support/gpufleet_server.h"
#include "support/temp_dir.h"

namespace gf {
namespace {

using testing::CommandResult;
using testing::GpufleetServer;
using testing::TempDir;

const std::string& kExamples = testing::kExamplesDir;
const std::string kCluster = "my-training-cluster";

class CliHabits : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    const std::string cloud = dir_->file("cloud.json");
    std::ofstream(cloud) << R"({"launchLatency":"1m","lifecycleDuration":"1m",
      "capacity":{"ml.p5.48xlarge":16}})";
    server_ = new GpufleetServer(dir_->file("data"), {"--sim-speed", "600", "--sim-cloud", cloud});
    CommandResult r = server_->cli({"cluster", "create", "-f", kExamples + "create_cluster.json",
                                    "--wait", "--timeout", "2m"});
    created_ = r;
    server_->cli({"cluster", "wait", kCluster, "--full", "--timeout", "2m"});
  }
  static void TearDownTestSuite() {
    delete server_;
    delete dir_;
  }
  CommandResult cli(std::vector<std::string> args) const { return server_->cli(std::move(args)); }
  // The command under bash with $GPUFLEET_SERVER set (pipes, `timeout`, completion).
  CommandResult sh(const std::string& script) const {
    return testing::run_command(
        {"bash", "-c",
         "export GPUFLEET_SERVER=" + server_->url() + "; G=" + GPUFLEET_BINARY + "; " + script});
  }
  static size_t lines(const std::string& s) { return std::count(s.begin(), s.end(), '\n'); }

  static TempDir* dir_;
  static GpufleetServer* server_;
  static CommandResult created_;
};
TempDir* CliHabits::dir_ = nullptr;
GpufleetServer* CliHabits::server_ = nullptr;
CommandResult CliHabits::created_;

// --wait shows the elapsed time and an estimate, and says what a group waits for.
TEST_F(CliHabits, WaitShowsElapsedTimeAndAnEta) {
  ASSERT_EQ(created_.exit_code, 0) << created_.out;
  EXPECT_NE(created_.out.find("elapsed "), std::string::npos) << created_.out;
  EXPECT_NE(created_.out.find("cluster my-training-cluster is InService"), std::string::npos);
}

// kubectl's -o wide, -o jsonpath= and -o custom-columns=.
TEST_F(CliHabits, WideJsonPathAndCustomColumns) {
  CommandResult plain = cli({"cluster", "list"});
  EXPECT_EQ(plain.out.find("arn:gpufleet:"), std::string::npos) << plain.out;
  CommandResult wide = cli({"cluster", "list", "-o", "wide"});
  EXPECT_NE(wide.out.find("arn:gpufleet:local:000000000000:cluster/"), std::string::npos)
      << wide.out;
  CommandResult jp = cli({"cluster", "list", "-o", "jsonpath={.ClusterSummaries[*].ClusterName}"});
  EXPECT_EQ(jp.exit_code, 0);
  EXPECT_EQ(jp.out, kCluster + "\n");
  CommandResult cc = cli(
      {"node", "list", kCluster, "-o", "custom-columns=ID:.InstanceId,GROUP:.InstanceGroupName"});
  EXPECT_EQ(cc.exit_code, 0) << cc.out;
  EXPECT_EQ(cc.out.rfind("ID ", 0), 0u) << cc.out;
  EXPECT_EQ(lines(cc.out), 19u) << cc.out;  // header + 18 nodes
  CommandResult bad = cli({"cluster", "list", "-o", "jsonpath={.ClusterSummaries[}"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.out.find("-o: jsonpath:"), std::string::npos) << bad.out;
}

// HyperPod's list-clusters --name-contains and list-cluster-nodes --sort-by / creation times.
TEST_F(CliHabits, HyperPodListFilters) {
  EXPECT_NE(cli({"cluster", "list", "--name-contains", "training"}).out.find(kCluster),
            std::string::npos);
  CommandResult none = cli({"cluster", "list", "--name-contains", "nope"});
  EXPECT_EQ(none.exit_code, 0);
  EXPECT_NE(none.out.find("No resources found."), std::string::npos) << none.out;
  const std::string ids = "jsonpath={.ClusterNodeSummaries[*].InstanceId}";
  std::string asc = cli({"node", "list", kCluster, "--sort-by", "name", "-o", ids}).out;
  std::string desc =
      cli({"node", "list", kCluster, "--sort-by", "name", "--sort-order", "descending", "-o", ids})
          .out;
  EXPECT_LT(asc.substr(0, 19), desc.substr(0, 19)) << asc << "\n" << desc;
  // Creation times relative to the server's clock: all were launched within the last 30 days,
  // none before them.
  EXPECT_EQ(lines(cli({"node", "list", kCluster, "--created-after", "30d"}).out), 19u);
  EXPECT_NE(
      cli({"node", "list", kCluster, "--created-before", "30d"}).out.find("No resources found."),
      std::string::npos);
  CommandResult bad = cli({"node", "list", kCluster, "--sort-by", "age"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.out.find("--sort-by: expected name or creation-time"), std::string::npos);
}

// HyperPod's update-cluster-software: a rolling update by batch, watched to its end.
TEST_F(CliHabits, UpdateClusterSoftwareRollsByBatch) {
  CommandResult bad = cli({"cluster", "update-software", kCluster, "--batch-size", "half"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.out.find("--batch-size: expected a count (4) or a percentage (25%)"),
            std::string::npos)
      << bad.out;
  CommandResult r =
      cli({"cluster", "update-software", kCluster, "--group", "worker-gpu-a", "--batch-size", "50%",
           "--wait-interval", "1m", "--image-id", "ami-2", "--wait", "--timeout", "2m"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("Cluster my-training-cluster: SystemUpdating"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Software update to ami-2: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cluster my-training-cluster is InService"), std::string::npos) << r.out;
  EXPECT_EQ(cli({"cluster", "describe", kCluster, "-o", "jsonpath={.ImageId}"}).out, "ami-2\n");
  const std::string images =
      cli({"node", "list", kCluster, "--group", "worker-gpu-a", "-o",
           "jsonpath={range .ClusterNodeSummaries[*]}{.ImageId}{\"\\n\"}{end}"})
          .out;
  EXPECT_EQ(std::count(images.begin(), images.end(), '\n'), 16) << images;
  EXPECT_EQ(images.find("ami-2\n"), 0u) << images;
  EXPECT_EQ(images.find_first_not_of("ami-2\n"), std::string::npos) << images;
}

// Slurm users' sinfo, squeue and slurm.conf; the node list names Slurm's node names.
TEST_F(CliHabits, SinfoSqueueAndTheSlurmConf) {
  CommandResult nodes = cli({"node", "list", kCluster});
  EXPECT_NE(nodes.out.find("NODE-NAME"), std::string::npos) << nodes.out;
  EXPECT_NE(nodes.out.find("worker-gpu-a-1 "), std::string::npos) << nodes.out;
  CommandResult sinfo = cli({"sinfo", kCluster});
  ASSERT_EQ(sinfo.exit_code, 0) << sinfo.out;
  EXPECT_TRUE(std::regex_search(
      sinfo.out, std::regex(R"(gpu-training +up +infinite +16 +idle +worker-gpu-a-\[1-16\])")))
      << sinfo.out;
  CommandResult squeue = cli({"squeue", kCluster});
  EXPECT_EQ(squeue.exit_code, 0) << squeue.out;
  const std::string conf = dir_->file("slurm.conf");
  std::ofstream(conf) << "ClusterName=ml\nSlurmctldHost=ctl # by hand\n";
  CommandResult merged = cli({"cluster", "slurm-conf", kCluster, "-f", conf});
  ASSERT_EQ(merged.exit_code, 0) << merged.out;
  EXPECT_EQ(merged.out.rfind("ClusterName=ml\nSlurmctldHost=ctl # by hand\n", 0), 0u) << merged.out;
  EXPECT_NE(merged.out.find("PartitionName=gpu-training Nodes=worker-gpu-a-[1-16]"),
            std::string::npos)
      << merged.out;
  CommandResult native = cli({"sinfo", "nope"});
  EXPECT_EQ(native.exit_code, 1);
  EXPECT_NE(native.out.find("cluster \"nope\" not found"), std::string::npos);
}

// kubectl apply -f DIR, Kueue's workloads, -A, -l, and the server's clock in AGE.
TEST_F(CliHabits, KueueFolderWorkloadsNamespacesSelectorsAndAges) {
  CommandResult applied = cli({"apply", "-f", kExamples + "kueue"});
  ASSERT_EQ(applied.exit_code, 0) << applied.out;
  for (const char* want : {"resourceflavor/h100 ", "clusterqueue/team-a ", "localqueue/user-queue ",
                           "propagationpolicy/team-a-gangs ", "pytorchjob/llm-pretrain "}) {
    EXPECT_NE(applied.out.find(want), std::string::npos) << want << "\n" << applied.out;
  }
  CommandResult wl;
  for (int i = 0; i < 200; ++i) {  // the scheduler admits it within a pass or two
    wl = cli({"get", "workloads"});
    if (std::regex_search(wl.out,
                          std::regex(R"(llm-pretrain +PyTorchJob +team-a/user-queue +True)")))
      break;
  }
  EXPECT_TRUE(std::regex_search(
      wl.out, std::regex(R"(llm-pretrain +PyTorchJob +team-a/user-queue +True +False +RUNNING)")))
      << wl.out;
  CommandResult all = cli({"get", "pytorchjob", "-A"});
  EXPECT_TRUE(std::regex_search(all.out, std::regex(R"(NAMESPACE +NAME +STATE +AGE)"))) << all.out;
  EXPECT_TRUE(std::regex_search(all.out, std::regex(R"(team-a +llm-pretrain +Running)")))
      << all.out;
  EXPECT_NE(cli({"get", "pytorchjob", "-A", "-l", "kueue.x-k8s.io/queue-name=user-queue"})
                .out.find("llm-pretrain"),
            std::string::npos);
  CommandResult unmatched =
      cli({"get", "pytorchjob", "-A", "-l", "kueue.x-k8s.io/queue-name!=user-queue"});
  EXPECT_NE(unmatched.out.find("No resources found."), std::string::npos) << unmatched.out;
  CommandResult bad = cli({"get", "pytorchjob", "-l", "a=b c"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.out.find("-l: \"a=b c\""), std::string::npos) << bad.out;
  // Issue regression: AGE was 0s on a sped-up server (the client's clock). A real second is ten
  // server minutes here, so the job's age reads in minutes or hours.
  sh("sleep 1");
  CommandResult aged = cli({"get", "pytorchjob", "llm-pretrain", "-n", "team-a"});
  EXPECT_TRUE(std::regex_search(aged.out, std::regex(R"(llm-pretrain +Running +[0-9]+[mh])")))
      << aged.out;
}

// --dry-run=server validates and answers and changes nothing; delete -f removes what a file
// applied.
TEST_F(CliHabits, DryRunsAndDeleteFromAFile) {
  const std::string policy = kExamples + "propagationpolicy-gang.yaml";
  CommandResult dry = cli({"apply", "-f", policy, "--dry-run=server"});
  ASSERT_EQ(dry.exit_code, 0) << dry.out;
  EXPECT_NE(dry.out.find("(server dry run)"), std::string::npos) << dry.out;
  EXPECT_EQ(cli({"get", "propagationpolicy", "-A"}).out.find("default "), std::string::npos)
      << "a dry run created nothing";
  ASSERT_EQ(cli({"apply", "-f", policy}).exit_code, 0);
  CommandResult dry_delete = cli({"delete", "-f", policy, "--dry-run=server"});
  EXPECT_EQ(dry_delete.exit_code, 0) << dry_delete.out;
  EXPECT_NE(dry_delete.out.find("deleted (server dry run)"), std::string::npos);
  EXPECT_NE(cli({"get", "propagationpolicy", "-n", "default"}).out.find("default"),
            std::string::npos)
      << "still there";
  CommandResult deleted = cli({"delete", "-f", policy});
  EXPECT_EQ(deleted.exit_code, 0) << deleted.out;
  EXPECT_NE(deleted.out.find("propagationpolicy/"), std::string::npos) << deleted.out;
  // A refused dry run is refused as the real request would be; an accepted one creates nothing.
  CommandResult refused =
      cli({"cluster", "create", "-f", kExamples + "create_cluster.json", "--dry-run=server"});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.out.find("already exists"), std::string::npos) << refused.out;
  CommandResult other =
      cli({"cluster", "create", "-f", kExamples + "demo-g5-cluster.json", "--dry-run=server"});
  EXPECT_EQ(other.exit_code, 0) << other.out;
  EXPECT_NE(other.out.find("(server dry run)"), std::string::npos) << other.out;
  EXPECT_EQ(cli({"cluster", "list"}).out.find("shared-g5"), std::string::npos);
  CommandResult bad = cli({"apply", "-f", policy, "--dry-run=client"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.out.find("--dry-run: expected server or none"), std::string::npos);
}

// events --follow and get -w keep printing until stopped; a changed AGE is no change.
TEST_F(CliHabits, FollowAndWatchPrintTheListThenWhatChanges) {
  CommandResult follow = sh("timeout 3 $G events " + kCluster + " --follow --max 5");
  EXPECT_EQ(follow.exit_code, 124) << follow.out;  // stopped by timeout, not an error
  EXPECT_EQ(follow.out.rfind("TIME ", 0), 0u) << follow.out;
  EXPECT_GE(lines(follow.out), 6u) << follow.out;
  CommandResult watch = sh("timeout 3 $G get clusterqueues -w; $G apply -f " + kExamples +
                           "kueue/kueue-setup.yaml >/dev/null; timeout 5 $G get clusterqueues -w");
  // Once they exist: the two ClusterQueues, shown once each although their AGE moves every poll
  // (ten server minutes a real second).
  const size_t at = watch.out.rfind("NAME ");
  ASSERT_NE(at, std::string::npos) << watch.out;
  EXPECT_EQ(lines(watch.out.substr(at)), 3u) << watch.out;
}

// `gpufleet completion bash` completes commands, flags and (from the server) cluster names.
TEST_F(CliHabits, ShellCompletionFromTheCommandTree) {
  // What bash does on TAB: the words typed so far, the last one being completed.
  auto complete = [&](const std::string& words) {
    return sh("source <($G completion bash); COMP_WORDS=($G " + words +
              "); COMP_CWORD=$((${#COMP_WORDS[@]}-1)); _gpufleet; echo \"${COMPREPLY[*]}\"");
  };
  CommandResult top = complete("clu");
  EXPECT_EQ(top.exit_code, 0) << top.out;
  EXPECT_EQ(top.out, "cluster\n");
  CommandResult sub = complete("cluster ''");
  for (const char* want : {"create", "describe", "slurm-conf", "list"})
    EXPECT_NE(sub.out.find(want), std::string::npos) << want << ": " << sub.out;
  CommandResult name = complete("cluster describe my");
  EXPECT_EQ(name.out, kCluster + "\n");
  CommandResult flag = complete("node list --so");
  EXPECT_NE(flag.out.find("--sort-by"), std::string::npos) << flag.out;
  CommandResult zsh = cli({"completion", "zsh"});
  EXPECT_NE(zsh.out.find("bashcompinit"), std::string::npos);
  EXPECT_EQ(cli({"completion", "fish"}).exit_code, 2);
}

}  // namespace
}  // namespace gf
