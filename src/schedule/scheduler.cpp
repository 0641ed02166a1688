#include "schedule/scheduler.h"

#include <algorithm>
#include <queue>

#include <fmt/format.h>

#include "core/hash.h"

namespace gf::sched {
namespace {

// Scheduler-level entries of the decision log (quota::DecisionKind covers the quota part).
constexpr auto kAdmitLog = quota::DecisionKind::kAdmit;
constexpr auto kEvictLog = quota::DecisionKind::kEvict;
constexpr auto kWaitLog = quota::DecisionKind::kWait;
constexpr auto kVictimLog = quota::DecisionKind::kVictim;
constexpr auto kReleaseLog = quota::DecisionKind::kRelease;

uint64_t placement_digest(const Placement& p) {
  uint64_t h = kFnv1aOffsetBasis;
  auto mix = [&](uint64_t v) { h = fnv1a_u64(v, h); };
  mix(p.cluster);
  for (const PodBinding& b : p.pods) {
    mix(b.pod_set);
    mix(b.index);
    mix(b.node);
  }
  return h;
}

}  // namespace

Scheduler::Scheduler(SchedulerOptions options)
    : options_(options), engine_(std::make_unique<quota::QuotaEngine>(quota::QuotaGraph{})) {
  queues_.resize(1);
  root_gen_.resize(1, ++gen_counter_);
  root_total_.resize(1);
}

// ---------------------------------------------------------------------------------------------
// Structure

uint32_t Scheduler::queue_slot(const JobSpec& spec) const {
  const auto free_slot = static_cast<uint32_t>(engine_->graph().size());
  return spec.quota_managed ? spec.queue : free_slot;
}

Scheduler::Queue& Scheduler::queue_of(const Job& j) { return queues_[queue_slot(j.spec)]; }

quota::NodeId Scheduler::root_of(const Job& j) const {
  if (!j.spec.quota_managed || j.spec.queue == quota::kNoNode) return quota::kNoNode;
  return engine_->graph().root(j.spec.queue);
}

void Scheduler::bump_root(const Job& j) {
  const quota::NodeId root = root_of(j);
  if (root != quota::kNoNode) root_gen_[root] = ++gen_counter_;
  root_gen_.back() = ++gen_counter_;
}

uint64_t Scheduler::root_gen_of(const Job& j) const {
  const quota::NodeId root = root_of(j);
  return root == quota::kNoNode ? root_gen_.back() : root_gen_[root];
}

void Scheduler::engine_admit(Job& j, Time start) {
  if (!j.spec.quota_managed || j.spec.queue == quota::kNoNode) return;
  const quota::Workload* w = engine_->find(j.spec.key);
  if (w == nullptr || w->admitted) return;
  GF_CHECK_OK(engine_->restore_admitted(j.spec.key, start));
  root_total_[engine_->graph().root(j.spec.queue)] += w->request;
}

void Scheduler::engine_evict(Job& j) {
  if (!j.spec.quota_managed || j.spec.queue == quota::kNoNode) return;
  const quota::Workload* w = engine_->find(j.spec.key);
  if (w == nullptr || !w->admitted) return;
  root_total_[engine_->graph().root(j.spec.queue)] -= w->request;
  GF_CHECK_OK(engine_->evict(j.spec.key));
}

void Scheduler::engine_forget(Job& j) {
  if (!j.spec.quota_managed || j.spec.queue == quota::kNoNode) return;
  engine_evict(j);
  GF_CHECK_OK(engine_->release(j.spec.key));
}

void Scheduler::make_active(Job& j) {
  touched_.insert(j.spec.key);
  if (j.spec.quota_managed && j.spec.queue == quota::kNoNode) {
    j.wait = Wait::kOrphan;
    return;
  }
  j.wait = Wait::kActive;
  j.failed_root_gen = 0;
  j.failed_node_gen = 0;
  Queue& q = queue_of(j);
  q.insert(j);
}

void Scheduler::leave_pending(Job& j) {
  switch (j.wait) {
    case Wait::kActive:
      queue_of(j).erase(j);
      break;
    case Wait::kBackoff:
      backoff_.erase({j.backoff_until, j.spec.key});
      break;
    case Wait::kParked:
      parked_.erase(j.spec.key);
      break;
    case Wait::kGone:
    case Wait::kAdmitted:
    case Wait::kOrphan:
      break;
  }
  for (auto& [root, holders] : holds_) holders.erase(j.spec.key);
}

void Scheduler::set_quota(quota::QuotaGraph graph,
                          const std::function<quota::NodeId(JobKey)>& requeue,
                          std::map<quota::NodeId, ResourceVector> ceilings,
                          std::vector<bool> fair_share_roots) {
  // Take every job out of the old structures, keeping what is durable about it.
  std::vector<JobKey> keys;
  keys.reserve(jobs_.size());
  for (const auto& [key, job] : jobs_) keys.push_back(key);
  std::sort(keys.begin(), keys.end());

  engine_ = std::make_unique<quota::QuotaEngine>(std::move(graph));
  ceilings_ = std::move(ceilings);
  fair_share_roots_ = std::move(fair_share_roots);
  const size_t n = engine_->graph().size();
  queues_.assign(n + 1, Queue{});
  root_gen_.assign(n + 1, ++gen_counter_);
  root_total_.assign(n + 1, ResourceVector{});
  for (size_t i = 0; i < n; ++i) {
    queues_[i].strict = engine_->graph().is_queue(static_cast<quota::NodeId>(i)) &&
                        engine_->graph().spec(static_cast<quota::NodeId>(i)).queueing ==
                            quota::QueueingStrategy::kStrictFifo;
  }
  holds_.clear();
  hold_expiry_.clear();
  unplaced_.clear();
  parked_.clear();
  backoff_.clear();
  for (JobKey key : keys) {
    Job& j = jobs_.at(key);
    if (j.spec.quota_managed) {
      const quota::NodeId q = requeue(key);
      j.spec.queue = engine_->graph().is_queue(q) ? q : quota::kNoNode;
      if (j.spec.queue != quota::kNoNode) {
        quota::Workload w;
        w.id = key;
        w.queue = j.spec.queue;
        w.priority = j.spec.priority;
        w.creation_seq = j.spec.creation_seq;
        w.request = j.spec.shape->alternatives[j.alternative].quota_request;
        GF_CHECK_OK(engine_->add_workload(w));
        if (j.wait == Wait::kAdmitted) engine_admit(j, j.admitted_at);
      }
    }
    if (j.wait == Wait::kAdmitted) {
      if (!j.placement) unplaced_.insert(key_of(j));
    } else if (j.wait == Wait::kBackoff) {
      backoff_.insert({j.backoff_until, key});
    } else {
      make_active(j);
    }
  }
  node_gen_ = ++gen_counter_;
}

// ---------------------------------------------------------------------------------------------
// Nodes

std::vector<Action> Scheduler::sync_cluster(
    std::string_view cluster, const std::vector<NodeDesc>& nodes,
    const std::map<std::string, int64_t, std::less<>>& targets,
    const std::map<std::string, ResourceVector, std::less<>>& type_capacity) {
  std::vector<Action> out;
  const ClusterIdx c = index_.cluster(cluster);
  bool grew = false;
  for (const auto& [type, cap] : type_capacity) index_.set_type_capacity(type, cap);
  std::set<NodeIdx> present;
  std::vector<NodeIdx> down;  // nodes that stopped taking pods in this sync (pods only ever sit on
                              // nodes that were schedulable when bound, so no other node has gangs)
  for (const NodeDesc& d : nodes) {
    const std::optional<NodeIdx> before = index_.find_node(c, d.instance_id);
    const bool was_schedulable = before && index_.schedulable(*before);
    const NodeIdx n =
        index_.upsert_node(c, d.instance_id, d.instance_type, d.capacity, d.schedulable);
    present.insert(n);
    if (!before) grew = true;
    if (d.schedulable && !was_schedulable) node_gen_ = ++gen_counter_;
    if (was_schedulable && !d.schedulable && !d.cordoned) down.push_back(n);
  }
  std::vector<NodeIdx> gone;
  for (NodeIdx n : index_.nodes_of(c)) {
    if (!present.contains(n)) {
      index_.set_schedulable(n, false);
      gone.push_back(n);
      down.push_back(n);
    }
  }
  std::sort(down.begin(), down.end());
  // Gangs on nodes that can no longer run them come down whole.
  for (NodeIdx n : down) {
    auto it = on_node_.find(n);
    if (it == on_node_.end()) continue;  // emptied by an earlier gang of this loop
    const std::vector<JobKey> victims(it->second.begin(), it->second.end());
    for (JobKey key : victims) {
      Job& j = jobs_.at(key);
      if (!j.placement) continue;
      Action a;
      a.kind = ActionKind::kInterrupt;
      a.job = key;
      a.node = n;
      a.placement = *j.placement;
      a.message = "node " + index_.instance_id(n) + " of cluster " + std::string(cluster) +
                  " can no longer run pods; the whole gang is unbound and placed again" +
                  (j.spec.sticky ? " on the same cluster (sticky)" : "");
      do_interrupt(j);
      log_.append({quota::DecisionKind::kEvict, key, 0, quota::kNoNode, 0, n, 2});
      out.push_back(std::move(a));
    }
  }
  for (NodeIdx n : gone) index_.remove_node(n);
  std::map<std::string, int64_t, std::less<>> t(targets.begin(), targets.end());
  index_.set_targets(c, std::move(t));
  if (grew || !targets.empty()) topology_gen_ += 1;
  return out;
}

// ---------------------------------------------------------------------------------------------
// Jobs

Status Scheduler::submit(JobSpec spec) {
  if (jobs_.contains(spec.key))
    return conflict_error(fmt::format("job {} already exists", spec.key));
  if (!spec.shape || spec.shape->alternatives.empty()) {
    return validation_error(fmt::format("job {}: no way to run it (no pods)", spec.key));
  }
  Job j;
  j.spec = std::move(spec);
  if (j.spec.quota_managed && !engine_->graph().is_queue(j.spec.queue))
    j.spec.queue = quota::kNoNode;
  if (j.spec.quota_managed && j.spec.queue != quota::kNoNode) {
    quota::Workload w;
    w.id = j.spec.key;
    w.queue = j.spec.queue;
    w.priority = j.spec.priority;
    w.creation_seq = j.spec.creation_seq;
    w.request = j.spec.shape->alternatives[0].quota_request;
    GF_RETURN_IF_ERROR(engine_->add_workload(w));
  }
  auto [it, inserted] = jobs_.emplace(j.spec.key, std::move(j));
  make_active(it->second);
  return ok_status();
}

Status Scheduler::finish(JobKey key) {
  auto it = jobs_.find(key);
  if (it == jobs_.end()) return not_found_error(fmt::format("job {}", key));
  Job& j = it->second;
  leave_pending(j);
  if (j.wait == Wait::kAdmitted) {
    do_unbind(j);
    unplaced_.erase(key_of(j));
    bump_root(j);
  }
  engine_forget(j);
  log_.append({kReleaseLog, key, 0, j.spec.queue, 0, 0, 0});
  touched_.erase(key);
  jobs_.erase(it);
  return ok_status();
}

Status Scheduler::set_priority(JobKey key, int32_t priority) {
  auto it = jobs_.find(key);
  if (it == jobs_.end()) return not_found_error(fmt::format("job {}", key));
  Job& j = it->second;
  const Wait before = j.wait;
  if (before == Wait::kActive) queue_of(j).erase(j);
  if (before == Wait::kAdmitted) unplaced_.erase(key_of(j));
  j.spec.priority = priority;
  if (j.spec.quota_managed && j.spec.queue != quota::kNoNode) {
    GF_RETURN_IF_ERROR(engine_->set_priority(key, priority));
  }
  if (before == Wait::kActive) {
    make_active(j);  // re-evaluated by the next pass, preemption included
  } else if (before == Wait::kAdmitted) {
    if (!j.placement) unplaced_.insert(key_of(j));
    bump_root(j);  // it may now be a victim (or no longer one) for waiting jobs
  }
  log_.append({quota::DecisionKind::kPriorityChange, key, 0, j.spec.queue, 0, priority, 0});
  return ok_status();
}

bool Scheduler::admitted(JobKey key) const {
  auto it = jobs_.find(key);
  return it != jobs_.end() && it->second.wait == Wait::kAdmitted;
}

const Placement* Scheduler::placement_of(JobKey key) const {
  auto it = jobs_.find(key);
  if (it == jobs_.end() || !it->second.placement) return nullptr;
  return &*it->second.placement;
}

const JobSpec* Scheduler::spec(JobKey key) const {
  auto it = jobs_.find(key);
  return it == jobs_.end() ? nullptr : &it->second.spec;
}

// ---------------------------------------------------------------------------------------------
// Mutations shared by schedule() and apply()

void Scheduler::do_admit(Job& j, uint16_t alt, const Placement& p, Time now, bool replaced) {
  const Alternative& a = j.spec.shape->alternatives[alt];
  touched_.insert(j.spec.key);
  if (!replaced) {
    leave_pending(j);
    // The jobs behind it in a StrictFIFO queue now wait for another head.
    if (Queue& q = queue_of(j); q.strict) {
      for (const auto& [k, other] : q.active) touched_.insert(other->spec.key);
    }
    if (j.spec.quota_managed && j.spec.queue != quota::kNoNode) {
      GF_CHECK_OK(engine_->set_request(j.spec.key, a.quota_request));
      engine_admit(j, now);
    }
    j.admitted_at = now;
    j.alternative = alt;
  } else if (j.placement) {
    do_unbind(j);
  }
  j.wait = Wait::kAdmitted;
  j.last_kind = WaitKind::kNotWaiting;
  j.bound = p.cluster;
  if (p.pods.empty()) {
    // Dispatched, pods pending (estimate mode): later passes place it on this cluster only.
    j.dispatched = true;
    unplaced_.insert(key_of(j));
  } else {
    j.placement = p;
    j.dispatched = false;
    j.excluded.clear();  // its pods run: the clusters it failed over from may take it again
    index_.commit(a.pods, p);
    for (const PodBinding& b : p.pods) on_node_[b.node].insert(j.spec.key);
    unplaced_.erase(key_of(j));
  }
  log_.append({kAdmitLog, j.spec.key, placement_digest(p), j.spec.queue, 0, p.cluster,
               static_cast<uint8_t>((replaced ? 2 : 0) | (p.pods.empty() ? 4 : 0))});
}

void Scheduler::do_unbind(Job& j) {
  touched_.insert(j.spec.key);
  if (!j.placement) return;
  index_.release(j.spec.shape->alternatives[j.alternative].pods, *j.placement);
  for (const PodBinding& b : j.placement->pods) {
    auto it = on_node_.find(b.node);
    if (it == on_node_.end()) continue;
    it->second.erase(j.spec.key);
    if (it->second.empty()) on_node_.erase(it);
  }
  j.placement.reset();
  node_gen_ = ++gen_counter_;
}

// The victim's quota and nodes are already returned; records the preemption and requeues it.
void Scheduler::do_evict(Job& j, Time /*now*/, Time until, bool terminated) {
  touched_.insert(j.spec.key);
  unplaced_.erase(key_of(j));
  // Binding and failover exclusions belong to an admission; a requeued job starts afresh.
  j.bound.reset();
  j.excluded.clear();
  j.dispatched = false;
  j.spec.preemptions += 1;
  bump_root(j);
  node_gen_ = ++gen_counter_;
  if (terminated) {
    j.wait = Wait::kGone;  // erased by the caller
    return;
  }
  j.backoff_until = until;
  j.wait = Wait::kBackoff;
  j.last_kind = WaitKind::kBackoff;
  backoff_.insert({until, j.spec.key});
}

Time Scheduler::backoff_for(int32_t preemptions, Time now) const {
  Duration d = options_.requeue_base;
  for (int32_t i = 1; i < preemptions && d < options_.requeue_max; ++i) d = d * 2;
  return now + std::min(d, options_.requeue_max);
}

bool Scheduler::within_ceiling(const Job& j, const ResourceVector& request) const {
  const quota::NodeId root = root_of(j);
  if (root == quota::kNoNode) return true;
  auto it = ceilings_.find(root);
  if (it == ceilings_.end()) return true;
  return (root_total_[root] + request).fits_within(it->second);
}

bool Scheduler::shape_feasible(const Job& j, const Alternative& alt) {
  if (!j.spec.allowed_clusters.empty()) return index_.ever_fits(alt.pods, &j.spec.allowed_clusters);
  if (feasible_memo_gen_ != topology_gen_) {
    feasible_memo_.clear();
    feasible_memo_gen_ = topology_gen_;
  }
  auto it = feasible_memo_.find(&alt);
  if (it != feasible_memo_.end()) return it->second.second;
  const bool ok = index_.ever_fits(alt.pods, nullptr);
  feasible_memo_.emplace(&alt, std::make_pair(j.spec.shape, ok));
  return ok;
}

int64_t Scheduler::fair_key(const Job& j) const {
  // Weighted dominant-resource share of the job's queue above its own quota, in parts per
  // million of the root's capacity: the borrower with the smallest share goes first.
  const quota::NodeId root = root_of(j);
  if (root == quota::kNoNode || root >= fair_share_roots_.size() || !fair_share_roots_[root])
    return 0;
  const quota::QuotaGraph& g = engine_->graph();
  const ResourceVector& usage = engine_->usage(j.spec.queue);
  const ResourceVector& own = g.subtree_quota(j.spec.queue);
  const ResourceVector& total = g.subtree_quota(root);
  int64_t share = 0;
  for (size_t d = 0; d < kMaxResources; ++d) {
    const auto r = static_cast<ResourceId>(d);
    const int64_t cap = total.get(r);
    const int64_t above = usage.get(r) - own.get(r);
    if (cap <= 0 || above <= 0) continue;
    share = std::max(share, static_cast<int64_t>((static_cast<__int128>(above) * 1000000) / cap));
  }
  const int64_t weight = std::max<int64_t>(1, g.spec(j.spec.queue).weight_milli);
  return share * 1000 / weight;
}

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

  // Unbinds the job's pods, if it has any placed, and returns its quota, if charged.
  void evict(Job& j) {
    if (j.placement) ops_.push_back(Op{OpKind::kUnbindPods, &j, *j.placement});
    s_.do_unbind(j);
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
  for (const PodBinding& b : p.pods) on_node_[b.node].insert(j.spec.key);
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
  log_.append({kWaitLog, j.spec.key, 0, j.spec.queue, 0, 0, 100});
  return true;
}

std::optional<Scheduler::Nomination> Scheduler::nominate(Job& j,
                                                         std::vector<uint16_t>& quota_blocked) {
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
    std::optional<Placement> p = choose(j, alt);
    if (!p) {
      j.last_kind = WaitKind::kPlacement;
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
  // Evict the victims tentatively, then check that the gang can be placed on what they free.
  Statement trial(*this);
  std::vector<Placement> prior;  // a victim without pods placed: cluster kNoCluster
  prior.reserve(plan.victims.size());
  for (const quota::Victim& v : plan.victims) {
    Job& vj = jobs_.at(v.id);
    prior.push_back(vj.placement.value_or(Placement{}));
    trial.evict(vj);
  }
  const quota::FitResult fit = engine_->fits(key);
  std::optional<Placement> p;
  if (fit.fits && within_ceiling(j, alt.quota_request)) p = choose(j, alt);
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
    log_.append(
        {kVictimLog, preemptor.spec.key, v.id, v.queue, 0, 0, static_cast<uint8_t>(v.reason)});
    out.actions.push_back(std::move(act));
    if (term) terminated.push_back(v.id);
  }
  for (JobKey t : terminated) {
    engine_forget(jobs_.at(t));
    jobs_.erase(t);
  }
}

Scheduler::TryResult Scheduler::try_admit(Job& j, Time now, PassResult& out) {
  touched_.insert(j.spec.key);
  if (park_if_infeasible(j)) return TryResult::kFailed;
  std::vector<uint16_t> quota_blocked;
  if (std::optional<Nomination> n = nominate(j, quota_blocked)) {
    admit_nominated(j, std::move(*n), now, out);
    return TryResult::kAdmitted;
  }
  // Quota said no: may preemption make room (Kueue classic, see quota/preemption.cpp)?
  for (uint16_t a : quota_blocked) {
    if (try_preempt(j, a, now, out)) return TryResult::kAdmitted;
  }
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

  explicit HeadQueues(Scheduler& s)
      : s_(s),
        cursor_(s.queues_.size()),
        blocked_(s.queues_.size(), false),
        failed_(s.queues_.size()) {
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
    return unrestricted(j) && no_room_.contains(&shape);
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
    } else if (j.last_kind == WaitKind::kPlacement && unrestricted(j)) {
      no_room_.insert(&shape);
    }
  }

  bool every_shape_dominated(uint32_t slot) const {
    for (const auto& [sp, n] : s_.queues_[slot].shapes) {
      if (sp->alternatives.size() != 1) return false;
      const ResourceVector& req = sp->alternatives[0].quota_request;
      const bool dominated =
          std::any_of(failed_[slot].begin(), failed_[slot].end(),
                      [&](const Failure& f) { return f.request.fits_within(req); });
      if (!dominated) return false;
    }
    return true;
  }

  Scheduler& s_;
  std::priority_queue<Head> heads_;
  std::vector<std::map<Key, Job*>::iterator> cursor_;
  std::vector<bool> blocked_;
  std::vector<std::vector<Failure>> failed_;
  std::set<const JobShape*> no_room_;  // shapes (any cluster allowed) that found no placement
};

void Scheduler::admit_heads(Time now, PassResult& out) {
  HeadQueues heads(*this);
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

namespace gf::sched {

std::vector<JobKey> Scheduler::take_touched() {
  std::vector<JobKey> out;
  out.reserve(touched_.size());
  for (JobKey k : touched_) {
    if (jobs_.contains(k)) out.push_back(k);
  }
  touched_.clear();
  return out;
}

std::vector<JobKey> Scheduler::jobs_on_node(std::string_view cluster,
                                            std::string_view instance_id) const {
  std::vector<JobKey> out;
  const std::optional<ClusterIdx> c = index_.find_cluster(cluster);
  if (!c) return out;
  const std::optional<NodeIdx> n = index_.find_node(*c, instance_id);
  if (!n) return out;
  auto it = on_node_.find(*n);
  if (it != on_node_.end()) out.assign(it->second.begin(), it->second.end());
  return out;
}

}  // namespace gf::sched
