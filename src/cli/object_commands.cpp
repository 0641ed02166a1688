// kubectl-like verbs over quota objects and jobs (SPEC §4.1):
//   gpufleet apply -f FILE             POST /v1/apply (YAML/JSON, several documents, the
//                                      quota-share bundle)
//   gpufleet get KIND [NAME] [-n NS]   queues, elasticquotatrees, clusterqueues, localqueues,
//                                      resourceflavors, cohorts, workloadpriorityclasses,
//                                      service-environments, scheduling-policies, job-queues,
//                                      quota-shares, jobs
//   gpufleet delete KIND NAME [-n NS]
//   gpufleet describe job NAME|ID      why it waits, its preemptions and history
//   gpufleet job submit -f FILE | priority ID N | terminate ID [--reason R]
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>

#include "cli/app.h"
#include "cli/command_support.h"
#include "core/time.h"

namespace gf {
namespace {

struct KindInfo {
  std::string plural;     // path segment
  std::string list_path;  // GET path for the list
  std::string list_field;
  bool aws = false;       // /v1/<plural>/{name} instead of /v1/objects/<plural>/...
};

// Singular, plural and short names as kubectl accepts them.
std::optional<KindInfo> kind_info(std::string k) {
  for (char& c : k) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  auto obj = [](std::string plural) { return KindInfo{plural, "/v1/objects/" + plural, "items", false}; };
  auto aws = [](std::string plural, std::string field) { return KindInfo{plural, "/v1/" + plural, field, true}; };
  if (k == "queue" || k == "queues") return obj("queues");
  if (k == "elasticquotatree" || k == "elasticquotatrees" || k == "eqt") return obj("elasticquotatrees");
  if (k == "clusterqueue" || k == "clusterqueues" || k == "cq") return obj("clusterqueues");
  if (k == "localqueue" || k == "localqueues" || k == "lq") return obj("localqueues");
  if (k == "resourceflavor" || k == "resourceflavors" || k == "rf") return obj("resourceflavors");
  if (k == "cohort" || k == "cohorts") return obj("cohorts");
  if (k == "workloadpriorityclass" || k == "workloadpriorityclasses" || k == "wpc") return obj("workloadpriorityclasses");
  if (k == "service-environment" || k == "service-environments") return aws("service-environments", "serviceEnvironments");
  if (k == "scheduling-policy" || k == "scheduling-policies") return aws("scheduling-policies", "schedulingPolicies");
  if (k == "job-queue" || k == "job-queues" || k == "jobqueue" || k == "jobqueues") return aws("job-queues", "jobQueues");
  if (k == "quota-share" || k == "quota-shares" || k == "quotashare" || k == "quotashares") return aws("quota-shares", "quotaShares");
  if (k == "job" || k == "jobs" || k == "service-job" || k == "service-jobs") return KindInfo{"jobs", "/v1/service-jobs", "jobSummaryList", true};
  return std::nullopt;
}

std::string age(const Json& created_ms_or_iso) {
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
  const int64_t s = std::max<int64_t>(0, (client_now() - created).count() / 1000000);
  if (s < 120) return std::to_string(s) + "s";
  if (s < 7200) return std::to_string(s / 60) + "m";
  if (s < 172800) return std::to_string(s / 3600) + "h";
  return std::to_string(s / 86400) + "d";
}

const Json& meta(const Json& o) { return field(o, "metadata"); }

void print_table(const KindInfo& k, const Json& items) {
  if (k.plural == "queues") {
    Table t({"NAME", "NAMESPACE", "QUOTA-NODE", "ADMITTED", "PENDING", "MAX-JOBS"});
    for (const Json& q : items) {
      t.add_row({text_field(meta(q), "name"), text_field(meta(q), "namespace"), text_field(field(q, "spec"), "quotaNode"),
                 text_field(field(q, "status"), "admittedJobs"), text_field(field(q, "status"), "pendingJobs"),
                 text_field(field(q, "status"), "maxJobs")});
    }
    t.print(std::cout);
  } else if (k.plural == "jobs") {
    Table t({"NAME", "ID", "STATUS", "PRIORITY", "QUEUE", "SHARE", "CLUSTER", "AGE"});
    for (const Json& j : items) {
      t.add_row({text_field(j, "jobName"), text_field(j, "jobId"), text_field(j, "status"), text_field(j, "schedulingPriority"),
                 text_field(j, "jobQueue"), text_field(j, "quotaShareName"), text_field(field(j, "placement"), "cluster"),
                 age(field(j, "createdAt"))});
    }
    t.print(std::cout);
  } else if (k.plural == "job-queues") {
    Table t({"NAME", "STATE", "STATUS", "REASON", "POLICY"});
    for (const Json& q : items) {
      t.add_row({text_field(q, "jobQueueName"), text_field(q, "state"), text_field(q, "status"), text_field(q, "statusReason"),
                 text_field(q, "schedulingPolicyArn")});
    }
    t.print(std::cout);
  } else if (k.plural == "quota-shares") {
    Table t({"NAME", "JOB-QUEUE", "STRATEGY", "LIMITS", "RUNNING", "PENDING"});
    for (const Json& s : items) {
      std::string limits;
      for (const Json& l : array_field(s, "capacityLimits")) {
        limits += (limits.empty() ? "" : ",") + text_field(l, "capacityUnit") + "=" + text_field(l, "maxCapacity");
      }
      t.add_row({text_field(s, "quotaShareName"), text_field(s, "jobQueue"),
                 text_field(field(s, "resourceSharingConfiguration"), "strategy"), limits, text_field(s, "admittedJobs"),
                 text_field(s, "pendingJobs")});
    }
    t.print(std::cout);
  } else if (k.aws) {
    Table t({"NAME"});
    for (const Json& o : items) {
      std::string name = text_field(o, "serviceEnvironmentName");
      if (name.empty()) name = text_field(o, "name");
      t.add_row({name});
    }
    t.print(std::cout);
  } else {
    Table t({"NAME", "NAMESPACE", "ADMITTED", "PENDING", "AGE"});
    for (const Json& o : items) {
      t.add_row({text_field(meta(o), "name"), text_field(meta(o), "namespace"), text_field(field(o, "status"), "admittedWorkloads"),
                 text_field(field(o, "status"), "pendingWorkloads"), age(field(meta(o), "creationTimestamp"))});
    }
    t.print(std::cout);
  }
}

std::string object_path(const KindInfo& k, const std::string& name, const std::string& ns) {
  if (k.plural == "jobs") return "/v1/jobs/" + name;
  if (k.aws) return "/v1/" + k.plural + "/" + name;
  return "/v1/objects/" + k.plural + (ns.empty() ? "" : "/" + ns) + "/" + name;
}

struct GetArgs {
  std::string kind;
  std::string name;
  std::string ns;
};

int get(CommandEnv& env, const GetArgs& a) {
  auto k = kind_info(a.kind);
  if (!k) return usage_error("unknown kind \"" + a.kind + "\"; try queues, elasticquotatrees, clusterqueues, localqueues, "
                             "resourceflavors, cohorts, workloadpriorityclasses, job-queues, quota-shares, "
                             "service-environments, scheduling-policies or jobs");
  if (!a.name.empty()) {
    auto one = env.client.get(object_path(*k, a.name, a.ns));
    if (!one.ok()) return print_error(one.status());
    if (print_if_structured(env, *one)) return 0;
    print_table(*k, Json::array({*one}));
    return 0;
  }
  std::string path = k->list_path;
  if (!a.ns.empty() && !k->aws) path += QueryString().add("namespace", a.ns).str();
  auto list = env.client.get(path);
  if (!list.ok()) return print_error(list.status());
  if (print_if_structured(env, *list)) return 0;
  print_table(*k, array_field(*list, k->list_field));
  return 0;
}

int apply_file(CommandEnv& env, const std::string& file) {
  auto text = read_input_file(file);
  if (!text.ok()) return usage_error(text.status().message());
  auto answer = env.client.post("/v1/apply", *text, content_type_for(file));
  if (!answer.ok()) return print_error(answer.status());
  if (print_if_structured(env, *answer)) return 0;
  for (const Json& item : array_field(*answer, "items")) {
    std::string kind = text_field(item, "kind");
    for (char& c : kind) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    std::cout << kind << "/" << text_field(item, "name") << " " << text_field(item, "result") << "\n";
    for (const Json& w : array_field(item, "warnings")) std::cerr << "warning: " << text_of(w) << "\n";
  }
  return 0;
}

int describe_job(CommandEnv& env, const std::string& name) {
  auto j = env.client.get("/v1/jobs/" + name);
  if (!j.ok()) return print_error(j.status());
  if (print_if_structured(env, *j)) return 0;
  const Json& pl = field(*j, "placement");
  std::string where = text_field(*j, "jobQueue");
  if (!text_field(*j, "quotaShareName").empty()) where += " / share " + text_field(*j, "quotaShareName");
  if (!text_field(*j, "localQueue").empty()) where = "local queue " + text_field(*j, "localQueue");
  print_fields(std::cout, {{"Name", text_field(*j, "jobName")},
                           {"Id", text_field(*j, "jobId")},
                           {"Kind", text_field(*j, "kind")},
                           {"Queue", where},
                           {"Priority", text_field(*j, "schedulingPriority")},
                           {"Status", text_field(*j, "status")},
                           {"Reason", text_field(*j, "statusReason")},
                           {"Cluster", text_field(pl, "cluster")},
                           {"Preemptions", text_field(field(*j, "preemptionSummary"), "preemptedAttemptCount")}});
  const Json& why = field(*j, "explanation");
  if (why.is_object() && text_field(why, "kind") != "NotWaiting") {
    std::cout << "\nWaiting:\n";
    print_fields(std::cout, {{"  Blocked by", text_field(why, "kind")},
                             {"  Quota node", text_field(why, "quotaNode")},
                             {"  Limit", text_field(why, "limit")},
                             {"  Resource", text_field(why, "resource")},
                             {"  Requested", why.contains("requested") ? text_field(why, "requested") : ""},
                             {"  Available", why.contains("available") ? text_field(why, "available") : ""},
                             {"  Short by", why.contains("shortfall") ? text_field(why, "shortfall") : ""}});
  }
  const Json& pods = array_field(pl, "nodes");
  if (!pods.empty()) {
    std::cout << "\nPods:\n";
    Table t({"POD", "NODE"});
    for (size_t i = 0; i < pods.size(); ++i) t.add_row({std::to_string(i), text_of(pods[i])});
    t.print(std::cout);
  }
  const Json& pre = array_field(field(*j, "preemptionSummary"), "recentPreemptedAttempts");
  if (!pre.empty()) {
    std::cout << "\nPreemptions:\n";
    Table t({"RULE", "BY", "REASON"});
    for (const Json& p : pre) t.add_row({text_field(p, "rule"), text_field(p, "preemptedBy"), text_field(p, "statusReason")});
    t.print(std::cout);
  }
  std::cout << "\nEvents:\n";
  Table t({"TIME", "REASON", "MESSAGE"});
  for (const Json& e : array_field(*j, "events")) t.add_row({text_field(e, "time"), text_field(e, "reason"), text_field(e, "message")});
  t.print(std::cout);
  return 0;
}

}  // namespace

void register_object_commands(CLI::App& app, CommandContext& ctx) {
  auto file = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("apply", "create or update quota objects from YAML or JSON (several documents, or the quota-share bundle)");
  cmd->add_option("-f,--file", *file, "the file to apply (- reads stdin)")->required();
  run_with_client(cmd, ctx, [file](CommandEnv& env) { return apply_file(env, *file); });

  auto g = std::make_shared<GetArgs>();
  cmd = app.add_subcommand("get", "list objects of a kind, or show one (queues, clusterqueues, quota-shares, jobs, ...)");
  cmd->add_option("kind", g->kind, "the kind, e.g. queue, clusterqueue, quota-share, job")->required();
  cmd->add_option("name", g->name, "one object's name");
  cmd->add_option("-n,--namespace", g->ns, "namespace (namespaced kinds)");
  run_with_client(cmd, ctx, [g](CommandEnv& env) { return get(env, *g); });

  auto d = std::make_shared<GetArgs>();
  cmd = app.add_subcommand("delete", "delete a quota object");
  cmd->add_option("kind", d->kind, "the kind")->required();
  cmd->add_option("name", d->name, "the object's name")->required();
  cmd->add_option("-n,--namespace", d->ns, "namespace (namespaced kinds)");
  run_with_client(cmd, ctx, [d](CommandEnv& env) {
    auto k = kind_info(d->kind);
    if (!k || k->plural == "jobs" || k->plural == "queues") return usage_error("cannot delete kind \"" + d->kind + "\"");
    auto r = env.client.del(object_path(*k, d->name, d->ns));
    if (!r.ok()) return print_error(r.status());
    if (print_if_structured(env, *r)) return 0;
    std::cout << d->kind << "/" << d->name << " deleted\n";
    return 0;
  });

  auto describe = app.add_subcommand("describe", "explain one object in detail");
  describe->require_subcommand(1);
  describe->fallthrough();
  auto job_name = std::make_shared<std::string>();
  cmd = describe->add_subcommand("job", "a job: why it waits (quota node or placement, by how much), its preemptions and history");
  cmd->add_option("name", *job_name, "job name or id")->required();
  run_with_client(cmd, ctx, [job_name](CommandEnv& env) { return describe_job(env, *job_name); });

  auto job = app.add_subcommand("job", "submit and steer service jobs (AWS Batch SubmitServiceJob shape)");
  job->require_subcommand(1);
  job->fallthrough();
  auto job_file = std::make_shared<std::string>();
  cmd = job->add_subcommand("submit", "submit a service job from a JSON file");
  cmd->add_option("-f,--file", *job_file, "the SubmitServiceJob body (- reads stdin)")->required();
  run_with_client(cmd, ctx, [job_file](CommandEnv& env) {
    auto text = read_input_file(*job_file);
    if (!text.ok()) return usage_error(text.status().message());
    auto r = env.client.post("/v1/service-jobs", *text);
    if (!r.ok()) return print_error(r.status());
    if (print_if_structured(env, *r)) return 0;
    std::cout << text_field(*r, "jobName") << " submitted: " << text_field(*r, "jobId") << "\n";
    return 0;
  });
  auto prio = std::make_shared<std::pair<std::string, int>>();
  cmd = job->add_subcommand("priority", "change a job's schedulingPriority (may preempt within its share)");
  cmd->add_option("job", prio->first, "job name or id")->required();
  cmd->add_option("priority", prio->second, "0-9999")->required();
  run_with_client(cmd, ctx, [prio](CommandEnv& env) {
    auto j = env.client.get("/v1/jobs/" + prio->first);
    if (!j.ok()) return print_error(j.status());
    auto r = env.client.patch("/v1/service-jobs/" + text_field(*j, "jobId"), Json{{"schedulingPriority", prio->second}}.dump());
    if (!r.ok()) return print_error(r.status());
    if (print_if_structured(env, *r)) return 0;
    std::cout << prio->first << " priority " << prio->second << "\n";
    return 0;
  });
  auto term = std::make_shared<std::pair<std::string, std::string>>();
  cmd = job->add_subcommand("terminate", "terminate a job (it ends FAILED)");
  cmd->add_option("job", term->first, "job name or id")->required();
  cmd->add_option("--reason", term->second, "why");
  run_with_client(cmd, ctx, [term](CommandEnv& env) {
    auto j = env.client.get("/v1/jobs/" + term->first);
    if (!j.ok()) return print_error(j.status());
    Json body = Json::object();
    if (!term->second.empty()) body["reason"] = term->second;
    auto r = env.client.post("/v1/service-jobs/" + text_field(*j, "jobId") + "/terminate", body.dump());
    if (!r.ok()) return print_error(r.status());
    if (print_if_structured(env, *r)) return 0;
    std::cout << term->first << " terminated\n";
    return 0;
  });
}

}  // namespace gf
