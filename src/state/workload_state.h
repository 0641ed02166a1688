// Shared between the job appliers (job_apply.cpp) and the workload appliers
// (workload_apply.cpp): how a workload's record changes when the fleet binds it to a cluster.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "model/job.h"

namespace gf {

// The workload was bound to `cluster` (first admission, placed again, or after failover), its
// pods either bound to nodes or, with `pods_pending`, waiting there. A new binding records
// Karmada's ScheduleBindingSucceed event with the gang's replica counts.
void note_binding(Job& job, Time t, const std::string& cluster, bool pods_pending, bool borrowing);

// The next time the workload controller must act on the job, if nothing else changes it first:
// failover (not running for tolerationSeconds on its cluster), removing a copy left by a
// Gracefully failover (once the job runs, or at its purge time), activeDeadlineSeconds, and
// ttlSecondsAfterFinished. nullopt: nothing is due by time alone.
std::optional<Time> workload_deadline(const Job& job);

// The key of FleetView::workload_ids.
std::string workload_key(std::string_view kind, std::string_view ns, std::string_view name);

// "{<cluster>:0,[{master 1} {worker 2}]}": the binding result as ACK One's scheduler writes it.
std::string binding_result(const Job& job, const std::string& cluster);

}  // namespace gf
