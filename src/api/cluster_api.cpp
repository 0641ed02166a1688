// The cluster API of docs/provisioning.md: CreateCluster, DescribeCluster, ListClusters,
// UpdateCluster, DeleteCluster, ListClusterNodes, DescribeClusterNode, BatchAdd/DeleteClusterNodes,
// ListClusterEvents. Writes validate inside the loop (against the state they will change) and
// answer after the journal commit.
#include <fmt/format.h>

#include <algorithm>

#include "api/api.h"
#include "api/cluster_wire.h"
#include "api/events_api.h"
#include "provision/cluster_request.h"
#include "provision/slurm_layout.h"
#include "state/cluster_events.h"

namespace gf {

namespace {

Result<Json> parse_body(const HttpRequest& req) {
  GF_ASSIGN_OR_RETURN(auto docs, parse_documents(req.body));
  if (docs.size() != 1)
    return validation_error(fmt::format("expected one JSON document, got {}", docs.size()));
  return docs.front();
}

using event_codec::to_event;

// ?fieldValidation=Strict|Warn|Ignore (Kubernetes' name); Strict when absent.
Result<FieldValidation> field_validation(const HttpRequest& req) {
  const std::string v = req.query_or("fieldValidation", "");
  if (v.empty()) return FieldValidation::kStrict;
  return parse_field_validation(v, "fieldValidation");
}

Json warnings_json(const std::vector<std::string>& w) {
  Json j = Json::array();
  for (const auto& s : w) j.push_back(s);
  return j;
}

HttpResponse create_cluster(Api& api, const HttpRequest& req) {
  auto body = parse_body(req);
  if (!body.ok()) return error_response(body.status());
  auto fields = field_validation(req);
  if (!fields.ok()) return error_response(fields.status());
  const ClusterSettings& prov = api.clusters();
  Request r;
  r.name = "CreateCluster";
  r.idempotency_key = idempotency_key(req, &*body);
  const bool real_slurm = static_cast<bool>(api.slurm_directory());
  r.handle = [body = *body, &prov, fields = *fields, real_slurm](const FleetState& s,
                                                                 Time) -> Result<Decision> {
    GF_ASSIGN_OR_RETURN(CreateClusterRequest cr,
                        parse_create_cluster(body, s.view(), *prov.catalog, fields));
    if (real_slurm && cr.orchestrator == Orchestrator::kSlurm)
      GF_RETURN_IF_ERROR(check_real_slurm_groups(cr.groups));
    const std::string id = cluster_id(prov.id_seed, s.view().cluster_counter + 1);
    const std::string arn = make_arn(prov.arn, "cluster", id);
    Decision d;
    d.events.push_back(to_event(
        cluster_events::Created{cr.name, id, arn, cr.continuous, cr.orchestrator, cr.vpc_config,
                                cr.node_recovery, prov.min_count_timeout, cr.groups}));
    d.response = Json{{"ClusterArn", arn}};
    if (!cr.warnings.empty()) d.response["Warnings"] = warnings_json(cr.warnings);
    return d;
  };
  std::string name =
      body->is_object() && body->contains("ClusterName") && (*body)["ClusterName"].is_string()
          ? (*body)["ClusterName"].get<std::string>()
          : "";
  r.on_duplicate = [name](const FleetState& s, Seq) {
    const Cluster* c = s.view().find_cluster(name);
    return c ? Json{{"ClusterArn", c->arn}} : Json::object();
  };
  return Api::respond(api.write(std::move(r)));
}

HttpResponse update_cluster(Api& api, const HttpRequest& req) {
  auto body = parse_body(req);
  if (!body.ok()) return error_response(body.status());
  auto fields = field_validation(req);
  if (!fields.ok()) return error_response(fields.status());
  const std::string name = req.path_params.at("name");
  const ClusterSettings& prov = api.clusters();
  Request r;
  r.name = "UpdateCluster";
  r.idempotency_key = idempotency_key(req, &*body);
  const bool real_slurm = static_cast<bool>(api.slurm_directory());
  r.handle = [body = *body, name, &prov, fields = *fields, real_slurm](const FleetState& s,
                                                                       Time) -> Result<Decision> {
    GF_ASSIGN_OR_RETURN(UpdateClusterRequest ur,
                        parse_update_cluster(name, body, s.view(), *prov.catalog, fields));
    const Cluster* c = s.view().find_cluster(name);
    if (real_slurm && c && c->orchestrator == Orchestrator::kSlurm)
      GF_RETURN_IF_ERROR(check_real_slurm_groups(ur.groups));
    Decision d;
    d.events.push_back(
        to_event(cluster_events::Updated{name, ur.groups, ur.groups_to_delete, ur.node_recovery}));
    d.response = Json{{"ClusterArn", s.view().find_cluster(name)->arn}};
    if (!ur.warnings.empty()) d.response["Warnings"] = warnings_json(ur.warnings);
    return d;
  };
  return Api::respond(api.write(std::move(r)));
}

HttpResponse delete_cluster(Api& api, const HttpRequest& req) {
  const std::string name = req.path_params.at("name");
  Request r;
  r.name = "DeleteCluster";
  r.handle = [name](const FleetState& s, Time) -> Result<Decision> {
    const Cluster* c = s.view().find_cluster(name);
    if (!c) return not_found_error("cluster \"" + name + "\" not found");
    Decision d;
    if (c->status != ClusterStatus::kDeleting) {
      d.events.push_back(to_event(cluster_events::DeleteRequested{name}));
    }
    d.response = Json{{"ClusterArn", c->arn}};
    return d;
  };
  return Api::respond(api.write(std::move(r)));
}

HttpResponse batch_add(Api& api, const HttpRequest& req) {
  auto body = parse_body(req);
  if (!body.ok()) return error_response(body.status());
  const std::string name = req.path_params.at("name");
  Request r;
  r.name = "BatchAddClusterNodes";
  r.idempotency_key = idempotency_key(req, &*body);
  r.handle = [body = *body, name](const FleetState& s, Time) -> Result<Decision> {
    const Cluster* c = s.view().find_cluster(name);
    if (!c) return not_found_error("cluster \"" + name + "\" not found");
    GF_ASSIGN_OR_RETURN(auto adds, parse_batch_add(body));
    if (!c->continuous) {
      return validation_error(
          "BatchAddClusterNodes needs NodeProvisioningMode Continuous; use "
          "UpdateCluster to change InstanceCount of cluster " +
          name);
    }
    if (c->status == ClusterStatus::kDeleting || c->status == ClusterStatus::kFailed) {
      return Status(ErrorCode::kConflict,
                    "cluster \"" + name + "\" is " + std::string(to_string(c->status)));
    }
    Decision d;
    Json ok = Json::array(), failed = Json::array();
    std::map<std::string, int64_t> targets;
    for (const auto& a : adds) {
      const InstanceGroup* g = c->find_group(a.group);
      if (!g || g->status == GroupStatus::kDeleting) {
        failed.push_back(
            Json{{"InstanceGroupName", a.group},
                 {"ErrorCode", "InstanceGroupNotFound"},
                 {"FailedCount", a.increment},
                 {"Message", "no instance group \"" + a.group + "\" in cluster " + name}});
        continue;
      }
      if (auto busy = group_busy(*c, *g, "BatchAddClusterNodes")) return *busy;
      int64_t& t = targets.try_emplace(a.group, g->spec.target).first->second;
      t += a.increment;
      ok.push_back(Json{{"InstanceGroupName", a.group},
                        {"IncrementTargetCountBy", a.increment},
                        {"TargetCount", t},
                        {"Status", "Pending"}});
    }
    for (const auto& [group, target] : targets) {
      d.events.push_back(
          to_event(cluster_events::GroupTargetSet{name, group, target, "BatchAddClusterNodes"}));
    }
    d.response = Json{{"Successful", ok}, {"Failed", failed}};
    return d;
  };
  return Api::respond(api.write(std::move(r)));
}

// POST /v1/clusters/{name}/software-update: UpdateClusterSoftware (docs/provisioning.md "Software
// updates").
HttpResponse software_update(Api& api, const HttpRequest& req) {
  auto body = parse_body(req);
  if (!body.ok()) return error_response(body.status());
  const std::string name = req.path_params.at("name");
  Request r;
  r.name = "UpdateClusterSoftware";
  r.idempotency_key = idempotency_key(req, &*body);
  r.handle = [body = *body, name](const FleetState& s, Time) -> Result<Decision> {
    const Cluster* c = s.view().find_cluster(name);
    if (!c) return not_found_error("cluster \"" + name + "\" not found");
    GF_ASSIGN_OR_RETURN(SoftwareUpdateRequest u, parse_software_update(body, *c));
    Decision d;
    d.events.push_back(to_event(
        cluster_events::SoftwareUpdateStarted{name, u.image, c->software_generation + 1, u.groups,
                                              u.batch_type, u.batch_value, u.wait_interval}));
    d.response = Json{{"ClusterArn", c->arn}};
    return d;
  };
  return Api::respond(api.write(std::move(r)));
}

HttpResponse batch_delete(Api& api, const HttpRequest& req) {
  auto body = parse_body(req);
  if (!body.ok()) return error_response(body.status());
  const std::string name = req.path_params.at("name");
  Request r;
  r.name = "BatchDeleteClusterNodes";
  r.idempotency_key = idempotency_key(req, &*body);
  r.handle = [body = *body, name](const FleetState& s, Time) -> Result<Decision> {
    const Cluster* c = s.view().find_cluster(name);
    if (!c) return not_found_error("cluster \"" + name + "\" not found");
    GF_ASSIGN_OR_RETURN(auto ids, parse_batch_delete(body));
    Decision d;
    Json ok = Json::array(), failed = Json::array();
    std::map<std::string, int64_t> targets;
    std::set<std::string> seen;
    for (const auto& id : ids) {
      auto it = c->nodes.find(id);
      auto fail = [&](const char* code, std::string msg) {
        failed.push_back(Json{{"NodeId", id}, {"Code", code}, {"Message", std::move(msg)}});
      };
      if (it == c->nodes.end() || !seen.insert(id).second) {
        fail("NodeIdNotFound", "no node " + id + " in cluster " + name);
        continue;
      }
      const Node& n = it->second;
      const InstanceGroup* g = c->find_group(n.group);
      if (g) {
        if (auto busy = group_busy(*c, *g, "BatchDeleteClusterNodes")) return *busy;
      }
      if (n.status == NodeStatus::kShuttingDown) {
        fail("InvalidNodeStatus", "node " + id + " is already ShuttingDown");
        continue;
      }
      if (g && c->orchestrator == Orchestrator::kSlurm &&
          g->spec.node_type == NodeType::kController) {
        fail("InvalidNodeStatus", "node " + id + " is the Slurm controller; it cannot be removed");
        continue;
      }
      d.events.push_back(
          to_event(cluster_events::TerminateRequested{name, id, "BatchDeleteClusterNodes"}));
      if (g) {
        int64_t& t = targets.try_emplace(n.group, g->spec.target).first->second;
        t = std::max<int64_t>(0, t - 1);
      }
      ok.push_back(id);
    }
    for (const auto& [group, target] : targets) {
      d.events.push_back(
          to_event(cluster_events::GroupTargetSet{name, group, target, "BatchDeleteClusterNodes"}));
    }
    d.response = Json{{"Successful", ok}, {"Failed", failed}};
    return d;
  };
  return Api::respond(api.write(std::move(r)));
}

// ListClusters' and ListClusterNodes' common filters, as HyperPod names them: CreationTimeAfter,
// CreationTimeBefore (ISO 8601 or a duration back from now, both exclusive), SortBy
// (NAME|CREATION_TIME) and SortOrder (Ascending|Descending).
struct ListOrder {
  std::optional<Time> after, before;
  std::string sort_by;  // "" = the list's own order
  bool descending = false;

  static Result<ListOrder> parse(const HttpRequest& req, Time now) {
    ListOrder o;
    if (auto it = req.query.find("CreationTimeAfter"); it != req.query.end()) {
      GF_ASSIGN_OR_RETURN(o.after, query_time("CreationTimeAfter", it->second, now));
    }
    if (auto it = req.query.find("CreationTimeBefore"); it != req.query.end()) {
      GF_ASSIGN_OR_RETURN(o.before, query_time("CreationTimeBefore", it->second, now));
    }
    o.sort_by = req.query_or("SortBy", "");
    if (!o.sort_by.empty() && o.sort_by != "NAME" && o.sort_by != "CREATION_TIME") {
      return validation_error("SortBy: expected NAME or CREATION_TIME, got \"" +
                              printable(o.sort_by, 40) + "\"");
    }
    const std::string order = req.query_or("SortOrder", "Ascending");
    if (order != "Ascending" && order != "Descending") {
      return validation_error("SortOrder: expected Ascending or Descending, got \"" +
                              printable(order, 40) + "\"");
    }
    o.descending = order == "Descending";
    return o;
  }
  bool keeps(Time created) const {
    return (!after || created > *after) && (!before || created < *before);
  }
  // Sorts `items` (each with its name and creation time) as asked.
  template <typename T, typename Name, typename Created>
  void sort(std::vector<T>& items, Name name, Created created) const {
    if (sort_by == "NAME") {
      std::stable_sort(items.begin(), items.end(),
                       [&](const T& a, const T& b) { return name(a) < name(b); });
    } else if (sort_by == "CREATION_TIME") {
      std::stable_sort(items.begin(), items.end(),
                       [&](const T& a, const T& b) { return created(a) < created(b); });
    }
    if (descending) std::reverse(items.begin(), items.end());
  }
};

// GET /v1/clusters: ListClusters (by name), of names containing NameContains, with ListOrder's
// filters.
HttpResponse list_clusters(Api& api, const HttpRequest& req) {
  auto view = api.loop().view();
  auto order = ListOrder::parse(req, api.clock().now());
  if (!order.ok()) return error_response(order.status());
  const std::string contains = req.query_or("NameContains", "");
  std::vector<const Cluster*> clusters;
  for (const auto& [name, c] : view->clusters) {
    if ((contains.empty() || name.find(contains) != std::string::npos) &&
        order->keeps(c->creation_time))
      clusters.push_back(c.get());
  }
  order->sort(
      clusters, [](const Cluster* c) { return c->name; },
      [](const Cluster* c) { return c->creation_time; });
  Json list = Json::array();
  for (const Cluster* c : clusters) list.push_back(cluster_summary(*c));
  return json_response(200, Json{{"ClusterSummaries", list}});
}

// The 404 of a path that names a cluster that is not there.
Status cluster_not_found(const HttpRequest& req) {
  return not_found_error("cluster \"" + req.path_params.at("name") + "\" not found");
}

// GET /v1/clusters/{name}: DescribeCluster.
HttpResponse get_cluster(Api& api, const HttpRequest& req) {
  auto view = api.loop().view();
  const Cluster* c = view->find_cluster(req.path_params.at("name"));
  if (!c) return error_response(cluster_not_found(req));
  Json out = describe_cluster(*c);
  // A real Slurm cluster: where its slurm.conf is (SLURM_CONF for the client tools).
  if (c->orchestrator == Orchestrator::kSlurm && api.slurm_directory()) {
    if (std::string dir = api.slurm_directory()(c->name); !dir.empty())
      out["SlurmConfPath"] = dir + "/slurm.conf";
  }
  return json_response(200, out);
}

// GET /v1/clusters/{name}/nodes: ListClusterNodes in launch order (SortBy NAME: by instance id;
// CREATION_TIME: by LaunchTime), of the groups whose name contains InstanceGroupNameContains,
// with ListOrder's filters.
HttpResponse list_cluster_nodes(Api& api, const HttpRequest& req) {
  auto view = api.loop().view();
  const Cluster* c = view->find_cluster(req.path_params.at("name"));
  if (!c) return error_response(cluster_not_found(req));
  auto order = ListOrder::parse(req, api.clock().now());
  if (!order.ok()) return error_response(order.status());
  const std::string contains = req.query_or("InstanceGroupNameContains", "");
  auto created = [](const Node* n) { return n->launch_time.value_or(n->requested_at); };
  std::vector<const Node*> nodes;
  for (const auto& [id, n] : c->nodes) {
    if ((contains.empty() || n.group.find(contains) != std::string::npos) &&
        order->keeps(created(&n)))
      nodes.push_back(&n);
  }
  std::sort(nodes.begin(), nodes.end(),
            [](const Node* a, const Node* b) { return a->launch_order < b->launch_order; });
  order->sort(
      nodes, [](const Node* n) { return n->instance_id; }, created);
  Json list = Json::array();
  const NodeActivity activity = NodeActivity::of(*view, *c);
  for (const Node* n : nodes) list.push_back(node_summary(*view, *c, *n, activity));
  return json_response(200, Json{{"ClusterNodeSummaries", list}});
}

// GET /v1/clusters/{name}/nodes/{id}: DescribeClusterNode.
HttpResponse get_cluster_node(Api& api, const HttpRequest& req) {
  auto view = api.loop().view();
  const Cluster* c = view->find_cluster(req.path_params.at("name"));
  if (!c) return error_response(cluster_not_found(req));
  auto it = c->nodes.find(req.path_params.at("id"));
  if (it == c->nodes.end()) {
    return error_response(not_found_error("node \"" + req.path_params.at("id") +
                                          "\" not found in cluster " + c->name));
  }
  Json detail = node_detail(*view, *c, it->second, api.clock().now());
  // The pods of jobs the caller may not see are counted, not named (docs/security.md "Who sees
  // a job").
  Json visible = Json::array();
  int64_t hidden = 0;
  for (Json& pod : detail["Workload"]["Pods"]) {
    const Job* job = view->job(pod.value("JobId", ""));
    if (job == nullptr || may_see_job(req, *view, *job)) {
      visible.push_back(std::move(pod));
    } else {
      ++hidden;
    }
  }
  detail["Workload"]["Pods"] = std::move(visible);
  if (hidden > 0) detail["Workload"]["OtherTeamsPods"] = hidden;
  if (api.instance_directory()) {
    const std::string dir = api.instance_directory()(it->first);
    if (!dir.empty()) detail["LocalDirectory"] = dir;  // the local cloud (docs/local-cloud.md)
  }
  return json_response(200, Json{{"NodeDetails", std::move(detail)}});
}

// POST /v1/clusters/{name}/slurm-conf/merge: merge-mode slurm.conf (docs/provisioning.md). The body
// is the cluster's current slurm.conf; the answer is the same file with gpufleet's managed
// NodeName/PartitionName blocks brought up to date.
HttpResponse merge_cluster_slurm_conf(Api& api, const HttpRequest& req) {
  auto view = api.loop().view();
  const Cluster* c = view->find_cluster(req.path_params.at("name"));
  if (!c) return error_response(cluster_not_found(req));
  if (c->orchestrator != Orchestrator::kSlurm) {
    return error_response(validation_error("cluster \"" + c->name + "\" is not a Slurm cluster"));
  }
  SlurmMergeResult merged = merge_slurm_conf(req.body, slurm_layout(*c, *api.clusters().catalog));
  return json_response(200, Json{{"SlurmConf", merged.text}, {"Warnings", merged.warnings}});
}

// GET /v1/clusters/{name}/events: ListClusterEvents (of the cluster, its groups and instances).
HttpResponse list_cluster_events(Api& api, const HttpRequest& req) {
  auto view = api.loop().view();
  const std::string name = req.path_params.at("name");
  if (!view->find_cluster(name))
    return error_response(not_found_error("cluster \"" + name + "\" not found"));
  auto q = parse_event_query(req, api.clock().now());
  if (!q.ok()) return error_response(q.status());
  q->cluster_name = name;  // its alerts, remediations and jobs too, as the list shows them
  auto out = list_events(*view, *q, &req);
  if (!out.ok()) return error_response(out.status());
  return json_response(200, *out);
}

// GET /v1/clusters/{name}/events/{id}: DescribeClusterEvent, one event of the cluster.
HttpResponse get_cluster_event(Api& api, const HttpRequest& req) {
  auto view = api.loop().view();
  const std::string name = req.path_params.at("name");
  if (!view->find_cluster(name)) return error_response(cluster_not_found(req));
  const std::string id = req.path_params.at("id");
  const UserEvent* e = find_event(*view, id);
  if (e == nullptr || e->cluster_name != name || !may_see_event(req, *view, *e))
    return error_response(
        not_found_error("event \"" + printable(id, 80) + "\" not found in cluster " + name));
  return json_response(200, e->to_wire());
}

}  // namespace

void register_cluster_routes(Api& api) {
  Router& r = api.router();
  r.add("POST", "/v1/clusters",
        [&api](const HttpRequest& req) { return create_cluster(api, req); });
  r.add("GET", "/v1/clusters", [&api](const HttpRequest& req) { return list_clusters(api, req); });
  r.add("GET", "/v1/clusters/{name}",
        [&api](const HttpRequest& req) { return get_cluster(api, req); });
  r.add("PUT", "/v1/clusters/{name}",
        [&api](const HttpRequest& req) { return update_cluster(api, req); });
  r.add("DELETE", "/v1/clusters/{name}",
        [&api](const HttpRequest& req) { return delete_cluster(api, req); });
  r.add("GET", "/v1/clusters/{name}/nodes",
        [&api](const HttpRequest& req) { return list_cluster_nodes(api, req); });
  r.add("GET", "/v1/clusters/{name}/nodes/{id}",
        [&api](const HttpRequest& req) { return get_cluster_node(api, req); });
  r.add("POST", "/v1/clusters/{name}/software-update",
        [&api](const HttpRequest& req) { return software_update(api, req); });
  r.add("POST", "/v1/clusters/{name}/nodes/batch-add",
        [&api](const HttpRequest& req) { return batch_add(api, req); });
  r.add("POST", "/v1/clusters/{name}/nodes/batch-delete",
        [&api](const HttpRequest& req) { return batch_delete(api, req); });
  r.add("POST", "/v1/clusters/{name}/slurm-conf/merge",
        [&api](const HttpRequest& req) { return merge_cluster_slurm_conf(api, req); });
  r.add("GET", "/v1/clusters/{name}/events",
        [&api](const HttpRequest& req) { return list_cluster_events(api, req); });
  r.add("GET", "/v1/clusters/{name}/events/{id}",
        [&api](const HttpRequest& req) { return get_cluster_event(api, req); });
}

}  // namespace gf
