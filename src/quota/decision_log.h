// An append-only record of every quota decision, so callers can explain them ("why is my job
// waiting", "who preempted it"). Entries are small fixed-shape structs; hash() folds their fields
// (never their padding bytes) with FNV-1a 64, so the same operations give the same hash.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "quota/quota_graph.h"
#include "quota/quota_types.h"

namespace gf::quota {

enum class DecisionKind : uint8_t {
  kAdmit,           // workload admitted at node; code = 1 when borrowing
  kRelease,         // workload finished; its usage returned
  kEvict,           // workload evicted back to pending
  kWait,            // workload does not fit: node/resource/amount = binding limit and shortfall
  kBlocked,         // StrictFIFO: workload waits behind older head `other`
  kVictim,          // plan for `workload` evicts `other`; code = PreemptionReason
  kProtected,       // `other` not chosen as victim of `workload`: ran less than min_run_time
  kNoPreemption,    // no victim set makes `workload` fit (node/resource/amount as kWait)
  kPriorityChange,  // workload's priority set to amount
};

struct Decision {
  DecisionKind kind = DecisionKind::kAdmit;
  WorkloadId workload = 0;
  WorkloadId other = 0;
  NodeId node = kNoNode;
  ResourceId resource = 0;
  int64_t amount = 0;
  uint8_t code = 0;
};

class DecisionLog {
 public:
  void append(const Decision& decision) { entries_.push_back(decision); }
  const std::vector<Decision>& entries() const { return entries_; }
  void clear() { entries_.clear(); }
  uint64_t hash() const;
  // One line, e.g. "victim w=7 of w=9 reason=Reclaim".
  std::string to_string(const Decision& decision, const QuotaGraph& graph) const;

 private:
  std::vector<Decision> entries_;
};

}  // namespace gf::quota
