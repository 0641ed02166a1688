// A real Slurm node as gpufleet sees it (docs/slurm.md): what its agent last read from the
// cluster's slurmctld, and the pure rules over it — the drain reason a remediation writes, when a
// node must be drained, and when a drained node is idle (no Slurm allocation left on it).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace gf {

// What slurmctld said of one node, as the node's agent read it (sinfo/squeue).
struct SlurmNodeReport {
  std::string state;              // base state and flags, e.g. "IDLE+DRAIN", "DOWN", "MIXED"
  std::string reason;             // the node's reason ("" when none)
  std::vector<std::string> jobs;  // ids of the Slurm jobs allocated on it (running or ending)
  bool operator==(const SlurmNodeReport&) const = default;

  bool drained() const;  // DRAIN (draining or drained) in its flags
  bool down() const;     // DOWN (or NOT_RESPONDING)
  // Set by gpufleet: the reason starts with "gpufleet:".
  bool ours() const;
};

// The prefix of every reason gpufleet writes; a reason without it is someone else's.
inline constexpr const char* kSlurmReasonPrefix = "gpufleet:";

// "gpufleet:<remediation id> <fault>": the reason a remediation drains its node with.
std::string slurm_drain_reason(const std::string& remediation_id, const std::string& fault);

// Why slurmctld will start nothing on the node, or nullopt when it takes work: DRAIN, DOWN,
// FAIL, NOT_RESPONDING (whoever set it) or a state Slurm does not know (UNKNOWN, FUTURE,
// INVALID). Such a node is not schedulable for gangs (docs/slurm.md "Placement follows Slurm"):
// e.g. "DRAIN (ops: fan replaced)".
std::optional<std::string> slurm_unschedulable(const SlurmNodeReport& report);

// Why a node being drained is not idle yet, or nullopt when it is: slurmctld shows it drained
// (by gpufleet or by anyone: nothing new starts there either way) or down, with no job allocated
// on it (and no ALLOCATED, MIXED or COMPLETING state). A drain not seen landing yet counts as not
// idle: a job may have started in between.
std::optional<std::string> slurm_not_idle(const std::optional<SlurmNodeReport>& report);

}  // namespace gf
