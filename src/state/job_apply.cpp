// Applies quota-object and job journal events to FleetState (docs/quota.md, docs/workloads.md), and
// keeps the writer's scheduling cache (SchedCache: the sched::Scheduler, its resource registry and
// node index) in step with them. The cache is derived: rebuilt by replay, never serialized.
#include <algorithm>

#include "model/catalog.h"
#include "state/cluster_events.h"
#include "state/fleet_state.h"
#include "state/job_events.h"
#include "state/workload_state.h"

namespace gf {

struct SchedCache {
  ResourceRegistry registry;
  sched::Scheduler scheduler;
  std::set<std::string, std::less<>> dirty_clusters;
  std::vector<sched::Action> interrupts;  // found by syncing, not yet recorded
  std::map<uint64_t, std::string> key_to_id;
  std::set<std::pair<Time, uint64_t>> completions;
  std::map<uint64_t, Time> completion_of;  // key -> its entry in `completions`
  void add_completion(Time end, uint64_t key) {
    drop_completion(key);
    completions.insert({end, key});
    completion_of[key] = end;
  }
  void drop_completion(uint64_t key) {
    auto it = completion_of.find(key);
    if (it == completion_of.end()) return;
    completions.erase({it->second, key});
    completion_of.erase(it);
  }
  std::set<uint64_t> scheduled;
  // Workloads by the next time the workload controller must look at them.
  std::set<std::pair<Time, uint64_t>> deadlines;
  std::map<uint64_t, Time> deadline_of;
  void set_deadline(uint64_t key, std::optional<Time> t) {
    auto it = deadline_of.find(key);
    if (it != deadline_of.end()) {
      if (t && *t == it->second) return;
      deadlines.erase({it->second, key});
      deadline_of.erase(it);
    }
    if (!t) return;
    deadlines.insert({*t, key});
    deadline_of[key] = *t;
  }
  std::map<std::string, sched::ShapePtr> shapes;  // interned job shapes
  uint64_t generation = 1;
};

FleetState::FleetState() : sched_(std::make_unique<SchedCache>()) {
  sched_->scheduler.set_registry(&sched_->registry);
}
FleetState::~FleetState() = default;
FleetState::FleetState(FleetState&&) noexcept = default;
FleetState& FleetState::operator=(FleetState&&) noexcept = default;

ResourceRegistry& FleetState::registry() const { return sched_->registry; }
void FleetState::set_scheduler_options(const sched::SchedulerOptions& options) {
  sched_->scheduler.set_options(options);
}
const std::set<std::pair<Time, uint64_t>>& FleetState::completions() const {
  return sched_->completions;
}
const std::set<uint64_t>& FleetState::scheduled() const { return sched_->scheduled; }
const std::set<std::pair<Time, uint64_t>>& FleetState::workload_deadlines() const {
  return sched_->deadlines;
}
void FleetState::refresh_workload_deadline(const Job& job) {
  sched_->set_deadline(job.key, job.dispatch ? workload_deadline(job) : std::nullopt);
}
uint64_t FleetState::sched_generation() const { return sched_->generation; }

std::vector<sched::Action> FleetState::take_interrupts() const {
  sync_clusters();
  std::vector<sched::Action> out;
  out.swap(sched_->interrupts);
  return out;
}

const Job* FleetState::job_by_key(uint64_t key) const {
  auto it = sched_->key_to_id.find(key);
  if (it == sched_->key_to_id.end()) return nullptr;
  auto j = view_.jobs.find(it->second);
  return j == view_.jobs.end() ? nullptr : j->second.get();
}

const Job* FleetView::find_job(std::string_view id_or_name) const {
  if (auto it = jobs.find(id_or_name); it != jobs.end()) return it->second.get();
  const Job* best = nullptr;
  for (const auto& [id, j] : jobs) {
    if (j->name == id_or_name && (best == nullptr || j->key > best->key)) best = j.get();
  }
  return best;
}

void FleetState::sched_drop(uint64_t key) {
  sched_->drop_completion(key);
  sched_->scheduled.erase(key);
  auto& pend = sched_->interrupts;
  pend.erase(std::remove_if(pend.begin(), pend.end(),
                            [&](const sched::Action& x) { return x.job == key; }),
             pend.end());
}

void FleetState::forget_job(uint64_t key, const std::string& id) {
  sched_->set_deadline(key, std::nullopt);
  sched_->key_to_id.erase(key);
  view_.jobs.erase(id);
}

Job* FleetState::mutable_job(std::string_view id) {
  auto it = view_.jobs.find(id);
  if (it == view_.jobs.end()) return nullptr;
  if (it->second.use_count() > 1) it->second = std::make_shared<const Job>(*it->second);
  return const_cast<Job*>(it->second.get());  // copy-on-write handoff, as for clusters
}

ResourceVector FleetState::node_capacity(std::string_view instance_type) {
  ResourceVector v;
  const InstanceTypeInfo* info = Catalog::builtin().find(instance_type);
  if (info == nullptr) return v;
  v.set(kCpu, int64_t{info->vcpus} * 1000);
  v.set(kMemory, info->memory_mib * 1024 * 1024);
  v.set(kGpu, info->gpus);
  v.set(kPods, 110);
  return v;
}

void FleetState::mark_cluster_dirty(const std::string& name) {
  sched_->dirty_clusters.insert(name);
  sched_->generation += 1;
}

sched::Scheduler& FleetState::scheduler() const {
  sync_clusters();
  return sched_->scheduler;
}

// Brings the node index in step with every cluster changed since the last sync.
void FleetState::sync_clusters() const {
  if (sched_->dirty_clusters.empty()) return;
  std::set<std::string, std::less<>> dirty;
  dirty.swap(sched_->dirty_clusters);
  for (const std::string& name : dirty) {
    std::vector<sched::Scheduler::NodeDesc> nodes;
    std::map<std::string, int64_t, std::less<>> targets;
    std::map<std::string, ResourceVector, std::less<>> capacities;
    if (const Cluster* c = view_.find_cluster(name)) {
      const bool usable = c->status != ClusterStatus::kFailed &&
                          c->status != ClusterStatus::kDeleting &&
                          c->status != ClusterStatus::kRollingBack;
      std::set<std::string, std::less<>> compute_groups;
      for (const InstanceGroup& g : c->groups) {
        if (g.spec.node_type == NodeType::kController || g.spec.node_type == NodeType::kLogin)
          continue;
        compute_groups.insert(g.spec.name);
        if (usable) {
          targets[g.spec.instance_type] += g.spec.target;
          capacities[g.spec.instance_type] = node_capacity(g.spec.instance_type);
        }
      }
      for (const auto& [id, n] : c->nodes) {
        if (!compute_groups.contains(n.group) || !n.is_live() || n.maintenance) continue;
        sched::Scheduler::NodeDesc d;
        d.instance_id = id;
        d.instance_type = n.instance_type;
        d.capacity = node_capacity(n.instance_type);
        d.schedulable = usable && n.status == NodeStatus::kRunning && n.healthy && !n.cordoned &&
                        !d.capacity.is_zero();
        d.cordoned = n.cordoned && n.status == NodeStatus::kRunning && n.healthy;
        nodes.push_back(std::move(d));
      }
    }
    std::vector<sched::Action> down =
        sched_->scheduler.sync_cluster(name, nodes, targets, capacities);
    for (sched::Action& a : down) sched_->interrupts.push_back(std::move(a));
  }
  sched_->generation += 1;
}

namespace {

std::string shape_key(const sched::JobShape& shape) {
  std::string k;
  for (const sched::Alternative& a : shape.alternatives) {
    k += a.label + "|";
    for (size_t d = 0; d < kMaxResources; ++d)
      k += std::to_string(a.quota_request.get(static_cast<ResourceId>(d))) + ",";
    for (const sched::PodSet& p : a.pods) {
      k += "[" + std::to_string(p.count) + ":" + p.instance_type + ":";
      for (size_t d = 0; d < kMaxResources; ++d)
        k += std::to_string(p.request.get(static_cast<ResourceId>(d))) + ",";
      k += "]";
    }
    k += ";";
  }
  return k;
}

}  // namespace

Result<sched::JobSpec> FleetState::job_spec(const Job& job) const {
  sched::JobSpec spec;
  spec.key = job.key;
  spec.priority = job.priority;
  spec.creation_seq = job.key;
  spec.max_preemptions = job.max_preemptions;
  spec.preemptions = job.preempted_count;
  const frontend::CompiledQuota* q = view_.quota.get();
  ResourceRegistry& reg = sched_->registry;

  // Pod sets as the nodes see them.
  std::vector<sched::PodSet> pods;
  ResourceVector total;      // what the pods ask for altogether (EQT and Kueue charge this)
  ResourceVector instances;  // whole nodes per instance type (quota shares charge this)
  for (size_t i = 0; i < job.pod_sets.size(); ++i) {
    const JobPodSet& ps = job.pod_sets[i];
    sched::PodSet p;
    p.count = ps.count;
    p.instance_type = ps.instance_type;
    if (ps.whole_node) {
      p.request = node_capacity(ps.instance_type);
      GF_ASSIGN_OR_RETURN(ResourceId type_dim, reg.intern(ps.instance_type));
      instances.set(type_dim, instances.get(type_dim) + ps.count);
    } else {
      GF_ASSIGN_OR_RETURN(
          p.request, ResourceVector::from_json(ps.requests, reg,
                                               "pod_sets[" + std::to_string(i) + "].requests"));
      p.request.set(kPods, 1);
    }
    ResourceVector scaled;
    for (size_t d = 0; d < kMaxResources; ++d) {
      const auto r = static_cast<ResourceId>(d);
      scaled.set(r, p.request.get(r) * ps.count);
    }
    total += scaled;
    pods.push_back(std::move(p));
  }
  total.set(kPods, 0);

  auto shape = std::make_shared<sched::JobShape>();
  // A workload queues for its namespace's quota only when its PropagationPolicy suspends
  // scheduling (docs/dispatch.md step 2); without it, it goes straight to placement.
  const bool ns_queued = !job.ns.empty() && (!job.dispatch || job.dispatch->queued);
  spec.quota_managed = !job.job_queue.empty() || !job.local_queue.empty() || ns_queued;
  spec.sticky = job.dispatch.has_value();
  spec.queue = quota::kNoNode;
  if (!job.job_queue.empty()) {
    if (q != nullptr) {
      auto it = q->share_leaf.find({job.job_queue, job.quota_share});
      if (it != q->share_leaf.end()) spec.queue = it->second;
      auto env = q->environment_clusters.find(job.job_queue);
      if (env != q->environment_clusters.end()) {
        for (const std::string& c : env->second)
          spec.allowed_clusters.push_back(sched_->scheduler.cluster_index(c));
      }
    }
    shape->alternatives.push_back(sched::Alternative{instances, pods, ""});
  } else if (!job.local_queue.empty()) {
    const std::string lq = job.ns + "/" + job.local_queue;
    if (q != nullptr) {
      auto it = q->local_queue_leaf.find(lq);
      if (it != q->local_queue_leaf.end()) spec.queue = it->second;
    }
    if (spec.queue != quota::kNoNode && spec.queue < q->flavors.size()) {
      // Kueue assigns a flavor per resource group (the options covering the same resources):
      // one alternative per combination, the queue's flavor order first.
      std::vector<std::vector<const frontend::FlavorOption*>> groups;
      std::vector<std::set<ResourceId>> group_dims;
      for (const frontend::FlavorOption& f : q->flavors[spec.queue]) {
        std::set<ResourceId> dims;
        for (const auto& [plain, flavored] : f.dims) dims.insert(plain);
        size_t g = 0;
        while (g < group_dims.size() && group_dims[g] != dims) ++g;
        if (g == group_dims.size()) {
          group_dims.push_back(dims);
          groups.emplace_back();
        }
        groups[g].push_back(&f);
      }
      // Only groups covering something the job asks for take part.
      std::vector<size_t> used;
      for (size_t g = 0; g < groups.size(); ++g) {
        for (ResourceId r : group_dims[g]) {
          if (total.get(r) != 0) {
            used.push_back(g);
            break;
          }
        }
      }
      std::vector<size_t> pick(used.size(), 0);
      for (int guard = 0; !used.empty() && guard < 64; ++guard) {
        sched::Alternative alt;
        alt.pods = pods;
        bool ok = true;
        std::string type;
        for (size_t u = 0; u < used.size() && ok; ++u) {
          const frontend::FlavorOption& f = *groups[used[u]][pick[u]];
          alt.label += (alt.label.empty() ? "" : "+") + f.flavor;
          for (const auto& [plain, flavored] : f.dims)
            alt.quota_request.set(flavored, total.get(plain));
          if (!f.instance_type.empty()) {
            std::string t = f.instance_type;
            if (Catalog::builtin().find(t) == nullptr &&
                Catalog::builtin().find("ml." + t) != nullptr)
              t = "ml." + t;
            if (!type.empty() && type != t) ok = false;
            type = t;
          }
        }
        // Every requested dimension must be covered by some chosen flavor.
        for (size_t d = 0; d < kMaxResources && ok; ++d) {
          const auto r = static_cast<ResourceId>(d);
          if (total.get(r) == 0) continue;
          bool covered = false;
          for (size_t u : used) covered |= group_dims[u].contains(r);
          ok = covered;
        }
        if (ok && !type.empty()) {
          for (sched::PodSet& p : alt.pods) {
            if (!p.instance_type.empty() && p.instance_type != type) ok = false;
            p.instance_type = type;
          }
        }
        if (ok) shape->alternatives.push_back(std::move(alt));
        // Next combination (the last group varies fastest); stop after the last one.
        bool advanced = false;
        for (size_t u = used.size(); u-- > 0;) {
          if (++pick[u] < groups[used[u]].size()) {
            advanced = true;
            break;
          }
          pick[u] = 0;
        }
        if (!advanced) break;
      }
    }
    if (shape->alternatives.empty())
      shape->alternatives.push_back(sched::Alternative{total, pods, ""});
  } else {
    ResourceVector charged = total;
    if (ns_queued && q != nullptr) {
      auto it = q->namespace_leaf.find(job.ns);
      if (it != q->namespace_leaf.end()) {
        spec.queue = it->second;
        if (spec.queue < q->charged.size()) {
          for (size_t d = 0; d < kMaxResources; ++d) {
            if (!q->charged[spec.queue].test(d)) charged.set(static_cast<ResourceId>(d), 0);
          }
        }
      }
    }
    shape->alternatives.push_back(sched::Alternative{charged, pods, ""});
  }
  for (const std::string& c : job.clusters) {
    spec.allowed_clusters.push_back(sched_->scheduler.cluster_index(c));
  }
  std::string key = shape_key(*shape);
  auto [it, inserted] = sched_->shapes.try_emplace(std::move(key), nullptr);
  if (inserted) it->second = std::move(shape);
  spec.shape = it->second;
  return spec;
}

Status FleetState::recompile_quota(std::shared_ptr<const frontend::ObjectMap> objects) {
  GF_ASSIGN_OR_RETURN(frontend::CompiledQuota compiled,
                      frontend::compile(*objects, sched_->registry));
  auto q = std::make_shared<const frontend::CompiledQuota>(std::move(compiled));
  view_.quota_objects = std::move(objects);
  view_.quota = q;
  std::vector<bool> fair(q->graph.size(), false);
  for (size_t i = 0; i < q->idle.size() && i < fair.size(); ++i)
    fair[i] = q->idle[i] == frontend::IdleStrategy::kFairShare;
  // Every job's queue in the new graph.
  std::map<uint64_t, quota::NodeId> queues;
  for (const auto& [id, j] : view_.jobs) {
    if (is_terminal(j->status)) continue;
    auto spec = job_spec(*j);
    if (spec.ok()) queues[j->key] = spec->queue;
  }
  sched_->scheduler.set_quota(
      q->graph,
      [&](sched::JobKey k) {
        auto it = queues.find(k);
        return it == queues.end() ? quota::kNoNode : it->second;
      },
      q->root_ceiling, fair);
  sched_->generation += 1;
  return ok_status();
}

namespace {

std::optional<frontend::Kind> kind_by_name(std::string_view name) {
  for (int k = 0; k <= static_cast<int>(frontend::Kind::kQuotaShare); ++k) {
    const auto kind = static_cast<frontend::Kind>(k);
    if (frontend::kind_name(kind) == name) return kind;
  }
  return std::nullopt;
}

}  // namespace

Status FleetState::apply_quota_event(const EventRecord& rec, const Json& p) {
  auto objects = std::make_shared<frontend::ObjectMap>(view_.quota_objects ? *view_.quota_objects
                                                                           : frontend::ObjectMap{});
  if (rec.type == event_type::kQuotaApplied) {
    if (!p.contains("objects") || !p.at("objects").is_array())
      return internal_error("quota.applied without objects");
    for (const Json& o : p.at("objects")) {
      auto kind = kind_by_name(o.value("kind", ""));
      if (!kind) return internal_error("quota.applied: unknown kind " + o.value("kind", ""));
      frontend::QuotaObject obj;
      obj.key = frontend::ObjectKey{*kind, o.value("namespace", ""), o.value("name", "")};
      obj.doc = o.value("doc", Json::object());
      (*objects)[obj.key] = std::move(obj);
    }
  } else {
    auto kind = kind_by_name(p.value("kind", ""));
    if (!kind) return internal_error("quota.deleted: unknown kind");
    objects->erase(frontend::ObjectKey{*kind, p.value("namespace", ""), p.value("name", "")});
  }
  return recompile_quota(std::move(objects));
}

namespace {

sched::Placement to_placement(const sched::Scheduler& s, const std::string& cluster,
                              const std::vector<std::string>& nodes, const sched::JobShape& shape,
                              int32_t alternative, Status* error) {
  sched::Placement p;
  const auto c = s.placement().find_cluster(cluster);
  if (!c) {
    *error = internal_error("placement on unknown cluster " + cluster);
    return p;
  }
  p.cluster = *c;
  if (nodes.empty()) return p;  // dispatched to the cluster, pods pending there
  size_t i = 0;
  const auto& pod_sets = shape.alternatives.at(static_cast<size_t>(alternative)).pods;
  for (uint16_t ps = 0; ps < pod_sets.size(); ++ps) {
    for (int32_t k = 0; k < pod_sets[ps].count; ++k) {
      if (i >= nodes.size()) {
        *error = internal_error("placement lists fewer nodes than pods");
        return p;
      }
      const auto n = s.placement().find_node(*c, nodes[i++]);
      if (!n) {
        *error = internal_error("placement on unknown node " + nodes[i - 1]);
        return p;
      }
      p.pods.push_back(sched::PodBinding{ps, static_cast<uint32_t>(k), *n});
    }
  }
  return p;
}

}  // namespace

Status FleetState::apply_job_event(const EventRecord& rec, const Json& p) {
  const Time t = rec.time;
  sched::Scheduler& s = scheduler();  // nodes in step before any job change
  sched_->generation += 1;
  if (rec.type == event_type::kJobSubmitted) {
    GF_ASSIGN_OR_RETURN(Job job, Job::from_json(p.at("job")));
    if (view_.jobs.contains(job.id)) return internal_error("job " + job.id + " already exists");
    job.created_at = t;
    job.submit_seq = rec.seq;
    if (job.dispatch) {
      job.add_history(t, "Created",
                      "PyTorchJob " + job.ns + "/" + job.name + " is created; PropagationPolicy " +
                          job.dispatch->policy +
                          (job.dispatch->queued ? " queues it in namespace " + job.ns + "'s quota"
                                                : " sends it straight to placement"));
      view_.workload_ids[workload_key(job.kind, job.ns, job.name)] = job.id;
    } else {
      job.add_history(
          t, "Submitted",
          "submitted to " + (job.job_queue.empty()
                                 ? (job.local_queue.empty() ? "namespace " + job.ns
                                                            : "local queue " + job.local_queue)
                                 : "job queue " + job.job_queue + ", share " + job.quota_share));
    }
    view_.job_counter = std::max<int64_t>(view_.job_counter, static_cast<int64_t>(job.key));
    if (!job.dispatch || !job.dispatch->suspended) {
      GF_ASSIGN_OR_RETURN(sched::JobSpec spec, job_spec(job));
      GF_RETURN_IF_ERROR(s.submit(std::move(spec)));
    } else {
      job.add_history(t, "Suspended", "runPolicy.suspend is true: not queued until resumed");
    }
    sched_->key_to_id[job.key] = job.id;
    std::string id = job.id;
    view_.jobs.emplace(std::move(id), std::make_shared<const Job>(std::move(job)));
    return ok_status();
  }
  const std::string id = p.value("id", "");
  Job* job = mutable_job(id);
  if (job == nullptr) return internal_error("no job " + id);

  if (rec.type == event_type::kJobAdmitted) {
    const bool replaced = p.value("replaced", false);
    const std::string cluster = p.value("cluster", "");
    const auto nodes = p.value("nodes", std::vector<std::string>{});
    const int32_t alternative = p.value("alternative", 0);
    const sched::JobSpec* spec = s.spec(job->key);
    if (spec == nullptr) return internal_error("job " + id + " unknown to the scheduler");
    Status err;
    sched::Action a;
    a.kind = sched::ActionKind::kAdmit;
    a.job = job->key;
    a.alternative = static_cast<uint16_t>(alternative);
    a.replaced = replaced;
    a.placement = to_placement(s, cluster, nodes, *spec->shape, alternative, &err);
    GF_RETURN_IF_ERROR(err);
    GF_RETURN_IF_ERROR(s.apply(a, t));
    job->admitted = true;
    job->alternative = alternative;
    if (!replaced) job->admitted_at = t;
    job->cluster = cluster;
    job->pod_nodes = nodes;
    if (nodes.empty()) {
      // Dispatched on an estimate of the cluster's room (--reservation=false): its pods wait
      // there until the cluster's nodes fit them or failover moves the job.
      job->status = JobStatus::kStarting;
      job->status_reason = "dispatched to cluster " + cluster +
                           "; pods Pending: no node arrangement there fits the gang yet";
    } else {
      job->status = JobStatus::kScheduled;
      job->status_reason =
          replaced ? "placed again on cluster " + cluster : "admitted on cluster " + cluster;
      sched_->scheduled.insert(job->key);
    }
    if (job->dispatch) {
      note_binding(*job, t, cluster, nodes.empty(), p.value("borrowing", false));
      return ok_status();
    }
    std::string msg =
        (replaced ? "placed again on cluster " : "admitted; gang placed on cluster ") + cluster +
        " (" + std::to_string(nodes.size()) + " pods)";
    if (p.value("borrowing", false)) msg += ", borrowing idle capacity of its cohort";
    job->add_history(t, replaced ? "Placed" : "Admitted", msg);
    return ok_status();
  }
  if (rec.type == event_type::kJobRunning) {
    // Metering: the price of what its pods hold — a whole node, or the node's price times the
    // pod's share of the node's GPUs (CPU when the node has none).
    JobRun run;
    run.start = t;
    run.cluster = job->cluster;
    run.pods = static_cast<int32_t>(job->pod_nodes.size());
    if (const Cluster* c = view_.find_cluster(job->cluster)) {
      size_t i = 0;
      for (const JobPodSet& ps : job->pod_sets) {
        ResourceVector req;
        if (!ps.whole_node) {
          auto parsed = ResourceVector::from_json(ps.requests, sched_->registry, "requests");
          if (parsed.ok()) req = *parsed;
        }
        for (int32_t k = 0; k < ps.count && i < job->pod_nodes.size(); ++k, ++i) {
          auto n = c->nodes.find(job->pod_nodes[i]);
          if (n == c->nodes.end()) continue;
          const int64_t price = n->second.price_micros_per_hour;
          const ResourceVector cap = node_capacity(n->second.instance_type);
          if (ps.whole_node) {
            run.micros_per_hour += price;
          } else if (cap.get(kGpu) > 0 && req.get(kGpu) > 0) {
            run.micros_per_hour += price * req.get(kGpu) / cap.get(kGpu);
          } else if (cap.get(kCpu) > 0) {
            run.micros_per_hour += price * std::min(req.get(kCpu), cap.get(kCpu)) / cap.get(kCpu);
          }
        }
      }
    }
    job->runs.push_back(std::move(run));
    job->status = JobStatus::kRunning;
    job->status_reason = "running on cluster " + job->cluster;
    job->started_at = t;  // the latest start: a gang placed again starts over
    sched_->scheduled.erase(job->key);
    if (job->duration) sched_->add_completion(t + *job->duration, job->key);
    if (job->dispatch) {
      Dispatch& d = *job->dispatch;
      if (d.restarting) d.restarts += 1;
      d.restarting = false;
      d.not_running_since.reset();
      d.excluded.clear();
      if (!d.first_started_at) d.first_started_at = t;
    }
    job->add_history(t, "Running",
                     "all " + std::to_string(job->pod_nodes.size()) + " pods started on cluster " +
                         job->cluster);
    return ok_status();
  }
  auto drop_completion = [&] {
    if (!job->runs.empty() && !job->runs.back().end) job->runs.back().end = t;
    sched_->drop_completion(job->key);
    sched_->scheduled.erase(job->key);
  };
  if (rec.type == event_type::kJobPreempted) {
    sched::Action a;
    a.kind = sched::ActionKind::kPreempt;
    a.job = job->key;
    a.terminated = p.value("terminated", false);
    a.until = from_micros(p.value("until_us", int64_t{0}));
    GF_RETURN_IF_ERROR(s.apply(a, t));
    drop_completion();
    JobPreemption pre{t, p.value("by", ""), p.value("rule", ""), p.value("message", ""),
                      a.terminated};
    job->preempted_count += 1;
    job->recent_preemptions.push_back(pre);
    if (job->recent_preemptions.size() > 5)
      job->recent_preemptions.erase(job->recent_preemptions.begin());
    job->admitted = false;
    job->cluster.clear();
    job->pod_nodes.clear();
    job->requeue_at = a.until;
    if (a.terminated) {
      job->status = JobStatus::kFailed;
      job->stopped_at = t;
      job->status_reason = "preempted more than preemptionRetriesBeforeTermination (" +
                           std::to_string(job->max_preemptions.value_or(0)) + ") times";
    } else {
      job->status = JobStatus::kRunnable;
      job->status_reason = "preempted (" + pre.rule + "); requeued with backoff";
    }
    job->add_history(t, "Preempted", pre.message);
    return ok_status();
  }
  if (rec.type == event_type::kJobInterrupted) {
    sched::Action a;
    a.kind = sched::ActionKind::kInterrupt;
    a.job = job->key;
    GF_RETURN_IF_ERROR(s.apply(a, t));
    auto& pend = sched_->interrupts;
    pend.erase(std::remove_if(pend.begin(), pend.end(),
                              [&](const sched::Action& x) { return x.job == job->key; }),
               pend.end());
    drop_completion();
    job->cluster.clear();
    job->pod_nodes.clear();
    job->status = JobStatus::kRunnable;
    job->status_reason = "interrupted: " + p.value("message", std::string("a node left"));
    if (job->dispatch) {
      Dispatch& d = *job->dispatch;
      d.restarting = true;
      if (!d.not_running_since) d.not_running_since = t;
      job->add_history(t, "Restarting", p.value("message", std::string("a node of its gang left")));
      return ok_status();
    }
    job->add_history(t, "Interrupted", p.value("message", std::string("a node of its gang left")));
    return ok_status();
  }
  if (rec.type == event_type::kJobFinished) {
    auto st = parse_job_status(p.value("status", ""));
    if (!st || !is_terminal(*st))
      return internal_error("job.finished with status " + p.value("status", ""));
    if (s.contains(job->key)) GF_RETURN_IF_ERROR(s.finish(job->key));
    drop_completion();
    job->status = *st;
    job->status_reason = p.value("reason", "");
    job->stopped_at = t;
    job->admitted = false;
    if (job->dispatch) {
      job->dispatch->restarting = false;
      job->dispatch->not_running_since.reset();
      job->add_history(t, *st == JobStatus::kSucceeded ? "Succeeded" : "Failed",
                       job->status_reason);
      return ok_status();
    }
    job->add_history(t, std::string(to_string(*st)), job->status_reason);
    return ok_status();
  }
  if (rec.type == event_type::kJobPriority) {
    const int32_t prio = p.value("priority", 0);
    job->add_history(
        t, "PriorityChanged",
        "schedulingPriority " + std::to_string(job->priority) + " -> " + std::to_string(prio));
    job->priority = prio;
    if (s.contains(job->key)) GF_RETURN_IF_ERROR(s.set_priority(job->key, prio));
    return ok_status();
  }
  return apply_workload_event(rec, p, *job);
}

// After a snapshot load: quota, nodes, then every live job in submission order, placed where
// the snapshot says.
Status FleetState::restore_scheduler() {
  for (const auto& [name, c] : view_.clusters) sched_->dirty_clusters.insert(name);
  sync_clusters();
  sched_->interrupts.clear();
  if (view_.quota_objects) GF_RETURN_IF_ERROR(recompile_quota(view_.quota_objects));
  std::vector<const Job*> live;
  for (const auto& [id, j] : view_.jobs) {
    sched_->key_to_id[j->key] = id;
    if (j->dispatch) refresh_workload_deadline(*j);
    if (j->dispatch) view_.workload_ids[workload_key(j->kind, j->ns, j->name)] = id;
    if (!is_terminal(j->status) && !(j->dispatch && j->dispatch->suspended))
      live.push_back(j.get());
  }
  std::sort(live.begin(), live.end(), [](const Job* a, const Job* b) { return a->key < b->key; });
  sched::Scheduler& s = sched_->scheduler;
  for (const Job* j : live) {
    GF_ASSIGN_OR_RETURN(sched::JobSpec spec, job_spec(*j));
    GF_RETURN_IF_ERROR(s.submit(spec));
    if (j->admitted) {
      const Time at = j->admitted_at.value_or(Time{});
      if (!j->cluster.empty()) {
        Status err;
        const sched::Placement placement =
            to_placement(s, j->cluster, j->pod_nodes, *spec.shape, j->alternative, &err);
        GF_RETURN_IF_ERROR(err);
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
      if (j->status == JobStatus::kScheduled) sched_->scheduled.insert(j->key);
      if (j->status == JobStatus::kRunning && j->duration && j->started_at) {
        sched_->add_completion(*j->started_at + *j->duration, j->key);
      }
    } else if (j->requeue_at) {
      GF_RETURN_IF_ERROR(s.restore_backoff(j->key, *j->requeue_at));
    }
  }
  return ok_status();
}

}  // namespace gf
