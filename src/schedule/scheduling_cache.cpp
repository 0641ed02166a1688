#include "schedule/scheduling_cache.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <optional>
#include <set>

#include "model/catalog.h"
#include "model/cluster.h"
#include "model/slurm_node.h"
#include "state/cluster_events.h"
#include "state/job_events.h"

namespace gf {
namespace {

// Shapes are interned by this key: one per submission, so it is built into one buffer.
std::string shape_key(const sched::JobShape& shape) {
  fmt::memory_buffer k;
  auto out = std::back_inserter(k);
  for (const sched::Alternative& a : shape.alternatives) {
    fmt::format_to(out, "{}|", a.label);
    for (size_t d = 0; d < kMaxResources; ++d)
      fmt::format_to(out, "{},", a.quota_request.get(static_cast<ResourceId>(d)));
    for (const sched::PodSet& p : a.pods) {
      fmt::format_to(out, "[{}:{}:{}:{}:{}:", p.count, p.instance_type, p.topology,
                     p.topology_required, p.topology_group);
      for (size_t d = 0; d < kMaxResources; ++d)
        fmt::format_to(out, "{},", p.request.get(static_cast<ResourceId>(d)));
      k.push_back(']');
    }
    k.push_back(';');
  }
  return fmt::to_string(k);
}

// The placement a job.admitted event records, in the scheduler's indexes.
Result<sched::Placement> to_placement(const sched::Scheduler& s, const std::string& cluster,
                                      const std::vector<std::string>& nodes,
                                      const sched::JobShape& shape, int32_t alternative) {
  sched::Placement p;
  const auto c = s.placement().find_cluster(cluster);
  if (!c) return internal_error("placement on unknown cluster " + cluster);
  p.cluster = *c;
  if (nodes.empty()) return p;  // dispatched to the cluster, pods pending there
  if (alternative < 0 || static_cast<size_t>(alternative) >= shape.alternatives.size())
    return internal_error(fmt::format("placement names alternative {}", alternative));
  size_t i = 0;
  const auto& pod_sets = shape.alternatives[static_cast<size_t>(alternative)].pods;
  for (uint16_t ps = 0; ps < pod_sets.size(); ++ps) {
    for (int32_t k = 0; k < pod_sets[ps].count; ++k) {
      if (i >= nodes.size()) return internal_error("placement lists fewer nodes than pods");
      const auto n = s.placement().find_node(*c, nodes[i++]);
      if (!n) return internal_error("placement on unknown node " + nodes[i - 1]);
      p.pods.push_back(sched::PodBinding{ps, static_cast<uint32_t>(k), *n});
    }
  }
  return p;
}

// A job's pods as the nodes see them, and what they ask for altogether.
struct GangRequest {
  std::vector<sched::PodSet> pods;
  ResourceVector total;      // what the pods ask for altogether (EQT and Kueue charge this)
  ResourceVector instances;  // whole nodes per instance type (quota shares charge this)
};

Result<GangRequest> gang_request(const Job& job, ResourceRegistry& reg) {
  GangRequest g;
  for (size_t i = 0; i < job.pod_sets.size(); ++i) {
    const JobPodSet& ps = job.pod_sets[i];
    sched::PodSet p;
    p.count = ps.count;
    p.instance_type = ps.instance_type;
    if (ps.topology) {
      p.topology = topology_level(ps.topology->level).value_or(0);
      p.topology_required = ps.topology->required;
      p.topology_group = ps.topology->whole_job ? 1 : 0;
    }
    if (ps.whole_node) {
      p.request = FleetState::node_capacity(ps.instance_type);
      GF_ASSIGN_OR_RETURN(ResourceId type_dim, reg.intern(ps.instance_type));
      g.instances.set(type_dim, g.instances.get(type_dim) + ps.count);
    } else {
      GF_ASSIGN_OR_RETURN(
          p.request,
          ResourceVector::from_json(ps.requests, reg, fmt::format("pod_sets[{}].requests", i)));
      p.request.set(kPods, 1);
    }
    ResourceVector scaled;
    for (size_t d = 0; d < kMaxResources; ++d) {
      const auto r = static_cast<ResourceId>(d);
      scaled.set(r, p.request.get(r) * ps.count);
    }
    g.total += scaled;
    g.pods.push_back(std::move(p));
  }
  g.total.set(kPods, 0);
  return g;
}

// A local queue's flavors in Kueue's resource groups (the options covering the same resources),
// keeping only the groups that cover something the job asks for.
struct FlavorGroups {
  std::vector<std::vector<const frontend::FlavorOption*>> options;  // per group, queue order
  std::vector<std::set<ResourceId>> dims;                           // per group
  std::vector<size_t> used;  // groups covering a requested dimension
};

FlavorGroups flavor_groups(const std::vector<frontend::FlavorOption>& flavors,
                           const ResourceVector& total) {
  FlavorGroups fg;
  for (const frontend::FlavorOption& f : flavors) {
    std::set<ResourceId> dims;
    for (const auto& [plain, flavored] : f.dims) dims.insert(plain);
    size_t g = 0;
    while (g < fg.dims.size() && fg.dims[g] != dims) ++g;
    if (g == fg.dims.size()) {
      fg.dims.push_back(dims);
      fg.options.emplace_back();
    }
    fg.options[g].push_back(&f);
  }
  for (size_t g = 0; g < fg.options.size(); ++g) {
    for (ResourceId r : fg.dims[g]) {
      if (total.get(r) != 0) {
        fg.used.push_back(g);
        break;
      }
    }
  }
  return fg;
}

// The alternative of one flavor per used group (`pick[u]` in group `used[u]`), or nullopt when
// the flavors name different instance types, leave a requested dimension uncovered, or clash
// with a pod set's own instance type.
std::optional<sched::Alternative> flavor_alternative(const FlavorGroups& fg,
                                                     const std::vector<size_t>& pick,
                                                     const GangRequest& gang) {
  sched::Alternative alt;
  alt.pods = gang.pods;
  std::string type;
  for (size_t u = 0; u < fg.used.size(); ++u) {
    const frontend::FlavorOption& f = *fg.options[fg.used[u]][pick[u]];
    alt.label += (alt.label.empty() ? "" : "+") + f.flavor;
    for (const auto& [plain, flavored] : f.dims)
      alt.quota_request.set(flavored, gang.total.get(plain));
    if (!f.instance_type.empty()) {
      std::string t = f.instance_type;
      if (Catalog::builtin().find(t) == nullptr && Catalog::builtin().find("ml." + t) != nullptr)
        t = "ml." + t;
      if (!type.empty() && type != t) return std::nullopt;
      type = t;
    }
  }
  for (size_t d = 0; d < kMaxResources; ++d) {
    const auto r = static_cast<ResourceId>(d);
    if (gang.total.get(r) == 0) continue;
    bool covered = false;
    for (size_t u : fg.used) covered |= fg.dims[u].contains(r);
    if (!covered) return std::nullopt;
  }
  if (!type.empty()) {
    for (sched::PodSet& p : alt.pods) {
      if (!p.instance_type.empty() && p.instance_type != type) return std::nullopt;
      p.instance_type = type;
    }
  }
  return alt;
}

// Kueue assigns a flavor per resource group: one alternative per combination, the queue's flavor
// order first (the last group varies fastest), at most 64 combinations.
std::vector<sched::Alternative> flavor_alternatives(
    const std::vector<frontend::FlavorOption>& flavors, const GangRequest& gang) {
  std::vector<sched::Alternative> out;
  const FlavorGroups fg = flavor_groups(flavors, gang.total);
  std::vector<size_t> pick(fg.used.size(), 0);
  for (int guard = 0; !fg.used.empty() && guard < 64; ++guard) {
    if (std::optional<sched::Alternative> alt = flavor_alternative(fg, pick, gang))
      out.push_back(std::move(*alt));
    bool advanced = false;
    for (size_t u = fg.used.size(); u-- > 0;) {
      if (++pick[u] < fg.options[fg.used[u]].size()) {
        advanced = true;
        break;
      }
      pick[u] = 0;
    }
    if (!advanced) break;
  }
  return out;
}

}  // namespace

SchedulingCache::SchedulingCache() : registry_(std::make_unique<ResourceRegistry>()) {
  scheduler_.set_registry(registry_.get());
}

sched::Scheduler& SchedulingCache::scheduler(const FleetState& state) {
  sync_clusters(state);
  return scheduler_;
}

std::vector<sched::Action> SchedulingCache::take_interrupts(const FleetState& state) {
  sync_clusters(state);
  std::vector<sched::Action> out;
  out.swap(interrupts_);
  return out;
}

// A gang placed on a real Slurm node that Slurm now refuses work (docs/slurm.md "Placement
// follows Slurm") and that has not started there (no pod Running or Succeeded) would wait for
// that node forever, its allocation PENDING: it is placed again at once, quota kept, as when a
// node leaves. A gang already running there goes on (a drain lets running jobs finish).
void SchedulingCache::move_unstarted_gangs(const FleetState& state, const std::string& cluster,
                                           const std::string& instance_id, const Node& node) {
  const std::string why = slurm_unschedulable(*node.slurm).value_or("out");
  for (sched::JobKey key : scheduler_.jobs_on_node(cluster, instance_id)) {
    const Job* job = state.job_by_key(key);
    const sched::Placement* placed = scheduler_.placement_of(key);
    if (job == nullptr || placed == nullptr) continue;
    const bool started = std::any_of(job->pod_states.begin(), job->pod_states.end(), [](auto& p) {
      return p.second.phase == "Running" || p.second.phase == "Succeeded";
    });
    if (started) continue;
    sched::Action a;
    a.kind = sched::ActionKind::kInterrupt;
    a.job = key;
    a.placement = *placed;
    a.node = scheduler_.placement()
                 .find_node(scheduler_.cluster_index(cluster), instance_id)
                 .value_or(0);
    a.move = true;
    a.message = "node " + slurm_node_name(node) + " is " + why +
                " in Slurm before the gang started there; placed again";
    if (!scheduler_.apply(a, Time{}).ok()) continue;  // an interrupt reads no clock
    interrupts_.push_back(std::move(a));
  }
}

void SchedulingCache::drop_interrupts(sched::JobKey key) {
  std::erase_if(interrupts_, [&](const sched::Action& a) { return a.job == key; });
}

namespace {

// The node as the scheduler sees it, or nullopt when it is not a place for pods at all.
std::optional<sched::Scheduler::NodeDesc> node_desc(
    const std::string& id, const Node& n, bool usable,
    const std::set<std::string, std::less<>>& compute_groups) {
  if (!compute_groups.contains(n.group) || !n.is_live() || n.maintenance) return std::nullopt;
  sched::Scheduler::NodeDesc d;
  d.instance_id = id;
  d.instance_type = n.instance_type;
  d.capacity = FleetState::node_capacity(n.instance_type);
  // A real Slurm node that slurmctld will start nothing on (drained by anyone, down, not
  // responding) takes no gang; the gangs running there go on, as a cordon's do. So does a node
  // with an open alert of a fault that stops jobs (docs/remediation.md "Defaults by fault class").
  const bool slurm_out = n.slurm && slurm_unschedulable(*n.slurm);
  d.schedulable = usable && n.status == NodeStatus::kRunning && n.healthy && !n.cordoned &&
                  !n.faulted && !slurm_out && !d.capacity.is_zero();
  d.cordoned =
      (n.cordoned || n.faulted || slurm_out) && n.status == NodeStatus::kRunning && n.healthy;
  for (size_t l = 0; l < sched::kLabelledLevels && !n.labels.empty(); ++l) {
    auto it = n.labels.find(std::string(kTopologyLevels[l]));
    if (it != n.labels.end()) d.topology[l] = it->second;
  }
  return d;
}

// One cluster's part of a sync: its nodes as the scheduler sees them (only `changed` ones when
// the state's node log says which; the others it no longer holds are `removed`), the targets and
// capacities of its compute groups, and the nodes Slurm keeps out that carry gangs.
struct ClusterSync {
  std::vector<sched::Scheduler::NodeDesc> nodes;
  std::vector<std::string> removed;
  std::map<std::string, int64_t, std::less<>> targets;
  std::map<std::string, ResourceVector, std::less<>> capacities;
  std::vector<std::pair<std::string, const Node*>> slurm_out;

  void read(const Cluster& c, const std::optional<std::vector<std::string>>& changed) {
    const bool usable = c.runs_jobs();
    std::set<std::string, std::less<>> compute_groups;
    for (const InstanceGroup& g : c.groups) {
      if (g.spec.node_type == NodeType::kController || g.spec.node_type == NodeType::kLogin)
        continue;
      compute_groups.insert(g.spec.name);
      if (usable) {
        targets[g.spec.instance_type] += g.spec.target;
        capacities[g.spec.instance_type] = FleetState::node_capacity(g.spec.instance_type);
      }
    }
    auto add = [&](const std::string& id, const Node& n) {
      std::optional<sched::Scheduler::NodeDesc> d = node_desc(id, n, usable, compute_groups);
      if (!d) return false;
      if (d->cordoned && n.slurm && slurm_unschedulable(*n.slurm)) slurm_out.emplace_back(id, &n);
      nodes.push_back(std::move(*d));
      return true;
    };
    if (!changed) {
      for (const auto& [id, n] : c.nodes) add(id, n);
      return;
    }
    for (const std::string& id : *changed) {
      auto it = c.nodes.find(id);
      if (it == c.nodes.end() || !add(id, it->second)) removed.push_back(id);
    }
  }
};

}  // namespace

// Brings the node index in step with every cluster changed since the last sync: only the nodes
// that changed, when the state's node log says which (docs/performance.md "Fleet-scale
// simulation"), else all of them.
void SchedulingCache::sync_clusters(const FleetState& state) {
  if (state.cluster_revision() == synced_revision_) return;
  for (const auto& [name, revision] : state.cluster_revisions()) {
    if (revision <= synced_revision_) continue;
    ClusterSync sync;
    const Cluster* c = state.view().find_cluster(name);
    std::optional<std::vector<std::string>> changed;
    if (c) {
      changed = state.nodes_changed_since(name, synced_revision_);
      sync.read(*c, changed);
    }
    std::vector<sched::Action> down =
        changed
            ? scheduler_.sync_nodes(name, sync.nodes, sync.removed, sync.targets, sync.capacities)
            : scheduler_.sync_cluster(name, sync.nodes, sync.targets, sync.capacities);
    for (sched::Action& a : down) interrupts_.push_back(std::move(a));
    for (const auto& [id, n] : sync.slurm_out) move_unstarted_gangs(state, name, id, *n);
  }
  synced_revision_ = state.cluster_revision();
}

Result<sched::JobSpec> SchedulingCache::job_spec(const Job& job) {
  sched::JobSpec spec;
  spec.key = job.key;
  spec.priority = job.priority;
  spec.creation_seq = job.key;
  spec.max_preemptions = job.max_preemptions;
  spec.preemptions = job.preempted_count;
  // How long a run lasts at most, for reservations (docs/scheduling.md "Reservation and
  // backfill"): the shorter of activeDeadlineSeconds and the duration annotation.
  spec.time_limit = job.duration;
  if (job.dispatch && job.dispatch->active_deadline_seconds) {
    const Duration deadline = seconds(*job.dispatch->active_deadline_seconds);
    spec.time_limit = spec.time_limit ? std::min(*spec.time_limit, deadline) : deadline;
  }
  GF_ASSIGN_OR_RETURN(GangRequest gang, gang_request(job, *registry_));

  auto shape = std::make_shared<sched::JobShape>();
  // A workload queues for its namespace's quota only when its PropagationPolicy suspends
  // scheduling (docs/dispatch.md step 2); without it, it goes straight to placement.
  const bool ns_queued = !job.ns.empty() && (!job.dispatch || job.dispatch->queued);
  spec.quota_managed = !job.job_queue.empty() || !job.local_queue.empty() || ns_queued;
  spec.sticky = job.dispatch.has_value();
  spec.queue = quota::kNoNode;
  if (!job.job_queue.empty()) {
    share_job(job, spec);
    shape->alternatives.push_back(sched::Alternative{gang.instances, gang.pods, ""});
  } else if (!job.local_queue.empty()) {
    const frontend::CompiledQuota* q = quota_.get();
    if (q != nullptr) {
      auto it = q->local_queue_leaf.find(job.ns + "/" + job.local_queue);
      if (it != q->local_queue_leaf.end()) spec.queue = it->second;
    }
    if (spec.queue != quota::kNoNode && spec.queue < q->flavors.size())
      shape->alternatives = flavor_alternatives(q->flavors[spec.queue], gang);
    if (shape->alternatives.empty())
      shape->alternatives.push_back(sched::Alternative{gang.total, gang.pods, ""});
  } else {
    ResourceVector charged = gang.total;
    if (ns_queued) charged = namespace_job(job, spec, gang.total);
    shape->alternatives.push_back(sched::Alternative{charged, gang.pods, ""});
  }
  for (const std::string& c : job.clusters) {
    spec.allowed_clusters.push_back(scheduler_.cluster_index(c));
  }
  std::string key = shape_key(*shape);
  auto [it, inserted] = shapes_.try_emplace(std::move(key), nullptr);
  if (inserted) it->second = std::move(shape);
  spec.shape = it->second;
  return spec;
}

void SchedulingCache::share_job(const Job& job, sched::JobSpec& spec) {
  const frontend::CompiledQuota* q = quota_.get();
  if (q == nullptr) return;
  auto it = q->share_leaf.find({job.job_queue, job.quota_share});
  if (it != q->share_leaf.end()) spec.queue = it->second;
  auto env = q->environment_clusters.find(job.job_queue);
  if (env != q->environment_clusters.end()) {
    for (const std::string& c : env->second)
      spec.allowed_clusters.push_back(scheduler_.cluster_index(c));
  }
}

ResourceVector SchedulingCache::namespace_job(const Job& job, sched::JobSpec& spec,
                                              ResourceVector charged) const {
  const frontend::CompiledQuota* q = quota_.get();
  if (q == nullptr) return charged;
  auto it = q->namespace_leaf.find(job.ns);
  if (it == q->namespace_leaf.end()) return charged;
  spec.queue = it->second;
  if (spec.queue < q->charged.size()) {
    for (size_t d = 0; d < kMaxResources; ++d) {
      if (!q->charged[spec.queue].test(d)) charged.set(static_cast<ResourceId>(d), 0);
    }
  }
  return charged;
}

Status SchedulingCache::set_quota(const FleetState& state) {
  if (!state.view().quota_objects) {
    quota_.reset();
    return ok_status();
  }
  GF_ASSIGN_OR_RETURN(frontend::CompiledQuota compiled,
                      frontend::compile(*state.view().quota_objects, *registry_));
  quota_ = std::make_shared<const frontend::CompiledQuota>(std::move(compiled));
  const frontend::CompiledQuota* q = quota_.get();
  std::vector<bool> fair(q->graph.size(), false);
  for (size_t i = 0; i < q->idle.size() && i < fair.size(); ++i)
    fair[i] = q->idle[i] == frontend::IdleStrategy::kFairShare;
  // Every job's queue in the new graph.
  std::map<uint64_t, quota::NodeId> queues;
  for (const auto& [id, j] : state.view().jobs) {
    if (is_terminal(j->status)) continue;
    auto spec = job_spec(*j);
    if (spec.ok()) queues[j->key] = spec->queue;
  }
  scheduler_.set_quota(
      q->graph,
      [&](sched::JobKey k) {
        auto it = queues.find(k);
        return it == queues.end() ? quota::kNoNode : it->second;
      },
      q->root_ceiling, fair);
  return ok_status();
}

Status SchedulingCache::submit(const Job& job) {
  GF_ASSIGN_OR_RETURN(sched::JobSpec spec, job_spec(job));
  GF_RETURN_IF_ERROR(scheduler_.submit(std::move(spec)));
  keys_[job.id] = job.key;
  return ok_status();
}

Status SchedulingCache::observe(const FleetState& state, const EventRecord& record,
                                const Json& payload) {
  const std::string& type = record.type;
  if (type.rfind("quota.", 0) == 0) {
    generation_ += 1;
    return set_quota(state);
  }
  if (type.rfind("job.", 0) == 0) {
    sync_clusters(state);  // nodes in step before any job change
    generation_ += 1;
    return observe_job(state, record, payload);
  }
  return ok_status();  // cluster changes show in the state's cluster revisions
}

Status SchedulingCache::observe_submitted(const FleetState& state, const EventRecord& record,
                                          const std::string& job_id) {
  (void)record;
  sync_clusters(state);  // as observe() does before any job change
  generation_ += 1;
  return on_submitted(state, job_id);
}

Status SchedulingCache::on_submitted(const FleetState& state, const std::string& id) {
  const Job* job = state.view().job(id);
  if (job == nullptr) return internal_error("job " + id + " not in the state");
  // Suspended, or held until a PropagationPolicy selects it: not the scheduler's yet.
  if (job->dispatch && (job->dispatch->suspended || job->dispatch->awaiting_policy))
    return ok_status();
  return submit(*job);
}

// job.policy_bound or job.suspend: a job the scheduler did not hold may now be queued (a policy
// selected it, or it was resumed), and a suspended one leaves the scheduler.
Status SchedulingCache::on_hold_changed(const std::string& type, const std::string& id,
                                        const Job* job, bool held, sched::JobKey key) {
  if (job == nullptr || !job->dispatch) return internal_error(type + " for " + id);
  const Dispatch& d = *job->dispatch;
  if (type == event_type::kJobSuspend && d.suspended) {
    if (held) GF_RETURN_IF_ERROR(scheduler_.finish(key));
    drop_interrupts(key);
    return ok_status();
  }
  if (!held && !d.suspended && !d.awaiting_policy) return submit(*job);
  return ok_status();
}

// job.admitted: the gang's placement, as the scheduler holds it.
Status SchedulingCache::on_admitted(sched::JobKey key, const Json& p, Time t) {
  sched::Scheduler& s = scheduler_;
  const sched::JobSpec* spec = s.spec(key);
  GF_ASSIGN_OR_RETURN(const job_events::Admitted e, job_events::decode<job_events::Admitted>(p));
  sched::Action a;
  a.kind = sched::ActionKind::kAdmit;
  a.job = key;
  a.alternative = static_cast<uint16_t>(e.alternative);
  a.replaced = e.replaced;
  GF_ASSIGN_OR_RETURN(a.placement,
                      to_placement(s, e.cluster, e.nodes, *spec->shape, e.alternative));
  return s.apply(a, t);
}

// job.preempted: the gang unbound, requeued (or terminated).
Status SchedulingCache::on_preempted(sched::JobKey key, const Json& p, Time t) {
  GF_ASSIGN_OR_RETURN(const job_events::Preempted e, job_events::decode<job_events::Preempted>(p));
  sched::Action a;
  a.kind = sched::ActionKind::kPreempt;
  a.job = key;
  a.terminated = e.terminated;
  a.until = e.until;
  return scheduler_.apply(a, t);
}

Status SchedulingCache::observe_job(const FleetState& state, const EventRecord& rec,
                                    const Json& p) {
  sched::Scheduler& s = scheduler_;
  const Time t = rec.time;
  if (rec.type == event_type::kJobSubmitted)
    return on_submitted(state, job_events::job_id_of(rec.type, p));
  const std::string id = job_events::job_id_of(rec.type, p);
  auto known = keys_.find(id);
  const bool held = known != keys_.end() && s.contains(known->second);
  const sched::JobKey key = known != keys_.end() ? known->second : 0;
  const Job* job = state.view().job(id);  // null once job.deleted applied

  if (rec.type == event_type::kJobAdmitted) {
    if (!held) return internal_error("job " + id + " unknown to the scheduler");
    return on_admitted(key, p, t);
  }
  if (rec.type == event_type::kJobPreempted) return on_preempted(key, p, t);
  if (rec.type == event_type::kJobInterrupted) {
    sched::Action a;
    a.kind = sched::ActionKind::kInterrupt;
    a.job = key;
    GF_RETURN_IF_ERROR(s.apply(a, t));
    drop_interrupts(key);
    return ok_status();
  }
  if (rec.type == event_type::kJobFinished || rec.type == event_type::kJobDeleted) {
    if (held) GF_RETURN_IF_ERROR(s.finish(key));
    if (known != keys_.end()) {
      drop_interrupts(key);
      keys_.erase(known);
    }
    return ok_status();
  }
  if (rec.type == event_type::kJobPriority) {
    GF_ASSIGN_OR_RETURN(const job_events::PriorityChanged e,
                        job_events::decode<job_events::PriorityChanged>(p));
    if (held) GF_RETURN_IF_ERROR(s.set_priority(key, e.priority));
    return ok_status();
  }
  if (rec.type == event_type::kJobFailover) {
    if (held) GF_RETURN_IF_ERROR(s.failover(key, t));
    drop_interrupts(key);
    return ok_status();
  }
  if (rec.type == event_type::kJobPolicyBound || rec.type == event_type::kJobSuspend)
    return on_hold_changed(rec.type, id, job, held, key);
  return ok_status();  // running, waiting, copy purged: nothing the scheduler holds
}

namespace {

// The jobs the scheduler holds, in submission order: not finished, not suspended, not held for
// want of a PropagationPolicy.
std::vector<const Job*> schedulable_jobs(const FleetState& state) {
  std::vector<const Job*> live;
  for (const auto& [id, j] : state.view().jobs) {
    if (!is_terminal(j->status) &&
        !(j->dispatch && (j->dispatch->suspended || j->dispatch->awaiting_policy)))
      live.push_back(j.get());
  }
  std::sort(live.begin(), live.end(), [](const Job* a, const Job* b) { return a->key < b->key; });
  return live;
}

}  // namespace

// After a snapshot load: quota, nodes, then every live job in submission order, placed where
// the snapshot says.
Status SchedulingCache::restore(const FleetState& state) {
  registry_ = std::make_unique<ResourceRegistry>();
  quota_.reset();
  scheduler_ = sched::Scheduler(scheduler_.options());
  scheduler_.set_registry(registry_.get());
  interrupts_.clear();
  keys_.clear();
  shapes_.clear();
  synced_revision_ = 0;
  sync_clusters(state);
  interrupts_.clear();
  generation_ += 1;
  GF_RETURN_IF_ERROR(set_quota(state));
  const std::vector<const Job*> live = schedulable_jobs(state);
  sched::Scheduler& s = scheduler_;
  for (const Job* j : live) {
    GF_ASSIGN_OR_RETURN(sched::JobSpec spec, job_spec(*j));
    GF_RETURN_IF_ERROR(s.submit(spec));
    keys_[j->id] = j->key;
    if (j->admitted) {
      const Time at = j->admitted_at.value_or(Time{});
      if (!j->cluster.empty()) {
        GF_ASSIGN_OR_RETURN(const sched::Placement placement,
                            to_placement(s, j->cluster, j->pod_nodes, *spec.shape, j->alternative));
        GF_RETURN_IF_ERROR(
            s.restore(j->key, static_cast<uint16_t>(j->alternative), &placement, at));
        if (j->dispatch && j->pod_nodes.empty()) {
          std::vector<sched::ClusterIdx> excluded;
          for (const std::string& c : j->dispatch->excluded) excluded.push_back(s.cluster_index(c));
          GF_RETURN_IF_ERROR(s.restore_binding(j->key, placement.cluster, std::move(excluded)));
        }
      } else {
        GF_RETURN_IF_ERROR(s.restore(j->key, static_cast<uint16_t>(j->alternative), nullptr, at));
        if (j->dispatch) {
          std::optional<sched::ClusterIdx> bound;
          if (!j->dispatch->cluster.empty()) bound = s.cluster_index(j->dispatch->cluster);
          std::vector<sched::ClusterIdx> excluded;
          for (const std::string& c : j->dispatch->excluded) excluded.push_back(s.cluster_index(c));
          GF_RETURN_IF_ERROR(s.restore_binding(j->key, bound, std::move(excluded)));
        }
      }
    } else if (j->requeue_at) {
      GF_RETURN_IF_ERROR(s.restore_backoff(j->key, *j->requeue_at));
    }
  }
  // A drain reported before the snapshot whose move was not recorded yet: the gangs that never
  // started there move now (syncing above ran before any job was placed).
  for (const auto& [name, c] : state.view().clusters) {
    for (const auto& [id, n] : c->nodes) {
      if (n.slurm && slurm_unschedulable(*n.slurm) && n.status == NodeStatus::kRunning && n.healthy)
        move_unstarted_gangs(state, name, id, n);
    }
  }
  return ok_status();
}

std::vector<QuotaAmount> SchedulingCache::amounts(const quota::QuotaEngine& e,
                                                  quota::NodeId n) const {
  std::vector<QuotaAmount> out;
  const ResourceVector& used = e.usage(n);
  auto entry = [&](ResourceId r) -> QuotaAmount& {
    for (QuotaAmount& a : out)
      if (a.resource == registry_->name(r)) return a;
    out.push_back(QuotaAmount{std::string(registry_->name(r)),
                              registry_->scale(r) == QuantityScale::kMilli, 0, std::nullopt,
                              std::nullopt, used.get(r), e.graph().subtree_quota(n).get(r)});
    return out.back();
  };
  for (const quota::ResourceQuota& q : e.graph().spec(n).quotas) {
    QuotaAmount& a = entry(q.resource);
    a.nominal = q.nominal;
    a.borrowing_limit = q.borrowing_limit;
    a.lending_limit = q.lending_limit;
  }
  for (ResourceId r = 0; r < registry_->size() && r < kMaxResources; ++r)
    if (used.get(r) != 0) entry(r);
  return out;
}

void SchedulingCache::publish(const FleetState& state, FleetView& view) {
  const frontend::CompiledQuota* q = quota_.get();
  view.quota = quota_;
  if (q == nullptr) return;
  const uint64_t gen = generation(state);
  if (!published_ || published_generation_ != gen || published_quota_ != q) {
    const quota::QuotaEngine& e = scheduler_.engine();
    auto out = std::make_shared<std::vector<QuotaNodeStatus>>();
    out->reserve(e.graph().size());
    for (quota::NodeId n = 0; n < e.graph().size(); ++n) {
      out->push_back(QuotaNodeStatus{e.admitted_jobs(n), e.pending_count(n),
                                     e.usage(n).to_json(*registry_), amounts(e, n)});
    }
    published_ = std::move(out);
    published_generation_ = gen;
    published_quota_ = q;
  }
  view.quota_status = published_;
  sample_history(view.applied_time, *published_);
  view.queue_history = history_;
}

void SchedulingCache::sample_history(Time at, const std::vector<QuotaNodeStatus>& status) {
  if (!history_->due(at)) return;
  const quota::QuotaGraph& g = scheduler_.engine().graph();
  bool same_nodes = history_nodes_ && history_nodes_->size() == g.size();
  for (quota::NodeId n = 0; same_nodes && n < g.size(); ++n)
    same_nodes = (*history_nodes_)[n] == g.spec(n).name;
  if (!same_nodes) {
    auto names = std::make_shared<std::vector<std::string>>();
    for (quota::NodeId n = 0; n < g.size(); ++n) names->push_back(g.spec(n).name);
    history_nodes_ = std::move(names);
  }
  QueueSample s{at, history_nodes_, {}, {}};
  for (const QuotaNodeStatus& st : status) {
    s.pending.push_back(st.pending);
    s.admitted.push_back(st.admitted);
  }
  history_->add(std::move(s));
}

}  // namespace gf
