// An append-only record of every quota decision, so callers can explain them ("why is my job
// waiting", "who preempted it"). Entries are small fixed-shape structs; hash() folds their fields
// (never their padding bytes) with FNV-1a 64, so the same operations give the same hash.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/hash.h"
#include "quota/quota_graph.h"
#include "quota/quota_types.h"

namespace gf::quota {

// The values are folded into hash(), which tests and simulations compare across releases:
// never renumber them. 4 is retired (the quota engine's own StrictFIFO pass logged it).
enum class DecisionKind : uint8_t {
  kAdmit = 0,           // workload admitted at node; code bits: 1 borrowing, 2 placed again,
                        // 4 dispatched with its pods pending (scheduler estimate mode)
  kRelease = 1,         // workload finished; its usage returned
  kEvict = 2,           // workload evicted back to pending; code 2: its gang was interrupted,
                        // 3: failed over away from cluster `amount`
  kWait = 3,            // workload does not fit: node/resource/amount = binding limit and shortfall
  kVictim = 5,          // plan for `workload` evicts `other`; code = PreemptionReason
  kProtected = 6,       // `other` not chosen as victim of `workload`: ran less than min_run_time
  kNoPreemption = 7,    // no victim set makes `workload` fit (node/resource/amount as kWait)
  kPriorityChange = 8,  // workload's priority set to amount
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
  // Keeps at most `capacity` recent entries (0 = all); the hash covers every entry ever
  // appended, so a bounded log still proves determinism.
  explicit DecisionLog(size_t capacity = 0) : capacity_(capacity) {}
  void append(const Decision& decision);
  const std::vector<Decision>& entries() const { return entries_; }
  void clear() { entries_.clear(); }
  uint64_t hash() const { return hash_; }
  uint64_t appended() const { return appended_; }
  // One line, e.g. "victim w=7 of w=9 reason=Reclaim".
  std::string to_string(const Decision& decision, const QuotaGraph& graph) const;

 private:
  std::vector<Decision> entries_;
  size_t capacity_ = 0;
  uint64_t hash_ = kFnv1aOffsetBasis;
  uint64_t appended_ = 0;
};

}  // namespace gf::quota
