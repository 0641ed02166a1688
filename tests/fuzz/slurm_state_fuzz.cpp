// What slurmctld says of its nodes and jobs (orchestrator/slurm/slurm_state.h), as `sinfo --json`
// and `squeue --json` print it: text from a daemon outside gpufleet. The input is given to both
// parsers.
//
// Invariants checked:
//  - neither parser throws, and a refusal says why;
//  - nodes: one record per name, each with a non-empty name and an upper-case state; a node's
//    partitions have no duplicates;
//  - jobs: positive ids, an upper-case state, node_count and exit codes in range, no more nodes
//    than the hostlist expansion's bound (65,536 per job).
#include <cctype>
#include <set>
#include <string>

#include "fuzz_support.h"
#include "orchestrator/slurm/slurm_state.h"

namespace {

bool upper(const std::string& s) {
  for (char c : s) {
    if (std::islower(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gf;
  if (size > fuzz::kMaxInputBytes) return -1;
  const std::string_view text = fuzz::as_text(data, size);

  auto nodes = slurm::parse_sinfo_json(text);
  if (!nodes.ok()) {
    FUZZ_CHECK_ERROR(nodes.status());
  } else {
    std::set<std::string> names;
    for (const slurm::NodeState& n : *nodes) {
      FUZZ_CHECK(!n.name.empty(), "a node without a name");
      FUZZ_CHECK(names.insert(n.name).second, "node listed twice: " + n.name);
      FUZZ_CHECK(upper(n.state), "state not upper case: " + n.state);
      std::set<std::string> parts(n.partitions.begin(), n.partitions.end());
      FUZZ_CHECK(parts.size() == n.partitions.size(), "a partition listed twice on " + n.name);
    }
  }

  auto jobs = slurm::parse_squeue_json(text);
  if (!jobs.ok()) {
    FUZZ_CHECK_ERROR(jobs.status());
  } else {
    for (const slurm::JobState& j : *jobs) {
      FUZZ_CHECK(j.id > 0, std::to_string(j.id));
      FUZZ_CHECK(!j.state.empty() && upper(j.state), "job state: " + j.state);
      FUZZ_CHECK(j.nodes.size() <= 65536, std::to_string(j.nodes.size()));
    }
  }
  return 0;
}
