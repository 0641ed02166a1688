// kubectl-like verbs over workloads, quota objects and jobs (docs/workloads.md):
//   gpufleet apply -f FILE             POST /v1/apply (YAML/JSON, several documents, the
//                                      quota-share bundle)
//   gpufleet get KIND [NAME] [-n NS]   pytorchjobs, pods, propagationpolicies, queues,
//                                      elasticquotatrees, clusterqueues, localqueues,
//                                      resourceflavors, cohorts, workloadpriorityclasses,
//                                      service-environments, scheduling-policies, job-queues,
//                                      quota-shares, jobs; -M / -m CLUSTER: member copies
//   gpufleet delete KIND NAME [-n NS]
//   gpufleet describe job NAME|ID      why it waits, its preemptions and history
//   gpufleet describe pytorchjob NAME  state, member clusters, events (ScheduleBindingSucceed)
//   gpufleet job submit -f FILE | priority ID N | terminate ID [--reason R]
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <set>

#include "cli/app.h"
#include "cli/command_support.h"
#include "cli/object_tables.h"
#include "core/clock.h"
#include "core/label_selector.h"
#include "core/time.h"

namespace gf {
namespace {

using namespace object_tables;  // NOLINT: the kinds and tables of `get`

constexpr char kUnknownKind[] =
    "; try pytorchjobs, pods, propagationpolicies, queues, elasticquotatrees, clusterqueues, "
    "localqueues, resourceflavors, cohorts, workloadpriorityclasses, job-queues, quota-shares, "
    "service-environments, scheduling-policies, jobs or workloads";

// One read of what `get` shows: the object, or the list (filtered by -l); the answer as the API
// gave it for -o json|yaml (a list filtered by -l keeps only the matching items).
Result<Json> fetch(CommandEnv& env, const KindInfo& k, const GetArgs& a,
                   const LabelSelector& selector) {
  if (!a.name.empty()) {
    std::string path = object_path(k, a.name, is_workload(k) && a.ns.empty() ? "default" : a.ns);
    if (!a.member_cluster.empty() && k.plural == "pytorchjobs")
      path += QueryString().add("cluster", a.member_cluster).str();
    GF_ASSIGN_OR_RETURN(Json one, env.client.get(path));
    return Json{{k.list_field, Json::array({std::move(one)})}, {"__one", true}};
  }
  std::string path = k.list_path;
  if (!a.ns.empty() && !a.all_namespaces && !k.aws)
    path += QueryString().add("namespace", a.ns).str();
  GF_ASSIGN_OR_RETURN(Json list, env.client.get(path));
  if (!selector.empty())
    list[k.list_field] = select_items(array_field(list, k.list_field), selector);
  return list;
}

// A row as --watch compares it: without its AGE, which changes on every poll.
std::vector<std::string> watched(std::vector<std::string> row,
                                 const std::vector<std::string>& head) {
  for (size_t i = 0; i < head.size() && i < row.size(); ++i) {
    if (head[i] == "AGE") row[i].clear();
  }
  return row;
}

// -w: the list, then every row that is new or changed, polled every two seconds, aligned on the
// first table's columns (kubectl's habit). Ends on Ctrl-C or an error.
int watch(CommandEnv& env, const KindInfo& k, const GetArgs& a, const LabelSelector& selector) {
  std::set<std::vector<std::string>> shown;
  std::vector<size_t> widths;
  bool first = true;
  while (true) {
    auto answer = fetch(env, k, a, selector);
    if (!answer.ok()) return print_error(answer.status());
    const Json& items = array_field(*answer, k.list_field);
    if (env.structured()) {
      for (const Json& i : items) {
        if (shown.insert({safe_dump(i)}).second) print_if_structured(env, i);
      }
    } else {
      const Table t = kind_table(k, items, a, server_now(env.client));
      const auto rows = t.visible(table_style());
      if (first) {
        t.print(std::cout);
        for (const auto& r : rows) {
          widths.resize(std::max(widths.size(), r.size()));
          for (size_t i = 0; i < r.size(); ++i) widths[i] = std::max(widths[i], r[i].size() + 1);
        }
        for (size_t i = 1; i < rows.size(); ++i) shown.insert(watched(rows[i], rows[0]));
      } else {
        for (size_t i = 1; i < rows.size(); ++i) {
          if (shown.insert(watched(rows[i], rows[0])).second)
            std::cout << aligned_row(rows[i], widths) << "\n";
        }
      }
      std::cout << std::flush;
    }
    first = false;
    wall_sleep(seconds(2));
  }
}

int get(CommandEnv& env, const GetArgs& a) {
  auto k = kind_info(a.kind);
  if (!k) return usage_error("unknown kind \"" + a.kind + "\"" + kUnknownKind);
  auto selector = LabelSelector::parse(a.selector);
  if (!selector.ok()) return usage_error(selector.status().message());
  if (a.watch) return watch(env, *k, a, *selector);
  auto answer = fetch(env, *k, a, *selector);
  if (!answer.ok()) return print_error(answer.status());
  const bool one = answer->contains("__one");
  if (one) {
    if (print_if_structured(env, array_field(*answer, k->list_field)[0])) return 0;
  } else if (print_if_structured(env, *answer)) {
    return 0;
  }
  kind_table(*k, array_field(*answer, k->list_field), a, server_now(env.client)).print(std::cout);
  return 0;
}

struct ApplyArgs {
  std::vector<std::string> files;  // -f, repeatable as kubectl's
  std::string dry_run;             // "" or "server"
};

// "?dryRun=All" for --dry-run=server (the server validates and answers, and changes nothing).
std::string dry_run_query(const std::string& dry_run) {
  return dry_run == "server" ? "?dryRun=All" : "";
}
std::string dry_run_note(const std::string& dry_run) {
  return dry_run == "server" ? " (server dry run)" : "";
}

int apply_one(CommandEnv& env, const std::string& file, const std::string& dry_run) {
  auto text = read_input_file(file);
  if (!text.ok()) return usage_error(text.status().message());
  auto answer =
      env.client.post("/v1/apply" + dry_run_query(dry_run), *text, content_type_for(file));
  if (!answer.ok()) return print_error(answer.status().with_prefix(file));
  if (print_if_structured(env, *answer)) return 0;
  for (const Json& item : array_field(*answer, "items")) {
    std::string kind = text_field(item, "kind");
    for (char& c : kind) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    std::cout << kind << "/" << text_field(item, "name") << " " << text_field(item, "result")
              << dry_run_note(dry_run) << "\n";
    for (const Json& w : array_field(item, "warnings"))
      std::cerr << "warning: " << text_of(w) << "\n";
  }
  return 0;
}

// The files `-f` names: the file itself, or a directory's .yaml, .yml and .json files in name
// order (kubectl apply -f DIR; not recursive).
Result<std::vector<std::string>> input_files(const std::string& path) {
  std::error_code ec;
  if (path == "-" || !std::filesystem::is_directory(path, ec))
    return std::vector<std::string>{path};
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(path, ec)) {
    const std::string ext = entry.path().extension().string();
    if (entry.is_regular_file(ec) && (ext == ".yaml" || ext == ".yml" || ext == ".json"))
      files.push_back(entry.path().string());
  }
  if (ec) return validation_error("-f: cannot read the directory " + path + ": " + ec.message());
  if (files.empty())
    return validation_error("-f: the directory " + path + " has no .yaml, .yml or .json file");
  std::sort(files.begin(), files.end());
  return files;
}

// Applies each file; a file that fails is reported and the others are still applied (exit 1).
int apply_files(CommandEnv& env, const ApplyArgs& a) {
  if (!a.dry_run.empty() && a.dry_run != "server" && a.dry_run != "none")
    return usage_error("--dry-run: expected server or none, got \"" + a.dry_run + "\"");
  std::vector<std::string> all;
  for (const std::string& given : a.files) {
    auto files = input_files(given);
    if (!files.ok()) return usage_error(files.status().message());
    all.insert(all.end(), files->begin(), files->end());
  }
  int rc = 0;
  for (const std::string& f : all) rc = std::max(rc, apply_one(env, f, a.dry_run));
  return rc;
}

// describe's Pods section: each real pod with its node, phase and why (docs/slurm.md "States").
void print_pods(const Json& pods) {
  if (!pods.is_array() || pods.empty()) return;
  std::cout << "Pods:\n";
  Table t({"  NAME", "NODE", "PHASE", text_column("MESSAGE")});
  for (const Json& p : pods) {
    t.add_row({"  " + text_field(p, "name"), text_field(p, "node"), text_field(p, "phase"),
               text_field(p, "message")});
  }
  t.print(std::cout);
}

// `describe pytorchjob`: kubectl's layout, events with ScheduleBindingSucceed and its Result.
// A PyTorchJob's replica statuses, pods and images, as describe prints them.
void print_replicas_pods_images(const Json& j) {
  const Json& rs = field(field(j, "status"), "replicaStatuses");
  if (rs.is_object() && !rs.empty()) {
    std::cout << "Replica Statuses:\n";
    for (auto it = rs.begin(); it != rs.end(); ++it) {
      std::cout << "  " << it.key() << ": active " << text_field(it.value(), "active")
                << ", succeeded " << text_field(it.value(), "succeeded") << ", failed "
                << text_field(it.value(), "failed") << "\n";
    }
  }
  print_pods(field(j, "pods"));
  const Json& images = field(j, "images");
  if (images.is_array() && !images.empty()) {
    std::cout << "Images (" << text_field(j, "imageNote") << "):\n";
    for (const Json& i : images) {
      std::cout << "  " << text_field(i, "replicaType") << "/" << text_field(i, "container") << ": "
                << text_field(i, "image") << "\n";
    }
  }
}

int describe_pytorchjob(CommandEnv& env, const std::string& name, const std::string& ns) {
  auto j = env.client.get("/v1/objects/pytorchjobs/" + (ns.empty() ? std::string("default") : ns) +
                          "/" + name + QueryString().add("describe", "true").str());
  if (!j.ok()) return print_error(j.status());
  if (print_if_structured(env, *j)) return 0;
  const Json& st = field(*j, "status");
  const Time now = server_now(env.client);
  std::string labels;
  const Json& l = field(meta(*j), "labels");
  if (l.is_object()) {
    for (auto it = l.begin(); it != l.end(); ++it)
      labels += (labels.empty() ? "" : ",") + it.key() + "=" + text_of(it.value());
  }
  std::string members;
  for (const Json& m : array_field(st, "members")) {
    members += (members.empty() ? "" : "; ") + text_field(m, "cluster") + " (" +
               text_field(m, "state") +
               (text_field(m, "adoption") == "Y" ? ", adopted" : ", left by failover") + ")";
  }
  print_fields(std::cout, {{"Name", text_field(meta(*j), "name")},
                           {"Namespace", text_field(meta(*j), "namespace")},
                           {"Labels", labels},
                           {"API Version", text_field(*j, "apiVersion")},
                           {"Kind", text_field(*j, "kind")},
                           {"State", text_field(st, "state")},
                           {"Propagation Policy", text_field(st, "propagationPolicy")},
                           {"Member Clusters", members},
                           {"Restarts", text_field(st, "restartCount")},
                           {"Created", text_field(meta(*j), "creationTimestamp")}});
  const Json& why = field(*j, "explanation");
  if (why.is_object()) {
    std::cout << "Waiting:\n";
    print_fields(std::cout, {{"  Blocked by", text_field(why, "kind")},
                             {"  Quota node", text_field(why, "quotaNode")},
                             {"  Message", text_field(why, "message")}});
  }
  print_replicas_pods_images(*j);
  std::cout << "Events:\n";
  Table t({"  TYPE", "REASON", "AGE", "FROM", text_column("MESSAGE")});
  for (const Json& e : array_field(*j, "events")) {
    t.add_row({"  " + text_field(e, "type"), text_field(e, "reason"), age(field(e, "time"), now),
               text_field(e, "from"), text_field(e, "message")});
  }
  t.print(std::cout);
  return 0;
}

int describe_job(CommandEnv& env, const std::string& name) {
  auto j = env.client.get("/v1/jobs/" + name);
  if (!j.ok()) return print_error(j.status());
  if (print_if_structured(env, *j)) return 0;
  const Json& pl = field(*j, "placement");
  std::string where = text_field(*j, "jobQueue");
  if (!text_field(*j, "quotaShareName").empty())
    where += " / share " + text_field(*j, "quotaShareName");
  if (!text_field(*j, "localQueue").empty()) where = "local queue " + text_field(*j, "localQueue");
  print_fields(std::cout, {{"Name", text_field(*j, "jobName")},
                           {"Id", text_field(*j, "jobId")},
                           {"Kind", text_field(*j, "kind")},
                           {"Queue", where},
                           {"Priority", text_field(*j, "schedulingPriority")},
                           {"Status", text_field(*j, "status")},
                           {"Reason", text_field(*j, "statusReason")},
                           {"Cluster", text_field(pl, "cluster")},
                           {"Preemptions",
                            text_field(field(*j, "preemptionSummary"), "preemptedAttemptCount")},
                           {"Record", j->value("fromHistory", false)
                                          ? "from history (it left memory after --job-retention)"
                                          : ""}});
  const Json& why = field(*j, "explanation");
  if (why.is_object() && text_field(why, "kind") != "NotWaiting") {
    std::cout << "\nWaiting:\n";
    print_fields(std::cout,
                 {{"  Blocked by", text_field(why, "kind")},
                  {"  Quota node", text_field(why, "quotaNode")},
                  {"  Limit", text_field(why, "limit")},
                  {"  Resource", text_field(why, "resource")},
                  {"  Requested", why.contains("requested") ? text_field(why, "requested") : ""},
                  {"  Available", why.contains("available") ? text_field(why, "available") : ""},
                  {"  Short by", why.contains("shortfall") ? text_field(why, "shortfall") : ""}});
  }
  const Json& pods = array_field(pl, "pods");
  if (!pods.empty()) {
    std::cout << "\nPods:\n";
    Table t({"POD", "NODE"});
    for (const Json& p : pods) t.add_row({text_field(p, "name"), text_field(p, "node")});
    t.print(std::cout);
  }
  const Json& pre = array_field(field(*j, "preemptionSummary"), "recentPreemptedAttempts");
  if (!pre.empty()) {
    std::cout << "\nPreemptions:\n";
    Table t({"RULE", "BY", text_column("REASON")});
    for (const Json& p : pre)
      t.add_row({text_field(p, "rule"),
                 p.contains("preemptedByName")
                     ? text_field(p, "preemptedByName") + " (" + text_field(p, "preemptedBy") + ")"
                     : text_field(p, "preemptedBy"),
                 text_field(p, "statusReason")});
    t.print(std::cout);
  }
  std::cout << "\nEvents:\n";
  Table t({"TIME", "REASON", text_column("MESSAGE")});
  for (const Json& e : array_field(*j, "events"))
    t.add_row({text_field(e, "time"), text_field(e, "reason"), text_field(e, "message")});
  t.print(std::cout);
  return 0;
}

struct DeleteArgs {
  GetArgs object;
  std::string file;     // -f: the objects a file names
  std::string dry_run;  // "" or "server"
};

int delete_one(CommandEnv& env, const std::string& kind, const std::string& name,
               const std::string& ns, const std::string& dry_run) {
  auto k = kind_info(kind);
  if (!k || k->plural == "jobs" || k->plural == "workloads" || k->plural == "queues" ||
      k->plural == "pods")
    return usage_error(fmt::format("cannot delete kind \"{}\"{}", kind,
                                   k && (k->plural == "jobs" || k->plural == "workloads")
                                       ? "; a job is stopped with: gpufleet job terminate NAME"
                                       : ""));
  auto r = env.client.del(object_path(*k, name, is_workload(*k) && ns.empty() ? "default" : ns) +
                          dry_run_query(dry_run));
  if (!r.ok()) return print_error(r.status());
  if (print_if_structured(env, *r)) return 0;
  std::string shown = kind;
  for (char& c : shown) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::cout << shown << "/" << name << " deleted" << dry_run_note(dry_run) << "\n";
  return 0;
}

// delete -f FILE|DIR: every Kubernetes-style document (kind, metadata.name and namespace) the
// files hold; each is deleted on its own, failures reported (exit 1).
int delete_files(CommandEnv& env, const DeleteArgs& a) {
  auto files = input_files(a.file);
  if (!files.ok()) return usage_error(files.status().message());
  int rc = 0;
  for (const std::string& f : *files) {
    auto text = read_input_file(f);
    if (!text.ok()) return usage_error(text.status().message());
    auto docs = parse_documents(*text);
    if (!docs.ok()) return usage_error(f + ": " + docs.status().message());
    for (size_t i = 0; i < docs->size(); ++i) {
      const Json& d = (*docs)[i];
      const std::string kind = text_field(d, "kind"), name = text_field(meta(d), "name");
      if (kind.empty() || name.empty()) {
        rc = std::max(rc, usage_error(fmt::format(
                              "{}: document {} has no kind and metadata.name to delete by; "
                              "delete it with: gpufleet delete KIND NAME",
                              f, i + 1)));
        continue;
      }
      rc = std::max(rc, delete_one(env, kind, name, text_field(meta(d), "namespace"), a.dry_run));
    }
  }
  return rc;
}

int delete_object(CommandEnv& env, const DeleteArgs& d) {
  if (!d.dry_run.empty() && d.dry_run != "server" && d.dry_run != "none")
    return usage_error("--dry-run: expected server or none, got \"" + d.dry_run + "\"");
  if (!d.file.empty()) {
    if (!d.object.kind.empty())
      return usage_error("delete: give either KIND NAME or -f FILE, not both");
    return delete_files(env, d);
  }
  if (d.object.kind.empty() || d.object.name.empty())
    return usage_error("delete: KIND NAME, or -f FILE, is required");
  return delete_one(env, d.object.kind, d.object.name, d.object.ns, d.dry_run);
}

// `describe KIND NAME` of the kinds without a layout of their own: the object with its status, as
// YAML (or -o json).
int describe_object(CommandEnv& env, const GetArgs& args) {
  auto k = kind_info(args.kind);
  std::string ns = args.ns;
  if (ns.empty() && k->plural == "propagationpolicies") ns = "default";
  if (ns.empty() && k->plural == "elasticquotatrees") ns = "kube-system";
  auto one = env.client.get(object_path(*k, args.name, ns));
  if (!one.ok()) return print_error(one.status());
  if (print_if_structured(env, *one)) return 0;
  std::cout << to_yaml(*one);
  return 0;
}

int submit_job(CommandEnv& env, const std::string& file) {
  auto text = read_input_file(file);
  if (!text.ok()) return usage_error(text.status().message());
  auto r = env.client.post("/v1/service-jobs", *text);
  if (!r.ok()) return print_error(r.status());
  if (print_if_structured(env, *r)) return 0;
  std::cout << text_field(*r, "jobName") << " submitted: " << text_field(*r, "jobId") << "\n";
  return 0;
}

int set_job_priority(CommandEnv& env, const std::string& job, int priority) {
  auto j = env.client.get("/v1/jobs/" + job);
  if (!j.ok()) return print_error(j.status());
  auto r = env.client.patch("/v1/service-jobs/" + text_field(*j, "jobId"),
                            Json{{"schedulingPriority", priority}}.dump());
  if (!r.ok()) return print_error(r.status());
  if (print_if_structured(env, *r)) return 0;
  std::cout << job << " priority " << priority << "\n";
  return 0;
}

int terminate_job(CommandEnv& env, const std::string& job, const std::string& reason) {
  auto j = env.client.get("/v1/jobs/" + job);
  if (!j.ok()) return print_error(j.status());
  Json body = Json::object();
  if (!reason.empty()) body["reason"] = reason;
  auto r =
      env.client.post("/v1/service-jobs/" + text_field(*j, "jobId") + "/terminate", body.dump());
  if (!r.ok()) return print_error(r.status());
  if (print_if_structured(env, *r)) return 0;
  std::cout << job << " terminated\n";
  return 0;
}

void register_apply_command(CLI::App& app, CommandContext& ctx) {
  auto args = std::make_shared<ApplyArgs>();
  auto* cmd = app.add_subcommand(
      "apply",
      "create or update objects from YAML or JSON: PyTorchJob, PropagationPolicy, quota objects "
      "(several documents, or the quota-share bundle)");
  cmd->add_option("-f,--file", args->files,
                  "the file to apply (- reads stdin), or a directory: its .yaml, .yml and .json "
                  "files in name order; repeatable, applied in the order given")
      ->required();
  cmd->add_option("--dry-run", args->dry_run,
                  "server: the server validates and answers as it would, and changes nothing");
  run_with_client(cmd, ctx, [args](CommandEnv& env) { return apply_files(env, *args); });
}

void register_get_command(CLI::App& app, CommandContext& ctx) {
  auto g = std::make_shared<GetArgs>();
  auto* cmd = app.add_subcommand(
      "get",
      "list objects of a kind, or show one (queues, clusterqueues, quota-shares, jobs, ...)");
  cmd->add_option("kind", g->kind, "the kind, e.g. queue, clusterqueue, quota-share, job")
      ->required();
  cmd->add_option("name", g->name, "one object's name");
  cmd->add_option("-n,--namespace", g->ns, "namespace (namespaced kinds)");
  cmd->add_flag("-M,--member", g->members,
                "pytorchjobs, pods: one row per member-cluster copy, with its CLUSTER");
  cmd->add_option("-m,--member-cluster", g->member_cluster,
                  "pytorchjobs, pods: the copy on this member cluster");
  cmd->add_option(
      "-l,--selector", g->selector,
      "only objects whose labels (a service job's tags) match, e.g. app=train,tier!=cpu "
      "or 'env in (a,b)'");
  cmd->add_flag("-A,--all-namespaces", g->all_namespaces,
                "every namespace, with a NAMESPACE column");
  cmd->add_flag("-w,--watch", g->watch,
                "after the list, print each row that is new or changed (polled every 2s; Ctrl-C "
                "stops)");
  run_with_client(cmd, ctx, [g](CommandEnv& env) { return get(env, *g); });
}

void register_delete_command(CLI::App& app, CommandContext& ctx) {
  auto d = std::make_shared<DeleteArgs>();
  auto* cmd = app.add_subcommand(
      "delete",
      "delete an applied object: a workload (pytorchjob, propagationpolicy) or a quota object "
      "(elasticquotatree, clusterqueue, localqueue, job-queue, quota-share, ...); jobs: job "
      "terminate");
  cmd->add_option("kind", d->object.kind, "the kind, as get names it");
  cmd->add_option("name", d->object.name, "the object's name");
  cmd->add_option("-n,--namespace", d->object.ns, "namespace (namespaced kinds)");
  cmd->add_option("-f,--file", d->file,
                  "delete what a file (or a directory's files) applied, by kind and name");
  cmd->add_option("--dry-run", d->dry_run,
                  "server: the server checks the deletion and changes nothing");
  run_with_client(cmd, ctx, [d](CommandEnv& env) { return delete_object(env, *d); });
}

void register_describe_commands(CLI::App& app, CommandContext& ctx) {
  auto describe = app.add_subcommand("describe", "explain one object in detail");
  describe->require_subcommand(1);
  describe->fallthrough();
  auto job_name = std::make_shared<std::string>();
  auto* cmd = describe->add_subcommand(
      "job",
      "a job: why it waits (quota node or placement, by how much), its preemptions and history");
  cmd->add_option("name", *job_name, "job name or id")->required();
  run_with_client(cmd, ctx, [job_name](CommandEnv& env) { return describe_job(env, *job_name); });
  auto pj = std::make_shared<std::pair<std::string, std::string>>();
  cmd = describe->add_subcommand(
      "pytorchjob", "a PyTorchJob: state, member clusters, replica statuses and events");
  cmd->alias("pytorchjobs");
  cmd->add_option("name", pj->first, "the job's name")->required();
  cmd->add_option("-n,--namespace", pj->second, "its namespace (default: default)");
  run_with_client(
      cmd, ctx, [pj](CommandEnv& env) { return describe_pytorchjob(env, pj->first, pj->second); });
  for (const char* kind : {"elasticquotatree", "propagationpolicy", "clusterqueue", "localqueue",
                           "resourceflavor", "cohort", "workloadpriorityclass", "queue"}) {
    auto args = std::make_shared<GetArgs>();
    args->kind = kind;
    cmd = describe->add_subcommand(kind, std::string("a ") + kind + ": the object with its status");
    cmd->add_option("name", args->name, "its name")->required();
    cmd->add_option("-n,--namespace", args->ns, "its namespace (namespaced kinds)");
    run_with_client(cmd, ctx, [args](CommandEnv& env) { return describe_object(env, *args); });
  }
}

void register_job_commands(CLI::App& app, CommandContext& ctx) {
  auto job =
      app.add_subcommand("job", "submit and steer service jobs (AWS Batch SubmitServiceJob shape)");
  job->require_subcommand(1);
  job->fallthrough();
  auto job_file = std::make_shared<std::string>();
  auto* cmd = job->add_subcommand("submit", "submit a service job from a JSON file");
  cmd->add_option("-f,--file", *job_file, "the SubmitServiceJob body (- reads stdin)")->required();
  run_with_client(cmd, ctx, [job_file](CommandEnv& env) { return submit_job(env, *job_file); });
  auto prio = std::make_shared<std::pair<std::string, int>>();
  cmd = job->add_subcommand("priority",
                            "change a job's schedulingPriority (may preempt within its share)");
  cmd->add_option("job", prio->first, "job name or id")->required();
  cmd->add_option("priority", prio->second, "0-9999")->required();
  run_with_client(cmd, ctx, [prio](CommandEnv& env) {
    return set_job_priority(env, prio->first, prio->second);
  });
  auto term = std::make_shared<std::pair<std::string, std::string>>();
  cmd = job->add_subcommand("terminate", "terminate a job (it ends FAILED)");
  cmd->add_option("job", term->first, "job name or id")->required();
  cmd->add_option("--reason", term->second, "why");
  run_with_client(
      cmd, ctx, [term](CommandEnv& env) { return terminate_job(env, term->first, term->second); });
}

}  // namespace

void register_object_commands(CLI::App& app, CommandContext& ctx) {
  register_apply_command(app, ctx);
  register_get_command(app, ctx);
  register_delete_command(app, ctx);
  register_describe_commands(app, ctx);
  register_job_commands(app, ctx);
}

}  // namespace gf
