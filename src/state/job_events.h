// Journal event types for quota objects and jobs (docs/quota.md, docs/workloads.md). Appliers live
// in job_apply.cpp; the scheduler's derived cache is brought in step by the same appliers.
#pragma once

#include <string_view>

namespace gf::event_type {

// {objects: [{kind, namespace, name, doc}]}: created or replaced (POST /v1/apply, AWS shapes).
inline constexpr std::string_view kQuotaApplied = "quota.applied";
// {kind, namespace, name}
inline constexpr std::string_view kQuotaDeleted = "quota.deleted";
// {job: Job record as submitted}
inline constexpr std::string_view kJobSubmitted = "job.submitted";
// {id, alternative, cluster, nodes[], borrowing, replaced}: admitted (or placed again) on nodes.
inline constexpr std::string_view kJobAdmitted = "job.admitted";
// {id}: pods bound and started (SCHEDULED -> RUNNING).
inline constexpr std::string_view kJobRunning = "job.running";
// {id, by, rule, message, until_us, terminated}
inline constexpr std::string_view kJobPreempted = "job.preempted";
// {id, node, message}: a node of its gang left; pods unbound, quota kept.
inline constexpr std::string_view kJobInterrupted = "job.interrupted";
// {id, status: SUCCEEDED|FAILED, reason}
inline constexpr std::string_view kJobFinished = "job.finished";
// {id, priority}
inline constexpr std::string_view kJobPriority = "job.priority_changed";
// {id, waiting: JobWait}: why the scheduler holds the job back changed (docs/scheduling.md "Why a
// job waits"); recorded by the scheduling controller after a pass, cleared by admission.
inline constexpr std::string_view kJobWaiting = "job.waiting";

// Workloads (docs/dispatch.md): PropagationPolicies and the fleet's dispatch decisions for
// PyTorchJobs. {objects: [{namespace, name, doc}]}: created or replaced.
inline constexpr std::string_view kPolicyApplied = "policy.applied";
// {namespace, name}
inline constexpr std::string_view kPolicyDeleted = "policy.deleted";
// {id, from, purge_mode, message}: pods could not run on `from` for tolerationSeconds; the job
// leaves it (its copy kept per purge_mode) and is placed elsewhere, quota kept.
inline constexpr std::string_view kJobFailover = "job.failover";
// {id, cluster, reason}: a copy left by failover is removed (Gracefully).
inline constexpr std::string_view kJobCopyPurged = "job.copy_purged";
// {id, suspend}: runPolicy.suspend changed: suspending deletes its pods and releases its quota.
inline constexpr std::string_view kJobSuspend = "job.suspend";
// {id, reason}: the workload is deleted (user, ttlSecondsAfterFinished) with every copy.
inline constexpr std::string_view kJobDeleted = "job.deleted";

}  // namespace gf::event_type
