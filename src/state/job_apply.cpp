// Applies quota-object and job journal events to FleetState (docs/quota.md, docs/workloads.md),
// and keeps the state's job indexes (by key, pending completions, started gangs, workload
// deadlines) in step with them. The scheduler is not here: its working memory is the scheduling
// cache, which follows the same events (docs/architecture.md).
#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <set>

#include "model/catalog.h"
#include "state/cluster_events.h"
#include "state/fleet_state.h"
#include "state/job_events.h"
#include "state/workload_state.h"

namespace gf {

struct JobIndex {
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
  // Finished jobs by when they stopped (FleetState::finished_jobs).
  std::set<std::pair<Time, uint64_t>> finished;
  std::map<uint64_t, Time> finished_at;
  void set_finished(uint64_t key, std::optional<Time> t) {
    auto it = finished_at.find(key);
    if (it != finished_at.end()) {
      if (t && *t == it->second) return;
      finished.erase({it->second, key});
      finished_at.erase(it);
    }
    if (!t) return;
    finished.insert({*t, key});
    finished_at[key] = *t;
  }
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
  uint64_t cluster_revision = 0;
  std::map<std::string, uint64_t, std::less<>> cluster_revisions;
  // Per cluster: which nodes changed at which revision (FleetState::nodes_changed_since).
  struct NodeLog {
    uint64_t whole = 0;  // the revision of the last change to the cluster as a whole
    uint64_t floor = 0;  // the newest revision dropped from `changes` (older ones are unknown)
    std::deque<std::pair<uint64_t, std::string>> changes;  // in revision order
  };
  std::map<std::string, NodeLog, std::less<>> node_logs;
};

FleetState::FleetState() : index_(std::make_unique<JobIndex>()) {}
FleetState::~FleetState() = default;
FleetState::FleetState(FleetState&&) noexcept = default;
FleetState& FleetState::operator=(FleetState&&) noexcept = default;

const std::set<std::pair<Time, uint64_t>>& FleetState::completions() const {
  return index_->completions;
}
const std::set<uint64_t>& FleetState::scheduled() const { return index_->scheduled; }
const std::set<std::pair<Time, uint64_t>>& FleetState::finished_jobs() const {
  return index_->finished;
}
const std::set<std::pair<Time, uint64_t>>& FleetState::workload_deadlines() const {
  return index_->deadlines;
}
void FleetState::refresh_workload_deadline(const Job& job) {
  index_->set_deadline(job.key, job.dispatch ? workload_deadline(job) : std::nullopt);
}
uint64_t FleetState::cluster_revision() const { return index_->cluster_revision; }
const std::map<std::string, uint64_t, std::less<>>& FleetState::cluster_revisions() const {
  return index_->cluster_revisions;
}

const Job* FleetState::job_by_key(uint64_t key) const {
  auto it = index_->key_to_id.find(key);
  if (it == index_->key_to_id.end()) return nullptr;
  return view_.job(it->second);
}

const Job* FleetView::job(std::string_view id) const {
  auto it = jobs.find(id);
  return it == jobs.end() ? nullptr : it->second.get();
}

const Job* FleetView::find_job(std::string_view id_or_name) const {
  if (const Job* j = job(id_or_name)) return j;
  const Job* best = nullptr;
  for (const auto& [id, j] : jobs) {
    if (j->name == id_or_name && (best == nullptr || j->key > best->key)) best = j.get();
  }
  return best;
}

void FleetState::drop_job_run(uint64_t key) {
  index_->drop_completion(key);
  index_->scheduled.erase(key);
}

void FleetState::note_finished(const Job& job) {
  std::optional<Time> since;
  if (is_terminal(job.status)) since = job.stopped_at.value_or(job.created_at);
  index_->set_finished(job.key, since);
}

void FleetState::forget_job(uint64_t key, const std::string& id) {
  index_->set_deadline(key, std::nullopt);
  index_->set_finished(key, std::nullopt);
  index_->key_to_id.erase(key);
  if (auto it = view_.jobs.find(id); it != view_.jobs.end()) retired_.push_back(it->second);
  view_.jobs.erase(id);
}

Job* FleetState::mutable_job(std::string_view id) {
  JobPtr* slot = view_.jobs.mutable_find(id);
  if (slot == nullptr) return nullptr;
  if (slot->use_count() > 1) *slot = std::make_shared<const Job>(**slot);
  return const_cast<Job*>(slot->get());  // copy-on-write handoff, as for clusters
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

void FleetState::set_workload_id(const std::string& key, const std::string& id) {
  if (std::string* slot = view_.workload_ids.mutable_find(key)) {
    *slot = id;
  } else {
    view_.workload_ids.emplace(key, id);
  }
}

void FleetState::mark_cluster_dirty(const std::string& name, std::string_view node) {
  const uint64_t rev = ++index_->cluster_revision;
  index_->cluster_revisions[name] = rev;
  auto [entry, fresh] = index_->node_logs.try_emplace(name);
  JobIndex::NodeLog& log = entry->second;
  if (fresh) log.floor = rev - 1;  // what changed before the log began is unknown
  if (node.empty()) {
    log.whole = rev;
    log.floor = rev;  // nothing before a whole change is worth reading
    log.changes.clear();
    return;
  }
  log.changes.emplace_back(rev, std::string(node));
  if (log.changes.size() > kNodeLogKept) {
    log.floor = log.changes.front().first;
    log.changes.pop_front();
  }
}

std::optional<std::vector<std::string>> FleetState::nodes_changed_since(std::string_view cluster,
                                                                        uint64_t since) const {
  auto it = index_->node_logs.find(cluster);
  if (it == index_->node_logs.end()) return std::nullopt;
  const JobIndex::NodeLog& log = it->second;
  if (log.whole > since || log.floor > since) return std::nullopt;
  auto first = std::upper_bound(
      log.changes.begin(), log.changes.end(), since,
      [](uint64_t s, const std::pair<uint64_t, std::string>& c) { return s < c.first; });
  std::vector<std::string> ids;
  ids.reserve(static_cast<size_t>(log.changes.end() - first));
  for (auto c = first; c != log.changes.end(); ++c) ids.push_back(c->second);
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

Status FleetState::on_event(const EventRecord&, const object_events::QuotaApplied& e) {
  auto objects = std::make_shared<frontend::ObjectMap>(view_.quota_objects ? *view_.quota_objects
                                                                           : frontend::ObjectMap{});
  for (const object_events::QuotaObjectDoc& o : e.objects) {
    frontend::QuotaObject obj;
    obj.key = frontend::ObjectKey{o.kind, o.ns, o.name};
    obj.doc = o.doc;
    (*objects)[obj.key] = std::move(obj);
  }
  view_.quota_objects = std::move(objects);
  return ok_status();
}

Status FleetState::on_event(const EventRecord&, const object_events::QuotaDeleted& e) {
  auto objects = std::make_shared<frontend::ObjectMap>(view_.quota_objects ? *view_.quota_objects
                                                                           : frontend::ObjectMap{});
  objects->erase(frontend::ObjectKey{e.kind, e.ns, e.name});
  view_.quota_objects = std::move(objects);
  return ok_status();
}

// One applier per job event type, found by its wire name (docs/architecture.md "Typed events").
Status FleetState::apply_job_event(const EventRecord& rec, const Json& p) {
  using Applier = Status (FleetState::*)(const EventRecord&, const Json&);
  static const std::map<std::string_view, Applier> kAppliers = {
      {job_events::Submitted::kType, &FleetState::apply_job_submitted},
      {job_events::Admitted::kType, &FleetState::apply_typed_job_event<job_events::Admitted>},
      {job_events::Running::kType, &FleetState::apply_typed_job_event<job_events::Running>},
      {job_events::Preempted::kType, &FleetState::apply_typed_job_event<job_events::Preempted>},
      {job_events::Interrupted::kType, &FleetState::apply_typed_job_event<job_events::Interrupted>},
      {job_events::Finished::kType, &FleetState::apply_typed_job_event<job_events::Finished>},
      {job_events::PriorityChanged::kType,
       &FleetState::apply_typed_job_event<job_events::PriorityChanged>},
      {job_events::Waiting::kType, &FleetState::apply_typed_job_event<job_events::Waiting>},
      {job_events::Failover::kType, &FleetState::apply_typed_job_event<job_events::Failover>},
      {job_events::CopyPurged::kType, &FleetState::apply_typed_job_event<job_events::CopyPurged>},
      {job_events::Suspend::kType, &FleetState::apply_typed_job_event<job_events::Suspend>},
      {job_events::PolicyBound::kType, &FleetState::apply_typed_job_event<job_events::PolicyBound>},
      {job_events::Annotations::kType, &FleetState::apply_typed_job_event<job_events::Annotations>},
      {job_events::Deleted::kType, &FleetState::apply_typed_job_event<job_events::Deleted>},
      {job_events::PodStatus::kType, &FleetState::apply_typed_job_event<job_events::PodStatus>},
  };
  auto it = kAppliers.find(rec.type);
  if (it == kAppliers.end()) return internal_error("unknown job event " + rec.type);
  return (this->*(it->second))(rec, p);
}

template <typename E>
Status FleetState::apply_typed_job_event(const EventRecord& rec, const Json& p) {
  GF_ASSIGN_OR_RETURN(const E e, job_events::decode<E>(p));
  Job* job = mutable_job(e.id);
  if (job == nullptr) return internal_error("no job " + e.id);
  return on_job_event(rec, e, *job);
}

Status FleetState::apply_job_submitted(const EventRecord& rec, const Json& p) {
  GF_ASSIGN_OR_RETURN(job_events::Submitted e, job_events::decode<job_events::Submitted>(p));
  return on_submitted(rec, std::move(e.job));
}

Status FleetState::on_submitted(const EventRecord& rec, Job job) {
  const Time t = rec.time;
  if (view_.jobs.contains(job.id)) return internal_error("job " + job.id + " already exists");
  job.created_at = t;
  job.submit_seq = rec.seq;
  if (job.dispatch) {
    const std::string how =
        job.dispatch->awaiting_policy
            ? "no PropagationPolicy selects it yet: held until one does"
            : "PropagationPolicy " + job.dispatch->policy +
                  (job.dispatch->queued ? " queues it in namespace " + job.ns + "'s quota"
                                        : " sends it straight to placement");
    job.add_history(t, "Created", "PyTorchJob " + job.ns + "/" + job.name + " is created; " + how);
    set_workload_id(workload_key(job.kind, job.ns, job.name), job.id);
  } else {
    job.add_history(
        t, "Submitted",
        "submitted to " + (job.job_queue.empty()
                               ? (job.local_queue.empty() ? "namespace " + job.ns
                                                          : "local queue " + job.local_queue)
                               : "job queue " + job.job_queue + ", share " + job.quota_share));
  }
  view_.job_counter = std::max<int64_t>(view_.job_counter, static_cast<int64_t>(job.key));
  if (job.dispatch && job.dispatch->suspended)
    job.add_history(t, "Suspended", "runPolicy.suspend is true: not queued until resumed");
  index_->key_to_id[job.key] = job.id;
  std::string id = job.id;
  view_.jobs.emplace(std::move(id), std::make_shared<const Job>(std::move(job)));
  return ok_status();
}

// The job no longer runs: its open run ends now, its pending completion and start are dropped.
// The lost-work model (docs/scenarios.md): a finished run keeps the rest of the job's work; any
// other end keeps the whole checkpoints it made after its restart overhead (none without a
// checkpoint interval: the job starts over).
void FleetState::end_run(Job& job, Time t, std::string_view cause) {
  if (!job.runs.empty() && !job.runs.back().end) {
    JobRun& run = job.runs.back();
    run.end = t;
    run.ended_by = std::string(cause);
    // A slow stretch still open ends with the run.
    run.slowed = run.slow_loss(t);
    run.slow_since.reset();
    if (job.duration) {
      const Duration remaining = std::max(Duration::zero(), *job.duration - job.progress);
      const Duration worked = std::max(Duration::zero(), t - run.start - run.overhead - run.slowed);
      Duration kept{0};
      if (cause == "finished") {
        kept = std::min(remaining, worked);
      } else if (job.checkpoint_interval && *job.checkpoint_interval > Duration::zero()) {
        kept = std::min(remaining, worked / *job.checkpoint_interval * *job.checkpoint_interval);
      }
      run.kept = kept;
      job.progress += kept;
    }
  }
  drop_job_run(job.key);
}

// The open run's pace: `factor` > 1 slows the gang from `t` (a straggler: a node of it is
// degraded), 1 gives it back its speed; its completion moves with it. A run already slow keeps
// the factor it has until it gets its speed back (one straggler sets the pace).
void FleetState::set_run_pace(Job& job, Time t, double factor) {
  if (job.runs.empty() || job.runs.back().end || !job.duration) return;
  JobRun& run = job.runs.back();
  if ((factor > 1) == run.slow_since.has_value()) return;
  if (factor > 1) {
    run.slow_since = t;
    run.slow_factor = factor;
  } else {
    run.slowed = run.slow_loss(t);
    run.slow_since.reset();
    run.slow_factor = 1;
  }
  if (auto end = job.completion_time()) index_->add_completion(*end, job.key);
}

Status FleetState::on_job_event(const EventRecord& rec, const job_events::Admitted& e, Job& job) {
  const Time t = rec.time;
  const bool replaced = e.replaced;
  const std::string& cluster = e.cluster;
  const std::vector<std::string>& nodes = e.nodes;
  job.admitted = true;
  job.waiting.reset();  // a job whose pods still wait gets its reason from the next pass
  job.alternative = e.alternative;
  if (!replaced) job.admitted_at = t;
  job.cluster = cluster;
  job.pod_nodes = nodes;
  job.placements += 1;  // real pods of an earlier placement are no longer this job's
  job.pod_states.clear();
  if (nodes.empty()) {
    // Dispatched on an estimate of the cluster's room (--reservation=false): its pods wait
    // there until the cluster's nodes fit them or failover moves the job.
    job.status = JobStatus::kStarting;
    job.status_reason = "dispatched to cluster " + cluster +
                        "; pods Pending: no node arrangement there fits the gang yet";
  } else {
    job.status = JobStatus::kScheduled;
    job.status_reason =
        replaced ? "placed again on cluster " + cluster : "admitted on cluster " + cluster;
    index_->scheduled.insert(job.key);
  }
  if (job.dispatch) {
    note_binding(job, t, cluster, nodes.empty(), e.borrowing);
    return ok_status();
  }
  std::string msg = fmt::format(
      "{}{} ({} pods)", replaced ? "placed again on cluster " : "admitted; gang placed on cluster ",
      cluster, nodes.size());
  if (e.borrowing) msg += ", borrowing idle capacity of its cohort";
  job.add_history(t, replaced ? "Placed" : "Admitted", msg);
  return ok_status();
}

namespace {

// How many domains of network layers 1..3 the job's pods span (0 where a node has no label).
std::array<int32_t, 3> run_domains(const Cluster& c, const Job& job) {
  std::array<int32_t, 3> out{};
  for (size_t l = 0; l < out.size(); ++l) {
    const std::string key(kTopologyLevels[l]);
    auto label = [&](const std::string& id) -> const std::string* {
      auto n = c.nodes.find(id);
      if (n == c.nodes.end()) return nullptr;
      auto v = n->second.labels.find(key);
      return v == n->second.labels.end() ? nullptr : &v->second;
    };
    std::set<std::string_view> seen;
    for (const std::string& id : job.pod_nodes) {
      const std::string* v = label(id);
      if (v == nullptr) {
        seen.clear();
        break;
      }
      seen.insert(*v);
    }
    out[l] = static_cast<int32_t>(seen.size());
  }
  return out;
}

}  // namespace

Status FleetState::on_job_event(const EventRecord& rec, const job_events::Running& /*e*/,
                                Job& job) {
  const Time t = rec.time;
  // Metering: the price of what its pods hold — a whole node, or the node's price times the
  // pod's share of the node's GPUs (CPU when the node has none).
  JobRun run;
  run.start = t;
  run.cluster = job.cluster;
  run.pods = static_cast<int32_t>(job.pod_nodes.size());
  if (const Cluster* c = view_.find_cluster(job.cluster)) {
    size_t i = 0;
    for (const JobPodSet& ps : job.pod_sets) {
      ResourceVector req;
      if (!ps.whole_node) {
        ResourceRegistry reg;  // the price needs only cpu and the GPU count
        auto parsed = ResourceVector::from_json(ps.requests, reg, "requests");
        if (parsed.ok()) req = *parsed;
      }
      for (int32_t k = 0; k < ps.count && i < job.pod_nodes.size(); ++k, ++i) {
        auto n = c->nodes.find(job.pod_nodes[i]);
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
  if (const Cluster* c = view_.find_cluster(job.cluster)) run.domains = run_domains(*c, job);
  // A restart (any run after the first) first spends the restart overhead.
  if (!job.runs.empty() && job.restart_overhead) run.overhead = *job.restart_overhead;
  job.runs.push_back(std::move(run));
  job.status = JobStatus::kRunning;
  job.status_reason = "running on cluster " + job.cluster;
  job.started_at = t;  // the latest start: a gang placed again resumes from its kept progress
  index_->scheduled.erase(job.key);
  if (auto end = job.completion_time()) index_->add_completion(*end, job.key);
  // A gang placed on a degraded node runs at its pace from the start.
  double pace = 1;
  for (const std::string& node : job.pod_nodes) pace = std::max(pace, node_slowdown(node));
  set_run_pace(job, t, pace);
  if (job.dispatch) {
    Dispatch& d = *job.dispatch;
    if (d.restarting) d.restarts += 1;
    d.restarting = false;
    d.not_running_since.reset();
    d.excluded.clear();
    if (!d.first_started_at) d.first_started_at = t;
  }
  job.add_history(
      t, "Running",
      fmt::format("all {} pods started on cluster {}", job.pod_nodes.size(), job.cluster));
  return ok_status();
}

Status FleetState::on_job_event(const EventRecord& rec, const job_events::Preempted& e, Job& job) {
  const Time t = rec.time;
  const bool terminated = e.terminated;
  end_run(job, t, "preempted");
  JobPreemption pre{t, e.by, e.rule, e.message, terminated};
  job.preempted_count += 1;
  job.recent_preemptions.push_back(pre);
  if (job.recent_preemptions.size() > 5)
    job.recent_preemptions.erase(job.recent_preemptions.begin());
  job.admitted = false;
  job.cluster.clear();
  job.pod_nodes.clear();
  job.pod_states.clear();  // its real pods are stopped; a new placement reports afresh
  job.requeue_at = e.until;
  if (terminated) {
    job.status = JobStatus::kFailed;
    job.stopped_at = t;
    job.status_reason =
        fmt::format("preempted more than preemptionRetriesBeforeTermination ({}) times",
                    job.max_preemptions.value_or(0));
  } else {
    job.status = JobStatus::kRunnable;
    job.status_reason = "preempted (" + pre.rule + "); requeued with backoff";
  }
  job.add_history(t, "Preempted", pre.message);
  return ok_status();
}

Status FleetState::on_job_event(const EventRecord& rec, const job_events::Interrupted& e,
                                Job& job) {
  const Time t = rec.time;
  end_run(job, t, "interrupted");
  job.cluster.clear();
  job.pod_nodes.clear();
  job.pod_states.clear();  // its real pods are stopped; a new placement reports afresh
  job.status = JobStatus::kRunnable;
  job.status_reason = "interrupted: " + e.message;
  if (job.dispatch) {
    Dispatch& d = *job.dispatch;
    if (!d.not_running_since) d.not_running_since = t;
    if (e.cause == job_events::kInterruptMove) {  // it never ran: nothing restarts
      job.add_history(t, "Moved", e.message);
      return ok_status();
    }
    // A restart that failed before it ran counts now; one that runs counts when it does.
    if (e.cause == job_events::kInterruptPodFailed && d.restarting) d.failed_starts += 1;
    d.restarting = true;
    job.add_history(t, "Restarting", e.message);
    return ok_status();
  }
  job.add_history(t, "Interrupted", e.message);
  return ok_status();
}

Status FleetState::on_job_event(const EventRecord& rec, const job_events::Finished& e, Job& job) {
  const Time t = rec.time;
  end_run(job, t, e.status == JobStatus::kSucceeded ? "finished" : "failed");
  job.waiting.reset();
  job.status = e.status;
  job.status_reason = e.reason;
  job.stopped_at = t;
  job.admitted = false;
  if (job.dispatch) {
    job.dispatch->restarting = false;
    job.dispatch->not_running_since.reset();
    job.add_history(t, e.status == JobStatus::kSucceeded ? "Succeeded" : "Failed",
                    job.status_reason);
    return ok_status();
  }
  job.add_history(t, std::string(to_string(e.status)), job.status_reason);
  return ok_status();
}

Status FleetState::on_job_event(const EventRecord& rec, const job_events::PodStatus& e, Job& job) {
  if (e.placement != job.placements) return ok_status();  // a report of an earlier placement
  const PodState before = job.pod_states.count(e.pod) ? job.pod_states.at(e.pod) : PodState{};
  job.pod_states[e.pod] = e.state;
  // Placed but not running yet: the job says why, in its pods' words (Slurm's reason for a
  // pending allocation, docs/slurm.md).
  if (job.status == JobStatus::kScheduled && e.state.phase != "Running" && !e.state.message.empty())
    job.status_reason = fmt::format("pod {} {}: {}", e.pod, e.state.phase, e.state.message);
  // The history says what changed: a phase, or a restart on the node.
  if (before.phase != e.state.phase) {
    job.add_history(rec.time, "Pod" + e.state.phase,
                    fmt::format("pod {} is {}{}", e.pod, e.state.phase,
                                e.state.phase == "Running" || e.state.phase == "Pending" ||
                                        e.state.phase == "Unknown"
                                    ? ""
                                    : fmt::format(" (exit code {})", e.state.exit_code)));
  } else if (e.state.restarts > before.restarts) {
    job.add_history(rec.time, "PodRestarted",
                    fmt::format("pod {} restarted on its node ({} restarts; last exit code {})",
                                e.pod, e.state.restarts, e.state.exit_code));
  }
  return ok_status();
}

Status FleetState::on_job_event(const EventRecord& /*rec*/, const job_events::Waiting& e,
                                Job& job) {
  JobWait w = e.waiting;
  // A job not admitted yet says why in its status reason (a service job's statusReason).
  if (!job.admitted) job.status_reason = w.message;
  job.waiting = std::move(w);
  return ok_status();
}

Status FleetState::on_job_event(const EventRecord& rec, const job_events::PriorityChanged& e,
                                Job& job) {
  job.add_history(rec.time, "PriorityChanged",
                  fmt::format("schedulingPriority {} -> {}", job.priority, e.priority));
  job.priority = e.priority;
  return ok_status();
}

// After a snapshot load: the job and cluster indexes rebuilt from the records.
Status FleetState::restore_indexes() {
  for (const auto& [name, c] : view_.clusters) mark_cluster_dirty(name);
  for (const auto& [id, j] : view_.jobs) {
    index_->key_to_id[j->key] = id;
    if (j->dispatch) refresh_workload_deadline(*j);
    if (j->dispatch) set_workload_id(workload_key(j->kind, j->ns, j->name), id);
    note_finished(*j);
    if (is_terminal(j->status) || !j->admitted || (j->dispatch && j->dispatch->suspended)) continue;
    if (j->status == JobStatus::kScheduled) index_->scheduled.insert(j->key);
    if (auto end = j->completion_time()) index_->add_completion(*end, j->key);
  }
  return ok_status();
}

}  // namespace gf
