// Service jobs (docs/workloads.md): validation of a SubmitServiceJob body against the quota
// objects it names, and the job record it becomes.
#include "workload/service_job.h"

#include <fmt/format.h>

#include <algorithm>

#include "model/aws_tags.h"
#include "model/catalog.h"
#include "quota/frontends/quota_objects.h"

namespace gf::workload {
namespace {

constexpr std::string_view kQueueNameTag = "kueue.x-k8s.io/queue-name";
constexpr std::string_view kNamespaceTag = "kueue.x-k8s.io/namespace";
constexpr std::string_view kDurationTag = "gpufleet.io/duration";
constexpr std::string_view kPriorityClassTag = "kueue.x-k8s.io/priority-class";

const frontend::QuotaObject* find_object(const frontend::ObjectMap* objects, frontend::Kind kind,
                                         const std::string& name, const std::string& ns = "") {
  if (objects == nullptr) return nullptr;
  auto it = objects->find(frontend::ObjectKey{kind, ns, name});
  return it == objects->end() ? nullptr : &it->second;
}

// jobName (the characters AWS Batch allows in a name) and serviceJobType (training only).
void read_name_and_type(ObjectReader& r, Job& job) {
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
}

// preemptionConfiguration: how many preemptions the job survives before it is terminated.
void read_preemption(ObjectReader& r, Job& job) {
  if (const Json* pc = r.optional_object("preemptionConfiguration")) {
    ObjectReader p(*pc, "preemptionConfiguration");
    if (auto n = p.optional_int("preemptionRetriesBeforeTermination")) {
      if (*n < 0) p.fail("preemptionRetriesBeforeTermination", "must be >= 0");
      job.max_preemptions = static_cast<int32_t>(*n);
    }
    r.fail_status(p.status());
  }
}

// The SageMaker payload: an object, or the JSON text of one (AWS sends a string).
Json read_payload(ObjectReader& r) {
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
  return payload;
}

// The payload's ResourceConfig: a catalog instance type and 1-10000 instances of it.
void read_resource_config(ObjectReader& r, const Json& payload, std::string& instance_type,
                          int64_t& count) {
  ObjectReader p(payload, "serviceRequestPayload");
  if (const Json* rc = p.required_value("ResourceConfig")) {
    ObjectReader c(*rc, "serviceRequestPayload.ResourceConfig");
    instance_type = c.required_string("InstanceType");
    count = c.optional_int("InstanceCount").value_or(1);
    if (c.ok() && Catalog::builtin().find(instance_type) == nullptr)
      c.fail("InstanceType", "unknown instance type \"" + instance_type + "\"");
    if (c.ok() && (count < 1 || count > 10000))
      c.fail("InstanceCount", fmt::format("must be between 1 and 10000, got {}", count));
    p.fail_status(c.status());
  }
  r.fail_status(p.status());
}

// The Kueue route: the local queue the tags name (namespace "default" unless tagged) must exist.
Status bind_local_queue(const std::string& local_queue,
                        const std::map<std::string, std::string>& tags,
                        const frontend::ObjectMap* quota_objects, Job& job) {
  job.local_queue = local_queue;
  auto ns = tags.find(std::string(kNamespaceTag));
  job.ns = ns == tags.end() ? "default" : ns->second;
  if (!find_object(quota_objects, frontend::Kind::kLocalQueue, job.local_queue, job.ns)) {
    return validation_error("tags." + std::string(kQueueNameTag) + ": local queue " + job.ns + "/" +
                            job.local_queue + " does not exist");
  }
  return ok_status();
}

// The quota share must cap `instance_type`: the error lists the units it does cap.
Status check_share_covers(const frontend::QuotaObject& share, const std::string& instance_type,
                          const Job& job) {
  std::string units;
  bool covered = false;
  for (const Json& lim : share.doc.value("capacityLimits", Json::array())) {
    const std::string unit = lim.value("capacityUnit", "");
    units += (units.empty() ? "" : ", ") + unit;
    covered |= unit == instance_type;
  }
  if (!covered) {
    return validation_error("serviceRequestPayload.ResourceConfig.InstanceType: " + instance_type +
                            " is not among the capacity limits of quota share " + job.quota_share +
                            " (" + units + ")");
  }
  return ok_status();
}

// The AWS Batch route: an existing, enabled and valid job queue, and a quota share of it that
// caps the instance type.
Status bind_job_queue(const std::optional<std::string>& job_queue,
                      const std::optional<std::string>& share, const std::string& instance_type,
                      const frontend::ObjectMap* quota_objects, Job& job) {
  if (!job_queue)
    return validation_error("jobQueue: required (or the tag " + std::string(kQueueNameTag) + ")");
  job.job_queue = *job_queue;
  // An ARN names the queue by its last path segment.
  if (auto slash = job.job_queue.rfind('/'); slash != std::string::npos)
    job.job_queue = job.job_queue.substr(slash + 1);
  if (!find_object(quota_objects, frontend::Kind::kJobQueue, job.job_queue)) {
    return validation_error("jobQueue: job queue \"" + job.job_queue + "\" does not exist");
  }
  const auto st = frontend::job_queue_status(*quota_objects, job.job_queue);
  if (st && (st->status != "VALID" || st->state != "ENABLED")) {
    return validation_error("jobQueue: job queue \"" + job.job_queue + "\" is " + st->state + "/" +
                            st->status + " (" + st->status_reason + ")");
  }
  if (!share) return validation_error("quotaShareName: required for a quota-managed job queue");
  job.quota_share = *share;
  const frontend::QuotaObject* qs =
      find_object(quota_objects, frontend::Kind::kQuotaShare, job.quota_share);
  if (qs == nullptr || qs->doc.value("jobQueue", "") != job.job_queue) {
    return validation_error("quotaShareName: quota share \"" + job.quota_share +
                            "\" does not exist in job queue \"" + job.job_queue + "\"");
  }
  return check_share_covers(*qs, instance_type, job);
}

// The priority-class tag: an existing WorkloadPriorityClass, exclusive with schedulingPriority.
Status apply_priority_class(const std::map<std::string, std::string>& tags,
                            const std::optional<int64_t>& priority,
                            const frontend::ObjectMap* quota_objects, Job& job) {
  if (auto pc = tags.find(std::string(kPriorityClassTag)); pc != tags.end()) {
    const frontend::QuotaObject* cls =
        find_object(quota_objects, frontend::Kind::kWorkloadPriorityClass, pc->second);
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
  return ok_status();
}

// The duration tag, the simulated run time.
Status apply_duration_tag(const std::map<std::string, std::string>& tags, Job& job) {
  if (auto d = tags.find(std::string(kDurationTag)); d != tags.end()) {
    auto dur = parse_duration(d->second);
    if (!dur.ok())
      return validation_error("tags." + std::string(kDurationTag) + ": " + dur.status().message());
    job.duration = *dur;
  }
  return ok_status();
}

}  // namespace

Result<Job> parse_service_job(const Json& body, const frontend::ObjectMap* quota_objects) {
  ObjectReader r(body, "");
  Job job;
  job.kind = "ServiceJob";
  job.request = body;
  read_name_and_type(r, job);
  const std::map<std::string, std::string> tags = read_aws_tags(r, "tags");
  auto job_queue = r.optional_string("jobQueue");
  auto share = r.optional_string("quotaShareName");
  const auto priority = r.optional_int("schedulingPriority");
  if (priority && (*priority < 0 || *priority > 9999))
    r.fail("schedulingPriority", fmt::format("must be between 0 and 9999, got {}", *priority));
  job.priority = static_cast<int32_t>(priority.value_or(0));
  read_preemption(r, job);
  (void)r.optional_string("clientToken");
  // AWS Batch's {attemptDurationSeconds}: checked, not enforced (docs/aws-compatibility.md).
  if (const Json* tc = r.optional_object("timeoutConfig")) {
    ObjectReader t(*tc, "timeoutConfig");
    if (auto secs = t.optional_int("attemptDurationSeconds"); secs && *secs < 1)
      t.fail("attemptDurationSeconds", fmt::format("must be at least 1, got {}", *secs));
    r.fail_status(t.status());
  }
  (void)r.optional_value("retryStrategy");
  const Json payload = read_payload(r);
  std::string instance_type;
  int64_t count = 1;
  if (r.ok()) read_resource_config(r, payload, instance_type, count);
  if (!r.ok()) return r.status();

  if (auto lq = tags.find(std::string(kQueueNameTag)); lq != tags.end()) {
    GF_RETURN_IF_ERROR(bind_local_queue(lq->second, tags, quota_objects, job));
  } else {
    GF_RETURN_IF_ERROR(bind_job_queue(job_queue, share, instance_type, quota_objects, job));
  }
  GF_RETURN_IF_ERROR(apply_priority_class(tags, priority, quota_objects, job));
  GF_RETURN_IF_ERROR(apply_duration_tag(tags, job));
  job.pod_sets.push_back(
      JobPodSet{"node", static_cast<int32_t>(count), Json::object(), instance_type, true});
  return job;
}

}  // namespace gf::workload
