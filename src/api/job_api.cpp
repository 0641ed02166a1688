// Jobs (docs/quota-frontends.md, docs/workloads.md): the AWS Batch service-job API
// (SubmitServiceJob, ListServiceJobs, DescribeServiceJob, priority update, TerminateServiceJob) and
// `GET /v1/jobs/{idOrName}`, the explanation behind `gpufleet describe job`: why it waits (which
// quota node or placement constraint, by how much) and every admission and preemption with its
// rule.
#include <algorithm>
#include <cstdio>

#include "api/api.h"
#include "api/workload_wire.h"
#include "core/ids.h"
#include "frontend/quota_objects.h"
#include "model/catalog.h"
#include "state/job_events.h"

namespace gf {
namespace {

constexpr std::string_view kQueueNameTag = "kueue.x-k8s.io/queue-name";
constexpr std::string_view kNamespaceTag = "kueue.x-k8s.io/namespace";
constexpr std::string_view kDurationTag = "gpufleet.io/duration";
constexpr std::string_view kPriorityClassTag = "kueue.x-k8s.io/priority-class";

Result<Json> parse_one(const HttpRequest& req) {
  GF_ASSIGN_OR_RETURN(auto docs, parse_documents(req.body));
  if (docs.size() != 1)
    return validation_error("expected one JSON document, got " + std::to_string(docs.size()));
  return docs.front();
}

const frontend::QuotaObject* find_object(const FleetView& v, frontend::Kind kind,
                                         const std::string& name, const std::string& ns = "") {
  if (!v.quota_objects) return nullptr;
  auto it = v.quota_objects->find(frontend::ObjectKey{kind, ns, name});
  return it == v.quota_objects->end() ? nullptr : &it->second;
}

// Validates a SubmitServiceJob body against the state; the job record to journal.
Result<Job> parse_service_job(const Json& body, const FleetState& s) {
  ObjectReader r(body, "");
  Job job;
  job.kind = "ServiceJob";
  job.request = body;
  job.name = r.required_string("jobName");
  if (r.ok() && (job.name.empty() || job.name.size() > 128 ||
                 job.name.find_first_not_of(
                     "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_") !=
                     std::string::npos)) {
    r.fail("jobName", "must be 1-128 letters, digits, hyphens or underscores");
  }
  if (auto type = r.optional_string("serviceJobType"); type && *type != "SAGEMAKER_TRAINING") {
    r.fail("serviceJobType", "\"" + *type + "\" is not supported (expected SAGEMAKER_TRAINING)");
  }
  std::map<std::string, std::string> tags;
  if (const Json* t = r.optional_object("tags")) {
    for (auto it = t->begin(); it != t->end(); ++it) {
      if (!it.value().is_string()) {
        r.fail("tags", "tag \"" + it.key() + "\" must be a string");
        break;
      }
      tags[it.key()] = it.value().get<std::string>();
    }
  }
  auto job_queue = r.optional_string("jobQueue");
  auto share = r.optional_string("quotaShareName");
  const auto priority = r.optional_int("schedulingPriority");
  if (priority && (*priority < 0 || *priority > 9999))
    r.fail("schedulingPriority", "must be between 0 and 9999, got " + std::to_string(*priority));
  job.priority = static_cast<int32_t>(priority.value_or(0));
  if (const Json* pc = r.optional_object("preemptionConfiguration")) {
    ObjectReader p(*pc, "preemptionConfiguration");
    if (auto n = p.optional_int("preemptionRetriesBeforeTermination")) {
      if (*n < 0) p.fail("preemptionRetriesBeforeTermination", "must be >= 0");
      job.max_preemptions = static_cast<int32_t>(*n);
    }
    r.fail_status(p.status());
  }
  (void)r.optional_string("clientToken");
  (void)r.optional_int("timeoutConfig");
  (void)r.optional_value("retryStrategy");
  // The SageMaker payload: an object, or the JSON text of one (AWS sends a string).
  Json payload;
  if (const Json* pl = r.required_value("serviceRequestPayload")) {
    if (pl->is_string()) {
      auto parsed = parse_json(pl->get<std::string>());
      if (!parsed.ok()) {
        r.fail("serviceRequestPayload", "not valid JSON: " + parsed.status().message());
      } else {
        payload = *parsed;
      }
    } else {
      payload = *pl;
    }
  }
  std::string instance_type;
  int64_t count = 1;
  if (r.ok()) {
    ObjectReader p(payload, "serviceRequestPayload");
    if (const Json* rc = p.required_value("ResourceConfig")) {
      ObjectReader c(*rc, "serviceRequestPayload.ResourceConfig");
      instance_type = c.required_string("InstanceType");
      count = c.optional_int("InstanceCount").value_or(1);
      if (c.ok() && Catalog::builtin().find(instance_type) == nullptr)
        c.fail("InstanceType", "unknown instance type \"" + instance_type + "\"");
      if (c.ok() && (count < 1 || count > 10000))
        c.fail("InstanceCount", "must be between 1 and 10000, got " + std::to_string(count));
      p.fail_status(c.status());
    }
    r.fail_status(p.status());
  }
  if (!r.ok()) return r.status();

  if (auto lq = tags.find(std::string(kQueueNameTag)); lq != tags.end()) {
    job.local_queue = lq->second;
    auto ns = tags.find(std::string(kNamespaceTag));
    job.ns = ns == tags.end() ? "default" : ns->second;
    if (!find_object(s.view(), frontend::Kind::kLocalQueue, job.local_queue, job.ns)) {
      return validation_error("tags." + std::string(kQueueNameTag) + ": local queue " + job.ns +
                              "/" + job.local_queue + " does not exist");
    }
  } else {
    if (!job_queue)
      return validation_error("jobQueue: required (or the tag " + std::string(kQueueNameTag) + ")");
    job.job_queue = *job_queue;
    // An ARN names the queue by its last path segment.
    if (auto slash = job.job_queue.rfind('/'); slash != std::string::npos)
      job.job_queue = job.job_queue.substr(slash + 1);
    if (!find_object(s.view(), frontend::Kind::kJobQueue, job.job_queue)) {
      return validation_error("jobQueue: job queue \"" + job.job_queue + "\" does not exist");
    }
    const frontend::CompiledQuota* q = s.view().quota.get();
    if (q != nullptr) {
      auto st = q->job_queue_status.find(job.job_queue);
      if (st != q->job_queue_status.end() &&
          (st->second.status != "VALID" || st->second.state != "ENABLED")) {
        return validation_error("jobQueue: job queue \"" + job.job_queue + "\" is " +
                                st->second.state + "/" + st->second.status + " (" +
                                st->second.status_reason + ")");
      }
    }
    if (!share) return validation_error("quotaShareName: required for a quota-managed job queue");
    job.quota_share = *share;
    const frontend::QuotaObject* qs =
        find_object(s.view(), frontend::Kind::kQuotaShare, job.quota_share);
    if (qs == nullptr || qs->doc.value("jobQueue", "") != job.job_queue) {
      return validation_error("quotaShareName: quota share \"" + job.quota_share +
                              "\" does not exist in job queue \"" + job.job_queue + "\"");
    }
    std::string units;
    bool covered = false;
    for (const Json& lim : qs->doc.value("capacityLimits", Json::array())) {
      const std::string unit = lim.value("capacityUnit", "");
      units += (units.empty() ? "" : ", ") + unit;
      covered |= unit == instance_type;
    }
    if (!covered) {
      return validation_error("serviceRequestPayload.ResourceConfig.InstanceType: " +
                              instance_type + " is not among the capacity limits of quota share " +
                              job.quota_share + " (" + units + ")");
    }
  }
  if (auto pc = tags.find(std::string(kPriorityClassTag)); pc != tags.end()) {
    const frontend::QuotaObject* cls =
        find_object(s.view(), frontend::Kind::kWorkloadPriorityClass, pc->second);
    if (cls == nullptr) {
      return validation_error("tags." + std::string(kPriorityClassTag) +
                              ": WorkloadPriorityClass \"" + pc->second + "\" does not exist");
    }
    if (priority) {
      return validation_error("schedulingPriority: give either schedulingPriority or the tag " +
                              std::string(kPriorityClassTag) + ", not both");
    }
    job.priority = static_cast<int32_t>(cls->doc.value("value", int64_t{0}));
  }
  if (auto d = tags.find(std::string(kDurationTag)); d != tags.end()) {
    auto dur = parse_duration(d->second);
    if (!dur.ok())
      return validation_error("tags." + std::string(kDurationTag) + ": " + dur.status().message());
    job.duration = *dur;
  }
  job.pod_sets.push_back(
      JobPodSet{"node", static_cast<int32_t>(count), Json::object(), instance_type, true});
  return job;
}

int64_t millis(Time t) { return to_micros(t) / 1000; }

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

// A job as `describe job` shows it: the record, why it waits, and its history.
Json describe_job(const Job& j) {
  Json out = describe_service_job(j);
  out["kind"] = j.kind;
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

// Served from the published view, never through the writer (docs/api.md "Reads").
HttpResponse read_job(Api& api, const HttpRequest& req, const std::string& id, bool service_shape) {
  auto view = api.loop().view();
  const Job* j = view->find_job(id);
  // Another team's job is not found, not forbidden: its name does not leak.
  if (j == nullptr || !may_see_job(req, *view, *j))
    return error_response(not_found_error("job \"" + id + "\" not found"));
  Json body = describe_job(*j);
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
    GF_ASSIGN_OR_RETURN(Job job, parse_service_job(body, s));
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
    d.events.push_back(
        Event{std::string(event_type::kJobSubmitted), Json{{"job", job.to_json()}}, ""});
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

}  // namespace

void register_job_routes(Api& api) {
  Router& r = api.router();
  r.add("POST", "/v1/service-jobs", [&api](const HttpRequest& req) { return submit(api, req); });
  r.add("GET", "/v1/service-jobs", [&api](const HttpRequest& req) {
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
  });
  r.add("GET", "/v1/service-jobs/{id}", [&api](const HttpRequest& req) {
    return read_job(api, req, req.path_params.at("id"), true);
  });
  r.add("GET", "/v1/jobs/{id}", [&api](const HttpRequest& req) {
    return read_job(api, req, req.path_params.at("id"), false);
  });
  r.add("PATCH", "/v1/service-jobs/{id}", [&api](const HttpRequest& req) {
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
        rd.fail("schedulingPriority", "must be between 0 and 9999, got " + std::to_string(prio));
      if (!rd.ok()) return rd.status();
      if (is_terminal(j->status))
        return conflict_error("job " + j->id + " is " + std::string(to_string(j->status)));
      Decision d;
      d.events.push_back(Event{std::string(event_type::kJobPriority),
                               Json{{"id", j->id}, {"priority", prio}}, ""});
      d.response = Json{{"jobId", j->id}, {"schedulingPriority", prio}};
      return d;
    };
    return Api::respond(api.write(std::move(w)));
  });
  r.add("POST", "/v1/service-jobs/{id}/terminate", [&api](const HttpRequest& req) {
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
        return error_response(validation_error("reason: at most 1024 characters, got " +
                                               std::to_string(reason.size())));
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
      d.events.push_back(Event{
          std::string(event_type::kJobFinished),
          Json{{"id", j->id}, {"status", "FAILED"}, {"reason", "Terminated: " + reason}}, ""});
      d.response = Json{{"jobId", j->id}};
      return d;
    };
    return Api::respond(api.write(std::move(w)));
  });
}

}  // namespace gf
