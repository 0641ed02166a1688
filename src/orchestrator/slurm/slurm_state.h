// What a real slurmctld says of its nodes and jobs (docs/slurm.md), read from the JSON that
// `sinfo --json` and `squeue --json` print (Slurm's OpenAPI data_parser v0.0.38 and later, Slurm
// 22.05+). Pure: the text in, the records out; no I/O. The text comes from a daemon outside
// gpufleet, so it is parsed as untrusted input: bounded (size, depth, counts), every field checked
// for its type, an unknown shape refused naming the field.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace gf::slurm {

// One node as the controller sees it.
struct NodeState {
  std::string name;
  // The base state, upper case as scontrol prints it: IDLE, ALLOCATED, MIXED, DOWN, FUTURE,
  // UNKNOWN, ERROR, COMPLETING…
  std::string state;
  std::vector<std::string> flags;  // DRAIN, NOT_RESPONDING, COMPLETING, REBOOT_REQUESTED…
  std::string reason;              // the DRAIN/DOWN reason ("" when none)
  std::string reason_set_by;       // who set it ("" when none)
  std::vector<std::string> partitions;
  int64_t cpus = 0;
  int64_t alloc_cpus = 0;

  bool has_flag(std::string_view flag) const;
  // DRAIN set (draining while jobs run, drained when idle).
  bool drained() const { return has_flag("DRAIN"); }
  bool down() const { return state == "DOWN"; }
  // Jobs hold some of it (ALLOCATED or MIXED, or CPUs allocated).
  bool allocated() const;
};

// One job (an allocation) as the controller sees it.
struct JobState {
  int64_t id = 0;
  std::string name;
  std::string state;  // PENDING, RUNNING, COMPLETING, COMPLETED, FAILED, CANCELLED, TIMEOUT…
  // Why it pends, as squeue's REASON prints it: the state description when Slurm set one
  // ("launch failed requeued held"), else the state reason ("Resources"; "None" when none).
  std::string reason;
  std::string partition;
  std::vector<std::string> nodes;  // expanded from the hostlist ("node[1-3]")
  int64_t node_count = 0;
  int64_t restarts = 0;  // requeues
  std::optional<int64_t> exit_code;

  bool finished() const;  // COMPLETED, FAILED, CANCELLED, TIMEOUT, NODE_FAIL, PREEMPTED, …
};

// What gpufleet knows of a gang's allocation when it reads slurmctld, for one pod.
struct AllocationView {
  bool submitted = false;  // the allocation's job id is known
  bool answered = true;    // squeue answered (false: `error` says why not)
  std::string error;
  std::optional<JobState> job;  // the allocation, when slurmctld lists it
  bool step_started = false;    // the pod's command started on its node (this run of it)
  // Set once an agent of the gang found its launch failed and cancelled it: what Slurm said
  // then. The allocation's later CANCELLED (or its absence) still reads as that failure.
  std::string launch_failed;
};

// The pod's status: one row of the table in docs/slurm.md "States" each. `cancel`: the
// allocation will never run (Slurm held it after a failed launch) and is cancelled, so that the
// gang's restart policy decides instead. A hold an operator or user set stays Pending: theirs to
// release.
struct PodPhase {
  std::string phase;  // Pending, Running, Succeeded, Failed or Unknown
  int exit_code = 0;
  std::string message;
  bool cancel = false;
  bool operator==(const PodPhase&) const = default;
};
// The exit code of a pod whose allocation Slurm could not launch: 128 and up is retryable under
// restartPolicy ExitCode (the node failed, not the program).
inline constexpr int kLaunchFailedExitCode = 128;
PodPhase slurm_pod_phase(const AllocationView& a);

// At most this many nodes or jobs in one answer, and this many bytes of text.
inline constexpr size_t kMaxRecords = 100000;
inline constexpr size_t kMaxTextBytes = size_t{256} << 20;
// At most this many node names in all the jobs of one answer (hostlists expanded).
inline constexpr size_t kMaxNodeNames = 1'000'000;

Result<std::vector<NodeState>> parse_sinfo_json(std::string_view text);
Result<std::vector<JobState>> parse_squeue_json(std::string_view text);

}  // namespace gf::slurm
