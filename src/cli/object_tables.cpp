#include "cli/object_tables.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "cli/app.h"
#include "core/clock.h"

namespace gf::object_tables {

// Singular, plural and short names as kubectl accepts them.
std::optional<KindInfo> kind_info(std::string k) {
  for (char& c : k) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  auto obj = [](std::string plural) {
    return KindInfo{plural, "/v1/objects/" + plural, "items", false};
  };
  auto aws = [](std::string plural, std::string field) {
    return KindInfo{plural, "/v1/" + plural, field, true};
  };
  if (k == "queue" || k == "queues") return obj("queues");
  if (k == "elasticquotatree" || k == "elasticquotatrees" || k == "eqt")
    return obj("elasticquotatrees");
  if (k == "clusterqueue" || k == "clusterqueues" || k == "cq") return obj("clusterqueues");
  if (k == "localqueue" || k == "localqueues" || k == "lq") return obj("localqueues");
  if (k == "resourceflavor" || k == "resourceflavors" || k == "rf") return obj("resourceflavors");
  if (k == "cohort" || k == "cohorts") return obj("cohorts");
  if (k == "workloadpriorityclass" || k == "workloadpriorityclasses" || k == "wpc")
    return obj("workloadpriorityclasses");
  if (k == "service-environment" || k == "service-environments")
    return aws("service-environments", "serviceEnvironments");
  if (k == "scheduling-policy" || k == "scheduling-policies")
    return aws("scheduling-policies", "schedulingPolicies");
  if (k == "job-queue" || k == "job-queues" || k == "jobqueue" || k == "jobqueues")
    return aws("job-queues", "jobQueues");
  if (k == "quota-share" || k == "quota-shares" || k == "quotashare" || k == "quotashares")
    return aws("quota-shares", "quotaShares");
  if (k == "job" || k == "jobs" || k == "service-job" || k == "service-jobs")
    return KindInfo{"jobs", "/v1/service-jobs", "jobSummaryList", true};
  if (k == "workload" || k == "workloads" || k == "wl")  // Kueue's view of the same jobs
    return KindInfo{"workloads", "/v1/service-jobs", "jobSummaryList", true};
  if (k == "pytorchjob" || k == "pytorchjobs") return obj("pytorchjobs");
  if (k == "propagationpolicy" || k == "propagationpolicies" || k == "pp")
    return obj("propagationpolicies");
  if (k == "pod" || k == "pods" || k == "po") return obj("pods");
  return std::nullopt;
}

// AGE from a creation time (epoch milliseconds or ISO 8601) to the server's now.
std::string age(const Json& created_ms_or_iso, Time now) {
  Time created{};
  if (created_ms_or_iso.is_number_integer()) {
    created = from_micros(created_ms_or_iso.get<int64_t>() * 1000);
  } else if (created_ms_or_iso.is_string()) {
    auto t = parse_iso8601(created_ms_or_iso.get<std::string>());
    if (!t.ok()) return "";
    created = *t;
  } else {
    return "";
  }
  return format_age(created, now);
}

const Json& meta(const Json& o) { return field(o, "metadata"); }

Table queue_table(const Json& items, Time) {
  Table t({"NAME", "NAMESPACE", "QUOTA-NODE", "ADMITTED", "PENDING", "MAX-JOBS"});
  for (const Json& q : items) {
    t.add_row({text_field(meta(q), "name"), text_field(meta(q), "namespace"),
               text_field(field(q, "spec"), "quotaNode"),
               text_field(field(q, "status"), "admittedJobs"),
               text_field(field(q, "status"), "pendingJobs"),
               compact_count(text_field(field(q, "status"), "maxJobs"))});
  }
  return t;
}

// Kueue's Workload columns: the queue a job names, whether quota admitted it and whether it
// finished; then where it runs.
Table workloads_view(const Json& items, Time now) {
  Table t({"NAME", "KIND", "QUEUE", "ADMITTED", "FINISHED", "STATUS", "CLUSTER", "AGE",
           wide_column("ID")});
  for (const Json& j : items) {
    std::string queue = text_field(j, "localQueue");
    if (queue.empty()) queue = text_field(j, "jobQueue");
    if (queue.empty() && !text_field(j, "namespace").empty())
      queue = "namespace " + text_field(j, "namespace");
    if (!text_field(j, "quotaShareName").empty()) queue += "/" + text_field(j, "quotaShareName");
    const std::string status = text_field(j, "status");
    const bool finished = status == "SUCCEEDED" || status == "FAILED";
    const bool admitted = !finished && !text_field(field(j, "placement"), "cluster").empty();
    const std::string kind = text_field(j, "kind");
    t.add_row({text_field(j, "jobName"), kind.empty() ? "ServiceJob" : kind,
               queue.empty() ? "-" : queue, admitted ? "True" : "False",
               finished ? "True" : "False", status, text_field(field(j, "placement"), "cluster"),
               age(field(j, "createdAt"), now), text_field(j, "jobId")});
  }
  return t;
}

Table jobs_table(const Json& items, Time now) {
  Table t({"NAME", "ID", "STATUS", "PRIORITY", "QUEUE", "SHARE", "CLUSTER", "AGE",
           text_column("REASON")});
  for (const Json& j : items) {
    t.add_row({text_field(j, "jobName"), text_field(j, "jobId"), text_field(j, "status"),
               text_field(j, "schedulingPriority"), text_field(j, "jobQueue"),
               text_field(j, "quotaShareName"), text_field(field(j, "placement"), "cluster"),
               age(field(j, "createdAt"), now), text_field(j, "statusReason")});
  }
  return t;
}

Table job_queue_table(const Json& items, Time) {
  Table t({"NAME", "STATE", "STATUS", text_column("REASON"), wide_column("POLICY")});
  for (const Json& q : items) {
    t.add_row({text_field(q, "jobQueueName"), text_field(q, "state"), text_field(q, "status"),
               text_field(q, "statusReason"), text_field(q, "schedulingPolicyArn")});
  }
  return t;
}

Table quota_share_table(const Json& items, Time) {
  Table t({"NAME", "JOB-QUEUE", "STRATEGY", "LIMITS", "RUNNING", "PENDING"});
  for (const Json& s : items) {
    std::string limits;
    for (const Json& l : array_field(s, "capacityLimits")) {
      limits += (limits.empty() ? "" : ",") + text_field(l, "capacityUnit") + "=" +
                text_field(l, "maxCapacity");
    }
    t.add_row({text_field(s, "quotaShareName"), text_field(s, "jobQueue"),
               text_field(field(s, "resourceSharingConfiguration"), "strategy"), limits,
               text_field(s, "admittedJobs"), text_field(s, "pendingJobs")});
  }
  return t;
}

// The other AWS Batch kinds (service environments, scheduling policies): their names.
Table aws_name_table(const Json& items, Time) {
  Table t({"NAME"});
  for (const Json& o : items) {
    std::string name = text_field(o, "serviceEnvironmentName");
    if (name.empty()) name = text_field(o, "name");
    t.add_row({name});
  }
  return t;
}

// Kueue's and the ElasticQuotaTree's objects.
Table k8s_object_table(const Json& items, Time now) {
  Table t({"NAME", "NAMESPACE", "ADMITTED", "PENDING", "AGE"});
  for (const Json& o : items) {
    t.add_row({text_field(meta(o), "name"), text_field(meta(o), "namespace"),
               text_field(field(o, "status"), "admittedWorkloads"),
               text_field(field(o, "status"), "pendingWorkloads"),
               age(field(meta(o), "creationTimestamp"), now)});
  }
  return t;
}

// The table of quota objects and jobs, by kind.
Table object_table(const KindInfo& k, const Json& items, Time now) {
  using Builder = Table (*)(const Json&, Time);
  static const std::map<std::string, Builder, std::less<>> kTables = {
      {"queues", &queue_table},
      {"workloads", &workloads_view},
      {"jobs", &jobs_table},
      {"job-queues", &job_queue_table},
      {"quota-shares", &quota_share_table}};
  if (auto it = kTables.find(k.plural); it != kTables.end()) return it->second(items, now);
  return k.aws ? aws_name_table(items, now) : k8s_object_table(items, now);
}

std::string object_path(const KindInfo& k, const std::string& name, const std::string& ns) {
  if (k.plural == "jobs" || k.plural == "workloads") return "/v1/jobs/" + name;
  if (k.aws) return "/v1/" + k.plural + "/" + name;
  return "/v1/objects/" + k.plural + (ns.empty() ? "" : "/" + ns) + "/" + name;
}

// kubectl's STATUS for a pod phase.
std::string pod_status(const Json& pod) {
  const std::string phase = text_field(field(pod, "status"), "phase");
  if (phase == "Succeeded") return "Completed";
  if (phase == "Failed") return "Error";
  return phase;
}

// A workload row's first cells: NAMESPACE (with -A), then NAME.
std::vector<std::string> row_start(const Json& o, const GetArgs& a) {
  std::vector<std::string> row;
  if (a.all_namespaces) row.push_back(text_field(meta(o), "namespace"));
  row.push_back(text_field(meta(o), "name"));
  return row;
}

std::vector<Column> head_start(const GetArgs& a) {
  std::vector<Column> head;
  if (a.all_namespaces) head.emplace_back("NAMESPACE");
  return head;
}

// `get pytorchjob` NAME STATE AGE; with -M (or -m CLUSTER) NAME CLUSTER STATE AGE ADOPTION, one
// row per member-cluster copy.
Table pytorchjob_table(const Json& items, const GetArgs& a, Time now) {
  std::vector<Column> head = head_start(a);
  if (!a.members && a.member_cluster.empty()) {
    for (const char* h : {"NAME", "STATE", "AGE"}) head.emplace_back(h);
    Table t(std::move(head));
    for (const Json& j : items) {
      std::vector<std::string> row = row_start(j, a);
      row.insert(row.end(), {text_field(field(j, "status"), "state"),
                             age(field(meta(j), "creationTimestamp"), now)});
      t.add_row(std::move(row));
    }
    return t;
  }
  for (const char* h : {"NAME", "CLUSTER", "STATE", "AGE", "ADOPTION"}) head.emplace_back(h);
  Table t(std::move(head));
  for (const Json& j : items) {
    if (!a.member_cluster.empty()) {  // one member's copy
      std::vector<std::string> row = row_start(j, a);
      row.insert(row.end(), {a.member_cluster, text_field(field(j, "status"), "state"),
                             age(field(meta(j), "creationTimestamp"), now), "Y"});
      t.add_row(std::move(row));
      continue;
    }
    for (const Json& m : array_field(field(j, "status"), "members")) {
      std::vector<std::string> row = row_start(j, a);
      row.insert(row.end(), {text_field(m, "cluster"), text_field(m, "state"),
                             age(field(m, "since"), now), text_field(m, "adoption")});
      t.add_row(std::move(row));
    }
  }
  return t;
}

// `get pod` NAME [CLUSTER] READY STATUS RESTARTS AGE (and NODE with -o wide).
Table pod_table(const Json& items, const GetArgs& a, Time now) {
  std::vector<Column> head = head_start(a);
  head.emplace_back("NAME");
  if (a.members) head.emplace_back("CLUSTER");
  for (const char* h : {"READY", "STATUS", "RESTARTS", "AGE"}) head.emplace_back(h);
  head.push_back(wide_column("NODE"));
  Table t(std::move(head));
  for (const Json& p : items) {
    if (!a.member_cluster.empty() &&
        text_field(field(p, "spec"), "clusterName") != a.member_cluster)
      continue;
    std::vector<std::string> row = row_start(p, a);
    if (a.members) row.push_back(text_field(field(p, "spec"), "clusterName"));
    const bool ready = field(field(p, "status"), "ready").is_boolean() &&
                       field(field(p, "status"), "ready").get<bool>();
    row.push_back(ready ? "1/1" : "0/1");
    row.push_back(pod_status(p));
    row.push_back(text_field(field(p, "status"), "restartCount"));
    row.push_back(age(field(meta(p), "creationTimestamp"), now));
    row.push_back(text_field(field(p, "spec"), "nodeName"));
    t.add_row(std::move(row));
  }
  return t;
}

// `get propagationpolicy` NAME NAMESPACE SELECTED AGE.
Table policy_table(const Json& items, const GetArgs& a, Time now) {
  std::vector<Column> head = head_start(a);
  for (const char* h : {"NAME", "NAMESPACE", "SELECTED", "AGE"}) head.emplace_back(h);
  if (a.all_namespaces) head.erase(head.begin() + 2);  // NAMESPACE is already first
  Table t(std::move(head));
  for (const Json& p : items) {
    std::string selected;
    for (const Json& n : array_field(field(p, "status"), "selected"))
      selected += (selected.empty() ? "" : ",") + text_of(n);
    std::vector<std::string> row = row_start(p, a);
    if (!a.all_namespaces) row.push_back(text_field(meta(p), "namespace"));
    row.insert(row.end(), {selected, age(field(meta(p), "creationTimestamp"), now)});
    t.add_row(std::move(row));
  }
  return t;
}

// The workload views of the seed walkthrough (docs/workloads.md), as kubectl shows them.
Table workload_table(const KindInfo& k, const Json& items, const GetArgs& a, Time now) {
  if (k.plural == "pytorchjobs") return pytorchjob_table(items, a, now);
  if (k.plural == "pods") return pod_table(items, a, now);
  return policy_table(items, a, now);
}

bool is_workload(const KindInfo& k) {
  return k.plural == "pytorchjobs" || k.plural == "pods" || k.plural == "propagationpolicies";
}

// The labels `-l` is matched against: metadata.labels, or a service job's tags.
const Json& labels_of(const Json& item) {
  const Json& l = field(meta(item), "labels");
  return l.is_object() ? l : field(item, "tags");
}

Json select_items(const Json& items, const LabelSelector& selector) {
  if (selector.empty()) return items;
  Json kept = Json::array();
  for (const Json& i : items) {
    if (selector.matches(labels_of(i))) kept.push_back(i);
  }
  return kept;
}

Table kind_table(const KindInfo& k, const Json& items, const GetArgs& a, Time now) {
  return is_workload(k) ? workload_table(k, items, a, now) : object_table(k, items, now);
}

}  // namespace gf::object_tables
