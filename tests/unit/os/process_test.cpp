// Processes of the local cloud (src/os/process.h): what a spawn refuses, the environment and
// working directory a child gets, its exit as a shell reports it, and pid files. The children are
// real and end on their own within milliseconds; waiting for one is a blocking reap, not a sleep.
#include "os/process.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

namespace gf::os {
namespace {

namespace fs = std::filesystem;

SpawnOptions command(std::vector<std::string> argv) {
  SpawnOptions o;
  o.argv = std::move(argv);
  return o;
}

class ProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "gpufleet-os-XXXXXX").string();
    dir_ = ::mkdtemp(tmpl.data());
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string read(const std::string& name) const {
    std::ifstream in(dir_ + "/" + name);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  // The child's end: reaps until it has ended (it ends on its own).
  static Exit end_of(pid_t pid) {
    for (;;) {
      if (auto e = reap(pid)) return *e;
      sched_yield();
    }
  }
  std::string dir_;
};

TEST_F(ProcessTest, CommandNotFoundIsRefusedNamingIt) {
  auto pid = spawn(command({"no-such-command-gpufleet"}));
  ASSERT_FALSE(pid.ok());
  EXPECT_NE(pid.status().message().find("no-such-command-gpufleet: command not found"),
            std::string::npos);
}

TEST_F(ProcessTest, MissingWorkingDirectoryIsRefusedNamingIt) {
  SpawnOptions o;
  o.argv = {"true"};
  o.cwd = dir_ + "/absent";
  auto pid = spawn(o);
  ASSERT_FALSE(pid.ok());
  EXPECT_NE(pid.status().message().find(dir_ + "/absent"), std::string::npos);
}

TEST_F(ProcessTest, ChildGetsItsEnvironmentAndWorkingDirectoryAndOutputFile) {
  SpawnOptions o;
  o.argv = {"sh", "-c", "echo \"$A $B $(pwd)\"; echo err >&2"};
  o.inherit_env = false;
  o.env = {{"PATH", "/usr/bin:/bin"}, {"A", "one"}, {"B", "two"}, {"A", "three"}};
  o.cwd = dir_;
  o.output = dir_ + "/out.log";
  auto pid = spawn(o);
  ASSERT_TRUE(pid.ok()) << pid.status().to_string();
  EXPECT_EQ(end_of(*pid).code, 0);
  // A later name replaces an earlier one; stdout and stderr both go to the output file.
  EXPECT_EQ(read("out.log"), "three two " + fs::canonical(dir_).string() + "\nerr\n");
}

TEST_F(ProcessTest, ExitCodeAndSignalAreReportedAsAShellDoes) {
  auto three = spawn(command({"sh", "-c", "exit 3"}));
  ASSERT_TRUE(three.ok());
  Exit e = end_of(*three);
  EXPECT_EQ(e.code, 3);
  EXPECT_FALSE(e.signaled);

  auto killed = spawn(command({"sh", "-c", "kill -9 $$"}));
  ASSERT_TRUE(killed.ok());
  e = end_of(*killed);
  EXPECT_EQ(e.code, 128 + SIGKILL);
  EXPECT_TRUE(e.signaled);
}

TEST_F(ProcessTest, DieWithParentPassesTheCommandsExitCodeAndSignalThroughItsShim) {
  SpawnOptions o = command({"sh", "-c", "exit 3"});
  o.die_with_parent = true;
  auto three = spawn(o);
  ASSERT_TRUE(three.ok());
  EXPECT_EQ(end_of(*three).code, 3);

  o = command({"sh", "-c", "kill -9 $$"});
  o.die_with_parent = true;
  auto killed = spawn(o);
  ASSERT_TRUE(killed.ok());
  const Exit e = end_of(*killed);
  EXPECT_EQ(e.code, 128 + SIGKILL);
  EXPECT_TRUE(e.signaled);
}

// A pod's whole tree dies with its node's agent: a shell's child too, not only the shell.
TEST_F(ProcessTest, DieWithParentKillsTheCommandsWholeTreeWhenTheSpawnerIsKilled) {
  const std::string pid_file = dir_ + "/grandchild.pid";
  const pid_t spawner = ::fork();
  ASSERT_GE(spawner, 0);
  if (spawner == 0) {
    SpawnOptions o = command({"sh", "-c", "sleep 300 & echo $! > " + pid_file + "; wait"});
    o.die_with_parent = true;
    if (!spawn(o).ok()) ::_exit(1);
    for (;;) ::pause();
  }
  // Bounded waits on real processes (a broken shim fails the test, it does not hang it).
  auto within_10s = [](const std::function<bool()>& pred) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!pred()) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      sched_yield();
    }
    return true;
  };
  std::optional<pid_t> grandchild;
  const bool started = within_10s([&] {
    grandchild = read_pid_file(pid_file);
    return grandchild && alive(*grandchild, "sleep 300");
  });
  ::kill(spawner, SIGKILL);
  int status = 0;
  ASSERT_EQ(::waitpid(spawner, &status, 0), spawner);
  ASSERT_TRUE(started) << "the command's child never started";
  // The shim kills its group on the spawner's death; the sleep is then reaped by whoever
  // inherits it, so "gone" is: not alive (or a zombie).
  const bool gone = within_10s([&] { return !alive(*grandchild, "sleep 300"); });
  if (!gone) ::kill(*grandchild, SIGKILL);
  EXPECT_TRUE(gone) << "sleep 300 outlived its spawner";
}

TEST_F(ProcessTest, IsolatedCommandRunsInItsOwnNamespacesUnderAnInitWithItsHostname) {
  if (!namespaces_allowed())
    GTEST_SKIP() << "this machine does not let the tests create namespaces";
  SpawnOptions o = command({"sh", "-c", "echo $$; hostname; ls /proc | grep -c '^[0-9]'"});
  o.die_with_parent = true;
  o.isolate = true;
  o.hostname = "pytorch-test-worker-1";
  o.output = dir_ + "/out.log";
  auto pid = spawn(o);
  ASSERT_TRUE(pid.ok()) << pid.status().to_string();
  EXPECT_EQ(end_of(*pid).code, 0);
  // Process 2 (under the namespace's init); the init, itself and the `ls` and `grep` of its
  // pipeline: no process of the host.
  const std::string out = read("out.log");
  EXPECT_TRUE(out.rfind("2\npytorch-test-worker-1\n", 0) == 0) << out;
  EXPECT_LE(std::stoi(out.substr(out.rfind('\n', out.size() - 2) + 1)), 5) << out;
  // A stop signal to the group ends a command that has no handler for it (it is not process 1).
  // The signal is sent once the command runs: one sent before the namespace's process 2 exists
  // reaches only the shim and the init, which both ignore it.
  o = command({"sh", "-c", "echo > " + dir_ + "/started; exec sleep 300"});
  o.die_with_parent = true;
  o.isolate = true;
  auto sleeper = spawn(o);
  ASSERT_TRUE(sleeper.ok());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!fs::exists(dir_ + "/started") && std::chrono::steady_clock::now() < deadline) {
    sched_yield();
  }
  ASSERT_TRUE(fs::exists(dir_ + "/started")) << "the command never started";
  signal(*sleeper, SIGTERM);
  EXPECT_EQ(end_of(*sleeper).code, 128 + SIGTERM);
  char host[256] = {};
  ::gethostname(host, sizeof host);
  EXPECT_NE(std::string(host), "pytorch-test-worker-1") << "the host's name is untouched";
}

TEST_F(ProcessTest, RunCapturesOutputAndExitAndKillsACommandPastItsTimeout) {
  auto r = run(command({"sh", "-c", "echo out; echo err >&2; exit 4"}), std::chrono::seconds(10));
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->out, "out\nerr\n");
  EXPECT_EQ(r->exit.code, 4);
  EXPECT_FALSE(r->timed_out);

  r = run(command({"sh", "-c", "head -c 100000 /dev/zero"}), std::chrono::seconds(10), 1000);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->out.size(), 1000u);
  EXPECT_TRUE(r->truncated);
  EXPECT_EQ(r->exit.code, 0) << "the rest is read and dropped, so the command is not blocked";

  r = run(command({"sleep", "300"}), std::chrono::milliseconds(50));
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->timed_out);
  EXPECT_EQ(r->exit.code, 128 + SIGKILL);

  EXPECT_FALSE(run(command({"no-such-command-gpufleet"}), std::chrono::seconds(1)).ok());
}

TEST_F(ProcessTest, AliveChecksTheCommandLineSoAReusedPidIsNotOurs) {
  EXPECT_TRUE(alive(::getpid()));
  EXPECT_TRUE(alive(::getpid(), "unit_os_tests"));
  EXPECT_FALSE(alive(::getpid(), "gpufleet agent --local-instance i-nothing"));
  EXPECT_FALSE(alive(0));
  EXPECT_FALSE(alive(-1));
}

TEST_F(ProcessTest, PidFileRoundTripsAndRejectsGarbage) {
  const std::string path = dir_ + "/agent.pid";
  ASSERT_TRUE(write_pid_file(path, 4242).ok());
  EXPECT_EQ(read_pid_file(path), 4242);
  std::ofstream(path) << "not a pid\n";
  EXPECT_FALSE(read_pid_file(path).has_value());
  EXPECT_FALSE(read_pid_file(dir_ + "/absent.pid").has_value());
}

// docs/slurm.md "Nothing outlives its cluster": what carries a cluster's mark ends, with what it
// started (whatever the child's environment), and nothing else does.
TEST_F(ProcessTest, KillingByEnvironmentEndsTheMarkedTreeAndNothingElse) {
  const std::string mark = "GPUFLEET_TEST_MARK=" + dir_;
  SpawnOptions marked = command({"bash", "-c", "env -u GPUFLEET_TEST_MARK sleep 30 & wait"});
  marked.env = {{"GPUFLEET_TEST_MARK", dir_}};
  auto tree = spawn(marked);
  ASSERT_TRUE(tree.ok()) << tree.status().to_string();
  auto other = spawn(command({"sleep", "30"}));
  ASSERT_TRUE(other.ok());
  // The marked shell and its unmarked child, once the child exists (bounded: a real fork).
  std::vector<pid_t> found;
  for (int i = 0; i < 2000 && found.size() < 2; ++i) {
    found = processes_with_environment(mark);
    sched_yield();
  }
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(kill_processes_with_environment(mark), 2u);
  EXPECT_EQ(end_of(*tree).code, 128 + SIGKILL);
  // The orphaned child is gone once the kernel has delivered its SIGKILL (bounded).
  bool gone = false;
  for (int i = 0; i < 100000 && !gone; ++i) {
    gone = processes_with_environment(mark).empty();
    sched_yield();
  }
  EXPECT_TRUE(gone);
  EXPECT_TRUE(alive(*other));
  ::kill(*other, SIGKILL);
  (void)end_of(*other);
}

}  // namespace
}  // namespace gf::os
