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

// The same order among one queue's workloads (they are all "other queue" or all not): how the
// engine keeps each queue's admitted workloads, so that a plan reads victims in order without
// collecting and sorting them. The fields it reads never change while a workload is admitted
// (QuotaEngine::set_priority re-inserts).
struct VictimKeyLess {
  bool operator()(const Workload* a, const Workload* b) const {
    return victim_before({a, false, PreemptionReason::kInQueue},
                         {b, false, PreemptionReason::kInQueue});
  }
};

}  // namespace gf::quota
