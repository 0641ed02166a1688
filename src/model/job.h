// Jobs the scheduler admits and places (docs/quota.md, docs/workloads.md): the durable record of
// one job, with the AWS Batch service-job status names. State owns these; the scheduler derives its
// own indexed copy (sched::Scheduler) from them.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/json.h"
#include "core/result.h"
#include "core/time.h"
#include "model/topology.h"

namespace gf {

// AWS Batch service-job statuses (docs/workloads.md).
enum class JobStatus {
  kSubmitted,
  kPending,
  kRunnable,
  kScheduled,
  kStarting,
  kRunning,
  kSucceeded,
  kFailed
};
std::string_view to_string(JobStatus s);
std::optional<JobStatus> parse_job_status(std::string_view s);
inline bool is_terminal(JobStatus s) {
  return s == JobStatus::kSucceeded || s == JobStatus::kFailed;
}

// `count` identical pods. `requests` maps resource names to Kubernetes quantities; a whole-node
// pod (`whole_node`) takes every resource of a node of `instance_type`.
struct JobPodSet {
  std::string role;  // "node" for service jobs; "master"/"worker" for PyTorchJobs
  int32_t count = 1;
  Json requests = Json::object();
  std::string instance_type;
  bool whole_node = false;
  std::optional<TopologyRequest> topology{};  // docs/scheduling.md "Topology"
  bool operator==(const JobPodSet&) const = default;
};

struct JobPreemption {
  Time time{};
  std::string by;    // the preempting job's id
  std::string rule;  // InQueue | Reclaim | BorrowWithinCohort
  std::string message;
  bool terminated = false;
  bool operator==(const JobPreemption&) const = default;
};

// One line of a job's history (describe job).
struct JobEvent {
  Time time{};
  std::string reason;  // Submitted, Admitted, Preempted, Interrupted, Placed, Running, ...
  std::string message;
  bool operator==(const JobEvent&) const = default;
};

// One stretch of a job running on its nodes, for metering by quota share (docs/provisioning.md).
struct JobRun {
  Time start{};
  std::optional<Time> end;  // open while running
  std::string cluster;
  int64_t micros_per_hour = 0;  // the price of the node capacity its pods hold
  int32_t pods = 0;
  // The job model of lost work (docs/scenarios.md "Lost work"): the restart overhead paid at its
  // start, the work it added to the job's kept progress, and what ended it (finished, failed,
  // preempted, interrupted, failover, suspended, deleted; empty while open).
  Duration overhead{};
  Duration kept{};
  std::string ended_by;
  // A straggler (docs/scenarios.md "Failures"): while a node of the gang is degraded the whole
  // gang runs `slow_factor` times slower (since `slow_since`); `slowed` is the wall time such
  // stretches already cost (time that made no progress).
  Duration slowed{};
  std::optional<Time> slow_since;
  double slow_factor = 1;
  // Placement quality (docs/scheduling.md "Topology"): how many domains of network layers 1, 2
  // and 3 its pods spanned when it started (0 = some pod's node had no label at that layer).
  std::array<int32_t, 3> domains{};
  bool operator==(const JobRun&) const = default;
  // Wall time lost to slowness by `t`: the closed stretches and the open one.
  Duration slow_loss(Time t) const;
  // Cost within [from, to), micro-dollars.
  int64_t cost_micros(Time from, Time to) const;
  Duration billed(Time from, Time to) const;
};

// A copy of a workload left on a member cluster it failed over from (docs/dispatch.md), kept per
// purgeMode: Gracefully until the new placement runs (at most gracePeriodSeconds), Never until
// the job is deleted. A copy never holds node capacity: failover only moves jobs whose pods
// cannot run.
struct MemberCopy {
  std::string cluster;
  std::string state;  // the job's state there when it was left (Created, Restarting, ...)
  Time since{};       // when it was left
  std::optional<Time> purge_at;  // Gracefully: removed by then at the latest; none: Never
  int32_t restarts = 0;
  bool operator==(const MemberCopy&) const = default;
};

// Fleet dispatch of a Kubernetes workload (PyTorchJob, docs/dispatch.md): what its
// PropagationPolicy and run policy decided at submission, and where it stands on its member
// cluster.
// What a job held for want of a PropagationPolicy says it waits for.
inline constexpr std::string_view kAwaitingPolicyReason =
    "waiting for a PropagationPolicy in its namespace that selects it";

struct Dispatch {
  std::string policy;   // the PropagationPolicy (same namespace) that selected it
  bool queued = false;  // suspension.scheduling: waits for its namespace's quota leaf
  std::optional<int64_t> toleration_seconds;  // failover.application; none = no failover
  std::string purge_mode = "Immediately";     // Immediately | Directly | Gracefully | Never
  int64_t grace_period_seconds = 600;
  std::map<std::string, std::string> restart_policy;  // role (master|worker) -> restartPolicy
  std::optional<int32_t> backoff_limit;               // runPolicy.backoffLimit; none = no limit
  std::optional<int64_t> active_deadline_seconds;
  std::optional<int64_t> ttl_seconds_after_finished;
  bool suspended = false;  // runPolicy.suspend
  // Applied before any PropagationPolicy selected it: held, not queued, until one does
  // (docs/dispatch.md "A job before its policy").
  bool awaiting_policy = false;
  // On the member cluster.
  std::string cluster;                    // bound member cluster; kept across interrupts
  std::optional<Time> bound_at;           // when its pods were created there
  std::optional<Time> not_running_since;  // bound but pods not all running since (failover clock)
  std::optional<Time> first_started_at;   // activeDeadlineSeconds counts from here
  bool restarting = false;                // interrupted, not yet running again
  int32_t restarts = 0;                   // completed restarts (pods' RESTARTS)
  // Restarts whose gang failed again before it ran (a real Slurm launch that keeps failing):
  // with `restarts`, what runPolicy.backoffLimit bounds (docs/slurm.md "States").
  int32_t failed_starts = 0;
  std::vector<std::string> excluded;  // clusters failed over from, until it runs again
  std::vector<MemberCopy> left;       // copies left behind by failover
  int32_t failovers = 0;
  bool operator==(const Dispatch&) const = default;
  Json to_json() const;
  static Result<Dispatch> from_json(const Json& j);
};

// Why the scheduler holds a job back, as its last pass saw it (docs/scheduling.md "Why a job
// waits"). Recorded by the scheduling controller (job.waiting) when it changes, so reads, snapshots
// and followers see it without asking the scheduler; cleared when the job is admitted and placed
// or finishes. A job not yet admitted shows it as its Queued condition (PyTorchJob) or its
// statusReason (service job); an admitted one whose pods wait (PodsPending, Unplaced) in describe.
struct JobWait {
  std::string kind;    // the scheduler's wait kind: Quota, Placement, Backoff, Infeasible, ...
  std::string reason;  // the condition reason: QuotaExceeded, MaxJobsReached, NoFit, Backoff, ...
  std::string message;
  std::string node;      // the quota node that holds it back (quota kinds)
  std::string limit;     // e.g. "borrowing limit", "max jobs"
  std::string resource;  // e.g. "nvidia.com/gpu", "kube-queue/max-jobs"
  int64_t requested = 0;
  int64_t available = 0;
  int64_t shortfall = 0;
  Time since{};  // when the scheduler first saw this reason (kept while only numbers change)
  bool operator==(const JobWait&) const = default;
  // The same reason and message, whatever `since` says.
  bool same_as(const JobWait& o) const;
  Json to_json() const;
  static Result<JobWait> from_json(const Json& j);
};

// A pod's state as its node's agent reports it, when pods run for real (the local cloud,
// docs/local-cloud.md). Phase: Pending | Running | Succeeded | Failed | Unknown (a real Slurm pod
// whose controller does not answer, docs/slurm.md); Failed only when the node will not restart it
// (restartPolicy Never, or ExitCode with a permanent exit code).
struct PodState {
  std::string phase = "Pending";
  int32_t exit_code = 0;  // of its last exited container
  int32_t restarts = 0;   // container restarts on its node
  std::string message;
  std::string node;  // the instance it ran on (its logs are there)
  bool operator==(const PodState&) const = default;
  Json to_json() const;
  static Result<PodState> from_json(const Json& j);
};

struct Job;
// The tenant a job belongs to (history's --tenant, the simulator's per-tenant figures): its quota
// share, else its namespace, else its job queue; empty when it has none.
std::string_view job_tenant(const Job& job);
// A workload's state as Kubeflow names it (STATE column, conditions): Created, Running,
// Restarting, Succeeded, Failed or Suspended.
std::string_view workload_state(const Job& job);

struct Job {
  std::string id;           // jobId
  uint64_t key = 0;         // dense scheduler key: the submission order
  uint64_t submit_seq = 0;  // journal seq of job.submitted (answers a repeated submission)
  std::string name;         // jobName
  std::string kind = "ServiceJob";
  // Where it queues: a quota share of a job queue, a Kueue LocalQueue, or a namespace of the
  // ElasticQuotaTree; none of them = placement only.
  std::string job_queue;
  std::string quota_share;
  std::string ns;
  std::string local_queue;
  int32_t priority = 0;
  std::optional<int32_t> max_preemptions;  // preemptionRetriesBeforeTermination
  std::vector<JobPodSet> pod_sets;
  std::vector<std::string> clusters;  // allowed member clusters; empty = any
  std::optional<Duration> duration;   // simulated run time (tag gpufleet.io/duration)
  // Lost work (docs/scenarios.md): checkpoints every `checkpoint_interval` of progress; each
  // restart first spends `restart_overhead`. `progress` is the work kept so far: a run that ends
  // early keeps its whole checkpoints, a finished one the rest.
  std::optional<Duration> checkpoint_interval;  // annotation gpufleet.io/checkpoint-interval
  std::optional<Duration> restart_overhead;     // annotation gpufleet.io/restart-overhead
  Duration progress{};
  Json request = Json::object();  // the submitted body, echoed back
  // Status.
  JobStatus status = JobStatus::kSubmitted;
  std::string status_reason;
  Time created_at{};
  std::optional<Time> started_at;
  std::optional<Time> stopped_at;
  int32_t preempted_count = 0;
  std::vector<JobPreemption> recent_preemptions;  // newest last, at most 5
  std::optional<Time> requeue_at;                 // after a preemption: backoff end
  // Placement while admitted: the cluster and one instance id per pod, in pod-set order.
  bool admitted = false;
  int32_t alternative = 0;
  std::optional<Time> admitted_at;
  std::string cluster;
  std::vector<std::string> pod_nodes;
  std::vector<JobEvent> history;     // at most kMaxHistory, oldest dropped
  uint64_t history_count = 0;        // lines ever added (the newest ones become user events)
  std::vector<JobRun> runs;          // every stretch it ran, for billing by share
  std::optional<Dispatch> dispatch;  // workloads (PyTorchJob) only
  std::optional<JobWait> waiting;    // why it waits, when the scheduler holds it back
  // Real pods (docs/local-cloud.md): the placement its pods belong to (1 for the first, one more
  // each time it is placed again) and what the agents report of them, by pod name.
  int64_t placements = 0;
  std::map<std::string, PodState> pod_states;

  static constexpr size_t kMaxHistory = 50;
  void add_history(Time t, std::string reason, std::string message);

  // The pods of its placed gang: "<name>-<role>-<index>" (the names kubectl shows for a
  // PyTorchJob's pods) and the instance each is bound to, in pod-set order. Empty unless placed.
  struct Pod {
    std::string name;
    std::string node;
  };
  std::vector<Pod> pods() const;
  // When a running job with a simulated duration completes: its latest start, plus the restart
  // overhead of that run, plus the work not yet kept. None when not running or no duration.
  std::optional<Time> completion_time() const;

  Json to_json() const;  // canonical (snapshots)
  static Result<Job> from_json(const Json& j);
  bool operator==(const Job&) const = default;
};

}  // namespace gf
