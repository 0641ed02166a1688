// Journal event types for quota objects and jobs (SPEC §3, §4.1). Appliers live in
// job_apply.cpp; the scheduler's derived cache is brought in step by the same appliers.
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

}  // namespace gf::event_type
