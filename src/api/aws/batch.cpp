// AWS Batch's REST-JSON protocol for quota shares and service jobs (docs/aws-compatibility.md):
// `POST /v1/<operation>` with a JSON body. Batch models two errors, ClientException (400) and
// ServerException (500): gpufleet's 4xx codes are answered as ClientException with the code in
// the message, its 5xx as ServerException; the authentication and throttling codes every AWS
// service shares keep their names.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <set>

#include "api/aws/protocol.h"
#include "core/ids.h"

namespace gf::aws {
namespace {

using Op = std::function<HttpResponse(Api&, const HttpRequest&, const Json&)>;

// A gpufleet error answer in Batch's terms.
HttpResponse batch_error(HttpResponse r) {
  if (r.status < 400) return r;
  const std::string type = r.error_type.empty() ? fmt::format("HTTP{}", r.status) : r.error_type;
  static const std::set<std::string, std::less<>> kShared = {
      "UnauthorizedException",       "AccessDeniedException",        "InvalidSignatureException",
      "UnrecognizedClientException", "IncompleteSignatureException", "ThrottlingException"};
  if (kShared.contains(type)) return r;
  std::string message;
  if (auto body = parse_json(r.body); body.ok() && body->is_object())
    message = body->value("message", "");
  const bool server = r.status >= 500;
  const std::string code = server ? "ServerException" : "ClientException";
  HttpResponse out = json_response(server ? r.status : 400,
                                   Json{{"__type", code}, {"message", type + ": " + message}});
  out.error_type = code;
  out.headers = r.headers;
  out.headers["x-amzn-ErrorType"] = code;
  return out;
}

HttpResponse fail(const Status& st) { return error_response(st); }

HttpResponse ok(Json body) { return json_response(200, body); }

// The name an identifier field gives (a name or an ARN), checked to fit a path.
Result<std::string> name_field(const Json& in, const std::string& field) {
  GF_ASSIGN_OR_RETURN(std::string v, string_field(in, field, true));
  std::string name = name_from_arn(v);
  GF_RETURN_IF_ERROR(check_segment(name, field));
  return name;
}

Json without(Json in, std::initializer_list<const char*> fields) {
  for (const char* f : fields) in.erase(f);
  return in;
}

// One of the four quota-object families: where it lives in gpufleet's REST API and what AWS
// calls its fields.
struct Family {
  std::string rest;        // "/v1/job-queues"
  std::string arn_type;    // "job-queues" (the REST answers' ARN type)
  std::string name_field;  // "jobQueueName"
  std::string arn_field;   // "jobQueueArn"
  std::string id_field;    // what Update/Delete name it by: "jobQueue"
  std::string list_field;  // "jobQueues"
};

const Family kServiceEnvironments{"/v1/service-environments", "service-environments",
                                  "serviceEnvironmentName",   "serviceEnvironmentArn",
                                  "serviceEnvironment",       "serviceEnvironments"};
const Family kSchedulingPolicies{
    "/v1/scheduling-policies", "scheduling-policies", "name", "arn", "arn", "schedulingPolicies"};
const Family kJobQueues{"/v1/job-queues", "job-queues", "jobQueueName",
                        "jobQueueArn",    "jobQueue",   "jobQueues"};
const Family kQuotaShares{"/v1/quota-shares", "quota-shares",  "quotaShareName",
                          "quotaShareArn",    "quotaShareArn", "quotaShares"};

// An object as AWS describes it: its ARN beside its name, without gpufleet's bookkeeping.
Json aws_object(const Family& f, Json o) {
  o[f.arn_field] = batch_arn(f.arn_type, o.value(f.name_field, ""));
  o.erase("createdAt");
  if (&f == &kJobQueues) {
    if (!o.contains("computeEnvironmentOrder")) o["computeEnvironmentOrder"] = Json::array();
    if (!o.contains("state")) o["state"] = "ENABLED";
  }
  if (&f == &kQuotaShares) {
    o["jobQueueArn"] = batch_arn(kJobQueues.arn_type, name_from_arn(o.value("jobQueue", "")));
    if (!o.contains("state")) o["state"] = "ENABLED";
    if (!o.contains("status")) o["status"] = "VALID";
  }
  if (&f == &kServiceEnvironments) {
    if (!o.contains("state")) o["state"] = "ENABLED";
    if (!o.contains("status")) o["status"] = "VALID";
  }
  return o;
}

HttpResponse create(const Family& f, Api& api, const HttpRequest& req, const Json& in) {
  Answer a = call(api, req, Inner{"POST", f.rest, {}, in});
  if (!a.ok()) return a.response;
  const std::string name = a.body.value(f.name_field, "");
  return ok(Json{{f.name_field, name}, {f.arn_field, batch_arn(f.arn_type, name)}});
}

HttpResponse update(const Family& f, Api& api, const HttpRequest& req, const Json& in) {
  auto name = name_field(in, f.id_field);
  if (!name.ok()) return fail(name.status());
  Answer a =
      call(api, req, Inner{"PATCH", f.rest + "/" + *name, {}, without(in, {f.id_field.c_str()})});
  if (!a.ok()) return a.response;
  return ok(Json{{f.name_field, *name}, {f.arn_field, batch_arn(f.arn_type, *name)}});
}

HttpResponse remove(const Family& f, Api& api, const HttpRequest& req, const Json& in) {
  auto name = name_field(in, f.id_field);
  if (!name.ok()) return fail(name.status());
  Answer a = call(api, req, Inner{"DELETE", f.rest + "/" + *name, {}, {}});
  if (!a.ok()) return a.response;
  return ok(Json::object());
}

// Describe<Family>s: the objects named in `filter_field` (names or ARNs; every one when absent),
// a page at a time.
HttpResponse describe(const Family& f, Api& api, const HttpRequest& req, const Json& in,
                      const std::string& filter_field, bool paged) {
  std::set<std::string> wanted;
  if (auto it = in.find(filter_field); it != in.end() && !it->is_null()) {
    if (!it->is_array())
      return fail(validation_error(filter_field + ": expected a list of names or ARNs, got " +
                                   describe_json_value(*it)));
    for (const Json& v : *it) {
      if (!v.is_string())
        return fail(
            validation_error(filter_field + ": expected strings, got " + describe_json_value(v)));
      wanted.insert(name_from_arn(v.get<std::string>()));
    }
  }
  Answer a = call(api, req, Inner{"GET", f.rest, {}, {}});
  if (!a.ok()) return a.response;
  Json items = Json::array();
  for (Json& o : a.body[f.list_field]) {
    if (wanted.empty() || wanted.contains(o.value(f.name_field, "")))
      items.push_back(aws_object(f, std::move(o)));
  }
  Json out{{f.list_field, std::move(items)}};
  if (paged) {
    if (Status st = page(out, f.list_field, in, "maxResults", "nextToken", 100,
                         [&f](const Json& o) { return o.value(f.name_field, ""); });
        !st.ok())
      return fail(st);
  }
  return ok(std::move(out));
}

HttpResponse list_scheduling_policies(Api& api, const HttpRequest& req, const Json& in) {
  Answer a = call(api, req, Inner{"GET", kSchedulingPolicies.rest, {}, {}});
  if (!a.ok()) return a.response;
  Json items = Json::array();
  for (const Json& o : a.body["schedulingPolicies"])
    items.push_back({{"arn", batch_arn(kSchedulingPolicies.arn_type, o.value("name", ""))}});
  Json out{{"schedulingPolicies", std::move(items)}};
  if (Status st = page(out, "schedulingPolicies", in, "maxResults", "nextToken", 100,
                       [](const Json& o) { return o.value("arn", ""); });
      !st.ok())
    return fail(st);
  return ok(std::move(out));
}

HttpResponse describe_quota_share(Api& api, const HttpRequest& req, const Json& in) {
  auto name = name_field(in, "quotaShareArn");
  if (!name.ok()) return fail(name.status());
  Answer a = call(api, req, Inner{"GET", kQuotaShares.rest + "/" + *name, {}, {}});
  if (!a.ok()) return a.response;
  return ok(aws_object(kQuotaShares, std::move(a.body)));
}

HttpResponse list_quota_shares(Api& api, const HttpRequest& req, const Json& in) {
  auto queue = name_field(in, "jobQueue");
  if (!queue.ok()) return fail(queue.status());
  Answer a = call(api, req, Inner{"GET", kQuotaShares.rest, {{"jobQueue", *queue}}, {}});
  if (!a.ok()) return a.response;
  Json items = Json::array();
  for (Json& o : a.body["quotaShares"]) items.push_back(aws_object(kQuotaShares, std::move(o)));
  Json out{{"quotaShares", std::move(items)}};
  if (Status st = page(out, "quotaShares", in, "maxResults", "nextToken", 100,
                       [](const Json& o) { return o.value("quotaShareName", ""); });
      !st.ok())
    return fail(st);
  return ok(std::move(out));
}

// A service job as AWS describes it: the payload as JSON text, preemptions as attempts, its
// capacity from the payload's ResourceConfig.
Json aws_service_job(Json j) {
  if (auto it = j.find("serviceRequestPayload"); it != j.end() && !it->is_string())
    *it = safe_dump(*it);
  if (auto payload = parse_json(j.value("serviceRequestPayload", "")); payload.ok()) {
    const Json rc =
        payload->is_object() ? payload->value("ResourceConfig", Json::object()) : Json();
    if (rc.is_object() && rc.contains("InstanceType"))
      j["capacityUsage"] = Json::array({{{"capacityUnit", rc.value("InstanceType", "")},
                                         {"quantity", rc.value("InstanceCount", 1)}}});
  }
  if (auto it = j.find("preemptionSummary"); it != j.end() && it->is_object()) {
    for (Json& p : (*it)["recentPreemptedAttempts"]) {
      Json attempt{{"stoppedAt", p.value("preemptedAt", Json())},
                   {"statusReason", p.value("statusReason", "")}};
      p = std::move(attempt);
    }
  }
  j["isTerminated"] = j.value("statusReason", "").rfind("Terminated:", 0) == 0;
  for (const char* ours : {"placement", "kind", "namespace", "localQueue", "explanation"})
    j.erase(ours);
  return j;
}

HttpResponse submit_service_job(Api& api, const HttpRequest& req, const Json& in) {
  Answer a = call(api, req, Inner{"POST", "/v1/service-jobs", {}, in});
  if (!a.ok()) return a.response;
  return ok(std::move(a.body));
}

HttpResponse describe_service_job(Api& api, const HttpRequest& req, const Json& in) {
  auto id = name_field(in, "jobId");
  if (!id.ok()) return fail(id.status());
  Answer a = call(api, req, Inner{"GET", "/v1/service-jobs/" + *id, {}, {}});
  if (!a.ok()) return a.response;
  return ok(aws_service_job(std::move(a.body)));
}

// ListServiceJobs' filters: JOB_NAME (a trailing `*` matches a prefix), BEFORE_CREATED_AT and
// AFTER_CREATED_AT (epoch milliseconds), as AWS Batch's ListJobs has them.
Result<std::function<bool(const Json&)>> job_filter(const Json& in) {
  std::vector<std::function<bool(const Json&)>> tests;
  auto it = in.find("filters");
  using Test = std::function<bool(const Json&)>;
  if (it == in.end() || it->is_null()) return Test([](const Json&) { return true; });
  if (!it->is_array()) return validation_error("filters: expected a list of {name, values}");
  for (size_t i = 0; i < it->size(); ++i) {
    const Json& f = (*it)[i];
    const std::string where = fmt::format("filters[{}]", i);
    if (!f.is_object() || !f.value("name", Json()).is_string() || !f.contains("values") ||
        !f.at("values").is_array() || f.at("values").size() != 1 || !f.at("values")[0].is_string())
      return validation_error(where + ": expected {\"name\": ..., \"values\": [one string]}");
    const std::string name = f.at("name").get<std::string>();
    const std::string value = f.at("values")[0].get<std::string>();
    if (name == "JOB_NAME") {
      const bool prefix = value.ends_with('*');
      const std::string stem = prefix ? value.substr(0, value.size() - 1) : value;
      tests.push_back([stem, prefix](const Json& j) {
        const std::string n = j.value("jobName", "");
        return prefix ? n.rfind(stem, 0) == 0 : n == stem;
      });
    } else if (name == "BEFORE_CREATED_AT" || name == "AFTER_CREATED_AT") {
      int64_t ms = 0;
      auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), ms);
      if (ec != std::errc() || p != value.data() + value.size())
        return validation_error(where + ".values: expected epoch milliseconds, got \"" +
                                printable(value, 40) + "\"");
      const bool before = name == "BEFORE_CREATED_AT";
      tests.push_back([ms, before](const Json& j) {
        const int64_t at = j.value("createdAt", int64_t{0});
        return before ? at < ms : at > ms;
      });
    } else {
      return validation_error(
          where + ".name: \"" + printable(name, 40) +
          "\" is not supported (JOB_NAME, BEFORE_CREATED_AT, AFTER_CREATED_AT)");
    }
  }
  return Test([tests](const Json& j) {
    return std::all_of(tests.begin(), tests.end(), [&j](const auto& t) { return t(j); });
  });
}

HttpResponse list_service_jobs(Api& api, const HttpRequest& req, const Json& in) {
  std::map<std::string, std::string> q;
  auto queue = string_field(in, "jobQueue", false);
  if (!queue.ok()) return fail(queue.status());
  if (!queue->empty()) q["jobQueue"] = *queue;
  auto status = string_field(in, "jobStatus", false);
  if (!status.ok()) return fail(status.status());
  auto keep = job_filter(in);
  if (!keep.ok()) return fail(keep.status());
  // As AWS Batch: with filters the status is ignored; with neither, RUNNING jobs are listed.
  const bool filtered = in.contains("filters") && !in.at("filters").is_null();
  if (!filtered) q["jobStatus"] = status->empty() ? "RUNNING" : *status;
  Answer a = call(api, req, Inner{"GET", "/v1/service-jobs", q, {}});
  if (!a.ok()) return a.response;
  Json items = Json::array();
  for (Json& j : a.body["jobSummaryList"]) {
    if ((*keep)(j)) items.push_back(aws_service_job(std::move(j)));
  }
  for (Json& j : items) {
    for (const char* detail : {"serviceRequestPayload", "preemptionSummary", "tags",
                               "preemptionConfiguration", "schedulingPriority", "jobQueue"})
      j.erase(detail);
  }
  Json out{{"jobSummaryList", std::move(items)}};
  if (Status st = page(out, "jobSummaryList", in, "maxResults", "nextToken", 1000,
                       [](const Json& j) { return j.value("jobId", ""); });
      !st.ok())
    return fail(st);
  return ok(std::move(out));
}

HttpResponse update_service_job(Api& api, const HttpRequest& req, const Json& in) {
  auto id = name_field(in, "jobId");
  if (!id.ok()) return fail(id.status());
  Answer a = call(api, req, Inner{"PATCH", "/v1/service-jobs/" + *id, {}, without(in, {"jobId"})});
  if (!a.ok()) return a.response;
  const std::string job = a.body.value("jobId", *id);
  return ok(Json{{"jobId", job}, {"jobArn", batch_arn("service-job", job)}});
}

HttpResponse terminate_service_job(Api& api, const HttpRequest& req, const Json& in) {
  auto id = name_field(in, "jobId");
  if (!id.ok()) return fail(id.status());
  if (auto reason = string_field(in, "reason", true); !reason.ok()) return fail(reason.status());
  Answer a =
      call(api, req,
           Inner{"POST", "/v1/service-jobs/" + *id + "/terminate", {}, without(in, {"jobId"})});
  if (!a.ok()) return a.response;
  return ok(Json::object());
}

// TerminateServiceJobs: each job as TerminateServiceJob would, each failure listed.
HttpResponse terminate_service_jobs(Api& api, const HttpRequest& req, const Json& in) {
  auto reason = string_field(in, "reason", true);
  if (!reason.ok()) return fail(reason.status());
  auto jobs = in.find("jobs");
  if (jobs == in.end() || !jobs->is_array() || jobs->empty() || jobs->size() > 100)
    return fail(validation_error("jobs: expected a list of 1-100 job ids"));
  Json done = Json::array(), errors = Json::array();
  for (const Json& j : *jobs) {
    const std::string id = j.is_string() ? j.get<std::string>() : "";
    Status st =
        j.is_string() ? check_segment(id, "jobs") : validation_error("jobs: expected strings");
    HttpResponse r = st.ok() ? call(api, req,
                                    Inner{"POST",
                                          "/v1/service-jobs/" + id + "/terminate",
                                          {},
                                          Json{{"reason", *reason}}})
                                   .response
                             : error_response(st);
    if (r.status < 300) {
      done.push_back(id);
      continue;
    }
    auto body = parse_json(r.body);
    errors.push_back({{"job", j.is_string() ? id : j.dump()},
                      {"code", r.error_type},
                      {"message", body.ok() ? body->value("message", "") : ""}});
  }
  return ok(Json{{"successful", std::move(done)}, {"errors", std::move(errors)}});
}

HttpResponse job_queue_snapshot(Api& api, const HttpRequest& req, const Json& in) {
  auto queue = name_field(in, "jobQueue");
  if (!queue.ok()) return fail(queue.status());
  Answer a = call(api, req, Inner{"GET", "/v1/job-queues/" + *queue + "/snapshot", {}, {}});
  if (!a.ok()) return a.response;
  return ok(std::move(a.body));
}

Op with_family(HttpResponse (*fn)(const Family&, Api&, const HttpRequest&, const Json&),
               const Family& f) {
  return [fn, &f](Api& api, const HttpRequest& req, const Json& in) { return fn(f, api, req, in); };
}

const std::vector<std::pair<std::string, Op>>& operations() {
  static const std::vector<std::pair<std::string, Op>> ops = {
      {"createserviceenvironment", with_family(create, kServiceEnvironments)},
      {"describeserviceenvironments",
       [](Api& a, const HttpRequest& r, const Json& in) {
         return describe(kServiceEnvironments, a, r, in, "serviceEnvironments", true);
       }},
      {"updateserviceenvironment", with_family(update, kServiceEnvironments)},
      {"deleteserviceenvironment", with_family(remove, kServiceEnvironments)},
      {"createschedulingpolicy", with_family(create, kSchedulingPolicies)},
      {"describeschedulingpolicies",
       [](Api& a, const HttpRequest& r, const Json& in) {
         if (!in.contains("arns"))
           return fail(validation_error("arns: required (the policies' ARNs or names)"));
         return describe(kSchedulingPolicies, a, r, in, "arns", false);
       }},
      {"listschedulingpolicies", list_scheduling_policies},
      {"updateschedulingpolicy", with_family(update, kSchedulingPolicies)},
      {"deleteschedulingpolicy", with_family(remove, kSchedulingPolicies)},
      {"createjobqueue", with_family(create, kJobQueues)},
      {"describejobqueues",
       [](Api& a, const HttpRequest& r, const Json& in) {
         return describe(kJobQueues, a, r, in, "jobQueues", true);
       }},
      {"updatejobqueue", with_family(update, kJobQueues)},
      {"deletejobqueue", with_family(remove, kJobQueues)},
      {"createquotashare", with_family(create, kQuotaShares)},
      {"describequotashare", describe_quota_share},
      {"listquotashares", list_quota_shares},
      {"updatequotashare", with_family(update, kQuotaShares)},
      {"deletequotashare", with_family(remove, kQuotaShares)},
      {"submitservicejob", submit_service_job},
      {"describeservicejob", describe_service_job},
      {"listservicejobs", list_service_jobs},
      {"updateservicejob", update_service_job},
      {"terminateservicejob", terminate_service_job},
      {"terminateservicejobs", terminate_service_jobs},
      {"getjobqueuesnapshot", job_queue_snapshot},
  };
  return ops;
}

// AWS Batch's container-job and compute-environment calls, which gpufleet does not implement:
// answered with what to use instead rather than a bare 404.
constexpr std::string_view kNotImplemented[] = {
    "canceljob",
    "canceljobs",
    "submitjob",
    "terminatejob",
    "terminatejobs",
    "describejobs",
    "listjobs",
    "registerjobdefinition",
    "describejobdefinitions",
    "deregisterjobdefinition",
    "createcomputeenvironment",
    "describecomputeenvironments",
    "updatecomputeenvironment",
    "deletecomputeenvironment",
    "createconsumableresource",
    "describeconsumableresource",
    "updateconsumableresource",
    "deleteconsumableresource",
    "listconsumableresources",
    "listjobsbyconsumableresource",
};

}  // namespace

void register_batch(Api& api) {
  for (std::string_view name : kNotImplemented) {
    api.router().add_door("POST", "/v1/" + std::string(name), [&api, name](const HttpRequest&) {
      api.door_call("", !is_read_operation(name));
      return batch_error(error_response(validation_error(
          "gpufleet does not implement AWS Batch's " + std::string(name) +
          " (container jobs and compute environments); it implements service environments, "
          "scheduling policies, job queues, quota shares and service jobs "
          "(docs/aws-compatibility.md)")));
    });
  }
  for (const auto& entry : operations()) {
    const std::string name = entry.first;
    const Op op = entry.second;
    api.router().add_door("POST", "/v1/" + name, [&api, op, name](const HttpRequest& req) {
      api.door_call("", !is_read_operation(name));
      auto in = read_input(req);
      if (!in.ok()) return batch_error(fail(in.status()));
      return batch_error(op(api, req, *in));
    });
  }
}

}  // namespace gf::aws
