// The local cloud (docs/local-cloud.md) with real processes: a real `serve --cloud local` whose
// instances are real `gpufleet agent` processes that run real lifecycle scripts and real pods.
// Every wait is bounded (a broken build fails, it does not hang); the waits poll real processes,
// which run in real time. Each test kills the agents it caused by their pid files at the end.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "core/json.h"
#include "core/time.h"
#include "os/process.h"
#include "support/eventually.h"
#include "support/gpufleet_server.h"
#include "support/temp_dir.h"

namespace gf {
namespace {

namespace fs = std::filesystem;
using testing::CommandResult;
using testing::eventually;
using testing::GpufleetServer;
using testing::kExamplesDir;
using testing::parse_out;
using testing::TempDir;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Processes whose command line is exactly `argv` (the pods of a test are told apart by it).
int processes_running(const std::vector<std::string>& argv) {
  std::string want;
  for (const std::string& a : argv) want += a + '\0';
  int n = 0;
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string pid = e.path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    if (slurp("/proc/" + pid + "/cmdline") == want && os::alive(std::stoi(pid))) ++n;
  }
  return n;
}

// The pids of the processes whose command line is exactly `argv`.
std::vector<pid_t> pids_of(const std::vector<std::string>& argv) {
  std::string want;
  for (const std::string& a : argv) want += a + '\0';
  std::vector<pid_t> out;
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string pid = e.path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    if (slurp("/proc/" + pid + "/cmdline") == want) out.push_back(std::stoi(pid));
  }
  return out;
}

// A process's open descriptors: number → what it names ("socket:[123]", a path).
std::map<int, std::string> open_descriptors(pid_t pid) {
  std::map<int, std::string> out;
  std::error_code ec;
  const std::string dir = "/proc/" + std::to_string(pid) + "/fd";
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    std::error_code link_ec;
    out[std::stoi(e.path().filename().string())] = fs::read_symlink(e.path(), link_ec).string();
  }
  return out;
}

// Whether descriptor `fd` of `pid` is close-on-exec (its fdinfo's flags, octal, hold O_CLOEXEC).
bool close_on_exec(pid_t pid, int fd) {
  std::istringstream in(slurp("/proc/" + std::to_string(pid) + "/fdinfo/" + std::to_string(fd)));
  for (std::string key, value; in >> key >> value;) {
    if (key == "flags:") return (std::stoul(value, nullptr, 8) & O_CLOEXEC) != 0;
  }
  return false;
}

// The socket inode listening on 127.0.0.1:`port` ("socket:[N]"), from /proc/net/tcp.
std::string listening_socket(int port) {
  std::istringstream in(slurp("/proc/net/tcp"));
  std::string line;
  std::getline(in, line);  // the header
  char local[64];
  std::snprintf(local, sizeof local, "0100007F:%04X", port);
  while (std::getline(in, line)) {
    std::istringstream row(line);
    std::string slot, addr, remote, state, queues, timer, retransmits, uid, timeout, inode;
    row >> slot >> addr >> remote >> state >> queues >> timer >> retransmits >> uid >> timeout >>
        inode;
    if (addr == local && state == "0A") return "socket:[" + inode + "]";
  }
  return "";
}

// The lifecycle script every node of these tests runs: it leaves a marker in its node's
// directory, and its output goes to the node's lifecycle log.
constexpr const char* kOnCreate = R"(#!/bin/bash
set -e
echo "on_create ran on $GPUFLEET_NODE_ID of $GPUFLEET_INSTANCE_GROUP in $GPUFLEET_CLUSTER_NAME"
echo "$GPUFLEET_NODE_ID" > "$GPUFLEET_NODE_DIR/lifecycle-marker"
)";

// Fails twice, then succeeds: the count is kept beside the script (the attempts are different
// instances with different directories).
constexpr const char* kFlaky = R"(#!/bin/bash
n=$(cat "$(dirname "$0")/attempts" 2>/dev/null || echo 0)
echo $((n + 1)) > "$(dirname "$0")/attempts"
sleep 1
if [ "$n" -lt 2 ]; then echo "attempt $((n + 1)) fails"; exit 1; fi
echo "attempt $((n + 1)) works"
)";

class LocalCloudTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = dir_.file("local");
    const std::string scripts = dir_.file("bucket/lifecycle-scripts/src");
    fs::create_directories(scripts);
    std::ofstream(scripts + "/on_create.sh") << kOnCreate;
    std::ofstream(scripts + "/flaky.sh") << kFlaky;
    start_server();
  }

  // `extra`: more flags (a test that needs them restarts the server before it creates anything).
  void start_server(const std::string& capacity = "ml.p5.48xlarge=2",
                    const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args{"--cloud",
                                  "local",
                                  "--local-root",
                                  root_,
                                  "--local-capacity",
                                  capacity,
                                  "--lifecycle-root",
                                  "s3://amzn-s3-demo-bucket=" + dir_.file("bucket"),
                                  "--heartbeat-interval",
                                  "1s",
                                  "--rejoin-check",
                                  "2s",
                                  "--retry-base",
                                  "1s",
                                  "--retry-max",
                                  "2s",
                                  "--no-fsync"};
    args.insert(args.end(), extra.begin(), extra.end());
    server_ = std::make_unique<GpufleetServer>(dir_.file("data"), args);
    ASSERT_FALSE(server_->url().empty()) << server_->process().output();
  }
  void restart_server(const std::string& capacity, const std::vector<std::string>& extra) {
    server_->process().signal(SIGKILL);
    server_->process().wait();
    start_server(capacity, extra);
  }

  void TearDown() override {
    if (server_) {
      server_->process().signal(SIGKILL);
      server_->process().wait();
    }
    // The agents outlive serve by design: stop every one this test caused (their pods die with
    // them), found by their pid files.
    for (const fs::path& base : {fs::path(root_), fs::path(root_) / "terminated"}) {
      std::error_code ec;
      for (const auto& e : fs::directory_iterator(base, ec)) {
        const std::string id = e.path().filename().string();
        auto pid = os::read_pid_file((e.path() / "agent.pid").string());
        if (pid && os::alive(*pid, id)) os::signal(*pid, SIGKILL);
      }
    }
  }

  CommandResult cli(std::vector<std::string> args) const { return server_->cli(std::move(args)); }

  // A Native cluster in the seed's create_cluster.json shape: its groups and lifecycle config as
  // written, the Slurm parts left out, `workers` workers.
  std::string seed_native_cluster(int workers, const std::string& on_create = "on_create.sh") {
    Json c = Json::parse(slurp(kExamplesDir + "create_cluster.json"));
    c["Orchestrator"] = Json{{"Native", Json::object()}};
    for (Json& g : c["InstanceGroups"]) {
      g.erase("SlurmConfig");
      g["LifeCycleConfig"]["OnCreate"] = on_create;
      if (g["InstanceGroupName"] == "worker-gpu-a") g["InstanceCount"] = workers;
    }
    const std::string path = dir_.file("cluster.json");
    std::ofstream(path) << c.dump(2);
    return path;
  }

  // One group of `n` ml.p5.48xlarge workers.
  std::string workers_cluster(int n, const std::string& on_create = "on_create.sh") {
    Json c{{"ClusterName", "local"},
           {"NodeProvisioningMode", "Continuous"},
           {"Orchestrator", {{"Native", Json::object()}}},
           {"InstanceGroups",
            Json::array({{{"InstanceGroupName", "workers"},
                          {"InstanceType", "ml.p5.48xlarge"},
                          {"InstanceCount", n},
                          {"ExecutionRole", "arn:aws:iam::111122223333:role/r"},
                          {"LifeCycleConfig",
                           {{"SourceS3Uri", "s3://amzn-s3-demo-bucket/lifecycle-scripts/src/"},
                            {"OnCreate", on_create}}}}})}};
    const std::string path = dir_.file("workers.json");
    std::ofstream(path) << c.dump(2);
    return path;
  }

  Json cluster(const std::string& name) const { return server_->get("/v1/clusters/" + name); }
  int current(const std::string& cluster_name, const std::string& group) const {
    for (const Json& g : cluster(cluster_name).value("InstanceGroups", Json::array())) {
      if (g.value("InstanceGroupName", "") == group) return g.value("CurrentCount", 0);
    }
    return -1;
  }
  Json nodes(const std::string& cluster_name) const {
    return server_->get("/v1/clusters/" + cluster_name + "/nodes")
        .value("ClusterNodeSummaries", Json::array());
  }
  std::vector<std::string> running_nodes(const std::string& cluster_name,
                                         const std::string& group = "") const {
    std::vector<std::string> out;
    for (const Json& n : nodes(cluster_name)) {
      if (n["InstanceStatus"].value("Status", "") == "Running" &&
          (group.empty() || n.value("InstanceGroupName", "") == group))
        out.push_back(n.value("InstanceId", ""));
    }
    return out;
  }
  std::vector<std::string> event_texts(const std::string& cluster_name) const {
    std::vector<std::string> out;
    Json page = server_->get("/v1/clusters/" + cluster_name + "/events?MaxResults=100");
    for (const Json& e : page.value("Events", Json::array()))
      out.push_back(e.value("Description", ""));
    return out;
  }
  int events_containing(const std::string& cluster_name, const std::string& text) const {
    int n = 0;
    for (const std::string& e : event_texts(cluster_name)) n += e.find(text) != std::string::npos;
    return n;
  }
  std::string node_dir(const std::string& id) const { return root_ + "/" + id; }
  pid_t agent_pid(const std::string& id) const {
    return os::read_pid_file(node_dir(id) + "/agent.pid").value_or(0);
  }

  // The seed's PyTorchJob with `sleep 1h` made `sleep <seconds>`, applied with the seed's
  // PropagationPolicy. `restartable`: its master's restartPolicy made OnFailure, so the loss of
  // its node requeues the job (with the seed's Never, losing the master's node fails the job, as
  // the training operator does).
  void apply_seed_job(const std::string& seconds, bool restartable = false) {
    std::string job = slurp(kExamplesDir + "pytorchjob.yaml");
    job = std::regex_replace(job, std::regex("sleep 1h"), "sleep " + seconds);
    if (restartable) {
      job = std::regex_replace(job, std::regex("restartPolicy: Never"), "restartPolicy: OnFailure");
    }
    std::ofstream(dir_.file("job.yaml")) << job;
    CommandResult r = cli({"apply", "-f", kExamplesDir + "propagationpolicy-gang.yaml"});
    ASSERT_EQ(r.exit_code, 0) << r.out;
    r = cli({"apply", "-f", dir_.file("job.yaml")});
    ASSERT_EQ(r.exit_code, 0) << r.out;
  }
  Json pods() const {
    return server_->get("/v1/objects/pods?namespace=default").value("items", Json::array());
  }
  // The nodes the seed job's pods are bound to now.
  std::set<std::string> job_nodes() const {
    std::set<std::string> out;
    for (const Json& p : pods()) {
      if (p["metadata"].value("name", "").rfind("pytorch-test-", 0) == 0 &&
          p["spec"].contains("nodeName"))
        out.insert(p["spec"].value("nodeName", ""));
    }
    return out;
  }

  // The first remediation of `node` once it has Succeeded (waited for, at most 90 s), else
  // whatever it is by then.
  Json succeeded_remediation(const std::string& node) const {
    Json rem;
    eventually(
        [&] {
          const Json list =
              server_->get("/v1/remediations?node=" + node).value("Remediations", Json::array());
          if (list.empty()) return false;
          rem = list[0];
          return rem.value("Status", "") == "Succeeded";
        },
        std::chrono::seconds(90));
    return rem;
  }
  // Appends an Xid 79 line to `node`'s kernel log, as the GPU would write it.
  void inject_xid79(const std::string& node) const {
    std::ofstream(node_dir(node) + "/kern.log", std::ios::app)
        << "Dec  2 06:03:28 node kernel: NVRM: Xid (PCI:0000:53:00): 79, pid=1234, name=python, "
           "GPU has fallen off the bus.\n";
  }

  TempDir dir_;
  std::string root_;
  std::unique_ptr<GpufleetServer> server_;
};

TEST_F(LocalCloudTest, SeedClusterRunsLifecycleScriptsTakesPartialCapacityAndBillsAgentTimes) {
  // Room for 2 of the 4 workers asked: the rest come when the limit is raised at run time.
  CommandResult r = cli({"cluster", "create", "-f", seed_native_cluster(4)});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const std::string name = "my-training-cluster";
  ASSERT_TRUE(eventually([&] {
    return cluster(name).value("ClusterStatus", "") == "InService" &&
           running_nodes(name).size() == 4;  // controller, login, 2 workers
  })) << cluster(name).dump();
  EXPECT_EQ(current(name, "worker-gpu-a"), 2);
  EXPECT_TRUE(eventually([&] { return events_containing(name, "sufficient capacity") > 0; }));

  // The script ran on each node, as that node.
  for (const std::string& id : running_nodes(name)) {
    EXPECT_EQ(slurp(node_dir(id) + "/lifecycle-marker"), id + "\n") << id;
    r = cli({"node", "describe", name, id});
    EXPECT_NE(r.out.find("Directory:"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(node_dir(id)), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("Address:"), std::string::npos) << r.out;
    r = cli({"node", "logs", name, id});
    EXPECT_EQ(r.exit_code, 0) << r.out;
    EXPECT_NE(r.out.find("on_create ran on " + id), std::string::npos) << r.out;
  }

  std::ofstream(root_ + "/capacity.json") << R"({"ml.p5.48xlarge": 4})";
  ASSERT_TRUE(eventually([&] { return current(name, "worker-gpu-a") == 4; }))
      << cluster(name).dump();

  // Billing runs from the time each agent reported it started, to now.
  const Json bill = server_->get("/v1/billing?cluster=" + name + "&groupBy=instance");
  auto to = parse_iso8601(bill.value("To", ""));
  ASSERT_TRUE(to.ok()) << bill.dump();
  int billed = 0;
  for (const Json& item : bill.value("Items", Json::array())) {
    const std::string id = item.value("InstanceId", "");
    const Json state = Json::parse(slurp(node_dir(id) + "/agent.state"), nullptr, false);
    if (!state.is_object() || !state.contains("RegisteredUs")) continue;  // failed launches
    const Time started = from_micros(state["RegisteredUs"].get<int64_t>());
    const int64_t expected = (*to - started).count() / 1'000'000;
    EXPECT_NEAR(item.value("BilledSeconds", int64_t{-1}), expected, 1) << item.dump();
    ++billed;
  }
  EXPECT_EQ(billed, 6);
}

TEST_F(LocalCloudTest, SeedPyTorchJobRunsAsThreeProcessesOnOneClusterUntilDeleted) {
  ASSERT_EQ(cli({"cluster", "create", "-f", workers_cluster(1)}).exit_code, 0);
  ASSERT_TRUE(eventually([&] { return running_nodes("local").size() == 1; }));
  apply_seed_job("711");
  const std::vector<std::string> sleeping = {"sleep", "711"};
  ASSERT_TRUE(eventually([&] { return processes_running(sleeping) == 3; }))
      << processes_running(sleeping) << " running; pods: " << pods().dump();

  CommandResult r;
  ASSERT_TRUE(eventually([&] {
    r = cli({"logs", "pytorch-test-worker-1"});
    return r.exit_code == 0 && r.out == "1\n";
  })) << r.out;
  r = cli({"logs", "pytorch-test-worker-0"});
  EXPECT_EQ(r.out, "0\n");

  std::set<std::string> clusters;
  for (const Json& p : pods()) clusters.insert(p["spec"].value("clusterName", ""));
  EXPECT_EQ(clusters, std::set<std::string>{"local"});
  EXPECT_TRUE(eventually([&] {
    for (const Json& p : pods()) {
      if (p["status"].value("phase", "") != "Running") return false;
    }
    return pods().size() == 3;
  })) << pods().dump();
  r = cli({"describe", "pytorchjob", "pytorch-test"});
  EXPECT_NE(r.out.find("recorded, not pulled"), std::string::npos) << r.out;

  r = cli({"delete", "pytorchjob", "pytorch-test"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(eventually([&] { return processes_running(sleeping) == 0; }))
      << processes_running(sleeping) << " still running";
}

// docs/scheduling.md "Topology": with --local-topology each accelerated instance is labelled
// with EC2's network layers when its agent reports that it started, blocks filled in launch order.
TEST_F(LocalCloudTest, TopologyLabelsEachInstanceByBlockInLaunchOrder) {
  restart_server("ml.p5.48xlarge=3", {"--local-topology", "2x1"});
  ASSERT_EQ(cli({"cluster", "create", "-f", workers_cluster(3)}).exit_code, 0);
  ASSERT_TRUE(eventually([&] { return running_nodes("local").size() == 3; }));
  std::map<std::string, int> per_block;
  for (const Json& n : nodes("local")) {
    const Json labels = n.value("Labels", Json::object());
    EXPECT_EQ(labels.value("topology.k8s.aws/network-node-layer-1", ""), "nn-local") << n.dump();
    per_block[labels.value("topology.k8s.aws/network-node-layer-3", "")] += 1;
  }
  EXPECT_EQ(per_block, (std::map<std::string, int>{{"nn-local-b0", 2}, {"nn-local-b1", 1}}));
}

TEST_F(LocalCloudTest, XidLineInAWorkersKernelLogRebootsThatAgentThroughTheWholeTimeline) {
  ASSERT_EQ(cli({"cluster", "create", "-f", workers_cluster(2)}).exit_code, 0);
  ASSERT_TRUE(eventually([&] { return running_nodes("local").size() == 2; }));
  // The detector's reboot (not the usual fix, a migrate) after the wait for idle (the Xid line is
  // injected; the pod runs on): this test follows the whole timeline of a reboot.
  std::ofstream(dir_.file("policy.yaml")) << "AlertPersistence: 1s\nWaitForIdle: {MaxWait: 2s, "
                                             "FatalFaults: Wait}\nUsualFixFirst: false\n";
  CommandResult r = cli({"policy", "set", "local", "-f", dir_.file("policy.yaml")});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  apply_seed_job("712", true);
  const std::vector<std::string> sleeping = {"sleep", "712"};
  ASSERT_TRUE(eventually([&] { return processes_running(sleeping) == 3; }));
  ASSERT_EQ(job_nodes().size(), 1u);
  const std::string node = *job_nodes().begin();
  const pid_t before = agent_pid(node);

  inject_xid79(node);

  const Json rem = succeeded_remediation(node);
  ASSERT_EQ(rem.value("Status", ""), "Succeeded") << rem.dump();
  EXPECT_EQ(rem["Fault"], "xid:79");
  EXPECT_EQ(rem["EffectiveAction"], "reboot");
  // Cordon → wait (up to MaxWait) → evict → act → rejoin, in that order.
  r = cli({"remediation", "describe", rem.value("RemediationId", "")});
  size_t at = 0;
  for (const char* step : {"WaitingForIdle", "Draining: max wait reached", "Executing",
                           "Rejoining: agent restarted", "Succeeded"}) {
    const size_t found = r.out.find(step, at);
    ASSERT_NE(found, std::string::npos) << step << " after offset " << at << ":\n" << r.out;
    at = found;
  }
  // A reboot: a new agent process, the node's directory kept.
  const pid_t after = agent_pid(node);
  EXPECT_NE(after, before);
  EXPECT_TRUE(os::alive(after, node));
  EXPECT_EQ(slurp(node_dir(node) + "/lifecycle-marker"), node + "\n");
  // Its gang came down whole and runs again on the other node.
  EXPECT_TRUE(eventually([&] {
    return processes_running(sleeping) == 3 && job_nodes().size() == 1 &&
           !job_nodes().contains(node);
  })) << processes_running(sleeping)
      << " running\n"
      << server_->get("/v1/objects/pytorchjobs/default/pytorch-test").dump();
}

TEST_F(LocalCloudTest, KilledBusyAgentsJobRunsAgainOnAnotherNode) {
  ASSERT_EQ(cli({"cluster", "create", "-f", workers_cluster(2)}).exit_code, 0);
  ASSERT_TRUE(eventually([&] { return running_nodes("local").size() == 2; }));
  std::ofstream(dir_.file("policy.yaml")) << "AlertPersistence: 1s\n";
  ASSERT_EQ(cli({"policy", "set", "local", "-f", dir_.file("policy.yaml")}).exit_code, 0);
  apply_seed_job("713", true);
  const std::vector<std::string> sleeping = {"sleep", "713"};
  ASSERT_TRUE(eventually([&] { return processes_running(sleeping) == 3; }));
  const std::string node = *job_nodes().begin();

  ::kill(agent_pid(node), SIGKILL);  // its pods die with it

  EXPECT_TRUE(eventually(
      [&] {
        return processes_running(sleeping) == 3 && job_nodes().size() == 1 &&
               !job_nodes().contains(node);
      },
      std::chrono::seconds(90)))
      << processes_running(sleeping) << " running\n"
      << server_->get("/v1/objects/pytorchjobs/default/pytorch-test").dump();
  const Json alerts = server_->get("/v1/alerts?node=" + node).value("Alerts", Json::array());
  ASSERT_FALSE(alerts.empty());
  EXPECT_EQ(alerts[0]["Detector"], "host-reachability");
  const Json job = server_->get("/v1/objects/pytorchjobs/default/pytorch-test");
  EXPECT_GE(job["status"].value("restartCount", 0), 1) << job.dump();
}

TEST_F(LocalCloudTest, LifecycleScriptFailingTwiceThenSucceedingBillsTwoFailedAttempts) {
  ASSERT_EQ(cli({"cluster", "create", "-f", workers_cluster(1, "flaky.sh")}).exit_code, 0);
  ASSERT_TRUE(
      eventually([&] { return running_nodes("local").size() == 1; }, std::chrono::seconds(90)))
      << nodes("local").dump();
  EXPECT_EQ(events_containing("local", "lifecycle script execution for EC2 Instance"), 3);
  EXPECT_EQ(events_containing("local", "has failed"), 2);
  const Json bill = server_->get("/v1/billing?cluster=local&groupBy=instance");
  const std::string up = running_nodes("local").front();
  int failed = 0;
  for (const Json& item : bill.value("Items", Json::array())) {
    if (item.value("InstanceId", "") == up) continue;
    ++failed;
    // Billed for the script's run (a second's sleep), as the agent reported it; not until the
    // replacement was noticed.
    EXPECT_GE(item.value("BilledSeconds", int64_t{-1}), 1) << item.dump();
    EXPECT_LE(item.value("BilledSeconds", int64_t{-1}), 3) << item.dump();
  }
  EXPECT_EQ(failed, 2) << bill.dump();
  CommandResult r = cli({"node", "logs", "local", up});
  EXPECT_NE(r.out.find("attempt 3 works"), std::string::npos) << r.out;
}

// Migrate: the node comes back on another host; the old host's burn-in runs each check's command,
// and a failing one sends it to repair with a ticket that carries the checks' output.
TEST_F(LocalCloudTest, MigrateMovesTheNodeToANewHostAndAFailingBurnInOpensATicketWithItsOutput) {
  restart_server("ml.p5.48xlarge=3",
                 {"--burn-in-check", "gpu=echo \"gpu fine on $GPUFLEET_HOST_ID\"",
                  "--burn-in-check", "nccl=echo 'nccl all_reduce 12 GB/s, want 300'; exit 3"});
  ASSERT_EQ(cli({"cluster", "create", "-f", workers_cluster(1)}).exit_code, 0);
  ASSERT_TRUE(eventually([&] { return running_nodes("local").size() == 1; }));
  const std::string node = running_nodes("local").front();
  auto host_of = [&](const std::string& id) {
    for (const Json& h : server_->get("/v1/hosts").value("Hosts", Json::array())) {
      if (h.value("NodeId", "") == id && h.value("Status", "") == "InService")
        return h.value("HostId", "");
    }
    return std::string();
  };
  const std::string old_host = host_of(node);
  ASSERT_FALSE(old_host.empty()) << server_->get("/v1/hosts").dump();
  std::ofstream(dir_.file("policy.yaml"))
      << "AlertPersistence: 1s\nRules:\n  - {Fault: \"xid:79\", Action: migrate, Approval: auto}\n";
  CommandResult r = cli({"policy", "set", "local", "-f", dir_.file("policy.yaml")});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  inject_xid79(node);

  Json ticket;
  ASSERT_TRUE(eventually(
      [&] {
        for (const Json& t : server_->get("/v1/tickets").value("Tickets", Json::array())) {
          if (t.value("HostId", "") == old_host) ticket = t;
        }
        return ticket.is_object();
      },
      std::chrono::seconds(90)))
      << server_->get("/v1/hosts").dump() << "\n"
      << server_->get("/v1/remediations").dump();
  std::map<std::string, Json> checks;
  for (const Json& c : ticket.value("Checks", Json::array())) checks[c.value("Name", "")] = c;
  EXPECT_EQ(checks["gpu"].value("Result", ""), "pass") << ticket.dump();
  EXPECT_NE(checks["gpu"].value("Log", "").find("gpu fine on " + old_host), std::string::npos)
      << ticket.dump();
  EXPECT_EQ(checks["nccl"].value("Result", ""), "fail") << ticket.dump();
  EXPECT_NE(checks["nccl"].value("Log", "").find("nccl all_reduce 12 GB/s"), std::string::npos)
      << ticket.dump();
  // The node runs again, on a host that is not the old one.
  const Json rem = succeeded_remediation(node);
  ASSERT_EQ(rem.value("Status", ""), "Succeeded") << rem.dump();
  EXPECT_EQ(rem["EffectiveAction"], "migrate");
  std::string new_host;
  ASSERT_TRUE(eventually([&] {
    const std::vector<std::string> up = running_nodes("local");
    if (up.size() != 1) return false;
    new_host = host_of(up.front());
    return !new_host.empty();
  }));
  EXPECT_NE(new_host, old_host);
}

// Reprovision: a new agent on a wiped directory (the lifecycle script runs again).
TEST_F(LocalCloudTest, ReprovisionWipesTheNodesDirectoryAndStartsANewAgent) {
  ASSERT_EQ(cli({"cluster", "create", "-f", workers_cluster(1)}).exit_code, 0);
  ASSERT_TRUE(eventually([&] { return running_nodes("local").size() == 1; }));
  const std::string node = running_nodes("local").front();
  const pid_t before = agent_pid(node);
  std::ofstream(node_dir(node) + "/scratch/checkpoint") << "step 1000\n";
  std::ofstream(dir_.file("policy.yaml"))
      << "AlertPersistence: 1s\nRules:\n  - {Fault: \"xid:79\", Action: reprovision, Approval: "
         "auto}\n";
  CommandResult r = cli({"policy", "set", "local", "-f", dir_.file("policy.yaml")});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  inject_xid79(node);
  const Json rem = succeeded_remediation(node);
  ASSERT_EQ(rem.value("Status", ""), "Succeeded") << rem.dump();
  EXPECT_EQ(rem["EffectiveAction"], "reprovision");
  const std::vector<std::string> up = running_nodes("local");
  ASSERT_EQ(up.size(), 1u);
  const pid_t after = agent_pid(up.front());
  EXPECT_NE(after, before);
  EXPECT_TRUE(os::alive(after, up.front()));
  EXPECT_FALSE(fs::exists(node_dir(up.front()) + "/scratch/checkpoint")) << "wiped";
  EXPECT_EQ(slurp(node_dir(up.front()) + "/lifecycle-marker"), up.front() + "\n")
      << "its lifecycle script ran again";
}

TEST_F(LocalCloudTest, RestartedServerFindsItsAgentsAndLaunchesNoDuplicates) {
  ASSERT_EQ(cli({"cluster", "create", "-f", workers_cluster(2)}).exit_code, 0);
  ASSERT_TRUE(eventually([&] { return running_nodes("local").size() == 2; }));
  apply_seed_job("714");
  const std::vector<std::string> sleeping = {"sleep", "714"};
  ASSERT_TRUE(eventually([&] { return processes_running(sleeping) == 3; }));
  std::map<std::string, pid_t> agents;
  for (const std::string& id : running_nodes("local")) agents[id] = agent_pid(id);

  server_->process().signal(SIGKILL);
  server_->process().wait();
  // With the server gone, the agents and their pods go on.
  EXPECT_EQ(processes_running(sleeping), 3);
  for (const auto& [id, pid] : agents) EXPECT_TRUE(os::alive(pid, id)) << id;

  start_server();  // on another port: the agents find it through their instance.json
  EXPECT_TRUE(eventually([&] { return running_nodes("local").size() == 2; }));
  std::map<std::string, pid_t> again;
  for (const std::string& id : running_nodes("local")) again[id] = agent_pid(id);
  EXPECT_EQ(again, agents);
  // The agents report to the new server (their heartbeats keep host-reachability quiet) and no
  // second instance was launched.
  std::this_thread::sleep_for(std::chrono::seconds(5));
  EXPECT_TRUE(server_->get("/v1/alerts?cluster=local").value("Alerts", Json::array()).empty());
  EXPECT_EQ(nodes("local").size(), 2u);
  EXPECT_EQ(processes_running(sleeping), 3);
  int dirs = 0;
  for (const auto& e : fs::directory_iterator(root_)) dirs += fs::exists(e.path() / "agent.pid");
  EXPECT_EQ(dirs, 2);
}

// Nothing serve opens reaches what it starts: every descriptor of serve is close-on-exec, an
// agent holds neither its port nor its journal, a pod holds only its standard streams
// (docs/security.md "Descriptors"). So serve restarts on its own port, after a stop or a kill -9,
// and finds its agents and their pods still running.
TEST_F(LocalCloudTest, ServerRestartsOnItsOwnPortWhileItsAgentsAndPodsRun) {
  const int port = server_->port();
  ASSERT_EQ(cli({"cluster", "create", "-f", workers_cluster(2)}).exit_code, 0);
  ASSERT_TRUE(eventually([&] { return running_nodes("local").size() == 2; }));
  apply_seed_job("715");
  const std::vector<std::string> sleeping = {"sleep", "715"};
  ASSERT_TRUE(eventually([&] { return processes_running(sleeping) == 3; }));
  std::map<std::string, pid_t> agents;
  for (const std::string& id : running_nodes("local")) agents[id] = agent_pid(id);
  const std::vector<pid_t> pods_before = pids_of(sleeping);

  const pid_t serve = server_->process().pid();
  for (const auto& [fd, target] : open_descriptors(serve)) {
    // What serve opened itself: its sockets, epoll and event descriptors, its files (a pipe or
    // /dev/null may come from the test runner that started it).
    const bool own = target.starts_with("socket:") || target.starts_with("anon_inode:") ||
                     target.starts_with(dir_.file(""));
    if (fd <= 2 || !own) continue;
    EXPECT_TRUE(close_on_exec(serve, fd)) << "serve's fd " << fd << " -> " << target;
  }
  const std::string listener = listening_socket(port);
  ASSERT_FALSE(listener.empty());
  for (const auto& [id, pid] : agents) {
    for (const auto& [fd, target] : open_descriptors(pid)) {
      EXPECT_NE(target, listener) << "agent " << id << " holds serve's port as fd " << fd;
      EXPECT_EQ(target.find("journal.db"), std::string::npos) << "agent " << id << ": " << target;
    }
  }
  for (const pid_t pod : pods_before) {
    for (const auto& [fd, target] : open_descriptors(pod))
      EXPECT_LE(fd, 2) << "pod " << pod << " holds fd " << fd << " -> " << target;
  }

  const std::vector<std::string> same_port = {"--listen", "127.0.0.1:" + std::to_string(port)};
  for (const int stop : {SIGTERM, SIGKILL}) {
    server_->process().signal(stop);
    server_->process().wait();
    start_server("ml.p5.48xlarge=2", same_port);
    ASSERT_EQ(server_->port(), port) << "signal " << stop << ": " << server_->process().output();
    EXPECT_TRUE(eventually([&] { return running_nodes("local").size() == 2; }));
    std::map<std::string, pid_t> again;
    for (const std::string& id : running_nodes("local")) again[id] = agent_pid(id);
    EXPECT_EQ(again, agents) << "signal " << stop;
    EXPECT_EQ(pids_of(sleeping), pods_before) << "signal " << stop;
    EXPECT_TRUE(eventually([&] {
      const Json job = server_->get("/v1/objects/pytorchjobs/default/pytorch-test");
      return job["status"].value("conditions", Json::array()).size() > 0 &&
             job["status"]["conditions"].back().value("type", "") == "Running";
    })) << server_->get("/v1/objects/pytorchjobs/default/pytorch-test").dump();
  }
  // The agents answer to the restarted server: deleting the job stops its pods.
  ASSERT_EQ(cli({"delete", "pytorchjob", "pytorch-test"}).exit_code, 0);
  EXPECT_TRUE(eventually([&] { return processes_running(sleeping) == 0; }));
  EXPECT_TRUE(server_->get("/v1/alerts?cluster=local").value("Alerts", Json::array()).empty());
}

}  // namespace
}  // namespace gf
