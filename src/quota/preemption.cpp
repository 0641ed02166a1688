// QuotaEngine::plan_preemption: Kueue classic preemption over the quota tree.
//
// Attempts (each a candidate set plus a fit rule), tried in order until one succeeds:
//   reclaim   - only when the queue is in a cohort, reclaim != Never, and its usage is below
//               nominal in every contested dimension: own-queue candidates (withinQueue policy)
//               plus other queues' workloads (reclaim policy); the incoming workload must then
//               fit WITHOUT borrowing.
//   borrow    - own-queue candidates, plus (borrowWithinCohort = LowerPriority) other queues'
//               lower-priority workloads at or below max_priority_threshold; may borrow.
// With borrowWithinCohort enabled the borrow attempt goes first (Kueue's order).
// Within an attempt: take candidates in victim order (victim_order.h), greedily, skipping another
// queue's workload once that queue no longer borrows in a contested dimension (so a workload
// running within its queue's nominal is never reclaimed), until the incoming workload fits; then
// minimize by adding victims back from the most valuable down while it still fits. If no prefix
// of candidates makes it fit, the attempt yields nothing: plans are never partial.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string>

#include "quota/quota_engine.h"

namespace gf::quota {
namespace {

// The dimensions set in a bitset, listed once so that per-workload checks skip the others.
struct DimList {
  std::array<ResourceId, kMaxResources> dims{};
  size_t size = 0;
  explicit DimList(const std::bitset<kMaxResources>& set) {
    for (size_t d = 0; d < kMaxResources; ++d) {
      if (set.test(d)) dims[size++] = static_cast<ResourceId>(d);
    }
  }
};

bool overlaps(const ResourceVector& request, const DimList& dims) {
  for (size_t i = 0; i < dims.size; ++i) {
    if (request.get(dims.dims[i]) > 0) return true;
  }
  return false;
}

using AdmittedSet = std::set<const Workload*, VictimKeyLess>;

// The next candidate of the incoming workload's own queue at or after `it` (which it moves
// past), in victim order, or null when there is none: every within-queue rule takes only lower
// (or equal, newer) priorities, so the candidates are a prefix of the queue. `eligible` is
// QuotaEngine::eligible for a same-queue candidate.
template <typename Eligible>
const Workload* next_own(AdmittedSet::const_iterator& it, AdmittedSet::const_iterator end,
                         const Workload& w, WithinQueuePolicy within, const DimList& dims,
                         bool jobs_contested, const Eligible& eligible) {
  while (it != end) {
    const Workload& c = **it;
    if (within == WithinQueuePolicy::kNever || c.priority > w.priority ||
        (c.priority == w.priority && within == WithinQueuePolicy::kLowerPriority)) {
      it = end;
      return nullptr;
    }
    ++it;
    if (!jobs_contested && !overlaps(c.request, dims)) continue;
    if (!eligible(c)) continue;
    return &c;
  }
  return nullptr;
}

}  // namespace

std::vector<QuotaEngine::Attempt> QuotaEngine::attempts_for(
    const Workload& w, const std::bitset<kMaxResources>& contested) const {
  const PreemptionPolicy& p = graph_.spec(w.queue).preemption;
  const bool in_cohort = graph_.parent(w.queue) != kNoNode;
  bool under_nominal = true;
  for (size_t d = 0; d < kMaxResources; ++d) {
    const auto r = static_cast<ResourceId>(d);
    if (contested.test(d) &&
        ledger_.usage[w.queue].get(r) >= graph_.subtree_quota(w.queue).get(r)) {
      under_nominal = false;
    }
  }
  const bool reclaim = in_cohort && p.reclaim != ReclaimPolicy::kNever && under_nominal;
  const bool bwc = in_cohort && p.reclaim != ReclaimPolicy::kNever &&
                   p.borrow_within_cohort == BorrowWithinCohortPolicy::kLowerPriority;
  const Attempt no_borrow{false, true, PreemptionReason::kReclaim};
  const Attempt borrow{true, bwc, PreemptionReason::kBorrowWithinCohort};
  std::vector<Attempt> out;
  if (bwc) out.push_back(borrow);
  if (reclaim) out.push_back(no_borrow);
  if (!bwc) out.push_back(borrow);
  return out;
}

bool QuotaEngine::eligible(const Workload& preemptor, const Workload& c, const Attempt& attempt,
                           bool same_queue) const {
  const PreemptionPolicy& p = graph_.spec(preemptor.queue).preemption;
  if (same_queue) {
    switch (p.within_queue) {
      case WithinQueuePolicy::kNever:
        return false;
      case WithinQueuePolicy::kLowerPriority:
        return c.priority < preemptor.priority;
      case WithinQueuePolicy::kLowerOrNewerEqualPriority:
        return c.priority < preemptor.priority ||
               (c.priority == preemptor.priority && preemptor.creation_seq < c.creation_seq);
    }
    return false;
  }
  if (!attempt.cohort_candidates) return false;
  if (attempt.cohort_reason == PreemptionReason::kReclaim) {
    return p.reclaim == ReclaimPolicy::kAny ||
           (p.reclaim == ReclaimPolicy::kLowerPriority && c.priority < preemptor.priority);
  }
  return c.priority < preemptor.priority &&
         (!p.max_priority_threshold || c.priority <= *p.max_priority_threshold);
}

std::optional<QuotaEngine::Candidates> QuotaEngine::candidates(
    const Workload& w, const Attempt& attempt, const std::bitset<kMaxResources>& contested,
    bool jobs_contested) const {
  Candidates out;
  // Without borrowing, the incoming workload's own queue must end within its nominal, and only
  // its own-queue victims lower that queue's usage: if even all of them do not make room, no set
  // of victims does (usage only falls as victims are taken, and fitting is monotone in it), and
  // the other queues' workloads need not be looked at. Own candidates are read in victim order
  // only until they make room (the same answer as summing all of them).
  if (!attempt.allow_borrowing) {
    ResourceVector own = ledger_.usage[w.queue];
    const ResourceVector& nominal = graph_.subtree_quota(w.queue);
    auto room = [&] {
      for (size_t d = 0; d < kMaxResources; ++d) {
        const auto r = static_cast<ResourceId>(d);
        if (w.request.get(r) > 0 && own.get(r) + w.request.get(r) > nominal.get(r)) return false;
      }
      return true;
    };
    const DimList contested_dims(contested);
    auto it = admitted_[w.queue].begin();
    while (!room()) {
      const Workload* c =
          next_own(it, admitted_[w.queue].end(), w, graph_.spec(w.queue).preemption.within_queue,
                   contested_dims, jobs_contested,
                   [&](const Workload& c) { return eligible(w, c, attempt, /*same_queue=*/true); });
      if (c == nullptr) return std::nullopt;
      own -= c->request;
    }
  }
  if (!attempt.cohort_candidates) return out;
  const NodeId root = graph_.root(w.queue);
  auto consider = [&](NodeId leaf) {
    if (!graph_.is_queue(leaf) || leaf == w.queue || graph_.root(leaf) != root) return;
    // Another queue's workloads are victims only while that queue borrows in a contested
    // dimension (try_attempt re-checks as it goes); skip the others without looking at them.
    if (!jobs_contested && !graph_.borrowing_in(ledger_, leaf, contested)) return;
    if (admitted_[leaf].empty()) return;
    out.others.push_back(leaf);
  };
  if (jobs_contested) {
    for (NodeId leaf = 0; leaf < graph_.size(); ++leaf) consider(leaf);
    return out;
  }
  // Only queues that borrow in some dimension can borrow in a contested one: read their bits,
  // in ascending node order as the whole walk would.
  borrowing_.each([&](size_t leaf) {
    consider(static_cast<NodeId>(leaf));
    return true;
  });
  return out;
}

bool QuotaEngine::attempt_fits(const Ledger& ledger, const Workload& w,
                               const Attempt& attempt) const {
  const FitResult fit = graph_.fits(ledger, w.queue, w.request);
  return fit.fits && (attempt.allow_borrowing || !fit.borrows);
}

std::optional<std::vector<Victim>> QuotaEngine::try_attempt(
    const Workload& w, const Attempt& attempt, const Candidates& cands,
    const std::bitset<kMaxResources>& contested, bool jobs_contested, Time now,
    Duration min_run_time) const {
  if (scratch_version_ != ledger_version_) {
    scratch_.usage.assign(ledger_.usage.begin(), ledger_.usage.end());
    scratch_.jobs.assign(ledger_.jobs.begin(), ledger_.jobs.end());
    scratch_version_ = ledger_version_;
  }
  Ledger& scratch = scratch_;
  const DimList contested_dims(contested);
  // Victims are taken in victim order (victim_before = "goes first") across all candidates: a
  // k-way merge of per-queue streams, each already in victim order (admitted_ keeps it), read
  // only as far as needed. A queue that no longer borrows in a contested dimension yields no
  // further victims (taking others' workloads never raises its usage), so it leaves
  // the merge at once.
  const PreemptionPolicy& policy = graph_.spec(w.queue).preemption;
  // Every cohort rule but reclaim: Any takes only lower priorities: a prefix of each queue.
  const bool any_priority =
      attempt.cohort_reason == PreemptionReason::kReclaim && policy.reclaim == ReclaimPolicy::kAny;
  struct Stream {
    bool own = false;  // the incoming workload's own queue
    AdmittedSet::const_iterator it, end;
    VictimCandidate head;
  };
  const WithinQueuePolicy within = policy.within_queue;
  auto same_queue_eligible = [&](const Workload& c) {
    return eligible(w, c, attempt, /*same_queue=*/true);
  };
  auto advance = [&](Stream& s) {
    if (s.own) {
      const Workload* c =
          next_own(s.it, s.end, w, within, contested_dims, jobs_contested, same_queue_eligible);
      if (c == nullptr) return false;
      s.head = {c, false, PreemptionReason::kInQueue};
      return true;
    }
    while (s.it != s.end) {
      const Workload& c = **s.it++;
      if (!any_priority && c.priority >= w.priority) return false;
      if (!jobs_contested && !overlaps(c.request, contested_dims)) continue;
      if (!eligible(w, c, attempt, /*same_queue=*/false)) continue;
      if (now - c.start_time < min_run_time) {
        log({DecisionKind::kProtected, w.id, c.id, c.queue, 0, 0, 0});
        continue;
      }
      s.head = {&c, true, attempt.cohort_reason};
      return true;
    }
    return false;
  };
  std::vector<Stream> streams;
  streams.reserve(cands.others.size() + 1);
  std::vector<size_t> heads;
  heads.reserve(cands.others.size() + 1);
  Stream own;
  own.own = true;
  own.it = admitted_[w.queue].begin();
  own.end = admitted_[w.queue].end();
  if (advance(own)) streams.push_back(own);
  for (NodeId leaf : cands.others) {
    Stream s;
    s.it = admitted_[leaf].begin();
    s.end = admitted_[leaf].end();
    if (advance(s)) streams.push_back(s);
  }
  for (size_t k = 0; k < streams.size(); ++k) heads.push_back(k);
  auto later = [&](size_t a, size_t b) { return victim_before(streams[b].head, streams[a].head); };
  std::make_heap(heads.begin(), heads.end(), later);
  std::vector<VictimCandidate> chosen;
  bool fit = false;
  while (!heads.empty()) {
    std::pop_heap(heads.begin(), heads.end(), later);
    Stream& s = streams[heads.back()];
    const VictimCandidate c = s.head;
    if (c.other_queue && !graph_.borrowing_in(scratch, c.workload->queue, contested)) {
      heads.pop_back();  // the whole queue is done
      continue;
    }
    graph_.charge(scratch, c.workload->queue, c.workload->request, -1);
    chosen.push_back(c);
    if (attempt_fits(scratch, w, attempt)) {
      fit = true;
      break;
    }
    if (advance(s)) {
      std::push_heap(heads.begin(), heads.end(), later);
    } else {
      heads.pop_back();
    }
  }
  if (!fit) {
    for (const VictimCandidate& c : chosen)
      graph_.charge(scratch, c.workload->queue, c.workload->request, +1);
    return std::nullopt;
  }
  // Minimize: give back the most valuable victims first while the incoming workload still fits.
  std::vector<bool> needed(chosen.size(), true);
  for (size_t i = chosen.size(); i-- > 0;) {
    const Workload& v = *chosen[i].workload;
    graph_.charge(scratch, v.queue, v.request, +1);
    if (attempt_fits(scratch, w, attempt)) {
      needed[i] = false;
    } else {
      graph_.charge(scratch, v.queue, v.request, -1);
    }
  }
  std::vector<Victim> victims;
  for (size_t i = 0; i < chosen.size(); ++i) {
    // Leave the scratch ledger equal to ledger_ again.
    if (needed[i])
      graph_.charge(scratch, chosen[i].workload->queue, chosen[i].workload->request, +1);
    if (needed[i])
      victims.push_back({chosen[i].workload->id, chosen[i].workload->queue, chosen[i].reason});
  }
  return victims;
}

PreemptionPlan QuotaEngine::plan_preemption(WorkloadId incoming, Time now,
                                            Duration min_run_time) const {
  PreemptionPlan plan;
  const Workload* w = find(incoming);
  if (w == nullptr || w->admitted) {
    plan.why = fmt::format("workload {} is not a pending workload", incoming);
    return plan;
  }
  plan.blocking = fits(w->queue, w->request);
  if (plan.blocking.fits) {
    plan.outcome = PlanOutcome::kFitsNow;
    return plan;
  }
  std::bitset<kMaxResources> contested;
  const ResourceVector avail = graph_.available(ledger_, w->queue);
  for (size_t d = 0; d < kMaxResources; ++d) {
    const auto r = static_cast<ResourceId>(d);
    if (w->request.get(r) > 0 && w->request.get(r) > avail.get(r)) contested.set(d);
  }
  bool jobs_contested = false;
  for (NodeId n = w->queue; n != kNoNode; n = graph_.parent(n)) {
    const auto& max_jobs = graph_.spec(n).max_jobs;
    if (max_jobs && ledger_.jobs[n] + 1 > *max_jobs) jobs_contested = true;
  }
  if (plan.blocking.limit != LimitKind::kNotCovered &&
      plan.blocking.limit != LimitKind::kUnknownQueue) {
    for (const Attempt& attempt : attempts_for(*w, contested)) {
      const auto cands = candidates(*w, attempt, contested, jobs_contested);
      if (!cands) continue;
      auto victims = try_attempt(*w, attempt, *cands, contested, jobs_contested, now, min_run_time);
      if (!victims) continue;
      plan.outcome = PlanOutcome::kPreempt;
      plan.victims = std::move(*victims);
      for (const Victim& v : plan.victims) {
        log({DecisionKind::kVictim, w->id, v.id, v.queue, 0, 0, static_cast<uint8_t>(v.reason)});
      }
      return plan;
    }
  }
  plan.outcome = PlanOutcome::kImpossible;
  plan.why = "no eligible set of victims makes it fit";
  log({DecisionKind::kNoPreemption, w->id, 0, plan.blocking.node, plan.blocking.resource,
       plan.blocking.shortfall, static_cast<uint8_t>(plan.blocking.limit)});
  return plan;
}

}  // namespace gf::quota
