#include "model/slurm_node.h"

#include <fmt/format.h>

namespace gf {

bool SlurmNodeReport::drained() const { return state.find("DRAIN") != std::string::npos; }

bool SlurmNodeReport::down() const {
  return state.find("DOWN") != std::string::npos ||
         state.find("NOT_RESPONDING") != std::string::npos;
}

bool SlurmNodeReport::ours() const { return reason.rfind(kSlurmReasonPrefix, 0) == 0; }

std::string slurm_drain_reason(const std::string& remediation_id, const std::string& fault) {
  return std::string(kSlurmReasonPrefix) + remediation_id + " " + fault;
}

std::optional<std::string> slurm_unschedulable(const SlurmNodeReport& report) {
  std::string why;
  for (const char* word : {"DRAIN", "DOWN", "FAIL", "NOT_RESPONDING", "UNKNOWN", "FUTURE",
                           "INVALID", "POWERED_DOWN"}) {
    if (report.state.find(word) == std::string::npos) continue;
    // DRAIN also matches DRAINING/DRAINED, FAIL also FAILING: name the word once.
    if (why.empty()) why = word;
  }
  if (why.empty()) return std::nullopt;
  return report.reason.empty() ? why : why + " (" + report.reason + ")";
}

std::optional<std::string> slurm_not_idle(const std::optional<SlurmNodeReport>& report) {
  if (!report) return "waiting for the node's agent to report its Slurm state";
  // Drained (by anyone) or down: nothing new starts there, so an empty job list is final.
  if (!report->drained() && !report->down())
    return "waiting for slurmctld to show the node drained (State=" + report->state + ")";
  // slurmctld's own word that something holds the node, whatever the job list says.
  for (const char* busy : {"ALLOCATED", "MIXED", "COMPLETING"}) {
    if (report->jobs.empty() && report->state.find(busy) != std::string::npos)
      return "Slurm shows the node " + std::string(busy) + "; waiting for its jobs to end";
  }
  if (!report->jobs.empty()) {
    return fmt::format("{} Slurm allocation(s) still on the node (job {})", report->jobs.size(),
                       fmt::join(report->jobs, ", "));
  }
  return std::nullopt;
}

}  // namespace gf
