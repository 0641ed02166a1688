// Journal event types for jobs (docs/workloads.md). Appliers live
// in job_apply.cpp and workload_apply.cpp; the scheduler cache follows the same events.
//
// Job events are typed (state/event_codec.h): one struct per event type with its wire name (kType)
// and its fields. Producers build the struct and call to_event(); appliers and observers decode,
// which refuses a missing or mistyped field and a version newer than this release.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/json.h"
#include "core/result.h"
#include "core/time.h"
#include "model/job.h"
#include "state/event_codec.h"
#include "state/events.h"
#include "state/object_events.h"

namespace gf::event_codec {
template <>
struct Codec<JobStatus>
    : EnumCodec<JobStatus, static_cast<std::string_view (*)(JobStatus)>(&to_string),
                &parse_job_status> {};

// A submitted job in the journal (job.submitted version 2): the members of its canonical
// encoding that differ from a new job's (submitted_job_base()), so an event carries what the
// submission decided, not every default. Reading lays them over that base; a version 1 payload,
// which has every member, reads the same. Changing a default of Job (or of Dispatch) changes
// what an old payload means: it takes a new version of job.submitted that reads the old one
// over the old base (tests/unit/state/job_events_test.cpp pins the base).
template <>
struct Codec<Job> {
  static Json put(const Job& job);
  static void take(const Json& j, Job& out);
};
}  // namespace gf::event_codec

namespace gf::job_events {

using event_codec::decode;
using event_codec::field;
using event_codec::kVersion;
using event_codec::to_event;
using event_codec::to_json;

// A job record as submitted (service job or PyTorchJob).
struct Submitted {
  static constexpr std::string_view kType = "job.submitted";
  static constexpr int kVersion = 2;  // 2: the job as it differs from a new one (Codec<Job>)
  Job job;
  static constexpr auto fields() { return std::tuple{field("job", &Submitted::job)}; }
};
// Admitted (or placed again, `replaced`) on `cluster`, one instance id per pod in pod-set order;
// no nodes = dispatched to the cluster with its pods pending (estimate mode).
struct Admitted {
  static constexpr std::string_view kType = "job.admitted";
  std::string id;
  int32_t alternative = 0;
  std::string cluster;
  std::vector<std::string> nodes;
  bool borrowing = false;
  bool replaced = false;
  static constexpr auto fields() {
    return std::tuple{field("id", &Admitted::id),
                      field("alternative", &Admitted::alternative),
                      field("cluster", &Admitted::cluster),
                      field("nodes", &Admitted::nodes),
                      field("borrowing", &Admitted::borrowing),
                      field("replaced", &Admitted::replaced)};
  }
};
// Pods bound and started (SCHEDULED -> RUNNING).
struct Running {
  static constexpr std::string_view kType = "job.running";
  std::string id;
  static constexpr auto fields() { return std::tuple{field("id", &Running::id)}; }
};
// Evicted by job `by` under `rule` (InQueue | Reclaim | BorrowWithinCohort); back in its queue
// after `until`, or failed when its preemption retries are used up (`terminated`).
struct Preempted {
  static constexpr std::string_view kType = "job.preempted";
  std::string id;
  std::string by;
  std::string rule;
  std::string message;
  Time until{};
  bool terminated = false;
  static constexpr auto fields() {
    return std::tuple{
        field("id", &Preempted::id),          field("by", &Preempted::by),
        field("rule", &Preempted::rule),      field("message", &Preempted::message),
        field("until_us", &Preempted::until), field("terminated", &Preempted::terminated)};
  }
};
// A node of its gang left: pods unbound, quota kept. `cause` (absent in older journals: a node
// left) says why else: "move" — a gang that never started is placed again off a node Slurm will
// not use (no restart); "pod_failed" — a pod of a gang on a real Slurm cluster failed and its
// restartPolicy restarts the gang (docs/slurm.md "States").
struct Interrupted {
  static constexpr std::string_view kType = "job.interrupted";
  std::string id;
  std::string node;
  std::string message;
  std::optional<std::string> cause{};
  static constexpr auto fields() {
    return std::tuple{field("id", &Interrupted::id), field("node", &Interrupted::node),
                      field("message", &Interrupted::message), field("cause", &Interrupted::cause)};
  }
};
inline constexpr std::string_view kInterruptMove = "move";
inline constexpr std::string_view kInterruptPodFailed = "pod_failed";
// Ended SUCCEEDED or FAILED.
struct Finished {
  static constexpr std::string_view kType = "job.finished";
  std::string id;
  JobStatus status = JobStatus::kFailed;
  std::string reason;
  static constexpr auto fields() {
    return std::tuple{field("id", &Finished::id), field("status", &Finished::status),
                      field("reason", &Finished::reason)};
  }
  Status check() const;  // the status is an end
};
struct PriorityChanged {
  static constexpr std::string_view kType = "job.priority_changed";
  std::string id;
  int32_t priority = 0;
  static constexpr auto fields() {
    return std::tuple{field("id", &PriorityChanged::id),
                      field("priority", &PriorityChanged::priority)};
  }
};
// Why the scheduler holds the job back changed (docs/scheduling.md "Why a job waits").
struct Waiting {
  static constexpr std::string_view kType = "job.waiting";
  std::string id;
  JobWait waiting;
  static constexpr auto fields() {
    return std::tuple{field("id", &Waiting::id), field("waiting", &Waiting::waiting)};
  }
};
// Workloads (docs/dispatch.md). Its pods could not run on `from` for tolerationSeconds: it leaves
// (its copy kept per `purge_mode`) and is placed elsewhere, quota kept.
struct Failover {
  static constexpr std::string_view kType = "job.failover";
  std::string id;
  std::string from;
  std::string purge_mode;
  std::string message;
  static constexpr auto fields() {
    return std::tuple{field("id", &Failover::id), field("from", &Failover::from),
                      field("purge_mode", &Failover::purge_mode),
                      field("message", &Failover::message)};
  }
};
// A copy left by failover is removed (Gracefully).
struct CopyPurged {
  static constexpr std::string_view kType = "job.copy_purged";
  std::string id;
  std::string cluster;
  std::string reason;
  static constexpr auto fields() {
    return std::tuple{field("id", &CopyPurged::id), field("cluster", &CopyPurged::cluster),
                      field("reason", &CopyPurged::reason)};
  }
};
// runPolicy.suspend changed: suspending deletes its pods and releases its quota.
struct Suspend {
  static constexpr std::string_view kType = "job.suspend";
  std::string id;
  bool suspend = true;
  static constexpr auto fields() {
    return std::tuple{field("id", &Suspend::id), field("suspend", &Suspend::suspend)};
  }
};
// A PropagationPolicy now selects a job that was held for want of one: the job takes the
// policy's dispatch settings and is queued (unless suspended).
struct PolicyBound {
  static constexpr std::string_view kType = "job.policy_bound";
  std::string id;
  std::string policy;
  bool queued = false;
  std::optional<int64_t> toleration_seconds;
  std::string purge_mode = "Immediately";
  int64_t grace_period_seconds = 600;
  std::vector<std::string> clusters;
  static constexpr auto fields() {
    return std::tuple{field("id", &PolicyBound::id),
                      field("policy", &PolicyBound::policy),
                      field("queued", &PolicyBound::queued),
                      field("toleration_seconds", &PolicyBound::toleration_seconds),
                      field("purge_mode", &PolicyBound::purge_mode),
                      field("grace_period_seconds", &PolicyBound::grace_period_seconds),
                      field("clusters", &PolicyBound::clusters)};
  }
};
// metadata.annotations of the workload's document changed (kubectl keeps its last-applied
// configuration there): the new annotations, {} for none.
struct Annotations {
  static constexpr std::string_view kType = "job.annotations";
  std::string id;
  Json annotations = Json::object();
  static constexpr auto fields() {
    return std::tuple{field("id", &Annotations::id),
                      field("annotations", &Annotations::annotations)};
  }
};
// The workload is deleted (user, ttlSecondsAfterFinished) with every copy.
struct Deleted {
  static constexpr std::string_view kType = "job.deleted";
  std::string id;
  std::string reason;
  static constexpr auto fields() {
    return std::tuple{field("id", &Deleted::id), field("reason", &Deleted::reason)};
  }
};

// What a node's agent reports of one of the job's pods (real pods, docs/local-cloud.md), for the
// placement `placement` of the job.
struct PodStatus {
  static constexpr std::string_view kType = "job.pod_status";
  std::string id;
  std::string pod;
  int64_t placement = 0;
  PodState state;
  static constexpr auto fields() {
    return std::tuple{field("id", &PodStatus::id), field("pod", &PodStatus::pod),
                      field("placement", &PodStatus::placement), field("state", &PodStatus::state)};
  }
};

// The canonical encoding of a new job, with a default Dispatch: the base a submitted job's
// payload is written against.
const Json& submitted_job_base();

// The id of the job an event names ("id", or "job.id" for job.submitted); empty when none.
std::string job_id_of(std::string_view type, const Json& payload);

// A submitted job travels decoded, its payload left empty (Event::job): chosen over the generic
// to_event for job.submitted.
Event to_event(Submitted e, std::string idempotency_key = "");

}  // namespace gf::job_events

namespace gf::event_type {

inline constexpr std::string_view kJobSubmitted = job_events::Submitted::kType;
inline constexpr std::string_view kJobAdmitted = job_events::Admitted::kType;
inline constexpr std::string_view kJobRunning = job_events::Running::kType;
inline constexpr std::string_view kJobPreempted = job_events::Preempted::kType;
inline constexpr std::string_view kJobInterrupted = job_events::Interrupted::kType;
inline constexpr std::string_view kJobFinished = job_events::Finished::kType;
inline constexpr std::string_view kJobPriority = job_events::PriorityChanged::kType;
inline constexpr std::string_view kJobWaiting = job_events::Waiting::kType;
inline constexpr std::string_view kJobFailover = job_events::Failover::kType;
inline constexpr std::string_view kJobCopyPurged = job_events::CopyPurged::kType;
inline constexpr std::string_view kJobSuspend = job_events::Suspend::kType;
inline constexpr std::string_view kJobAnnotations = job_events::Annotations::kType;
inline constexpr std::string_view kJobPolicyBound = job_events::PolicyBound::kType;
inline constexpr std::string_view kJobDeleted = job_events::Deleted::kType;
inline constexpr std::string_view kJobPodStatus = job_events::PodStatus::kType;

}  // namespace gf::event_type
