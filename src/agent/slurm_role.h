// The Slurm half of a local-cloud node of a Slurm cluster (docs/slurm.md): once its lifecycle
// script succeeded, the Controller node runs munged and slurmctld and keeps the managed blocks of
// the cluster's slurm.conf as the server's layout says (merge mode: every other line is the
// user's), a Compute node runs `slurmd -N <its Slurm name>` and drains or resumes itself in
// Slurm as the server asks, reporting what slurmctld says of it (state, reason, jobs on it).
// Login nodes only have the client tools. The daemons are children of the agent, run as its user
// (munged too: every daemon and client of the cluster is that user): they end with it, as they
// would with their machine.
//
// Files, in the cluster's Slurm directory (shared by its nodes, as /opt/slurm would be):
//   slurm.conf          written once by the controller, then only its managed blocks change
//   munge/munge.key     the cluster's key
//   state/ log/         slurmctld's state, the daemons' logs
// and in its runtime directory (/tmp/gfs-<hash>, 0700: short, so that socket paths fit):
//   munge.sock          the socket every node uses
//   <node>/             each slurmd's spool (its step sockets)
// No clock of its own: step() takes the time.
#pragma once

#include <sys/types.h>

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/json.h"
#include "core/result.h"
#include "core/time.h"
#include "orchestrator/slurm/slurm_control.h"

namespace gf::agent {

class NodeApi;

// instance.json's "Slurm": the node's role, its Slurm name and the cluster's Slurm directory.
struct SlurmSettings {
  std::string role;  // Controller, Compute or Login
  std::string node_name;
  std::string dir;
  // From instance.json's "Slurm" (null: not a Slurm cluster's node); the error names the field.
  static Result<std::optional<SlurmSettings>> from_json(const Json& slurm);
};

class SlurmRole {
 public:
  SlurmRole(SlurmSettings settings, NodeApi& api);
  ~SlurmRole();  // the daemons get SIGKILL if stop() did not end them
  SlurmRole(const SlurmRole&) = delete;
  SlurmRole& operator=(const SlurmRole&) = delete;

  // One step at `now` (the node is ready): start what is not running, and — at most every
  // `interval` — sync slurm.conf (controller) or the node's drain and report (compute). `drain`:
  // the reason the server wants the node drained with (an empty optional: none); nullopt while
  // the server's wish is not known yet (then the node is neither drained nor resumed).
  void step(Time now, const std::optional<std::optional<std::string>>& drain);
  // SIGTERM to the daemons, SIGKILL after 10 s; true once none runs.
  bool stop(Time now);

  const std::string& role() const { return settings_.role; }
  std::string conf() const { return settings_.dir + "/slurm.conf"; }
  // The cluster's sockets live in a short runtime directory of their own (kSlurmRuntimeTemplate,
  // recorded in <dir>/runtime by the controller): the munge socket and every slurmd's spool (its
  // step sockets). "" until the controller made it.
  std::string runtime_dir() const;
  // The munge socket slurm.conf names (AuthInfo=socket=), else the runtime directory's.
  std::string munge_socket() const;
  // The command the health detectors run to read this node's state (`scontrol show node -o`).
  std::string scontrol_command() const;

 private:
  struct Daemon {
    std::string name;
    pid_t pid = 0;
    Time next_start{};
    Duration backoff = seconds(1);
    std::optional<Time> stopping_since{};
  };

  void controller(Time now);
  void compute(Time now, const std::optional<std::optional<std::string>>& drain);
  Status write_base_conf();
  Status make_munge_key();
  // Starts `d` with `argv` unless it runs or waits for its backoff; reaps it when it ended.
  // `isolate`: in a PID namespace of its own, so that every process it starts (slurmd's
  // slurmstepd and the job steps under them, which leave its session) ends with it.
  void supervise(Daemon& d, Time now, const std::vector<std::string>& argv, bool isolate = false);
  // Makes sure the runtime directory exists, 0700, and is ours: the controller makes it (mkdtemp)
  // and records it the first time; every node makes the recorded one again when it is gone (a
  // cleaned /tmp), refusing one that is not this user's directory.
  Status make_runtime_dir();
  bool running(Daemon& d, Time now);
  void sync_conf(Time now);
  void retire_nodes(const std::set<std::string>& future);

  SlurmSettings settings_;
  NodeApi& api_;
  slurm::SlurmCli cli_;
  Daemon munged_{"munged", 0, {}, seconds(1), {}};
  Daemon slurmctld_{"slurmctld", 0, {}, seconds(1), {}};
  Daemon slurmd_{"slurmd", 0, {}, seconds(1), {}};
  std::set<std::string> declared_;      // the node names slurm.conf declares now
  std::set<std::string> started_with_;  // those slurmctld was started with
  std::optional<Time> next_sync_;
  Duration interval_ = seconds(2);
  std::optional<Json> reported_;
  Time reported_at_{};
};

}  // namespace gf::agent
