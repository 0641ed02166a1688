// Jobs (docs/quota-frontends.md, docs/workloads.md): the AWS Batch service-job API
// (SubmitServiceJob, ListServiceJobs, DescribeServiceJob, priority update, TerminateServiceJob) and
// `GET /v1/jobs/{idOrName}`, the explanation behind `gpufleet describe job`: why it waits (which
// quota node or placement constraint, by how much) and every admission and preemption with its
// rule.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>

#include "api/api.h"
#include "api/history_api.h"
#include "api/job_views.h"
#include "api/workload_wire.h"
#include "core/ids.h"
#include "state/job_events.h"
#include "workload/service_job.h"

namespace gf {
namespace {

Result<Json> parse_one(const HttpRequest& req) {
  GF_ASSIGN_OR_RETURN(auto docs, parse_documents(req.body));
  if (docs.size() != 1)
    return validation_error(fmt::format("expected one JSON document, got {}", docs.size()));
  return docs.front();
}

int64_t millis(Time t) { return to_micros(t) / 1000; }

}  // namespace

Json describe_service_job(const Job& j) {
  Json out{{"jobId", j.id},
           {"jobName", j.name},
           {"jobArn", make_arn(ArnConfig{}, "service-job", j.id)},
           {"serviceJobType", "SAGEMAKER_TRAINING"},
           {"status", std::string(to_string(j.status))},
           {"statusReason", j.status_reason},
           {"schedulingPriority", j.priority},
           {"createdAt", millis(j.created_at)}};
  if (!j.job_queue.empty()) out["jobQueue"] = j.job_queue;
  if (!j.quota_share.empty()) out["quotaShareName"] = j.quota_share;
  if (!j.local_queue.empty()) out["localQueue"] = j.ns + "/" + j.local_queue;
  // Our additions for the jobs that are not service jobs (get workloads): their kind and namespace.
  if (j.kind != "ServiceJob") out["kind"] = j.kind;
  if (!j.ns.empty()) out["namespace"] = j.ns;
  if (j.started_at) out["startedAt"] = millis(*j.started_at);
  if (j.stopped_at) out["stoppedAt"] = millis(*j.stopped_at);
  if (j.max_preemptions)
    out["preemptionConfiguration"] = {{"preemptionRetriesBeforeTermination", *j.max_preemptions}};
  Json recent = Json::array();
  for (const JobPreemption& p : j.recent_preemptions) {
    recent.push_back({{"preemptedAt", millis(p.time)},
                      {"preemptedBy", p.by},
                      {"rule", p.rule},
                      {"statusReason", p.message}});
  }
  out["preemptionSummary"] = {{"preemptedAttemptCount", j.preempted_count},
                              {"recentPreemptedAttempts", recent}};
  if (j.request.is_object()) {
    if (j.request.contains("serviceRequestPayload"))
      out["serviceRequestPayload"] = j.request.at("serviceRequestPayload");
    if (j.request.contains("tags")) out["tags"] = j.request.at("tags");
  }
  if (!j.cluster.empty()) out["placement"] = {{"cluster", j.cluster}, {"nodes", j.pod_nodes}};
  return out;
}

namespace {

// Why the job waits, as the scheduler's last pass recorded it (docs/scheduling.md).
Json explanation_json(const JobWait& w) {
  Json e{{"kind", w.kind}, {"reason", w.reason}, {"message", w.message}};
  if (!w.node.empty()) e["quotaNode"] = w.node;
  if (!w.limit.empty()) e["limit"] = w.limit;
  if (!w.resource.empty()) e["resource"] = w.resource;
  if (w.kind == "Quota" || w.kind == "Placement") {
    e["requested"] = w.requested;
    e["available"] = w.available;
    e["shortfall"] = w.shortfall;
  }
  e["since"] = format_iso8601(w.since);
  return e;
}

Json pods_json(const Job& j) {
  Json pods = Json::array();
  for (const Job::Pod& p : j.pods()) pods.push_back({{"name", p.name}, {"node", p.node}});
  return pods;
}

}  // namespace

Json describe_job(const FleetView& view, const Job& j) {
  Json out = describe_service_job(j);
  out["kind"] = j.kind;
  if (out.contains("placement")) out["placement"]["pods"] = pods_json(j);
  for (Json& p : out["preemptionSummary"]["recentPreemptedAttempts"]) {
    if (const Job* by = view.job(p.value("preemptedBy", ""))) p["preemptedByName"] = by->name;
  }
  if (!is_terminal(j.status)) {
    if (j.waiting) {
      out["explanation"] = explanation_json(*j.waiting);
    } else {
      const bool placed = j.admitted && !j.cluster.empty() && !j.pod_nodes.empty();
      out["explanation"] = Json{
          {"kind", "NotWaiting"},
          {"message", placed ? "admitted and placed on cluster " + j.cluster : j.status_reason}};
    }
  }
  Json hist = Json::array();
  for (const JobEvent& e : j.history) {
    hist.push_back(
        {{"time", format_iso8601(e.time)}, {"reason", e.reason}, {"message", e.message}});
  }
  out["events"] = std::move(hist);
  return out;
}

namespace {

// Served from the published view, never through the writer (docs/api.md "Reads").
HttpResponse read_job(Api& api, const HttpRequest& req, const std::string& id, bool service_shape) {
  auto view = api.loop().view();
  const Job* j = view->find_job(id);
  // A job retention took out of memory answers from history, marked so.
  std::optional<Job> retired;
  if (j == nullptr) {
    auto found = find_history_job(api, id);
    if (!found.ok()) return error_response(found.status());
    retired = std::move(*found);
    if (retired) j = &*retired;
  }
  // Another team's job is not found, not forbidden: its name does not leak.
  if (j == nullptr || !may_see_job(req, *view, *j))
    return error_response(not_found_error("job \"" + id + "\" not found"));
  Json body = describe_job(*view, *j);
  if (retired) body["fromHistory"] = true;
  if (service_shape) body.erase("events");
  return json_response(200, body);
}

HttpResponse submit(Api& api, const HttpRequest& req) {
  auto body = parse_one(req);
  if (!body.ok()) return error_response(body.status());
  Request r;
  r.name = "SubmitServiceJob";
  r.idempotency_key = idempotency_key(req, &*body);
  if (r.idempotency_key.empty() && body->is_object() && body->contains("clientToken")) {
    const Json& token = (*body)["clientToken"];
    if (!token.is_string())
      return error_response(
          validation_error("clientToken: expected string, got " + describe_json_value(token)));
    if (!token.get_ref<const std::string&>().empty())
      r.idempotency_key = req.method + " " + req.path + " " + token.get<std::string>();
  }
  r.handle = [body = *body, req = caller_of(req)](const FleetState& s, Time) -> Result<Decision> {
    GF_ASSIGN_OR_RETURN(Job job, workload::parse_service_job(body, s.view().quota_objects.get()));
    if (!may_change_job(req, s.view(), job)) {
      const std::vector<std::string> keys = job_team_keys(s.view(), job);
      return Status(
          ErrorCode::kForbidden,
          "submitting to " + (keys.empty() ? std::string("this queue") : keys.front()) +
              " needs the role team:" + (keys.empty() ? std::string("<name>") : keys.front()) +
              " (or admin); " + req.caller + " does not have it");
    }
    const int64_t counter = s.view().job_counter + 1;
    job.key = static_cast<uint64_t>(counter);
    job.id = job_id(counter, job.name);
    job.status = JobStatus::kRunnable;
    job.status_reason = "waiting in the queue";
    Decision d;
    d.events.push_back(job_events::to_event(job_events::Submitted{job}));
    d.response = Json{{"jobId", job.id},
                      {"jobName", job.name},
                      {"jobArn", make_arn(ArnConfig{}, "service-job", job.id)}};
    return d;
  };
  r.on_duplicate = [](const FleetState& s, Seq original) {
    // The job the first submission created (a scan, but only when a client retries).
    for (const auto& [id, j] : s.view().jobs) {
      if (j->submit_seq == static_cast<uint64_t>(original)) {
        return Json{{"jobId", id},
                    {"jobName", j->name},
                    {"jobArn", make_arn(ArnConfig{}, "service-job", id)}};
      }
    }
    return Json::object();
  };
  return Api::respond(api.write(std::move(r)));
}

// GET /v1/service-jobs: ListServiceJobs, in submission order, of the jobs the caller may see;
// optionally of one jobQueue (a name or an ARN) and one jobStatus.
HttpResponse list_service_jobs(Api& api, const HttpRequest& req) {
  auto view = api.loop().view();
  std::string queue = req.query_or("jobQueue", "");
  if (auto slash = queue.rfind('/'); slash != std::string::npos) queue = queue.substr(slash + 1);
  const std::string status = req.query_or("jobStatus", "");
  if (!status.empty() && !parse_job_status(status)) {
    return error_response(validation_error("jobStatus: unknown status \"" + status + "\""));
  }
  std::vector<const Job*> jobs;  // in submission order
  for (const auto& [id, j] : view->jobs) {
    if (may_see_job(req, *view, *j)) jobs.push_back(j.get());
  }
  std::sort(jobs.begin(), jobs.end(), [](const Job* a, const Job* b) { return a->key < b->key; });
  Json list = Json::array();
  for (const Job* j : jobs) {
    if (!queue.empty() && j->job_queue != queue) continue;
    if (!status.empty() && to_string(j->status) != status) continue;
    Json item = describe_service_job(*j);
    item.erase("serviceRequestPayload");
    list.push_back(std::move(item));
  }
  return json_response(200, Json{{"jobSummaryList", std::move(list)}});
}

// PATCH /v1/service-jobs/{id}: UpdateServiceJob, a new schedulingPriority for a job not yet ended.
HttpResponse update_service_job(Api& api, const HttpRequest& req) {
  auto body = parse_one(req);
  if (!body.ok()) return error_response(body.status());
  Request w;
  w.name = "UpdateServiceJob";
  const std::string id = req.path_params.at("id");
  w.handle = [id, body = *body, req = caller_of(req)](const FleetState& s,
                                                      Time) -> Result<Decision> {
    const Job* j = s.view().find_job(id);
    if (j == nullptr || !may_change_job(req, s.view(), *j))
      return not_found_error("job \"" + id + "\" not found");
    ObjectReader rd(body, "");
    const int64_t prio = rd.required_int("schedulingPriority");
    if (rd.ok() && (prio < 0 || prio > 9999))
      rd.fail("schedulingPriority", fmt::format("must be between 0 and 9999, got {}", prio));
    if (!rd.ok()) return rd.status();
    if (is_terminal(j->status))
      return conflict_error("job " + j->id + " is " + std::string(to_string(j->status)));
    Decision d;
    d.events.push_back(
        job_events::to_event(job_events::PriorityChanged{j->id, static_cast<int32_t>(prio)}));
    d.response = Json{{"jobId", j->id}, {"schedulingPriority", prio}};
    return d;
  };
  return Api::respond(api.write(std::move(w)));
}

// POST /v1/service-jobs/{id}/terminate: TerminateServiceJob; the job ends FAILED.
HttpResponse terminate_service_job(Api& api, const HttpRequest& req) {
  // AWS Batch's TerminateServiceJob body: {"reason": "..."} (jobId comes from the path).
  std::string reason = "terminated by user";
  if (!req.body.empty()) {
    auto b = parse_one(req);
    if (!b.ok()) return error_response(b.status());
    ObjectReader rd(*b, "");
    if (auto given = rd.optional_string("reason")) reason = *given;
    (void)rd.optional_string("jobId");
    for (const std::string& f : rd.unknown_fields())
      rd.fail_status(validation_error(f + ": unknown field (expected reason)"));
    if (!rd.ok()) return error_response(rd.status());
    if (reason.size() > 1024)
      return error_response(
          validation_error(fmt::format("reason: at most 1024 characters, got {}", reason.size())));
  }
  Request w;
  w.name = "TerminateServiceJob";
  const std::string id = req.path_params.at("id");
  w.handle = [id, reason, req = caller_of(req)](const FleetState& s, Time) -> Result<Decision> {
    const Job* j = s.view().find_job(id);
    if (j == nullptr || !may_change_job(req, s.view(), *j))
      return not_found_error("job \"" + id + "\" not found");
    if (is_terminal(j->status))
      return conflict_error("job " + j->id + " is already " + std::string(to_string(j->status)));
    Decision d;
    d.events.push_back(job_events::to_event(
        job_events::Finished{j->id, JobStatus::kFailed, "Terminated: " + reason}));
    d.response = Json{{"jobId", j->id}};
    return d;
  };
  return Api::respond(api.write(std::move(w)));
}

}  // namespace

void register_job_routes(Api& api) {
  Router& r = api.router();
  r.add("POST", "/v1/service-jobs", [&api](const HttpRequest& req) { return submit(api, req); });
  r.add("GET", "/v1/service-jobs",
        [&api](const HttpRequest& req) { return list_service_jobs(api, req); });
  r.add("GET", "/v1/service-jobs/{id}", [&api](const HttpRequest& req) {
    return read_job(api, req, req.path_params.at("id"), true);
  });
  r.add("GET", "/v1/jobs/{id}", [&api](const HttpRequest& req) {
    return read_job(api, req, req.path_params.at("id"), false);
  });
  r.add("PATCH", "/v1/service-jobs/{id}",
        [&api](const HttpRequest& req) { return update_service_job(api, req); });
  r.add("POST", "/v1/service-jobs/{id}/terminate",
        [&api](const HttpRequest& req) { return terminate_service_job(api, req); });
}

}  // namespace gf
