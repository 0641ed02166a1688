// Plain value types of the quota engine: node specs (Kueue ClusterQueue/Cohort semantics),
// workloads, fit results and preemption plans. See docs/quota.md for the model.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/resources.h"
#include "core/time.h"

namespace gf::quota {

// Dense node ids, assigned in insertion order. A parent is always added before its children, so
// parent id < child id for every edge (the graph code relies on this to fold subtrees bottom-up).
using NodeId = uint32_t;
inline constexpr NodeId kNoNode = std::numeric_limits<NodeId>::max();

// Workload ids are chosen by the caller; they are the final deterministic tie-break everywhere.
using WorkloadId = uint64_t;

// "No limit" for borrowing and lending limits. With saturating arithmetic an absent limit behaves
// exactly like this value, which keeps the inner loops free of optionals.
inline constexpr int64_t kUnlimited = std::numeric_limits<int64_t>::max();

// Deepest allowed tree (root cohort = depth 1). Paths are walked on the stack.
inline constexpr size_t kMaxDepth = 8;

enum class NodeKind : uint8_t { kCohort, kQueue };

// Kueue `withinClusterQueue`.
enum class WithinQueuePolicy : uint8_t { kNever, kLowerPriority, kLowerOrNewerEqualPriority };
// Kueue `reclaimWithinCohort`.
enum class ReclaimPolicy : uint8_t { kNever, kLowerPriority, kAny };
// Kueue `borrowWithinCohort.policy`.
enum class BorrowWithinCohortPolicy : uint8_t { kNever, kLowerPriority };
// Kueue `queueingStrategy`.
enum class QueueingStrategy : uint8_t { kBestEffortFifo, kStrictFifo };

struct PreemptionPolicy {
  WithinQueuePolicy within_queue = WithinQueuePolicy::kNever;
  ReclaimPolicy reclaim = ReclaimPolicy::kNever;
  BorrowWithinCohortPolicy borrow_within_cohort = BorrowWithinCohortPolicy::kNever;
  // Only victims with priority <= this may be preempted while borrowing; absent = no threshold.
  std::optional<int32_t> max_priority_threshold;
};

// Quota of one node in one resource dimension (a flavor is just another resource id).
struct ResourceQuota {
  ResourceId resource = kCpu;
  int64_t nominal = 0;                     // guaranteed; >= 0
  std::optional<int64_t> borrowing_limit;  // absent = unbounded up to the parent
  std::optional<int64_t> lending_limit;    // absent = all unused nominal may be lent; <= nominal
};

struct NodeSpec {
  std::string name;                   // unique in the graph
  NodeKind kind = NodeKind::kQueue;   // only queues (leaves) hold workloads
  NodeId parent = kNoNode;            // must be a cohort added earlier; kNoNode = root
  std::vector<ResourceQuota> quotas;  // dimensions not listed: nominal 0, limits absent
  std::optional<int64_t> max_jobs;    // bound on admitted workloads in this subtree
  int64_t weight_milli = 1000;        // fair-share weight (x1000); stored for the fair-share layer
  PreemptionPolicy preemption;        // queues only
  QueueingStrategy queueing = QueueingStrategy::kBestEffortFifo;  // queues only
};

struct Workload {
  WorkloadId id = 0;
  NodeId queue = kNoNode;     // a leaf queue
  int32_t priority = 0;       // higher = more important
  uint64_t creation_seq = 0;  // FIFO tie-break; smaller = older
  Time start_time{};          // set by admit(); meaningful while admitted
  ResourceVector request;
  bool admitted = false;
};

// Which limit stops a request.
enum class LimitKind : uint8_t {
  kNone,
  kUnknownQueue,    // the node does not exist or is not a queue
  kNotCovered,      // the queue declares no quota in this dimension (Kueue: flavor not defined)
  kNominal,         // a standalone queue's own nominal quota
  kBorrowingLimit,  // `node`'s borrowing limit
  kCohortCapacity,  // the root cohort's pooled (lendable) capacity is used up
  kMaxJobs,         // `node`'s max_jobs
};

std::string_view limit_kind_name(LimitKind kind);

// The answer to "does this request fit in this queue now, and if not, why".
struct FitResult {
  bool fits = true;
  bool borrows = false;  // fits, but the queue's usage would exceed its nominal in some dimension
  LimitKind limit = LimitKind::kNone;
  NodeId node = kNoNode;    // the node whose limit binds
  ResourceId resource = 0;  // the binding dimension (kMaxJobs for max_jobs)
  int64_t requested = 0;
  int64_t available = 0;
  int64_t shortfall = 0;  // requested - available, > 0 when !fits
};

enum class PreemptionReason : uint8_t { kInQueue, kReclaim, kBorrowWithinCohort };
std::string_view preemption_reason_name(PreemptionReason reason);

struct Victim {
  WorkloadId id = 0;
  NodeId queue = kNoNode;
  PreemptionReason reason = PreemptionReason::kInQueue;
};

enum class PlanOutcome : uint8_t {
  kFitsNow,     // no preemption needed
  kPreempt,     // evicting `victims` makes the incoming workload fit
  kImpossible,  // no eligible set of victims makes it fit; `victims` is empty (never partial)
};

struct PreemptionPlan {
  PlanOutcome outcome = PlanOutcome::kImpossible;
  std::vector<Victim> victims;  // in eviction order
  FitResult blocking;           // the fit result before any preemption
  std::string why;              // human-readable reason when kImpossible
};

}  // namespace gf::quota
