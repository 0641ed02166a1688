#include "schedule/scheduler.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/hash.h"

namespace gf::sched {
namespace {

// Scheduler-level entries of the decision log (quota::DecisionKind covers the quota part).
constexpr auto kAdmitLog = quota::DecisionKind::kAdmit;
constexpr auto kEvictLog = quota::DecisionKind::kEvict;
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
  touch(j);
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
  drop_reservation(j);
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
    j.queued = false;  // the queues were emptied above
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
  const ClusterIdx c = index_.cluster(cluster);
  std::set<std::string_view> present;
  for (const NodeDesc& d : nodes) present.insert(d.instance_id);
  std::vector<NodeIdx> gone;
  for (NodeIdx n : index_.nodes_of(c)) {
    if (!present.contains(index_.instance_id(n))) gone.push_back(n);
  }
  return apply_node_sync(cluster, c, nodes, gone, targets, type_capacity);
}

std::vector<Action> Scheduler::sync_nodes(
    std::string_view cluster, const std::vector<NodeDesc>& changed,
    const std::vector<std::string>& removed,
    const std::map<std::string, int64_t, std::less<>>& targets,
    const std::map<std::string, ResourceVector, std::less<>>& type_capacity) {
  const ClusterIdx c = index_.cluster(cluster);
  std::vector<NodeIdx> gone;
  for (const std::string& id : removed) {
    if (const std::optional<NodeIdx> n = index_.find_node(c, id)) gone.push_back(*n);
  }
  std::sort(gone.begin(), gone.end());
  return apply_node_sync(cluster, c, changed, gone, targets, type_capacity);
}

std::vector<Action> Scheduler::apply_node_sync(
    std::string_view cluster, ClusterIdx c, const std::vector<NodeDesc>& nodes,
    const std::vector<NodeIdx>& gone, const std::map<std::string, int64_t, std::less<>>& targets,
    const std::map<std::string, ResourceVector, std::less<>>& type_capacity) {
  std::vector<Action> out;
  bool grew = false;
  for (const auto& [type, cap] : type_capacity) index_.set_type_capacity(type, cap);
  std::vector<NodeIdx> down;  // nodes that stopped taking pods in this sync (pods only ever sit on
                              // nodes that were schedulable when bound, so no other node has gangs)
  for (const NodeDesc& d : nodes) {
    const std::optional<NodeIdx> before = index_.find_node(c, d.instance_id);
    const bool was_schedulable = before && index_.schedulable(*before);
    index_.upsert_node(c, d.instance_id, d.instance_type, d.capacity, d.schedulable, d.topology);
    if (!before) grew = true;
    if (d.schedulable && !was_schedulable) node_gen_ = ++gen_counter_;
    if (was_schedulable && !d.schedulable && !d.cordoned) down.push_back(*before);
  }
  for (NodeIdx n : gone) {
    index_.set_schedulable(n, false);
    down.push_back(n);
  }
  std::sort(down.begin(), down.end());
  // Gangs on nodes that can no longer run them come down whole.
  for (NodeIdx n : down) {
    const std::vector<JobKey> victims = jobs_on(n);  // empty when an earlier gang emptied it
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
  touch(j);
  // Placed on its reserved nodes, a gang frees none for others (leave_pending() would assume so).
  if (!p.pods.empty()) drop_reservation(j, &p);
  if (!replaced) {
    leave_pending(j);
    // The jobs behind it in a StrictFIFO queue now wait for another head.
    if (Queue& q = queue_of(j); q.strict) {
      for (const auto& [k, other] : q.active) touch(*other);
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
    for (const PodBinding& b : p.pods) bind_on_node(b.node, j.spec.key);
    unplaced_.erase(key_of(j));
    if (j.spec.time_limit) {
      j.expected_end = now + *j.spec.time_limit;
      ends_.insert({j.expected_end, j.spec.key});
    }
  }
  log_.append({kAdmitLog, j.spec.key, placement_digest(p), j.spec.queue, 0, p.cluster,
               static_cast<uint8_t>((replaced ? 2 : 0) | (p.pods.empty() ? 4 : 0))});
}

void Scheduler::do_unbind(Job& j) {
  touch(j);
  if (!j.placement) return;
  index_.release(j.spec.shape->alternatives[j.alternative].pods, *j.placement);
  for (const PodBinding& b : j.placement->pods) unbind_on_node(b.node, j.spec.key);
  j.placement.reset();
  if (j.spec.time_limit) ends_.erase({j.expected_end, j.spec.key});
  node_gen_ = ++gen_counter_;
}

// The victim's quota and nodes are already returned; records the preemption and requeues it.
void Scheduler::do_evict(Job& j, Time /*now*/, Time until, bool terminated) {
  touch(j);
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

void Scheduler::touch(Job& j) {
  if (j.touched) return;
  j.touched = true;
  touched_.push_back(j.spec.key);
  // Keys of finished jobs stay until taken; a caller that never takes keeps them bounded.
  if (touched_.size() > 2 * jobs_.size() + 1024) {
    std::erase_if(touched_, [&](JobKey k) {
      auto it = jobs_.find(k);
      return it == jobs_.end() || !it->second.touched;
    });
    std::sort(touched_.begin(), touched_.end());
    touched_.erase(std::unique(touched_.begin(), touched_.end()), touched_.end());
  }
}

std::vector<JobKey> Scheduler::take_touched() {
  std::vector<JobKey> out;
  out.reserve(touched_.size());
  for (JobKey k : touched_) {
    auto it = jobs_.find(k);
    if (it == jobs_.end() || !it->second.touched) continue;  // finished, or listed already
    it->second.touched = false;
    out.push_back(k);
  }
  touched_.clear();
  std::sort(out.begin(), out.end());
  return out;
}

void Scheduler::bind_on_node(NodeIdx n, JobKey key) {
  if (n >= on_node_.size()) on_node_.resize(n + 1);
  std::vector<JobKey>& keys = on_node_[n];
  if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
}

void Scheduler::unbind_on_node(NodeIdx n, JobKey key) {
  if (n >= on_node_.size()) return;
  std::vector<JobKey>& keys = on_node_[n];
  auto it = std::find(keys.begin(), keys.end(), key);
  if (it == keys.end()) return;
  *it = keys.back();
  keys.pop_back();
}

std::vector<JobKey> Scheduler::jobs_on(NodeIdx n) const {
  if (n >= on_node_.size()) return {};
  std::vector<JobKey> keys = on_node_[n];
  std::sort(keys.begin(), keys.end());
  return keys;
}

std::vector<JobKey> Scheduler::jobs_on_node(std::string_view cluster,
                                            std::string_view instance_id) const {
  std::vector<JobKey> out;
  const std::optional<ClusterIdx> c = index_.find_cluster(cluster);
  if (!c) return out;
  const std::optional<NodeIdx> n = index_.find_node(*c, instance_id);
  if (!n) return out;
  return jobs_on(*n);
}

}  // namespace gf::sched
