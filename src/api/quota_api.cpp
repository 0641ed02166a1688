// Quota objects (docs/quota.md, docs/workloads.md): `POST /v1/apply` for ElasticQuotaTree, Kueue's
// kinds and the quota-share bundle; `/v1/objects/{kind}` reads and deletes; the AWS Batch shapes
// under /v1/service-environments, /v1/scheduling-policies, /v1/job-queues and /v1/quota-shares.
// Every write is validated against the whole resulting set (frontend::check_apply) before it
// is recorded, so a bad object changes nothing.
#include <fmt/format.h>

#include "api/api.h"
#include "api/workload_wire.h"
#include "core/ids.h"
#include "quota/frontends/quota_objects.h"
#include "state/job_events.h"

namespace gf {
namespace {

using frontend::Kind;
using frontend::ObjectKey;
using frontend::QuotaObject;

Result<std::vector<Json>> parse_docs(const HttpRequest& req) {
  GF_ASSIGN_OR_RETURN(auto docs, parse_documents(req.body));
  if (docs.empty()) return validation_error("the request body holds no document");
  return docs;
}

Result<Json> parse_one(const HttpRequest& req) {
  GF_ASSIGN_OR_RETURN(auto docs, parse_documents(req.body));
  if (docs.size() != 1)
    return validation_error(fmt::format("expected one JSON document, got {}", docs.size()));
  return docs.front();
}

const frontend::ObjectMap& objects_of(const FleetView& v) {
  static const frontend::ObjectMap empty;
  return v.quota_objects ? *v.quota_objects : empty;
}

bool is_k8s(Kind k) {
  return k != Kind::kServiceEnvironment && k != Kind::kSchedulingPolicy && k != Kind::kJobQueue &&
         k != Kind::kQuotaShare;
}

// Validates `incoming` against the state and decides the quota.applied event. Kubernetes kinds
// get metadata.uid and creationTimestamp (kept across updates).
Result<Decision> decide_apply(const FleetState& s, Time now, std::vector<QuotaObject> incoming,
                              std::optional<bool> must_exist) {
  const frontend::ObjectMap& current = objects_of(s.view());
  Json items = Json::array();
  for (size_t i = 0; i < incoming.size(); ++i) {
    QuotaObject& o = incoming[i];
    auto it = current.find(o.key);
    const bool exists = it != current.end();
    const std::string what = std::string(frontend::kind_name(o.key.kind)) + " " + o.key.name;
    if (must_exist && *must_exist && !exists) return not_found_error(what + " does not exist");
    if (must_exist && !*must_exist && exists)
      return conflict_error(what + " already exists; update it with PUT");
    if (is_k8s(o.key.kind) && o.doc.is_object()) {
      Json& meta = o.doc["metadata"];
      if (exists && it->second.doc.contains("metadata")) {
        const Json& old = it->second.doc.at("metadata");
        meta["uid"] = old.value("uid", "");
        meta["creationTimestamp"] = old.value("creationTimestamp", "");
      } else {
        meta["uid"] = fmt::format("uid-{}-{}", s.applied_seq() + 1, i);
        meta["creationTimestamp"] = format_iso8601(now);
      }
    } else if (o.doc.is_object() && !o.doc.contains("createdAt")) {
      o.doc["createdAt"] = exists && it->second.doc.contains("createdAt")
                               ? it->second.doc.at("createdAt")
                               : Json(to_micros(now) / 1000);
    }
    Json item{{"kind", std::string(frontend::kind_name(o.key.kind))},
              {"name", o.key.name},
              {"result", exists ? "configured" : "created"}};
    if (!o.key.ns.empty()) item["namespace"] = o.key.ns;
    if (!o.warnings.empty()) item["warnings"] = o.warnings;
    items.push_back(std::move(item));
  }
  ResourceRegistry reg;  // validation's own: only the scheduler cache's ids matter
  GF_RETURN_IF_ERROR(frontend::check_apply(current, incoming, reg));
  object_events::QuotaApplied applied;
  for (const QuotaObject& o : incoming)
    applied.objects.push_back(
        object_events::QuotaObjectDoc{o.key.kind, o.key.ns, o.key.name, o.doc});
  Decision d;
  d.events.push_back(event_codec::to_event(applied));
  d.response = Json{{"items", std::move(items)}};
  return d;
}

Result<Decision> decide_delete(const FleetState& s, const ObjectKey& key) {
  const frontend::ObjectMap& current = objects_of(s.view());
  if (!current.contains(key)) {
    return not_found_error(std::string(frontend::kind_name(key.kind)) + " " + key.name +
                           " does not exist");
  }
  frontend::ObjectMap after = current;
  after.erase(key);
  ResourceRegistry reg;
  auto compiled = frontend::compile(after, reg);
  if (!compiled.ok()) {
    return conflict_error("cannot delete " + std::string(frontend::kind_name(key.kind)) + " " +
                          key.name + ": other objects depend on it (" +
                          compiled.status().message() + ")");
  }
  Decision d;
  d.events.push_back(
      event_codec::to_event(object_events::QuotaDeleted{key.kind, key.ns, key.name}));
  d.response =
      Json{{"deleted", {{"kind", std::string(frontend::kind_name(key.kind))}, {"name", key.name}}}};
  return d;
}

// What the scheduler counted for a quota node at its last pass (published with the view).
const QuotaNodeStatus* status_of(const FleetView& v, quota::NodeId node) {
  if (!v.quota_status || node >= v.quota_status->size()) return nullptr;
  return &(*v.quota_status)[node];
}

// The object as stored plus a Kubernetes-like `status` (or the AWS status fields).
Json render(const FleetView& v, const QuotaObject& o) {
  Json out = o.doc;
  const frontend::CompiledQuota* q = v.quota.get();
  auto node_named = [&](const std::string& name) -> std::optional<quota::NodeId> {
    if (q == nullptr) return std::nullopt;
    return q->graph.find(name);
  };
  auto leaf_status = [&](std::optional<quota::NodeId> n) {
    Json st = Json::object();
    if (!n) return st;
    const QuotaNodeStatus* c = status_of(v, *n);
    st["admittedWorkloads"] = c != nullptr ? c->admitted : 0;
    st["pendingWorkloads"] = c != nullptr ? c->pending : 0;
    st["usage"] = c != nullptr ? c->usage : Json::object();
    return st;
  };
  switch (o.key.kind) {
    case Kind::kClusterQueue:
      out["status"] = leaf_status(node_named("clusterqueue:" + o.key.name));
      break;
    case Kind::kLocalQueue: {
      // Kueue counts a LocalQueue's own workloads (its ClusterQueue counts every LocalQueue's).
      int64_t admitted = 0, pending = 0;
      for (const auto& [id, j] : v.jobs) {
        if (j->local_queue != o.key.name || j->ns != o.key.ns || is_terminal(j->status)) continue;
        (j->admitted ? admitted : pending) += 1;
      }
      out["status"] = Json{{"admittedWorkloads", admitted}, {"pendingWorkloads", pending}};
      break;
    }
    case Kind::kJobQueue:
      if (q != nullptr) {
        auto it = q->job_queue_status.find(o.key.name);
        if (it != q->job_queue_status.end()) {
          out["state"] = it->second.state;
          out["status"] = it->second.status;
          out["statusReason"] = it->second.status_reason;
        }
      }
      break;
    case Kind::kQuotaShare: {
      if (q != nullptr) {
        auto it = q->share_leaf.find({name_from_arn(o.doc.value("jobQueue", "")), o.key.name});
        if (it != q->share_leaf.end()) {
          Json st = leaf_status(it->second);
          out["admittedJobs"] = st.value("admittedWorkloads", 0);
          out["pendingJobs"] = st.value("pendingWorkloads", 0);
          out["usage"] = st.value("usage", Json::object());
        }
      }
      break;
    }
    default:
      break;
  }
  return out;
}

std::optional<ObjectKey> key_from_path(const HttpRequest& req, Kind kind) {
  const std::string name = req.path_params.count("name") ? req.path_params.at("name") : "";
  std::string ns = req.path_params.count("namespace") ? req.path_params.at("namespace") : "";
  if (!frontend::namespaced(kind)) ns.clear();
  if (kind == Kind::kElasticQuotaTree && ns.empty()) ns = "kube-system";
  return ObjectKey{kind, ns, name};
}

HttpResponse list_objects(Api& api, Kind kind, std::string ns, std::string list_field) {
  return read_view(api, [kind, ns, list_field](const FleetView& v) -> Result<Json> {
    Json items = Json::array();
    for (const auto& [key, o] : objects_of(v)) {
      if (key.kind != kind) continue;
      if (!ns.empty() && frontend::namespaced(kind) && key.ns != ns) continue;
      items.push_back(render(v, o));
    }
    return Json{{list_field, std::move(items)}};
  });
}

HttpResponse get_object(Api& api, ObjectKey key) {
  return read_view(api, [key](const FleetView& v) -> Result<Json> {
    const auto& objs = objects_of(v);
    auto it = objs.find(key);
    if (it == objs.end()) {
      return not_found_error(std::string(frontend::kind_name(key.kind)) + " " + key.name +
                             " not found");
    }
    return render(v, it->second);
  });
}

// A queue Kube Queue made for an ElasticQuotaTree node, with its admitted and pending jobs.
Json queue_json(const FleetView& v, const frontend::CompiledQuota& q,
                const frontend::QueueObject& qo) {
  const QuotaNodeStatus* c = status_of(v, qo.node);
  const quota::NodeSpec& spec = q.graph.spec(qo.node);
  Json status{{"admittedJobs", c != nullptr ? c->admitted : 0},
              {"pendingJobs", c != nullptr ? c->pending : 0},
              {"usage", c != nullptr ? c->usage : Json::object()}};
  if (spec.max_jobs) status["maxJobs"] = *spec.max_jobs;
  // A queue is as old as the ElasticQuotaTree it was compiled from (the one there is).
  Json meta{{"name", qo.name}, {"namespace", qo.ns}};
  for (const auto& [key, o] : objects_of(v)) {
    if (key.kind != Kind::kElasticQuotaTree) continue;
    const Json m = o.doc.value("metadata", Json::object());
    if (m.contains("creationTimestamp")) meta["creationTimestamp"] = m["creationTimestamp"];
    if (m.contains("uid")) meta["uid"] = m.value("uid", "") + "-" + qo.name;
  }
  return Json{
      {"apiVersion", "scheduling.x-k8s.io/v1alpha1"},
      {"kind", "Queue"},
      {"metadata", std::move(meta)},
      {"spec", {{"quotaNode", qo.tree_node}, {"leaf", spec.kind == quota::NodeKind::kQueue}}},
      {"status", std::move(status)}};
}

HttpResponse list_queues(Api& api, std::string ns) {
  return read_view(api, [ns](const FleetView& v) -> Result<Json> {
    Json items = Json::array();
    if (const frontend::CompiledQuota* q = v.quota.get()) {
      for (const frontend::QueueObject& qo : q->queues) {
        if (ns.empty() || qo.ns == ns) items.push_back(queue_json(v, *q, qo));
      }
    }
    return Json{{"items", std::move(items)}};
  });
}

// GET one queue by name (in `ns`, when given): queues are compiled from the quota objects, so
// they are found in the compiled quota rather than among the stored objects.
HttpResponse get_queue(Api& api, std::string ns, std::string name) {
  return read_view(api, [ns, name](const FleetView& v) -> Result<Json> {
    if (const frontend::CompiledQuota* q = v.quota.get()) {
      for (const frontend::QueueObject& qo : q->queues) {
        if (qo.name == name && (ns.empty() || qo.ns == ns)) return queue_json(v, *q, qo);
      }
    }
    return not_found_error(ns.empty()
                               ? fmt::format("Queue {} not found", name)
                               : fmt::format("Queue {} not found in namespace {}", name, ns));
  });
}

// Parses one document of an apply request into `objects` (quota objects, a quota-share bundle's
// several) or `workloads`. `where` names the document when the request holds several.
Status parse_apply_document(const Json& doc, const std::string& where,
                            std::vector<QuotaObject>& objects, WorkloadDocs& workloads) {
  if (!doc.is_object())
    return validation_error(where + "expected an object, got " + describe_json_value(doc));
  if (frontend::is_quota_share_bundle(doc)) {
    auto parsed = frontend::parse_quota_share_bundle(doc);
    if (!parsed.ok())
      return parsed.status().with_prefix(where.empty() ? "" : where.substr(0, where.size() - 2));
    for (auto& o : *parsed) objects.push_back(std::move(o));
    return ok_status();
  }
  for (const char* key : {"apiVersion", "kind"}) {
    if (doc.contains(key) && !doc.at(key).is_string()) {
      return validation_error(where + key + ": expected string, got " +
                              describe_json_value(doc.at(key)));
    }
  }
  const std::string api_version = doc.value("apiVersion", "");
  const std::string kind = doc.value("kind", "");
  if (kind.empty())
    return validation_error(where +
                            "kind: required (or a quota-share bundle with "
                            "serviceEnvironment, schedulingPolicy, jobQueue, quotaShares)");
  if (is_workload_kind(api_version, kind)) {
    Status st = parse_workload_doc(doc, workloads);
    if (!st.ok()) return st.with_prefix(where.empty() ? "" : where.substr(0, where.size() - 2));
    return ok_status();
  }
  if (!frontend::is_k8s_quota_kind(api_version, kind)) {
    return validation_error(where + "kind: " + api_version + " " + kind +
                            " is not supported by apply (supported: kubeflow.org/v1 "
                            "PyTorchJob, PropagationPolicy, ElasticQuotaTree, "
                            "ResourceFlavor, Cohort, ClusterQueue, LocalQueue, "
                            "WorkloadPriorityClass, and the quota-share bundle)");
  }
  auto parsed = frontend::parse_k8s_object(doc);
  if (!parsed.ok())
    return parsed.status().with_prefix(where.empty() ? "" : where.substr(0, where.size() - 2));
  objects.push_back(std::move(parsed).value());
  return ok_status();
}

// A team applies only into its own namespace or queues.
Status check_team_apply(const HttpRequest& caller, const FleetView& view,
                        const WorkloadDocs& workloads) {
  for (const workload::PyTorchJob& pj : workloads.jobs) {
    Job probe;
    probe.ns = pj.ns;
    probe.local_queue = pj.local_queue;
    if (!may_change_job(caller, view, probe)) {
      return Status(ErrorCode::kForbidden, "PyTorchJob " + pj.ns + "/" + pj.name +
                                               ": applying it needs the role team:" +
                                               (pj.local_queue.empty() ? pj.ns : pj.local_queue) +
                                               " (its namespace or queue)");
    }
  }
  for (const workload::PropagationPolicy& p : workloads.policies) {
    if (!team_covers_namespace(caller, p.ns)) {
      return Status(ErrorCode::kForbidden, "PropagationPolicy " + p.ns + "/" + p.name +
                                               ": applying it needs the role team:" + p.ns);
    }
  }
  return ok_status();
}

// The Apply request's decision: the quota objects' event, then the workloads', with one result
// item per document.
Result<Decision> decide_apply_request(const FleetState& s, Time now,
                                      const std::vector<QuotaObject>& objects,
                                      const WorkloadDocs& workloads, const HttpRequest& caller) {
  if (!has_role(caller, "admin")) GF_RETURN_IF_ERROR(check_team_apply(caller, s.view(), workloads));
  Decision d;
  Json items = Json::array();
  if (!objects.empty()) {
    GF_ASSIGN_OR_RETURN(d, decide_apply(s, now, objects, std::nullopt));
    items = d.response.value("items", Json::array());
  }
  if (!workloads.empty())
    GF_RETURN_IF_ERROR(decide_workload_apply(s, now, workloads, d.events, items));
  d.response = Json{{"items", std::move(items)}};
  return d;
}

// POST /v1/apply: quota objects, the quota-share bundle and workloads, in one or more documents.
HttpResponse apply(Api& api, const HttpRequest& req) {
  auto docs = parse_docs(req);
  if (!docs.ok()) return error_response(docs.status());
  std::vector<QuotaObject> objects;
  WorkloadDocs workloads;
  for (size_t i = 0; i < docs->size(); ++i) {
    const std::string where = docs->size() > 1 ? fmt::format("document {}: ", i + 1) : "";
    Status st = parse_apply_document((*docs)[i], where, objects, workloads);
    if (!st.ok()) return error_response(st);
  }
  if (!objects.empty() && !has_role(req, "admin")) {
    return error_response(Status(ErrorCode::kForbidden,
                                 "applying quota objects (" +
                                     std::string(frontend::kind_name(objects.front().key.kind)) +
                                     " " + objects.front().key.name + ") needs the admin role; " +
                                     req.caller + " does not have it"));
  }
  Request r;
  r.name = "Apply";
  r.idempotency_key = idempotency_key(req, nullptr);
  r.handle = [objects, workloads, req = caller_of(req)](const FleetState& s,
                                                        Time now) -> Result<Decision> {
    return decide_apply_request(s, now, objects, workloads, req);
  };
  return Api::respond(api.write(std::move(r)));
}

// The AWS-shaped resource families.
struct AwsFamily {
  Kind kind;
  std::string path;        // "/v1/service-environments"
  std::string name_field;  // "serviceEnvironmentName"
  std::string list_field;  // "serviceEnvironments"
  std::function<Result<QuotaObject>(const Json&)> parse;
};

// POST <family path>: creates the object (Create<Kind>); one of the same name is a conflict.
HttpResponse create_aws_object(Api& api, const AwsFamily& f, const HttpRequest& req) {
  auto body = parse_one(req);
  if (!body.ok()) return error_response(body.status());
  auto obj = f.parse(*body);
  if (!obj.ok()) return error_response(obj.status());
  Request w;
  w.name = "Create" + std::string(frontend::kind_name(f.kind));
  w.idempotency_key = idempotency_key(req, &*body);
  w.handle = [o = *obj, f](const FleetState& s, Time now) -> Result<Decision> {
    GF_ASSIGN_OR_RETURN(Decision d, decide_apply(s, now, {o}, false));
    d.response = Json{{f.name_field, o.key.name},
                      {"arn", make_arn(ArnConfig{}, frontend::kind_plural(f.kind), o.key.name)}};
    if (!o.warnings.empty()) d.response["warnings"] = o.warnings;
    return d;
  };
  return Api::respond(api.write(std::move(w)));
}

// PUT <family path>/{name}: replaces an existing object (Update<Kind>).
HttpResponse update_aws_object(Api& api, const AwsFamily& f, const HttpRequest& req) {
  auto body = parse_one(req);
  if (!body.ok()) return error_response(body.status());
  if (!body->is_object()) return error_response(validation_error("expected an object"));
  Json b = *body;
  const std::string name = req.path_params.at("name");
  if (b.contains(f.name_field) && b.at(f.name_field) != name) {
    return error_response(validation_error(f.name_field + ": \"" + b.value(f.name_field, "") +
                                           "\" differs from the name in the path (\"" + name +
                                           "\")"));
  }
  b[f.name_field] = name;
  auto obj = f.parse(b);
  if (!obj.ok()) return error_response(obj.status());
  Request w;
  w.name = "Update" + std::string(frontend::kind_name(f.kind));
  w.handle = [o = *obj, f](const FleetState& s, Time now) -> Result<Decision> {
    GF_ASSIGN_OR_RETURN(Decision d, decide_apply(s, now, {o}, true));
    d.response = Json{{f.name_field, o.key.name}};
    return d;
  };
  return Api::respond(api.write(std::move(w)));
}

// PATCH <family path>/{name}: changes the fields the body names and keeps the others (the AWS
// Update<Kind> calls' meaning), read and written in one loop step so that no other change
// comes between.
HttpResponse patch_aws_object(Api& api, const AwsFamily& f, const HttpRequest& req) {
  auto body = parse_one(req);
  if (!body.ok()) return error_response(body.status());
  if (!body->is_object())
    return error_response(
        validation_error("expected an object, got " + describe_json_value(*body)));
  const std::string name = req.path_params.at("name");
  if (body->contains(f.name_field) && body->at(f.name_field) != name) {
    return error_response(
        validation_error(f.name_field + ": differs from the name in the path (\"" + name + "\")"));
  }
  Request w;
  w.name = "Update" + std::string(frontend::kind_name(f.kind));
  w.handle = [patch = *body, name, f](const FleetState& s, Time now) -> Result<Decision> {
    const frontend::ObjectMap& current = objects_of(s.view());
    auto it = current.find(ObjectKey{f.kind, "", name});
    if (it == current.end())
      return not_found_error(std::string(frontend::kind_name(f.kind)) + " " + name +
                             " does not exist");
    Json merged = it->second.doc;
    merged.erase("createdAt");  // kept by decide_apply
    for (auto field = patch.begin(); field != patch.end(); ++field)
      merged[field.key()] = field.value();
    GF_ASSIGN_OR_RETURN(QuotaObject o, f.parse(merged));
    GF_ASSIGN_OR_RETURN(Decision d, decide_apply(s, now, {o}, true));
    d.response = Json{{f.name_field, o.key.name},
                      {"arn", make_arn(ArnConfig{}, frontend::kind_plural(f.kind), o.key.name)}};
    return d;
  };
  return Api::respond(api.write(std::move(w)));
}

// GET <family path>: the family's objects, optionally of one jobQueue.
HttpResponse list_aws_objects(Api& api, const AwsFamily& f, const HttpRequest& req) {
  const std::string job_queue = name_from_arn(req.query_or("jobQueue", ""));
  return read_view(api, [f, job_queue](const FleetView& v) -> Result<Json> {
    Json items = Json::array();
    for (const auto& [key, o] : objects_of(v)) {
      if (key.kind != f.kind) continue;
      if (!job_queue.empty() && name_from_arn(o.doc.value("jobQueue", "")) != job_queue) continue;
      items.push_back(render(v, o));
    }
    return Json{{f.list_field, std::move(items)}};
  });
}

// DELETE <family path>/{name}: Delete<Kind>, refused while other objects depend on it.
HttpResponse delete_aws_object(Api& api, const AwsFamily& f, const HttpRequest& req) {
  Request w;
  w.name = "Delete" + std::string(frontend::kind_name(f.kind));
  const ObjectKey key{f.kind, "", req.path_params.at("name")};
  w.handle = [key](const FleetState& s, Time) { return decide_delete(s, key); };
  return Api::respond(api.write(std::move(w)));
}

void register_aws_family(Api& api, const AwsFamily& f) {
  Router& r = api.router();
  r.add("POST", f.path,
        [&api, f](const HttpRequest& req) { return create_aws_object(api, f, req); });
  r.add("PUT", f.path + "/{name}",
        [&api, f](const HttpRequest& req) { return update_aws_object(api, f, req); });
  r.add("PATCH", f.path + "/{name}",
        [&api, f](const HttpRequest& req) { return patch_aws_object(api, f, req); });
  r.add("GET", f.path, [&api, f](const HttpRequest& req) { return list_aws_objects(api, f, req); });
  r.add("GET", f.path + "/{name}", [&api, f](const HttpRequest& req) {
    return get_object(api, ObjectKey{f.kind, "", req.path_params.at("name")});
  });
  r.add("DELETE", f.path + "/{name}",
        [&api, f](const HttpRequest& req) { return delete_aws_object(api, f, req); });
}

bool is_queue_plural(const std::string& plural) { return plural == "queues" || plural == "queue"; }

std::optional<Kind> kind_param(const HttpRequest& req) {
  return frontend::kind_from_plural(req.path_params.at("kind"));
}

HttpResponse unknown_kind(const HttpRequest& req) {
  return error_response(
      not_found_error("unknown object kind \"" + req.path_params.at("kind") +
                      "\" (known: pytorchjobs, propagationpolicies, pods, elasticquotatrees, "
                      "queues, resourceflavors, cohorts, clusterqueues, "
                      "localqueues, workloadpriorityclasses, service-environments, "
                      "scheduling-policies, job-queues, quota-shares)"));
}

}  // namespace

HttpResponse read_view(Api& api, const std::function<Result<Json>(const FleetView&)>& fn) {
  auto view = api.loop().view();
  Result<Json> body = fn(*view);
  if (!body.ok()) return error_response(body.status());
  return json_response(200, *body);
}

namespace {

// GET /v1/history/queues?since=: queue depth per quota node over time (QueueHistory).
HttpResponse queue_history(Api& api, const HttpRequest& req) {
  Time since = Time::min();
  if (auto it = req.query.find("since"); it != req.query.end()) {
    Result<Time> t = query_time("since", it->second, api.clock().now());
    if (!t.ok()) return error_response(t.status());
    since = *t;
  }
  auto view = api.loop().view();
  Json samples = Json::array();
  int64_t interval = 60;
  if (const QueueHistoryLog* h = view->queue_history.get()) {
    interval = h->interval().count() / 1'000'000;
    for (const QueueSample& s : h->since(since)) {
      Json queues = Json::object();
      for (size_t n = 0; n < s.nodes->size() && n < s.pending.size(); ++n) {
        queues[(*s.nodes)[n]] = {{"Pending", s.pending[n]}, {"Admitted", s.admitted[n]}};
      }
      samples.push_back({{"Time", format_iso8601(s.at)}, {"Queues", std::move(queues)}});
    }
  }
  return json_response(200, {{"IntervalSeconds", interval}, {"Samples", std::move(samples)}});
}

}  // namespace

namespace {

// A share's use as AWS lists it: [{capacityUnit, quantity}] of the units it caps.
Json capacity_usage(const Json& usage, const Json& limits) {
  Json out = Json::array();
  for (const Json& lim : limits) {
    const std::string unit = lim.value("capacityUnit", "");
    const Json used = usage.is_object() ? usage.value(unit, Json(0)) : Json(0);
    out.push_back({{"capacityUnit", unit}, {"quantity", used}});
  }
  return out;
}

// Adds a share's [{capacityUnit, quantity}] to `total` (unit -> quantity), integers staying
// integers.
void add_usage(Json& total, const Json& used) {
  for (const Json& u : used) {
    const Json& q = u["quantity"];
    Json& t = total[u.value("capacityUnit", "")];
    if (!t.is_number()) t = 0;
    if (q.is_number_integer() && t.is_number_integer()) {
      t = t.get<int64_t>() + q.get<int64_t>();
    } else if (q.is_number()) {
      t = t.get<double>() + q.get<double>();
    }
  }
}

// GET /v1/job-queues/{name}/snapshot: GetJobQueueSnapshot, AWS's showback of a queue: the jobs at
// the front (admission order: priority, then submission), per quota share too, and what each
// share uses now.
HttpResponse job_queue_snapshot(Api& api, const HttpRequest& req) {
  constexpr size_t kFront = 100;
  auto view = api.loop().view();
  const std::string queue = req.path_params.at("name");
  const auto& objs = objects_of(*view);
  if (!objs.contains(ObjectKey{Kind::kJobQueue, "", queue}))
    return error_response(not_found_error("JobQueue " + queue + " does not exist"));
  const int64_t now_ms = to_micros(api.clock().now()) / 1000;
  std::vector<const Job*> waiting;
  for (const auto& [id, j] : view->jobs) {
    if (j->job_queue == queue && !j->admitted && !is_terminal(j->status) &&
        may_see_job(req, *view, *j))
      waiting.push_back(j.get());
  }
  std::sort(waiting.begin(), waiting.end(), [](const Job* a, const Job* b) {
    if (a->priority != b->priority) return a->priority > b->priority;
    return a->key < b->key;
  });
  auto summary = [](const Job* j) {
    return Json{{"jobArn", make_arn(ArnConfig{}, "service-job", j->id)},
                {"jobId", j->id},
                {"earliestTimeAtPosition", to_micros(j->created_at) / 1000}};
  };
  Json front = Json::array();
  Json per_share = Json::object();
  for (const Job* j : waiting) {
    if (front.size() < kFront) front.push_back(summary(j));
    Json& list = per_share[j->quota_share];
    if (list.size() < kFront) list.push_back(summary(j));
  }
  Json total = Json::object();
  Json shares = Json::array();
  for (const auto& [key, o] : objs) {
    if (key.kind != Kind::kQuotaShare || name_from_arn(o.doc.value("jobQueue", "")) != queue)
      continue;
    const Json rendered = render(*view, o);
    Json used = capacity_usage(rendered.value("usage", Json::object()),
                               o.doc.value("capacityLimits", Json::array()));
    add_usage(total, used);
    shares.push_back({{"quotaShareName", key.name}, {"capacityUsage", std::move(used)}});
  }
  Json total_list = Json::array();
  for (auto it = total.begin(); it != total.end(); ++it)
    total_list.push_back({{"capacityUnit", it.key()}, {"quantity", it.value()}});
  return json_response(
      200, Json{{"frontOfQueue", {{"jobs", std::move(front)}, {"lastUpdatedAt", now_ms}}},
                {"frontOfQuotaShares",
                 {{"quotaShares", std::move(per_share)}, {"lastUpdatedAt", now_ms}}},
                {"queueUtilization",
                 {{"totalCapacityUsage", std::move(total_list)},
                  {"quotaShareUtilization", {{"topCapacityUtilization", std::move(shares)}}},
                  {"lastUpdatedAt", now_ms}}}});
}

// GET /v1/objects/{kind}: queues, workloads or quota objects (in ?namespace= when given).
HttpResponse objects_list(Api& api, const HttpRequest& req) {
  const std::string plural = req.path_params.at("kind");
  if (is_queue_plural(plural)) return list_queues(api, req.query_or("namespace", ""));
  if (is_workload_plural(plural)) return workload_list(api, plural, req);
  auto kind = kind_param(req);
  if (!kind) return unknown_kind(req);
  return list_objects(api, *kind, req.query_or("namespace", ""), "items");
}

// GET /v1/objects/{kind}/[{namespace}/]{name}: one of them (a queue's namespace may also come as
// ?namespace=).
HttpResponse objects_get(Api& api, const HttpRequest& req) {
  const std::string& plural = req.path_params.at("kind");
  if (is_queue_plural(plural)) {
    auto ns = req.path_params.find("namespace");
    return get_queue(api, ns != req.path_params.end() ? ns->second : req.query_or("namespace", ""),
                     req.path_params.at("name"));
  }
  if (is_workload_plural(plural)) return workload_get(api, plural, req);
  auto kind = kind_param(req);
  if (!kind) return unknown_kind(req);
  return get_object(api, *key_from_path(req, *kind));
}

// DELETE /v1/objects/{kind}/[{namespace}/]{name}: a workload, or a quota object (admin only).
HttpResponse objects_delete(Api& api, const HttpRequest& req) {
  if (is_workload_plural(req.path_params.at("kind")))
    return workload_delete(api, req.path_params.at("kind"), req);
  auto kind = kind_param(req);
  if (!kind) return unknown_kind(req);
  if (!has_role(req, "admin")) {
    return error_response(
        Status(ErrorCode::kForbidden,
               "deleting quota objects needs the admin role; " + req.caller + " does not have it"));
  }
  Request w;
  w.name = "DeleteObject";
  const ObjectKey key = *key_from_path(req, *kind);
  w.handle = [key](const FleetState& s, Time) { return decide_delete(s, key); };
  return Api::respond(api.write(std::move(w)));
}

}  // namespace

void register_quota_routes(Api& api) {
  Router& r = api.router();
  r.add("GET", "/v1/job-queues/{name}/snapshot",
        [&api](const HttpRequest& req) { return job_queue_snapshot(api, req); });
  r.add("GET", "/v1/history/queues",
        [&api](const HttpRequest& req) { return queue_history(api, req); });
  r.add("POST", "/v1/apply", [&api](const HttpRequest& req) { return apply(api, req); });
  r.add("GET", "/v1/objects/{kind}",
        [&api](const HttpRequest& req) { return objects_list(api, req); });
  auto get = [&api](const HttpRequest& req) { return objects_get(api, req); };
  r.add("GET", "/v1/objects/{kind}/{name}", get);
  r.add("GET", "/v1/objects/{kind}/{namespace}/{name}", get);
  auto del = [&api](const HttpRequest& req) { return objects_delete(api, req); };
  r.add("DELETE", "/v1/objects/{kind}/{name}", del);
  r.add("DELETE", "/v1/objects/{kind}/{namespace}/{name}", del);

  register_aws_family(
      api, {Kind::kServiceEnvironment, "/v1/service-environments", "serviceEnvironmentName",
            "serviceEnvironments", frontend::parse_service_environment});
  register_aws_family(api, {Kind::kSchedulingPolicy, "/v1/scheduling-policies", "name",
                            "schedulingPolicies", frontend::parse_scheduling_policy});
  register_aws_family(api, {Kind::kJobQueue, "/v1/job-queues", "jobQueueName", "jobQueues",
                            frontend::parse_job_queue});
  register_aws_family(api, {Kind::kQuotaShare, "/v1/quota-shares", "quotaShareName", "quotaShares",
                            frontend::parse_quota_share});
}

}  // namespace gf
