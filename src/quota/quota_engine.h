// QuotaEngine: the mechanism that owns workloads and the usage ledger of one QuotaGraph.
// It answers fit questions, admits/releases/evicts incrementally (each walks one leaf-to-root
// path) and plans preemption (Kueue classic preemption). It does not order pending work: the
// scheduler owns the one queue and the one admission order (docs/scheduling.md), and asks the
// engine whether each candidate fits. Single-threaded; the caller serializes access. Every
// decision is appended to the optional DecisionLog.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <vector>

#include "core/bit_words.h"
#include "core/result.h"
#include "core/time.h"
#include "quota/decision_log.h"
#include "quota/quota_graph.h"
#include "quota/quota_types.h"
#include "quota/victim_order.h"

namespace gf::quota {

class QuotaEngine {
 public:
  // `log` may be null; if set it must outlive the engine.
  explicit QuotaEngine(QuotaGraph graph, DecisionLog* log = nullptr);

  const QuotaGraph& graph() const { return graph_; }
  const Ledger& ledger() const { return ledger_; }
  const ResourceVector& usage(NodeId node) const { return ledger_.usage[node]; }
  int64_t admitted_jobs(NodeId node) const { return ledger_.jobs[node]; }
  // Pending workloads in `node`'s subtree (O(graph size), no scan of the workloads).
  int64_t pending_count(NodeId node) const;

  // Registers a pending workload (w.admitted is ignored). Errors: duplicate id, unknown queue.
  Status add_workload(Workload w);
  const Workload* find(WorkloadId id) const;
  // Changes a workload's priority (pending or admitted); the caller re-plans afterwards.
  Status set_priority(WorkloadId id, int32_t priority);

  FitResult fits(NodeId leaf, const ResourceVector& request) const;
  FitResult fits(WorkloadId id) const;

  // Admits a pending workload that fits; `now` becomes its start time. Errors: unknown, already
  // admitted, or does not fit (the message names the limit).
  Status admit(WorkloadId id, Time now);
  // Admits without a fit check, keeping `start_time`: restoring state (replay, a snapshot, a
  // changed quota graph, undoing a simulated eviction). Usage may then exceed a limit; such
  // workloads are the victims a later preemption finds (docs/quota-frontends.md "lowering a
  // limit").
  Status restore_admitted(WorkloadId id, Time start_time);
  // Replaces a pending workload's request (a job trying another flavor). Errors: unknown,
  // admitted, negative.
  Status set_request(WorkloadId id, const ResourceVector& request);
  // The workload finished: its usage is returned (if admitted) and it is forgotten.
  Status release(WorkloadId id);
  // Preempted: its usage is returned and it goes back to pending, keeping its creation_seq.
  Status evict(WorkloadId id);

  // Plans which admitted workloads to evict so that pending `incoming` fits (see docs/quota.md).
  // Victims that started less than `min_run_time` before `now` are protected from cohort
  // preemption (Reclaim, BorrowWithinCohort). Pure: changes nothing but the log.
  PreemptionPlan plan_preemption(WorkloadId incoming, Time now,
                                 Duration min_run_time = Duration::zero()) const;

 private:
  struct Attempt {
    bool allow_borrowing = false;
    bool cohort_candidates = false;  // other queues' workloads are eligible
    PreemptionReason cohort_reason = PreemptionReason::kReclaim;
  };
  std::vector<Attempt> attempts_for(const Workload& w,
                                    const std::bitset<kMaxResources>& contested) const;
  // What an attempt may take: the preemptor's own eligible workloads (in victim order) and the
  // other queues whose workloads try_attempt reads lazily; nullopt when the attempt cannot
  // succeed whatever it takes.
  // Other queues whose workloads may be victims (the own queue's are read in try_attempt).
  struct Candidates {
    std::vector<NodeId> others;
  };
  std::optional<Candidates> candidates(const Workload& w, const Attempt& attempt,
                                       const std::bitset<kMaxResources>& contested,
                                       bool jobs_contested) const;
  bool eligible(const Workload& preemptor, const Workload& c, const Attempt& attempt,
                bool same_queue) const;
  bool attempt_fits(const Ledger& ledger, const Workload& w, const Attempt& attempt) const;
  std::optional<std::vector<Victim>> try_attempt(const Workload& w, const Attempt& attempt,
                                                 const Candidates& cands,
                                                 const std::bitset<kMaxResources>& contested,
                                                 bool jobs_contested, Time now,
                                                 Duration min_run_time) const;
  void log_wait(const Workload& w, const FitResult& fit) const;
  // Charges (+1) or returns (-1) w's request on ledger_, keeping borrowing_ in step.
  void charge_ledger(const Workload& w, int sign);
  void log(const Decision& d) const {
    if (log_ != nullptr) log_->append(d);
  }

  QuotaGraph graph_;
  Ledger ledger_;
  DecisionLog* log_;
  // try_attempt's working copy of the ledger. It is left equal to ledger_ after every attempt,
  // so consecutive plans with no admission in between skip the copy.
  mutable Ledger scratch_;
  uint64_t ledger_version_ = 0;
  mutable uint64_t scratch_version_ = ~uint64_t{0};
  // By id; never iterated, so the order of a hash map is harmless. Its nodes are stable.
  std::unordered_map<WorkloadId, Workload> workloads_;
  std::vector<int64_t> pending_;  // per node (queues only): how many of its workloads wait
  // Bitset over nodes: the queues whose usage is above their own quota in some dimension (the
  // only queues whose workloads a reclaim may take), so a plan need not look at every queue.
  BitWords borrowing_;
  // Per node (queues only), in victim order; the pointers are into workloads_.
  std::vector<std::set<const Workload*, VictimKeyLess>> admitted_;
};

}  // namespace gf::quota
