// One scheduling pass (Scheduler::schedule) and one attempt to admit a job, in the phases of
// docs/scheduling.md "One pass": due work, gangs to place again, queue heads best first (each
// tried by park → nominate → preempt, trial evictions in a Statement), the next wake-up. The
// structure the pass works on, and the mutations it shares with replay, are in scheduler.cpp.
#include <fmt/format.h>

#include <algorithm>
#include <queue>

#include "schedule/scheduler.h"

namespace gf::sched {

// ---------------------------------------------------------------------------------------------
// Trial evictions

// Evictions that are undone exactly unless committed, the shape of KAI-Scheduler's framework
// Statement: each operation is logged with what it changed, rollback() undoes the log in
// reverse order, commit() keeps every change. A Statement dropped without commit() rolls back.
class Scheduler::Statement {
 public:
  explicit Statement(Scheduler& s) : s_(s) {}
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement() { rollback(); }

  // Unbinds the job's pods, if it has any placed.
  void unbind(Job& j) {
    if (j.placement) ops_.push_back(Op{OpKind::kUnbindPods, &j, *j.placement});
    s_.do_unbind(j);
  }
  // Returns the job's quota, if charged.
  void return_quota(Job& j) {
    if (s_.quota_charged(j)) {
      ops_.push_back(Op{OpKind::kReturnQuota, &j, {}});
      s_.engine_evict(j);
    }
  }
  void rollback() {
    for (auto it = ops_.rbegin(); it != ops_.rend(); ++it) {
      switch (it->kind) {
        case OpKind::kUnbindPods:
          s_.rebind(*it->job, it->placement);
          break;
        case OpKind::kReturnQuota:
          s_.engine_admit(*it->job, it->job->admitted_at);
          break;
      }
    }
    ops_.clear();
  }
  void commit() { ops_.clear(); }

 private:
  enum class OpKind : uint8_t { kUnbindPods, kReturnQuota };
  struct Op {
    OpKind kind;
    Job* job;             // a node of jobs_: stable while the statement lives
    Placement placement;  // kUnbindPods: where its pods were
  };
  Scheduler& s_;
  std::vector<Op> ops_;
};

bool Scheduler::quota_charged(const Job& j) const {
  if (!j.spec.quota_managed || j.spec.queue == quota::kNoNode) return false;
  const quota::Workload* w = engine_->find(j.spec.key);
  return w != nullptr && w->admitted;
}

void Scheduler::rebind(Job& j, const Placement& p) {
  j.placement = p;
  index_.commit(j.spec.shape->alternatives[j.alternative].pods, p);
  for (const PodBinding& b : p.pods) bind_on_node(b.node, j.spec.key);
  if (j.spec.time_limit) ends_.insert({j.expected_end, j.spec.key});  // as before the trial
}

// ---------------------------------------------------------------------------------------------
// One attempt to admit a job

bool Scheduler::park_if_infeasible(Job& j) {
  for (const Alternative& alt : j.spec.shape->alternatives) {
    if (shape_feasible(j, alt)) return false;
  }
  queue_of(j).erase(j);
  j.wait = Wait::kParked;
  j.last_kind = WaitKind::kInfeasible;
  parked_.insert(j.spec.key);
  log_.append({quota::DecisionKind::kWait, j.spec.key, 0, j.spec.queue, 0, 0, 100});
  return true;
}

std::optional<Scheduler::Nomination> Scheduler::nominate(
    Job& j, Time now, std::vector<uint16_t>& quota_blocked,
    std::optional<uint16_t>& placement_blocked) {
  const JobShape& shape = *j.spec.shape;
  const JobKey key = j.spec.key;
  for (uint16_t a = 0; a < shape.alternatives.size(); ++a) {
    const Alternative& alt = shape.alternatives[a];
    if (!shape_feasible(j, alt)) continue;
    bool borrows = false;
    if (j.spec.quota_managed) {
      GF_CHECK_OK(engine_->set_request(key, alt.quota_request));
      const quota::FitResult fit = engine_->fits(key);
      if (!fit.fits) {
        quota_blocked.push_back(a);
        j.last_kind = WaitKind::kQuota;
        continue;
      }
      if (!within_ceiling(j, alt.quota_request)) {
        j.last_kind = WaitKind::kCeiling;
        continue;
      }
      borrows = fit.borrows;
      if (borrows) {
        auto h = holds_.find(root_of(j));
        if (h != holds_.end() && !h->second.empty() && !h->second.contains(key)) {
          j.last_kind = WaitKind::kHeldForReclaim;
          continue;
        }
      }
    }
    std::optional<Placement> p = choose_now(j, alt, now);
    if (!p) {
      j.last_kind = WaitKind::kPlacement;
      if (!placement_blocked) placement_blocked = a;
      continue;
    }
    return Nomination{a, std::move(*p), borrows};
  }
  return std::nullopt;
}

void Scheduler::admit_nominated(Job& j, Nomination n, Time now, PassResult& out) {
  do_admit(j, n.alternative, n.placement, now, false);
  out.actions.push_back(admit_action(j, std::move(n.placement), false));
  out.actions.back().borrowing = n.borrows;
}

void Scheduler::hold_if_protected(const Job& j, const Alternative& alt,
                                  const quota::PreemptionPlan& plan, Time now) {
  const quota::QuotaGraph& g = engine_->graph();
  const bool within_nominal = !g.would_borrow(engine_->ledger(), j.spec.queue, alt.quota_request);
  if (within_nominal && options_.min_run_time > Duration::zero() &&
      g.spec(j.spec.queue).preemption.reclaim != quota::ReclaimPolicy::kNever &&
      plan.blocking.limit == quota::LimitKind::kCohortCapacity) {
    const quota::NodeId root = root_of(j);
    holds_[root].insert(j.spec.key);
    hold_expiry_.insert({now + options_.min_run_time, root});
  }
}

bool Scheduler::try_preempt(Job& j, uint16_t a, Time now, PassResult& out) {
  const Alternative& alt = j.spec.shape->alternatives[a];
  const JobKey key = j.spec.key;
  GF_CHECK_OK(engine_->set_request(key, alt.quota_request));
  const quota::PreemptionPlan plan = engine_->plan_preemption(key, now, options_.min_run_time);
  if (plan.outcome != quota::PlanOutcome::kPreempt) {
    hold_if_protected(j, alt, plan, now);
    return false;
  }
  // Evict the victims tentatively: first their pods, to check that the gang can be placed on
  // what they free (placement reads no quota), then, only when it can, their quota, to check that
  // it fits. The plan made it fit on paper; the ledger and the ceiling confirm it.
  Statement trial(*this);
  std::vector<Job*> victims;
  std::vector<Placement> prior;  // a victim without pods placed: cluster kNoCluster
  victims.reserve(plan.victims.size());
  prior.reserve(plan.victims.size());
  for (const quota::Victim& v : plan.victims) {
    Job& vj = jobs_.at(v.id);
    victims.push_back(&vj);
    prior.push_back(vj.placement.value_or(Placement{}));
    trial.unbind(vj);
  }
  std::optional<Placement> p = choose_now(j, alt, now);
  quota::FitResult fit;
  if (p) {
    for (Job* vj : victims) trial.return_quota(*vj);
    fit = engine_->fits(key);
    if (!fit.fits || !within_ceiling(j, alt.quota_request)) p.reset();
  }
  if (!p) {
    trial.rollback();
    j.last_kind = WaitKind::kPlacement;
    return false;
  }
  trial.commit();
  requeue_victims(j, plan.victims, prior, now, out);
  admit_nominated(j, Nomination{a, std::move(*p), fit.borrows}, now, out);
  return true;
}

void Scheduler::requeue_victims(const Job& preemptor, const std::vector<quota::Victim>& victims,
                                const std::vector<Placement>& prior, Time now, PassResult& out) {
  std::vector<JobKey> terminated;
  for (size_t i = 0; i < victims.size(); ++i) {
    const quota::Victim& v = victims[i];
    Job& vj = jobs_.at(v.id);
    const bool term = vj.spec.max_preemptions && vj.spec.preemptions + 1 > *vj.spec.max_preemptions;
    const Time until = backoff_for(vj.spec.preemptions + 1, now);
    Action act;
    act.kind = ActionKind::kPreempt;
    act.job = v.id;
    act.other = preemptor.spec.key;
    act.reason = v.reason;
    act.terminated = term;
    act.until = until;
    act.placement = prior[i];
    act.message = fmt::format("{}: preempted by job {} (priority {}) in {}{}",
                              quota::preemption_reason_name(v.reason), preemptor.spec.key,
                              preemptor.spec.priority, g_name(v.queue),
                              term ? "; preemption retries exhausted" : "");
    do_evict(vj, now, until, term);
    log_.append({quota::DecisionKind::kVictim, preemptor.spec.key, v.id, v.queue, 0, 0,
                 static_cast<uint8_t>(v.reason)});
    out.actions.push_back(std::move(act));
    if (term) terminated.push_back(v.id);
  }
  for (JobKey t : terminated) {
    engine_forget(jobs_.at(t));
    jobs_.erase(t);
  }
}

Scheduler::TryResult Scheduler::try_admit(Job& j, Time now, PassResult& out) {
  touch(j);
  if (park_if_infeasible(j)) return TryResult::kFailed;
  std::vector<uint16_t> quota_blocked;
  std::optional<uint16_t> placement_blocked;
  if (std::optional<Nomination> n = nominate(j, now, quota_blocked, placement_blocked)) {
    admit_nominated(j, std::move(*n), now, out);
    return TryResult::kAdmitted;
  }
  // Quota said no: may preemption make room (Kueue classic, see quota/preemption.cpp)?
  for (uint16_t a : quota_blocked) {
    if (try_preempt(j, a, now, out)) return TryResult::kAdmitted;
  }
  // It waits: for nodes, or for quota that running jobs hold; either way it reserves the nodes
  // that free soonest (docs/scheduling.md "Reservation and backfill").
  const bool for_quota = !placement_blocked && !quota_blocked.empty();
  update_reservation(j,
                     for_quota ? std::optional<uint16_t>(quota_blocked.front()) : placement_blocked,
                     for_quota, now);
  return TryResult::kFailed;
}

// ---------------------------------------------------------------------------------------------
// The pass

void Scheduler::requeue_due(Time now) {
  while (!backoff_.empty() && backoff_.begin()->first <= now) {
    const JobKey key = backoff_.begin()->second;
    backoff_.erase(backoff_.begin());
    Job& j = jobs_.at(key);
    make_active(j);
  }
  while (!hold_expiry_.empty() && hold_expiry_.begin()->first <= now) {
    const quota::NodeId root = hold_expiry_.begin()->second;
    hold_expiry_.erase(hold_expiry_.begin());
    holds_.erase(root);
    root_gen_[root] = ++gen_counter_;
  }
  if (parked_gen_ != topology_gen_) {
    parked_gen_ = topology_gen_;
    const std::vector<JobKey> parked(parked_.begin(), parked_.end());
    for (JobKey key : parked) {
      Job& j = jobs_.at(key);
      parked_.erase(key);
      make_active(j);  // re-checked against the new topology by try_admit
    }
  }
}

void Scheduler::place_unplaced(Time now, PassResult& out) {
  if (unplaced_.empty()) return;
  const std::vector<Key> waiting(unplaced_.begin(), unplaced_.end());
  for (const Key& k : waiting) {
    Job& j = jobs_.at(std::get<2>(k));
    std::optional<Placement> p = choose(j, j.spec.shape->alternatives[j.alternative]);
    if (!p) continue;
    do_admit(j, j.alternative, *p, now, true);
    out.actions.push_back(admit_action(j, std::move(*p), true));
  }
}

// The heads of one pass. Across queues: fits without borrowing first, then (FAIR_SHARE roots)
// the smallest weighted dominant share, then priority, then submission order. Each queue is
// walked once per pass by a cursor; a job that failed before is skipped while neither its
// cohort's capacity nor the nodes changed, and within a pass a job is skipped when an earlier
// job of its queue with no higher priority and no larger request already failed on quota
// (admission is monotone in both), or when the same gang shape found no room.
class Scheduler::HeadQueues {
 public:
  struct Head {
    bool borrows;
    int64_t fair;
    Key key;
    uint32_t slot;
    bool operator<(const Head& o) const {  // "worse than": priority_queue pops the best
      return std::tie(borrows, fair, key) > std::tie(o.borrows, o.fair, o.key);
    }
  };

  HeadQueues(Scheduler& s, Time now)
      : s_(s),
        now_(now),
        cursor_(s.queues_.size()),
        blocked_(s.queues_.size(), false),
        failed_(s.queues_.size()),
        undominated_(s.queues_.size()) {
    for (size_t slot = 0; slot < s_.queues_.size(); ++slot)
      cursor_[slot] = s_.queues_[slot].active.begin();
    for (uint32_t slot = 0; slot < s_.queues_.size(); ++slot) push_head(slot);
  }

  // The best head, still at its queue's cursor (stale heap entries are dropped); nullopt when
  // every queue is exhausted or blocked.
  std::optional<Head> pop() {
    while (!heads_.empty()) {
      const Head h = heads_.top();
      heads_.pop();
      const auto& it = cursor_[h.slot];
      if (it != s_.queues_[h.slot].active.end() && it->first == h.key) return h;
    }
    return std::nullopt;
  }
  Job& job(const Head& h) { return *cursor_[h.slot]->second; }
  // The position after the head in its queue: taken before the attempt, which may take the
  // head out of the queue.
  std::map<Key, Job*>::iterator after(const Head& h) { return std::next(cursor_[h.slot]); }

  // The head was tried; `left` = it left the active set (admitted or parked), `next` = after(h)
  // from before the attempt. Moves the cursor and pushes the queue's next head.
  void tried(const Head& h, std::map<Key, Job*>::iterator next, bool left) {
    if (!left) {
      Job& j = job(h);
      j.failed_root_gen = s_.root_gen_of(j);
      j.failed_node_gen = s_.node_gen_;
      note_failure(j, h.slot);
      if (s_.queues_[h.slot].strict) {
        blocked_[h.slot] = true;
        return;
      }
    }
    cursor_[h.slot] = next;
    push_head(h.slot);
  }

 private:
  struct Failure {
    ResourceVector request;
    int32_t priority;
  };

  bool skippable(const Job& j, uint32_t slot) const {
    if (j.failed_root_gen == s_.root_gen_of(j) && j.failed_node_gen == s_.node_gen_) return true;
    const JobShape& shape = *j.spec.shape;
    if (shape.alternatives.size() != 1) return false;
    const ResourceVector& req = shape.alternatives[0].quota_request;
    for (const Failure& f : failed_[slot]) {
      if (f.priority >= j.spec.priority && f.request.fits_within(req)) return true;
    }
    if (!unrestricted(j)) return false;
    auto it = no_room_.find(&shape);
    return it != no_room_.end() && run_end(j) >= it->second;
  }

  void push_head(uint32_t slot) {
    Queue& q = s_.queues_[slot];
    if (blocked_[slot]) return;
    auto& it = cursor_[slot];
    while (it != q.active.end()) {
      const Job& j = *it->second;
      if (!skippable(j, slot)) break;
      if (q.strict) {  // StrictFIFO: a head that cannot go blocks the queue
        blocked_[slot] = true;
        return;
      }
      ++it;
    }
    if (it == q.active.end()) return;
    const Job& j = *it->second;
    bool borrows = false;
    int64_t fair = 0;
    if (j.spec.quota_managed) {
      borrows = s_.engine_->graph().would_borrow(s_.engine_->ledger(), j.spec.queue,
                                                 j.spec.shape->alternatives[0].quota_request);
      if (borrows) fair = s_.fair_key(j);
    }
    heads_.push(Head{borrows, fair, it->first, slot});
  }

  // Remembers why a single-alternative job failed, for the within-pass skips; blocks the queue
  // when every shape left in it asks for at least a request that already failed on quota.
  void note_failure(const Job& j, uint32_t slot) {
    const JobShape& shape = *j.spec.shape;
    if (shape.alternatives.size() != 1) return;
    if (j.last_kind == WaitKind::kQuota || j.last_kind == WaitKind::kCeiling ||
        j.last_kind == WaitKind::kHeldForReclaim) {
      failed_[slot].push_back(Failure{shape.alternatives[0].quota_request, j.spec.priority});
      // Every job left in this queue has no higher priority: if each shape in it is dominated
      // by a failed request, nothing more of this queue fits in this pass.
      if (every_shape_dominated(slot)) blocked_[slot] = true;
    } else if (j.last_kind == WaitKind::kPlacement && unrestricted(j) &&
               !s_.reservations_.contains(j.spec.key)) {
      // A job of this shape whose run reaches at least as far finds at least these nodes
      // reserved (docs/scheduling.md "Reservation and backfill"): no room for it either. With no
      // reservation at all, no job of the shape fits (reservations made later only take more).
      const Time end = s_.reservations_.empty() ? Time::min() : run_end(j);
      auto [it, inserted] = no_room_.emplace(&shape, end);
      if (!inserted) it->second = std::min(it->second, end);
    }
  }

  // The queue's shapes no failure of this pass dominates yet, built at the queue's first failure
  // and narrowed by each later one: each shape is compared with each failure once. A shape that
  // left the queue (its last job admitted) no longer counts. This relies on shapes only leaving
  // a queue during a pass (victims go to backoff; jobs become active between passes) and on
  // note_failure calling it once after each failure it records.
  bool every_shape_dominated(uint32_t slot) {
    const Queue& q = s_.queues_[slot];
    std::vector<const JobShape*>& open = undominated_[slot];
    const std::vector<Failure>& failed = failed_[slot];
    auto dominated = [](const JobShape* sp, const Failure& f) {
      return sp->alternatives.size() == 1 &&
             f.request.fits_within(sp->alternatives[0].quota_request);
    };
    if (failed.size() == 1) {
      open.clear();
      for (const auto& [sp, n] : q.shapes) {
        if (!dominated(sp, failed.front())) open.push_back(sp);
      }
    } else {
      std::erase_if(open, [&](const JobShape* sp) { return dominated(sp, failed.back()); });
    }
    std::erase_if(open, [&](const JobShape* sp) { return !q.shapes.contains(sp); });
    return open.empty();
  }

  Scheduler& s_;
  Time now_;
  std::priority_queue<Head> heads_;
  std::vector<std::map<Key, Job*>::iterator> cursor_;
  std::vector<bool> blocked_;
  std::vector<std::vector<Failure>> failed_;
  std::vector<std::vector<const JobShape*>> undominated_;  // see every_shape_dominated()
  // Shapes (any cluster allowed) that found no placement, with the earliest run end that failed.
  std::map<const JobShape*, Time> no_room_;
  // How far a job's run would reach if it started now (Time::max() without a time limit).
  Time run_end(const Job& j) const {
    return j.spec.time_limit ? now_ + *j.spec.time_limit : Time::max();
  }
};

void Scheduler::admit_heads(Time now, PassResult& out) {
  HeadQueues heads(*this, now);
  while (std::optional<HeadQueues::Head> h = heads.pop()) {
    Job& j = heads.job(*h);
    const auto next = heads.after(*h);
    const TryResult r = try_admit(j, now, out);
    heads.tried(*h, next, r == TryResult::kAdmitted || j.wait != Wait::kActive);
  }
}

std::optional<Time> Scheduler::next_wake() const {
  std::optional<Time> wake;
  if (!backoff_.empty()) wake = backoff_.begin()->first;
  if (!hold_expiry_.empty() && (!wake || hold_expiry_.begin()->first < *wake))
    wake = hold_expiry_.begin()->first;
  return wake;
}

PassResult Scheduler::schedule(Time now) {
  PassResult out;
  requeue_due(now);
  place_unplaced(now, out);
  admit_heads(now, out);
  out.next_wake = next_wake();
  return out;
}

}  // namespace gf::sched
