#include "state/job_history.h"

namespace gf {

HistoryRecord job_history_record(const Job& job, bool deleted, Time at) {
  HistoryRecord h;
  h.kind = "job";
  h.id = job.id;
  h.name = job.name;
  h.tenant = std::string(job_tenant(job));
  h.state = deleted && !is_terminal(job.status) ? "DELETED" : std::string(to_string(job.status));
  h.created = job.created_at;
  h.ended = job.stopped_at.value_or(at);
  h.record = safe_dump(job.to_json());
  for (const JobRun& run : job.runs) {
    // A deleted job's open run ended with it (the delete closed it); none is left open here.
    h.runs.push_back(HistoryRun{job.id, job.job_queue, job.quota_share, run.cluster, run.start,
                                run.end.value_or(h.ended), run.micros_per_hour});
  }
  return h;
}

Result<Job> job_from_history(const HistoryRecord& record) {
  GF_ASSIGN_OR_RETURN(Json j, parse_json(record.record, kStoredTextLimits));
  auto job = Job::from_json(j);
  if (!job.ok()) return job.status().with_prefix("history record of job " + record.id);
  return job;
}

}  // namespace gf
