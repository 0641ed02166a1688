// Processes of the local cloud (docs/local-cloud.md): starting one with its own environment,
// working directory, output file and session, signalling its process group, and learning how it
// ended. The only folder besides the tests that forks (src/agent runs pods and lifecycle scripts,
// src/cloud/local runs agents and burn-in checks).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/result.h"

namespace gf::os {

struct SpawnOptions {
  std::vector<std::string> argv;  // argv[0] is looked up in PATH when it has no '/'
  // Variables set on top of the inherited environment (or the whole environment when
  // `inherit_env` is false); a later name replaces an earlier one.
  std::vector<std::pair<std::string, std::string>> env;
  bool inherit_env = true;
  std::string cwd;     // "" = the caller's
  std::string output;  // stdout and stderr appended here; "" = /dev/null
  int output_fd = -1;  // when >= 0, stdout and stderr go to this descriptor instead (run() uses it)
  // Its own session and process group: out of reach of the terminal's Ctrl-C, and signalled as
  // a group (its children with it).
  bool new_session = true;
  // The whole tree it starts is killed when the spawning thread exits (a pod dies with its
  // node's agent), through a shim process between the spawner and the command
  // (docs/local-cloud.md).
  bool die_with_parent = false;
  // With die_with_parent: the command runs as process 1 of its own PID, mount and UTS
  // namespaces (its whole tree ends when it ends, /proc shows only its processes, `hostname` is
  // `hostname`), as a container's main process does. Only where namespaces_allowed().
  bool isolate = false;
  std::string hostname;
};

// Whether this process may create PID, mount and UTS namespaces (root, or CAP_SYS_ADMIN; not in
// most unprivileged containers). Probed once, in a child.
bool namespaces_allowed();

// Starts the process; the error names argv[0] and why (not found, not executable, no cwd).
Result<pid_t> spawn(const SpawnOptions& options);

// How a process ended, as a shell reports it: its exit code, or 128 + the signal that ended it.
struct Exit {
  int code = 0;
  bool signaled = false;
};

// Reaps a child of this process without waiting: its end, or nullopt while it runs (and for a
// pid that is not our child).
std::optional<Exit> reap(pid_t pid);

// What a command run to its end printed (stdout and stderr together) and how it ended.
struct Output {
  Exit exit;
  std::string out;         // at most max_bytes; the rest is read and dropped
  bool truncated = false;  // more than max_bytes were printed
  bool timed_out = false;  // it ran past the timeout and was killed (exit: 128 + SIGKILL)
};

// Runs a command to its end, capturing its output, as a client tool is run (sinfo, scontrol):
// past `timeout` its process group gets SIGKILL. Refuses as spawn does.
Result<Output> run(SpawnOptions options, std::chrono::milliseconds timeout,
                   size_t max_bytes = size_t{16} << 20);

// Reaps a child of this process, waiting for its end (after SIGKILL, at once); nullopt for a pid
// that is not our child.
std::optional<Exit> wait(pid_t pid);

// Whether `pid` is a live process (not a zombie). For processes this one did not start (after a
// restart) `cmdline_contains`, when given, must appear in /proc/<pid>/cmdline: a reused pid is not
// mistaken for ours.
bool alive(pid_t pid, const std::string& cmdline_contains = "");

// The live processes of this user whose environment holds `entry` exactly ("NAME=value"), with
// every descendant of theirs (whatever its environment), in no particular order. This process is
// never among them. What a cluster's processes are found by when they must all end
// (docs/slurm.md "Nothing outlives its cluster").
std::vector<pid_t> processes_with_environment(const std::string& entry);
// SIGKILL to each of them: all are stopped first, looking again until no new one appears (a
// process may fork meanwhile), then killed; each is held by a pidfd and checked again first, so a
// pid reused by another process is never hit. How many were killed.
size_t kill_processes_with_environment(const std::string& entry);

// Sends `sig` to the process group `pid` leads (spawned with new_session), else to `pid` alone.
void signal(pid_t pid, int sig);

// The pid written in `path` (a pid file), or nullopt.
std::optional<pid_t> read_pid_file(const std::string& path);
Status write_pid_file(const std::string& path, pid_t pid);

}  // namespace gf::os
