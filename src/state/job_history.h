// A job as the history table files it (journal/history.h) and reads it back
// (docs/operations.md "What is kept where").
#pragma once

#include "core/result.h"
#include "journal/history.h"
#include "model/job.h"

namespace gf {

// `deleted`: it left because it was deleted (job.deleted) at `at`, not retired after it finished;
// a deleted job that had not finished is filed as DELETED, ended at `at`.
HistoryRecord job_history_record(const Job& job, bool deleted, Time at);
// The job a history record holds.
Result<Job> job_from_history(const HistoryRecord& record);

}  // namespace gf
