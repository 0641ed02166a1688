// Journal event types for quota objects and jobs (docs/quota.md, docs/workloads.md). Appliers live
// in job_apply.cpp and workload_apply.cpp; the scheduler cache follows the same events.
//
// Job events are typed (docs/architecture.md "Typed events"): one struct per event type with its
// wire name (kType), the fields it carries, and a codec. Producers build the struct and call
// to_event(); appliers and observers decode with from_json, which refuses a missing or mistyped
// field — a malformed event is an error, never a default. Every payload carries the version it
// was written in ("v"); a journal from before versions (no "v") is version 1. A newer version
// than this release knows is refused, naming it, so an old follower never misreads a new journal.
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
#include "state/events.h"

namespace gf::event_type {

// {objects: [{kind, namespace, name, doc}]}: created or replaced (POST /v1/apply, AWS shapes).
inline constexpr std::string_view kQuotaApplied = "quota.applied";
// {kind, namespace, name}
inline constexpr std::string_view kQuotaDeleted = "quota.deleted";

// Workloads (docs/dispatch.md): PropagationPolicies. {objects: [{namespace, name, doc}]}:
// created or replaced.
inline constexpr std::string_view kPolicyApplied = "policy.applied";
// {namespace, name}
inline constexpr std::string_view kPolicyDeleted = "policy.deleted";

}  // namespace gf::event_type

namespace gf::job_events {

// The version this release writes; it reads every version up to it.
inline constexpr int kVersion = 1;

// A job record as submitted (service job or PyTorchJob).
struct Submitted {
  static constexpr std::string_view kType = "job.submitted";
  Job job;
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
};
// Pods bound and started (SCHEDULED -> RUNNING).
struct Running {
  static constexpr std::string_view kType = "job.running";
  std::string id;
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
};
// A node of its gang left: pods unbound, quota kept.
struct Interrupted {
  static constexpr std::string_view kType = "job.interrupted";
  std::string id;
  std::string node;
  std::string message;
};
// Ended SUCCEEDED or FAILED.
struct Finished {
  static constexpr std::string_view kType = "job.finished";
  std::string id;
  JobStatus status = JobStatus::kFailed;
  std::string reason;
};
struct PriorityChanged {
  static constexpr std::string_view kType = "job.priority_changed";
  std::string id;
  int32_t priority = 0;
};
// Why the scheduler holds the job back changed (docs/scheduling.md "Why a job waits").
struct Waiting {
  static constexpr std::string_view kType = "job.waiting";
  std::string id;
  JobWait waiting;
};
// Workloads (docs/dispatch.md). Its pods could not run on `from` for tolerationSeconds: it leaves
// (its copy kept per `purge_mode`) and is placed elsewhere, quota kept.
struct Failover {
  static constexpr std::string_view kType = "job.failover";
  std::string id;
  std::string from;
  std::string purge_mode;
  std::string message;
};
// A copy left by failover is removed (Gracefully).
struct CopyPurged {
  static constexpr std::string_view kType = "job.copy_purged";
  std::string id;
  std::string cluster;
  std::string reason;
};
// runPolicy.suspend changed: suspending deletes its pods and releases its quota.
struct Suspend {
  static constexpr std::string_view kType = "job.suspend";
  std::string id;
  bool suspend = true;
};
// The workload is deleted (user, ttlSecondsAfterFinished) with every copy.
struct Deleted {
  static constexpr std::string_view kType = "job.deleted";
  std::string id;
  std::string reason;
};

// Payload codecs; decode errors name the event type and the field.
Json to_json(const Submitted& e);
Json to_json(const Admitted& e);
Json to_json(const Running& e);
Json to_json(const Preempted& e);
Json to_json(const Interrupted& e);
Json to_json(const Finished& e);
Json to_json(const PriorityChanged& e);
Json to_json(const Waiting& e);
Json to_json(const Failover& e);
Json to_json(const CopyPurged& e);
Json to_json(const Suspend& e);
Json to_json(const Deleted& e);

template <typename T>
Result<T> decode(const Json& payload);

template <typename T>
Event to_event(const T& e) {
  return Event{std::string(T::kType), to_json(e), ""};
}

// The id of the job an event names ("id", or "job.id" for job.submitted); empty when none.
std::string job_id_of(std::string_view type, const Json& payload);

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
inline constexpr std::string_view kJobDeleted = job_events::Deleted::kType;

}  // namespace gf::event_type
