// A real Slurm cluster on the local cloud for integration tests (docs/slurm.md): a real `serve
// --cloud local` whose controller node's agent runs munged and slurmctld and whose workers' agents
// run `slurmd -N`. Tests read Slurm with its own client tools (SLURM_CONF of that cluster) and
// submit to it as a user would; every agent the test caused is stopped by its pid file (the
// daemons die with their agents). Every wait is bounded.
#pragma once

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "core/json.h"
#include "os/process.h"
#include "support/eventually.h"
#include "support/gpufleet_server.h"
#include "support/temp_dir.h"

namespace gf::testing {

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

constexpr const char* kOnCreate = R"(#!/bin/bash
echo "on_create ran on $GPUFLEET_NODE_ID of $GPUFLEET_INSTANCE_GROUP"
)";

class LocalSlurmTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists("/usr/sbin/slurmctld") ||
        !std::filesystem::exists("/usr/sbin/munged"))
      GTEST_SKIP() << "Slurm is not installed (scripts/setup installs it)";
    root_ = dir_.file(local_root_name());
    std::filesystem::create_directories(root_);
    const std::string scripts = dir_.file("bucket/lifecycle-scripts/src");
    std::filesystem::create_directories(scripts);
    std::ofstream(scripts + "/on_create.sh") << kOnCreate;
    server_ = std::make_unique<GpufleetServer>(
        dir_.file("data"),
        std::vector<std::string>{"--cloud", "local", "--local-root", root_, "--local-capacity",
                                 "ml.p5.48xlarge=10", "--lifecycle-root",
                                 "s3://amzn-s3-demo-bucket=" + dir_.file("bucket"),
                                 "--heartbeat-interval", "1s", "--rejoin-check", "2s",
                                 "--retry-base", "1s", "--retry-max", "4s", "--no-fsync"});
    ASSERT_FALSE(server_->url().empty()) << server_->process().output();
  }

  void TearDown() override {
    if (!server_) return;
    if (std::filesystem::exists(conf())) (void)slurm({"scancel", "--full", "--me"});
    server_->process().signal(SIGKILL);
    server_->process().wait();
    for (const std::filesystem::path& base :
         {std::filesystem::path(root_), std::filesystem::path(root_) / "terminated"}) {
      std::error_code ec;
      for (const auto& e : std::filesystem::directory_iterator(base, ec)) {
        const std::string id = e.path().filename().string();
        auto pid = os::read_pid_file((e.path() / "agent.pid").string());
        if (pid && os::alive(*pid, id)) os::signal(*pid, SIGKILL);
      }
    }
    // Whatever the cluster's daemons left (docs/slurm.md "Nothing outlives its cluster").
    (void)os::kill_processes_with_environment("GPUFLEET_SLURM_DIR=" + slurm_dir());
  }

  std::string slurm_dir() const { return root_ + "/slurm/my-training-cluster"; }
  // The pid, on this machine, of the slurmd of Slurm node `name` of the cluster.
  std::optional<pid_t> slurmd_pid(const std::string& name) const {
    const std::string want = std::string("slurmd") + '\0' + "-D" + '\0' + "-N" + '\0' + name + '\0';
    for (pid_t p : os::processes_with_environment("GPUFLEET_SLURM_DIR=" + slurm_dir())) {
      if (slurp("/proc/" + std::to_string(p) + "/cmdline") == want) return p;
    }
    return std::nullopt;
  }
  // The processes of the cluster, found as a person would: by their tree (a daemon of the
  // cluster and everything under it) and by the cluster's directories (a command line, working
  // directory or environment that names the local root; the server itself aside).
  std::vector<std::string> cluster_processes() const {
    std::vector<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator("/proc")) {
      const std::string pid = e.path().filename().string();
      if (pid.find_first_not_of("0123456789") != std::string::npos || std::stoi(pid) == ::getpid())
        continue;
      std::string cmdline = slurp(e.path() / "cmdline");
      for (char& c : cmdline)
        if (c == '\0') c = ' ';
      std::error_code ec;
      const std::string cwd = std::filesystem::read_symlink(e.path() / "cwd", ec).string();
      const std::string env = slurp(e.path() / "environ");
      const bool ours = cmdline.find(root_) != std::string::npos || cwd.rfind(root_, 0) == 0 ||
                        env.find(root_) != std::string::npos ||
                        (cmdline.find("slurmstepd") != std::string::npos &&
                         env.find(slurm_dir()) != std::string::npos);
      const bool server = std::stoi(pid) == server_->process().pid();
      if (ours && !server && !cmdline.empty()) out.push_back(pid + " " + cmdline);
    }
    for (pid_t p : os::processes_with_environment("GPUFLEET_SLURM_DIR=" + slurm_dir())) {
      const std::string line = std::to_string(p) + " (tree of a daemon of the cluster)";
      if (std::none_of(out.begin(), out.end(), [&](const std::string& o) {
            return o.rfind(std::to_string(p) + " ", 0) == 0;
          }))
        out.push_back(line);
    }
    return out;
  }

  // The local cloud's root under the test's directory (a test of long paths makes it long).
  virtual std::string local_root_name() const { return "local"; }

  CommandResult cli(std::vector<std::string> args) const { return server_->cli(std::move(args)); }
  // The seed cluster with `workers` workers instead of 16, up with all of them idle in Slurm.
  void create_seed_cluster(int workers) {
    Json c = Json::parse(slurp(kExamplesDir + "create_cluster.json"));
    for (Json& g : c["InstanceGroups"]) {
      if (g["InstanceGroupName"] == "worker-gpu-a") g["InstanceCount"] = workers;
    }
    std::ofstream(dir_.file("cluster.json")) << c.dump(2);
    ASSERT_EQ(cli({"cluster", "create", "-f", dir_.file("cluster.json")}).exit_code, 0);
    ASSERT_TRUE(eventually([&] { return idle_workers() == workers; }, std::chrono::seconds(120)))
        << slurm({"sinfo"});
  }
  std::string conf() const { return root_ + "/slurm/my-training-cluster/slurm.conf"; }

  // A Slurm client tool run against the cluster's controller; what it printed.
  std::string slurm(std::vector<std::string> argv) const {
    os::SpawnOptions o;
    o.argv = std::move(argv);
    o.env = {{"SLURM_CONF", conf()}};
    auto out = os::run(o, std::chrono::seconds(20));
    return out.ok() ? out->out : out.status().to_string();
  }
  int idle_workers() const {
    const std::string out = slurm({"sinfo", "-h", "-p", "gpu-training", "-t", "idle", "-o", "%D"});
    try {
      return out.empty() ? 0 : std::stoi(out);
    } catch (const std::exception&) {
      return -1;
    }
  }
  // The worker instance whose Slurm name is `slurm_name`, and the other way round.
  Json workers() const {
    Json out = Json::array();
    for (const Json& n : server_->get("/v1/clusters/my-training-cluster/nodes")
                             .value("ClusterNodeSummaries", Json::array())) {
      if (n.value("InstanceGroupName", "") == "worker-gpu-a" &&
          n["InstanceStatus"].value("Status", "") == "Running")
        out.push_back(n);
    }
    return out;
  }
  std::string node_line(const std::string& slurm_name) const {
    return slurm({"scontrol", "show", "node", slurm_name, "-o"});
  }

  TempDir dir_;
  std::string root_;
  std::unique_ptr<GpufleetServer> server_;
};

}  // namespace gf::testing
