// A real Slurm cluster on loopback for a test (docs/slurm.md "Testing against a real
// slurmctld"): its own munged (own socket, the machine's key), slurmctld and one `slurmd -N` per
// node, in a scratch directory, on ports that were free. Stopped by their pid files, jobs
// cancelled first (slurmstepd outlives slurmd). Every wait is bounded.
#pragma once

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "os/process.h"
#include "support/ports.h"
#include "support/temp_dir.h"

namespace gf::testing {

class SlurmDaemons {
 public:
  // `nodes` compute nodes node1..nodeN of `cpus` CPUs each in partition `partition`, plus
  // `spares` FUTURE nodes spare1..spareM that may join later.
  explicit SlurmDaemons(int nodes, std::string partition = "main", int spares = 0, int cpus = 1)
      : nodes_(nodes), partition_(std::move(partition)), spares_(spares), cpus_(cpus) {}
  ~SlurmDaemons() { stop(); }

  // "" when the cluster is up with every node idle, else what went wrong.
  std::string start() {
    namespace fs = std::filesystem;
    dir_ = dir_holder_.path();
    fs::permissions(dir_, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                              fs::perms::others_read | fs::perms::others_exec);
    for (const char* sub : {"state", "spool", "log", "munge"})
      fs::create_directories(dir_ + "/" + sub);
    if (!fs::exists("/etc/munge/munge.key")) return "no /etc/munge/munge.key (scripts/setup)";
    // munged runs as its own user and wants its socket directory to be its own.
    if (std::string err = run({"chown", "munge:munge", dir_ + "/munge"}); !err.empty()) return err;
    if (std::string err =
            run({"runuser", "-u", "munge", "--", "/usr/sbin/munged", "--socket=" + socket(),
                 "--pid-file=" + dir_ + "/munge/munged.pid", "--seed-file=" + dir_ + "/munge/seed",
                 "--log-file=" + dir_ + "/munge/munged.log", "--key-file=/etc/munge/munge.key"});
        !err.empty())
      return "munged: " + err;
    write_conf();
    if (std::string err = run({"slurmctld", "-i"}); !err.empty()) return "slurmctld: " + err;
    for (int i = 1; i <= nodes_; ++i) {
      if (std::string err = start_node("node" + std::to_string(i)); !err.empty()) return err;
    }
    const std::string want = std::to_string(nodes_);
    const auto limit = std::chrono::seconds(30 + nodes_ / 2);
    for (auto end = std::chrono::steady_clock::now() + limit;
         std::chrono::steady_clock::now() < end;
         std::this_thread::sleep_for(std::chrono::milliseconds(100))) {
      auto out =
          os::run(spawn({"sinfo", "-h", "-N", "-t", "idle", "-o", "%N"}), std::chrono::seconds(10));
      if (out.ok() && count_lines(out->out) == nodes_) return "";
    }
    return "nodes not idle within " + std::to_string(limit.count()) + " s; slurmctld log:\n" +
           tail(dir_ + "/log/slurmctld.log");
  }

  std::string start_node(const std::string& name) {
    std::filesystem::create_directories(dir_ + "/spool/" + name);
    std::string err = run({"slurmd", "-N", name});
    return err.empty() ? "" : "slurmd " + name + ": " + err;
  }

  // Kills one node's slurmd (as a host that died would stop answering).
  void kill_node(const std::string& name) {
    if (auto pid = os::read_pid_file(dir_ + "/slurmd-" + name + ".pid")) ::kill(*pid, SIGKILL);
  }

  void stop() {
    if (dir_.empty() || stopped_) return;
    stopped_ = true;
    (void)os::run(spawn({"scancel", "--full", "--me"}), std::chrono::seconds(5));
    std::vector<pid_t> pids;
    for (const auto& e : std::filesystem::directory_iterator(dir_)) {
      const std::string f = e.path().filename().string();
      if (f.ends_with(".pid")) {
        if (auto pid = os::read_pid_file(e.path().string())) pids.push_back(*pid);
      }
    }
    if (auto pid = os::read_pid_file(dir_ + "/munge/munged.pid")) pids.push_back(*pid);
    for (pid_t p : pids) ::kill(p, SIGTERM);
    sweep();  // the job steps first: with their slurmstepd gone they would leave the tree
    for (auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
         std::chrono::steady_clock::now() < end;
         std::this_thread::sleep_for(std::chrono::milliseconds(50))) {
      bool any = false;
      for (pid_t p : pids) any = any || os::alive(p);
      if (!any) return;
    }
    for (pid_t p : pids) ::kill(p, SIGKILL);
    sweep();
  }

  // Whatever the daemons left: slurmstepd outlives slurmd, and the job steps under it (a
  // `sleep 3600`) outlive both. Each carries the cluster's mark, or descends from one that does
  // (docs/slurm.md "Nothing outlives its cluster").
  void sweep() const { (void)os::kill_processes_with_environment(mark()); }
  // What every process the daemons start carries in its environment.
  std::string mark() const { return "GPUFLEET_SLURM_DIR=" + dir_; }

  const std::string& dir() const { return dir_; }
  std::string conf() const { return dir_ + "/slurm.conf"; }
  std::string socket() const { return dir_ + "/munge/munge.sock"; }
  const std::string& partition() const { return partition_; }

  // A client tool of this cluster, as a test would run it; its output.
  std::string tool(std::vector<std::string> argv) const {
    auto out = os::run(spawn(std::move(argv)), std::chrono::seconds(20));
    return out.ok() ? out->out : out.status().to_string();
  }

 private:
  os::SpawnOptions spawn(std::vector<std::string> argv) const {
    os::SpawnOptions o;
    o.argv = std::move(argv);
    o.env = {{"SLURM_CONF", conf()}, {"GPUFLEET_SLURM_DIR", dir_}};
    o.cwd = dir_;
    return o;
  }
  // A command that daemonizes and returns; "" when it exited 0, else what it printed.
  std::string run(std::vector<std::string> argv) const {
    auto out = os::run(spawn(std::move(argv)), std::chrono::seconds(30));
    if (!out.ok()) return out.status().to_string();
    if (out->exit.code != 0) return "exit " + std::to_string(out->exit.code) + ": " + out->out;
    return "";
  }
  static int count_lines(const std::string& s) {
    int n = 0;
    for (char c : s) n += c == '\n';
    return n;
  }
  static std::string tail(const std::string& path) {
    std::ifstream in(path);
    std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return all.size() > 3000 ? all.substr(all.size() - 3000) : all;
  }

  void write_conf() {
    const int ctld = free_tcp_port();
    std::ofstream c(conf());
    c << "ClusterName=gftest\n"
      << "SlurmctldHost=localhost\n"
      << "SlurmUser=root\nSlurmdUser=root\n"
      << "AuthType=auth/munge\nCredType=cred/munge\n"
      << "AuthInfo=socket=" << socket() << "\n"
      << "SlurmctldPort=" << ctld << "\n"
      << "SlurmdPort=" << free_tcp_port() << "\n"
      << "StateSaveLocation=" << dir_ << "/state\n"
      << "SlurmdSpoolDir=" << dir_ << "/spool/%n\n"
      << "SlurmctldPidFile=" << dir_ << "/slurmctld.pid\n"
      << "SlurmdPidFile=" << dir_ << "/slurmd-%n.pid\n"
      << "SlurmctldLogFile=" << dir_ << "/log/slurmctld.log\n"
      << "SlurmdLogFile=" << dir_ << "/log/slurmd-%n.log\n"
      << "ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n"
      << "JobAcctGatherType=jobacct_gather/none\nAccountingStorageType=accounting_storage/none\n"
      << "JobCompType=jobcomp/none\n"
      << "SchedulerType=sched/backfill\nSelectType=select/cons_tres\nSelectTypeParameters=CR_CPU\n"
      << "SchedulerParameters=batch_sched_delay=0,sched_min_interval=0,default_queue_depth=1000\n"
      << "SlurmdParameters=config_overrides\n"
      << "MpiDefault=none\nMailProg=/bin/true\nReturnToService=2\n"
      << "MaxNodeCount=" << std::max(64, nodes_ + spares_) << "\n"
      << "TreeWidth=65533\nDebugFlags=NO_CONF_HASH\nMinJobAge=300\nKillWait=2\n"
      << "SlurmctldTimeout=30\nSlurmdTimeout=10\nInactiveLimit=0\nWaittime=0\n";
    std::string ports;
    for (int i = 1; i <= nodes_; ++i) {
      c << "NodeName=node" << i << " NodeHostname=localhost NodeAddr=127.0.0.1 CPUs=" << cpus_
        << " "
        << "RealMemory=100 Port=" << free_tcp_port() << " State=UNKNOWN\n";
    }
    for (int i = 1; i <= spares_; ++i) {
      c << "NodeName=spare" << i << " NodeHostname=localhost NodeAddr=127.0.0.1 CPUs=1 "
        << "RealMemory=100 Port=" << free_tcp_port() << " State=FUTURE\n";
    }
    c << "PartitionName=" << partition_ << " Nodes=node[1-" << nodes_
      << "] Default=YES MaxTime=INFINITE State=UP\n";
  }

  int nodes_;
  std::string partition_;
  int spares_;
  int cpus_;
  TempDir dir_holder_;
  std::string dir_;
  bool stopped_ = false;
};

}  // namespace gf::testing
