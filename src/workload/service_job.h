// Service jobs, the AWS Batch SubmitServiceJob shape (docs/workloads.md): a job queue and quota
// share, or a Kueue LocalQueue (tag kueue.x-k8s.io/queue-name), a priority, a retry budget for
// preemptions, the instance type and count of its nodes, and tags (gpufleet.io/duration: its
// simulated run time).
#pragma once

#include "core/json.h"
#include "core/result.h"
#include "model/job.h"
#include "model/quota_objects.h"

namespace gf::workload {

// Validates a SubmitServiceJob body against the quota objects it names (null: none exist yet):
// the job record to journal, without id, key and status. Errors name the field:
// `quotaShareName: quota share "QS9" does not exist in job queue "q"`.
Result<Job> parse_service_job(const Json& body, const frontend::ObjectMap* quota_objects);

}  // namespace gf::workload
