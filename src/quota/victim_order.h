// Victim ordering: the policy half of preemption (the planner is the mechanism). Kueue's
// CandidatesOrdering: candidates from other queues (borrowers) before the preemptor's own queue,
// then lower priority first, then most recently started first (least work lost), then id.
// A strict weak order over distinct workloads, so the chosen set never depends on input order.
#pragma once

#include "quota/quota_types.h"

namespace gf::quota {

struct VictimCandidate {
  const Workload* workload = nullptr;
  bool other_queue = false;
  PreemptionReason reason = PreemptionReason::kInQueue;
};

inline bool victim_before(const VictimCandidate& a, const VictimCandidate& b) {
  if (a.other_queue != b.other_queue) return a.other_queue;
  if (a.workload->priority != b.workload->priority) {
    return a.workload->priority < b.workload->priority;
  }
  if (a.workload->start_time != b.workload->start_time) {
    return a.workload->start_time > b.workload->start_time;
  }
  return a.workload->id < b.workload->id;
}

}  // namespace gf::quota
