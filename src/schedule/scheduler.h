// Scheduler: quota admission (the QuotaEngine) joined with gang placement (the PlacementIndex),
// the way Kueue's scheduler joins its cache and flavor assigner. One schedule() pass admits and
// places whole gangs, preempts when the quota policies allow it, parks infeasible shapes and
// requeues victims with backoff. Everything it decides is returned as Actions, which the caller
// records (journal events) and which apply_*() reproduces exactly on replay.
//
// Pure and single-threaded: no clock, no I/O; `now` is a parameter. See docs/scheduling.md.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "core/result.h"
#include "core/time.h"
#include "quota/decision_log.h"
#include "quota/quota_engine.h"
#include "schedule/placement.h"

namespace gf::sched {

using JobKey = quota::WorkloadId;

struct SchedulerOptions {
  Duration requeue_base = seconds(10);       // first backoff after a preemption; doubles each time
  Duration requeue_max = minutes(10);        // backoff cap
  Duration min_run_time = Duration::zero();  // protects a job from reclaim this long after start
  // true: a gang is admitted only with real per-node room on one cluster (docs/dispatch.md
  // reservation). false ("estimate mode", ACK One Fleet without resource reservation): the cluster
  // is chosen by its summed free capacity (PlacementIndex::estimate); if no node arrangement there
  // fits, the job is still admitted and dispatched to it with its pods pending until room appears
  // there.
  bool reservation = true;
  // Reservation with backfill (docs/scheduling.md "Reservation and backfill"): a gang that quota
  // admits but no cluster holds now reserves the nodes that free soonest, from the running gangs'
  // expected ends; a later job may use reserved nodes only if it will end before the reservation
  // starts. One reservation per queue (its first job that waits for nodes), for starts within
  // `backfill_window`, at most `max_reservations` at a time.
  bool backfill = true;
  Duration backfill_window = days(7);
  size_t max_reservations = 16;
  // A reservation is planned again at most this often while its job waits (Slurm's
  // bf_interval): planning releases the running gangs one by one, which is not cheap.
  Duration backfill_interval = seconds(30);
};

// Nodes held for a waiting gang from `start`, its expected start (docs/scheduling.md
// "Reservation and backfill").
struct Reservation {
  ClusterIdx cluster = kNoCluster;
  std::vector<NodeIdx> nodes;  // ascending
  Time start{};
  uint32_t queue = 0;  // its job's queue: one reservation per queue, for its first waiting job
  Time planned_at{};   // when it was last planned
  bool operator==(const Reservation&) const = default;
};

// One way a job can run: what it charges to quota and what its pods need. Kueue flavors give a
// job several alternatives, tried in order; most jobs have one.
struct Alternative {
  ResourceVector quota_request;
  std::vector<PodSet> pods;
  std::string label;  // flavor name (explanations); may be empty
  bool operator==(const Alternative&) const = default;
};
struct JobShape {
  std::vector<Alternative> alternatives;
  bool operator==(const JobShape&) const = default;
};
using ShapePtr = std::shared_ptr<const JobShape>;

struct JobSpec {
  JobKey key = 0;
  // The leaf queue; kNoNode with `quota_managed` = its queue does not exist (it waits);
  // kNoNode without = no quota at all, placement only (docs/dispatch.md step 2 without suspension).
  quota::NodeId queue = quota::kNoNode;
  bool quota_managed = true;
  int32_t priority = 0;
  uint64_t creation_seq = 0;  // submission order
  ShapePtr shape;
  std::vector<ClusterIdx> allowed_clusters;  // empty = any
  std::optional<int32_t> max_preemptions;    // preemptionRetriesBeforeTermination
  int32_t preemptions = 0;                   // so far (restored on replay)
  // Bound to the cluster it was placed on: after an interruption it is placed again only there,
  // until failover() moves it. Without it a gang that lost a node may go to any allowed cluster.
  bool sticky = false;
  // How long a run of it lasts at most (activeDeadlineSeconds, gpufleet.io/duration): its
  // expected end once placed. None = unknown: its nodes are never counted on to free, and it
  // never runs on nodes reserved for another job.
  std::optional<Duration> time_limit;
};

enum class ActionKind : uint8_t {
  kAdmit,      // job admitted (or re-placed, when `replaced`) with `placement`; empty
               // `placement.pods` = dispatched to `placement.cluster`, pods pending (estimate mode)
  kPreempt,    // job evicted by `other`; back to pending until `until`, or terminated
  kInterrupt,  // a node of job's placement left; pods unbound, quota kept, to be re-placed
};

struct Action {
  ActionKind kind = ActionKind::kAdmit;
  JobKey job = 0;
  JobKey other = 0;  // kPreempt: the preemptor
  uint16_t alternative = 0;
  Placement placement;
  bool borrowing = false;
  bool replaced = false;
  quota::PreemptionReason reason = quota::PreemptionReason::kInQueue;
  bool terminated = false;  // kPreempt: preemptionRetriesBeforeTermination exhausted
  Time until{};             // kPreempt: requeue backoff end
  NodeIdx node = 0;         // kInterrupt: the node that left
  bool move = false;        // kInterrupt: a gang that never started moves off a node Slurm refuses
  std::string message;      // human explanation
};

struct PassResult {
  std::vector<Action> actions;  // in decision order
  std::optional<Time> next_wake;
};

enum class WaitKind : uint8_t {
  kNotWaiting,      // admitted and placed
  kQuota,           // a limit of a quota node
  kStrictFifo,      // behind an older head in a StrictFIFO queue
  kPlacement,       // quota admits it, but no single cluster has free nodes for the whole gang
  kInfeasible,      // no cluster could ever hold the gang: parked
  kBackoff,         // requeued after a preemption
  kNoQueue,         // its quota queue does not exist
  kHeldForReclaim,  // another queue is reclaiming its nominal capacity in this cohort
  kCeiling,         // the service environment's capacity limit
  kUnplaced,        // admitted, waiting to be placed again after an interruption or a failover
  kPodsPending,     // admitted and bound to a cluster whose nodes cannot hold the gang yet
};
std::string_view wait_kind_name(WaitKind kind);

struct WaitReason;
// The condition reason a waiting job shows (its Queued condition, docs/scheduling.md):
// QuotaExceeded, MaxJobsReached, StrictFIFO, CapacityLimit, HeldForReclaim, NoFit, Parked,
// Backoff, NoQueue, Unplaced or PodsPending; empty when it does not wait.
std::string_view condition_reason(const WaitReason& w);

struct WaitReason {
  WaitKind kind = WaitKind::kNotWaiting;
  std::string node;      // quota node name (kQuota, kCeiling)
  std::string limit;     // e.g. "borrowing limit", "max jobs"
  std::string resource;  // e.g. "nvidia.com/gpu", "kube-queue/max-jobs"
  int64_t requested = 0;
  int64_t available = 0;
  int64_t shortfall = 0;
  std::string message;  // one sentence a person can act on
};

class Scheduler {
 public:
  explicit Scheduler(SchedulerOptions options = {});

  void set_options(const SchedulerOptions& options) { options_ = options; }
  const SchedulerOptions& options() const { return options_; }
  // Names of resources in explanations. Must outlive the scheduler.
  void set_registry(const ResourceRegistry* registry) { registry_ = registry; }

  // Replaces the quota graph. `requeue` gives every known job its queue in the new graph
  // (kNoNode when gone); admitted jobs stay admitted even above the new limits (they become
  // preemptible), pending ones are re-queued. `ceilings`: per root, a cap on the root's usage.
  void set_quota(quota::QuotaGraph graph, const std::function<quota::NodeId(JobKey)>& requeue,
                 std::map<quota::NodeId, ResourceVector> ceilings = {},
                 std::vector<bool> fair_share_roots = {});
  const quota::QuotaEngine& engine() const { return *engine_; }

  const PlacementIndex& placement() const { return index_; }
  // The index of a member cluster by name, registering it (without nodes) if new: jobs may name
  // clusters that are created later.
  ClusterIdx cluster_index(std::string_view name) { return index_.cluster(name); }
  struct NodeDesc {
    std::string instance_id;
    std::string instance_type;
    ResourceVector capacity;
    bool schedulable = false;
    bool cordoned = false;    // unschedulable but its gangs keep running (remediation's cordon)
    NodeTopology topology{};  // its topology label values (docs/scheduling.md "Topology")
  };
  // Makes the cluster's nodes in the index equal `nodes` (all of them, any state). A node that
  // left or became unschedulable interrupts the gangs on it: their pods are unbound, their quota
  // kept, and they are placed again by the next pass (returned as kInterrupt actions). New
  // capacity requeues jobs that waited for placement. `targets`: instance count per type the
  // cluster is heading for (infeasibility is judged against it); `type_capacity`: the capacity
  // of each type in `targets`.
  std::vector<Action> sync_cluster(
      std::string_view cluster, const std::vector<NodeDesc>& nodes,
      const std::map<std::string, int64_t, std::less<>>& targets,
      const std::map<std::string, ResourceVector, std::less<>>& type_capacity);
  // The same for some of the cluster's nodes only: `changed` are nodes that changed and are
  // still there, `removed` the instance ids of nodes that left (unknown ids are ignored); every
  // other node is as it was. Equal to sync_cluster with the whole list, at O(changed nodes).
  std::vector<Action> sync_nodes(
      std::string_view cluster, const std::vector<NodeDesc>& changed,
      const std::vector<std::string>& removed,
      const std::map<std::string, int64_t, std::less<>>& targets,
      const std::map<std::string, ResourceVector, std::less<>>& type_capacity);

  // A new job, pending. Errors: duplicate key, no alternatives.
  Status submit(JobSpec spec);
  // Keys of the jobs with pods bound to that node (wait-for-idle: "no GPU pods on the node").
  std::vector<JobKey> jobs_on_node(std::string_view cluster, std::string_view instance_id) const;
  // The job finished or was deleted: quota and nodes are returned, and it is forgotten.
  Status finish(JobKey job);
  // Changes priority (pending or running) and re-evaluates what may be preempted.
  Status set_priority(JobKey job, int32_t priority);

  bool contains(JobKey job) const { return jobs_.contains(job); }
  bool admitted(JobKey job) const;
  // The job's placement when its pods are placed (null while dispatched with pods pending).
  const Placement* placement_of(JobKey job) const;
  // The cluster an admitted job is bound to: where its pods are placed, where it was dispatched
  // with pods pending, or (sticky) where it waits to be placed again. nullopt = none: pending,
  // or free to go to any allowed cluster (not sticky and interrupted, or failed over).
  std::optional<ClusterIdx> bound_cluster(JobKey job) const;
  // Admitted with every pod of its gang placed.
  bool pods_placed(JobKey job) const;
  const JobSpec* spec(JobKey job) const;
  size_t job_count() const { return jobs_.size(); }

  // One pass: admissions, placements and preemptions, applied to this scheduler ("assumed",
  // as Kueue's cache does) and returned for the caller to record.
  PassResult schedule(Time now);
  // Restores a submitted job's admission from a snapshot: admitted with `placement` (or
  // admitted and waiting to be placed again when it is null), or pending in backoff until
  // `backoff_until`. A placement with no pods restores a job dispatched to its cluster with its
  // pods pending. The job must be pending.
  Status restore(JobKey job, uint16_t alternative, const Placement* placement, Time admitted_at);
  Status restore_backoff(JobKey job, Time backoff_until);
  // After restore() of an admitted job that has no pods placed: the cluster it is bound to
  // (nullopt = none) and the clusters it failed over from. Errors: unknown job, not admitted or
  // placed (conflict), unknown cluster (validation).
  Status restore_binding(JobKey job, std::optional<ClusterIdx> bound,
                         std::vector<ClusterIdx> excluded);
  // The caller saw the admitted job's pods unable to run on its bound cluster (docs/dispatch.md,
  // after tolerationSeconds): its pods are unbound, the cluster is excluded for it until its pods
  // are placed again, and it stays admitted (quota, admission time and alternative kept), waiting
  // for the next pass to place it on another allowed cluster. The caller records the failover
  // and calls this again on replay. Errors: unknown job, not admitted or bound (conflict).
  Status failover(JobKey job, Time now);
  // Replay of recorded actions; each is a no-op when this scheduler already reflects it.
  Status apply(const Action& action, Time now);

  // Why the job is not running, computed from the current state.
  WaitReason explain(JobKey job, Time now) const;
  // The nodes reserved for a waiting job (docs/scheduling.md "Reservation and backfill"), or null.
  const Reservation* reservation_of(JobKey job) const;
  // Jobs whose explanation may have changed since the last call, in key order: submitted,
  // requeued, tried by a pass, admitted, unbound or evicted since then. The scheduling controller
  // explains them after each pass and records what changed (docs/scheduling.md "Why a job
  // waits").
  std::vector<JobKey> take_touched();

  // Every decision, for explanations and the determinism check (acceptance 6).
  const quota::DecisionLog& log() const { return log_; }
  uint64_t decision_hash() const { return log_.hash(); }
  // Consistency check for tests: node free capacity equals capacity minus the pods bound to it,
  // and every job is either fully placed or not placed at all. Returns an error describing the
  // first violation.
  Status check_invariants() const;

 private:
  // sync_cluster and sync_nodes: `nodes` upserted, `gone` (sorted) dropped, gangs on nodes that
  // stopped taking pods interrupted.
  std::vector<Action> apply_node_sync(
      std::string_view cluster, ClusterIdx c, const std::vector<NodeDesc>& nodes,
      const std::vector<NodeIdx>& gone, const std::map<std::string, int64_t, std::less<>>& targets,
      const std::map<std::string, ResourceVector, std::less<>>& type_capacity);
  using Key = std::tuple<int64_t, uint64_t, JobKey>;  // (-priority, creation_seq, key)
  // kActive: pending and tried by passes (a job that failed is skipped until something it
  // depends on changes: its cohort's capacity or the nodes). kGone: terminated mid-pass.
  enum class Wait : uint8_t { kActive, kGone, kBackoff, kParked, kAdmitted, kOrphan };
  struct Job {
    JobSpec spec;
    Wait wait = Wait::kActive;
    uint16_t alternative = 0;
    std::optional<Placement> placement;  // admitted with its pods placed (never without pods)
    std::optional<ClusterIdx> bound;     // see bound_cluster(); only while admitted
    std::vector<ClusterIdx> excluded;  // failed over from, sorted; only while admitted without pods
    Time admitted_at{};
    Time backoff_until{};
    WaitKind last_kind = WaitKind::kNotWaiting;  // why the last attempt failed
    bool dispatched = false;       // bound by a dispatch whose pods never fit there yet
    uint64_t failed_root_gen = 0;  // generations when the last attempt failed (0 = none since)
    uint64_t failed_node_gen = 0;
    bool touched = false;  // in touched_ since the last take_touched()
    Time expected_end{};   // its placement's start + time limit (in ends_ while placed)
    bool queued = false;   // in its queue's active map, at `queue_pos`
    std::map<Key, Job*>::iterator queue_pos{};
  };
  struct Queue {
    std::map<Key, Job*> active;  // Job nodes of jobs_ are stable: no lookup while walking
    std::map<const JobShape*, int32_t> shapes;  // how many active jobs have each shape
    void insert(Job& j) {
      auto [pos, inserted] = active.emplace(key_of(j), &j);
      if (!inserted) return;
      j.queued = true;
      j.queue_pos = pos;
      shapes[j.spec.shape.get()] += 1;
    }
    void erase(Job& j) {
      if (!j.queued) return;
      active.erase(j.queue_pos);
      j.queued = false;
      auto it = shapes.find(j.spec.shape.get());
      if (it != shapes.end() && --it->second == 0) shapes.erase(it);
    }
    bool strict = false;
  };
  enum class TryResult : uint8_t { kAdmitted, kFailed };

  static Key key_of(const Job& j) {
    return {-int64_t{j.spec.priority}, j.spec.creation_seq, j.spec.key};
  }
  Queue& queue_of(const Job& j);
  uint32_t queue_slot(const JobSpec& spec) const;
  quota::NodeId root_of(const Job& j) const;
  void make_active(Job& j);
  void leave_pending(Job& j);

  // One pass, in the phases of docs/scheduling.md "One pass":
  // 1. jobs whose backoff ended rejoin their queues, expired reclaim holds are dropped, and
  //    parked jobs are re-checked when the fleet's shape grew;
  void requeue_due(Time now);
  // 2. admitted gangs without pods are placed again, before any new admission;
  void place_unplaced(Time now, PassResult& out);
  // 3. queue heads are tried best first until no queue has a head left to try (HeadQueues);
  void admit_heads(Time now, PassResult& out);
  // 4. when the next pass has work that time alone makes due.
  std::optional<Time> next_wake() const;

  // One attempt to admit `j`: parks it if no cluster could ever hold it, else nominates the
  // first alternative that quota and placement both admit, else tries preemption for the
  // alternatives that only quota refused.
  TryResult try_admit(Job& j, Time now, PassResult& out);
  // Parks `j` when none of its alternatives could ever be placed; true if it did.
  bool park_if_infeasible(Job& j);
  bool shape_feasible(const Job& j, const Alternative& alt);
  struct Nomination {
    uint16_t alternative = 0;
    Placement placement;
    bool borrows = false;
  };
  // The first alternative that fits quota (leaf-to-root, ceiling, reclaim holds) and has a
  // placement now. Alternatives refused by quota alone are appended to `quota_blocked`;
  // j.last_kind says why the last one failed.
  // `placement_blocked` gets the first alternative quota admitted but no cluster holds now.
  std::optional<Nomination> nominate(Job& j, Time now, std::vector<uint16_t>& quota_blocked,
                                     std::optional<uint16_t>& placement_blocked);
  // Alternative `alt` of `j` is refused by quota: plans victims, evicts them tentatively (a
  // Statement) and admits `j` when its gang can then be placed, else restores them exactly.
  bool try_preempt(Job& j, uint16_t alt, Time now, PassResult& out);
  // No victims may go yet because they ran less than min_run_time: while they are protected,
  // borrowers are kept off the cohort `j` reclaims from.
  void hold_if_protected(const Job& j, const Alternative& alt, const quota::PreemptionPlan& plan,
                         Time now);
  // Records the committed victims of `preemptor` as kPreempt actions and requeues them with
  // backoff (or terminates them); `prior` is each victim's placement before the trial.
  void requeue_victims(const Job& preemptor, const std::vector<quota::Victim>& victims,
                       const std::vector<Placement>& prior, Time now, PassResult& out);
  void admit_nominated(Job& j, Nomination n, Time now, PassResult& out);
  class Statement;   // trial evictions with rollback (scheduler.cpp)
  class HeadQueues;  // one pass's per-queue cursors and the heap of their heads (scheduler.cpp)
  // Binds `j` back to `p` after a trial unbound it (Statement::rollback).
  void rebind(Job& j, const Placement& p);
  bool within_ceiling(const Job& j, const ResourceVector& request) const;
  void do_admit(Job& j, uint16_t alt, const Placement& p, Time now, bool replaced);
  void do_unbind(Job& j);
  void do_evict(Job& j, Time now, Time until, bool terminated);
  void do_interrupt(Job& j);
  // Where the gang of `alt` goes now: a complete placement, a dispatch with no pods (estimate
  // mode), or nullopt. Honours the job's binding, allowed clusters and exclusions.
  std::optional<Placement> choose(const Job& j, const Alternative& alt) const;
  // Reservation with backfill (backfill.cpp). choose(), keeping `j` off the nodes reserved for
  // other jobs whose reservation starts before `j` would end.
  std::optional<Placement> choose_now(const Job& j, const Alternative& alt, Time now);
  // The nodes reserved for others that `j` may not use now (all of them without a time limit;
  // `everything` = all regardless).
  std::vector<NodeIdx> fenced_for(const Job& j, Time now, bool everything) const;
  // The earliest start of `alt`'s gang as the running gangs end, and the nodes it would take;
  // `with_quota`: the quota they hold is returned too, and the job must fit it.
  std::optional<Reservation> plan_reservation(const Job& j, const Alternative& alt, Time now,
                                              bool with_quota);
  // After `j` was tried and still waits for nodes (or, `with_quota`, for quota the running
  // jobs hold) on alternative `blocked`: (re)makes or drops its reservation.
  void update_reservation(Job& j, std::optional<uint16_t> blocked, bool with_quota, Time now);
  // `placed`: the job was just placed there; nodes it reserved but does not use are freed.
  void drop_reservation(const Job& j, const Placement* placed = nullptr);
  class Fence;  // nodes taken out of the index for one decision (backfill.cpp)
  // Any cluster may take it: the per-pass shortcuts that share results between jobs of one
  // shape hold only for such jobs.
  static bool unrestricted(const Job& j) {
    return j.spec.allowed_clusters.empty() && !j.bound && j.excluded.empty();
  }
  // The kAdmit action for a job do_admit() just admitted or placed with `p`.
  Action admit_action(const Job& j, Placement p, bool replaced) const;
  std::string pods_fit_message(const Job& j, ClusterIdx c) const;
  // explain()'s parts: an admitted job (placed, pods pending on its cluster, or to be placed
  // again); what quota says of a pending job's alternative (nullopt = quota admits it); and why
  // no cluster takes the gang now.
  WaitReason explain_admitted(const Job& j) const;
  WaitReason explain_pods_pending(const Job& j) const;
  std::optional<WaitReason> explain_quota(const Job& j, const Alternative& alt, Time now) const;
  WaitReason explain_placement(const Job& j, const Alternative& alt, Time now) const;
  // What reservations do to a waiting job (docs/scheduling.md "Reservation and backfill"): the
  // nodes reserved for it and when it expects to start, or the reservation it would overrun.
  std::string explain_reservation(const Job& j, const Alternative& alt, Time now) const;
  // A wait due to a required topology: no domain of any allowed cluster holds the gang's
  // constrained pods (nullopt when that is not why it waits).
  std::optional<WaitReason> explain_topology(const Job& j, const Alternative& alt) const;
  // check_invariants() for one job; adds what its pods use to `used` (per node).
  Status check_job(const Job& j, std::vector<ResourceVector>& used) const;
  std::string cluster_list(const std::vector<ClusterIdx>& clusters) const;
  void bump_root(const Job& j);
  Time backoff_for(int32_t preemptions, Time now) const;
  int64_t fair_key(const Job& j) const;
  std::string describe_fit(const quota::FitResult& fit) const;
  std::string resource_name(ResourceId r) const;
  std::string g_name(quota::NodeId node) const;
  // Admitted in the quota engine (its usage charged).
  bool quota_charged(const Job& j) const;
  // Quota-engine admission state changes, keeping root_total_ in step.
  void engine_admit(Job& j, Time start);
  void engine_evict(Job& j);
  void engine_forget(Job& j);

  SchedulerOptions options_;
  const ResourceRegistry* registry_ = nullptr;
  std::unique_ptr<quota::QuotaEngine> engine_;
  std::map<quota::NodeId, ResourceVector> ceilings_;
  std::vector<ResourceVector> root_total_;  // per root: the sum of its admitted requests
  std::vector<bool> fair_share_roots_;
  PlacementIndex index_;
  quota::DecisionLog log_{4096};  // recent decisions; the hash covers all

  std::unordered_map<JobKey, Job> jobs_;
  std::vector<Queue> queues_;  // per quota node; the last slot holds quota-free jobs
  // Generations: values from one increasing counter, so a mark never matches a later world.
  uint64_t gen_counter_ = 1;
  std::vector<uint64_t> root_gen_;  // per quota node (roots): bumped when capacity is returned
  uint64_t node_gen_ = 1;           // bumped when node capacity is freed or added
  uint64_t root_gen_of(const Job& j) const;
  uint64_t topology_gen_ = 1;  // bumped when nodes or targets are added
  uint64_t parked_gen_ = 0;    // topology_gen_ when the parked set was last re-checked
  std::set<std::pair<Time, JobKey>> backoff_;
  std::set<JobKey> parked_;
  std::map<JobKey, Reservation> reservations_;  // waiting gangs' reserved nodes
  uint64_t reservations_version_ = 0;           // bumped when a reservation's nodes or start change
  // The nodes a job without a reservation may not use, by how far its run reaches: prefix[k] is
  // the union of the nodes of the k+1 reservations that start first (rebuilt per version).
  struct FenceCache {
    uint64_t version = ~uint64_t{0};
    std::vector<Time> starts;  // ascending
    std::vector<BitWords> prefix;
  };
  FenceCache fence_cache_;
  const BitWords* fence_of(const Job& j, Time now);
  std::set<std::pair<Time, JobKey>> ends_;                // placed jobs with a time limit, by end
  std::set<Key> unplaced_;                                // admitted, waiting to be placed again
  std::map<quota::NodeId, std::set<JobKey>> holds_;       // root -> jobs holding it for reclaim
  std::set<std::pair<Time, quota::NodeId>> hold_expiry_;  // when holders retry
  // Jobs with pods on each node, by NodeIdx (a handful each, unordered; readers sort).
  std::vector<std::vector<JobKey>> on_node_;
  void bind_on_node(NodeIdx n, JobKey key);
  void unbind_on_node(NodeIdx n, JobKey key);
  std::vector<JobKey> jobs_on(NodeIdx n) const;                            // in key order
  std::map<const Alternative*, std::pair<ShapePtr, bool>> feasible_memo_;  // ever_fits per shape
  uint64_t feasible_memo_gen_ = 0;
  // See take_touched(): each job once while its `touched` flag is set, plus keys of jobs that
  // finished since (dropped when taken, or when they outnumber the live jobs).
  std::vector<JobKey> touched_;
  void touch(Job& j);
};

}  // namespace gf::sched
