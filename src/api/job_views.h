// A job as the API shows it (job_api.cpp): DescribeServiceJob's shape, and `describe job`'s.
#pragma once

#include "core/json.h"
#include "model/job.h"
#include "state/fleet_state.h"

namespace gf {

// AWS Batch's DescribeServiceJob answer for a job (and our additions: kind, namespace, placement).
Json describe_service_job(const Job& j);
// A job as `describe job` shows it: the record, why it waits, and its history. Its pods are named
// and its preemptors are named as well as identified (`view`).
Json describe_job(const FleetView& view, const Job& j);

}  // namespace gf
