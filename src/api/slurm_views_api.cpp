// Slurm's views of a Slurm cluster, as its users read them (docs/cli.md "Slurm"):
//   GET /v1/clusters/{name}/slurm/sinfo   partitions x node states, hostlist-compressed (sinfo)
//   GET /v1/clusters/{name}/slurm/squeue  the jobs placed there and those waiting for it (squeue)
// Computed from the published view: node states follow what gpufleet knows of each node (its
// InstanceStatus, health, cordon and the GPUs its placed pods hold).
#include <fmt/format.h>

#include <map>
#include <set>

#include "api/api.h"
#include "core/quantity.h"
#include "orchestrator/slurm/slurm_conf.h"
#include "provision/slurm_layout.h"

namespace gf {

namespace {

constexpr std::string_view kGpu = "nvidia.com/gpu";

// GPUs each node's placed pods hold, by instance id.
std::map<std::string, int64_t> gpus_in_use(const FleetView& v, const Cluster& c,
                                           const Catalog& catalog) {
  std::map<std::string, int64_t> used;
  for (const auto& [id, job] : v.jobs) {
    if (!job->admitted || job->cluster != c.name) continue;
    size_t next = 0;
    for (const JobPodSet& ps : job->pod_sets) {
      int64_t gpus = 0;
      if (ps.whole_node) {
        const InstanceTypeInfo* t = catalog.find(ps.instance_type);
        gpus = t ? t->gpus : 0;
      } else if (ps.requests.is_object() && ps.requests.contains(kGpu)) {
        auto q = parse_quantity_json(ps.requests.at(kGpu), QuantityScale::kUnit);
        gpus = q.ok() ? *q : 0;
      }
      for (int32_t i = 0; i < ps.count && next < job->pod_nodes.size(); ++i, ++next) {
        used[job->pod_nodes[next]] += std::max<int64_t>(gpus, 1);  // a pod holds its node
      }
    }
  }
  return used;
}

// Slurm's state word for a node: maint (a software update), down (not running or unhealthy),
// drain/drng (cordoned, idle/busy), alloc (every GPU held), mix (some), idle.
std::string slurm_state(const Node& n, int64_t used, int gpus) {
  if (n.status == NodeStatus::kSystemUpdating) return "maint";
  if (n.status != NodeStatus::kRunning || !n.healthy) return "down";
  if (n.cordoned || n.maintenance) return used > 0 ? "drng" : "drain";
  if (used == 0) return "idle";
  if (gpus <= 0 || used >= gpus) return "alloc";
  return "mix";
}

HttpResponse sinfo(Api& api, const HttpRequest& req) {
  auto view = api.loop().view();
  const Cluster* c = view->find_cluster(req.path_params.at("name"));
  if (!c)
    return error_response(
        not_found_error("cluster \"" + req.path_params.at("name") + "\" not found"));
  if (c->orchestrator != Orchestrator::kSlurm)
    return error_response(validation_error("cluster \"" + c->name + "\" is not a Slurm cluster"));
  const Catalog& catalog = *api.clusters().catalog;
  const auto used = gpus_in_use(*view, *c, catalog);
  // (partition, state) -> node names; partitions in the order their groups name them.
  std::vector<std::string> order;
  std::map<std::string, std::map<std::string, std::vector<std::string>>> rows;
  for (const InstanceGroup& g : c->groups) {
    for (const std::string& p : g.spec.partitions) {
      if (!rows.contains(p)) order.push_back(p);
      rows[p];
    }
  }
  for (const auto& [id, n] : c->nodes) {
    if (!n.launched() || n.status == NodeStatus::kShuttingDown) continue;  // not in slurm.conf
    const InstanceGroup* g = c->find_group(n.group);
    if (!g) continue;
    const InstanceTypeInfo* t = catalog.find(n.instance_type);
    auto u = used.find(id);
    const std::string state = slurm_state(n, u == used.end() ? 0 : u->second, t ? t->gpus : 0);
    for (const std::string& p : g->spec.partitions) rows[p][state].push_back(slurm_node_name(n));
  }
  Json out = Json::array();
  for (const std::string& p : order) {
    for (auto& [state, names] : rows[p]) {
      out.push_back(Json{{"Partition", p},
                         {"Avail", "up"},
                         {"TimeLimit", "infinite"},
                         {"Nodes", names.size()},
                         {"State", state},
                         {"NodeList", compress_hostlist(names)}});
    }
    if (rows[p].empty()) {
      out.push_back(Json{{"Partition", p},
                         {"Avail", "up"},
                         {"TimeLimit", "infinite"},
                         {"Nodes", 0},
                         {"State", "n/a"},
                         {"NodeList", ""}});
    }
  }
  return json_response(200, Json{{"ClusterName", c->name}, {"Partitions", std::move(out)}});
}

// squeue's REASON for a job that waits: the closest Slurm word for why gpufleet holds it.
std::string slurm_reason(const Job& j) {
  if (!j.waiting) return j.requeue_at ? "BeginTime" : "Priority";
  const std::string& r = j.waiting->reason;
  if (r == "QuotaExceeded") return "AssocGrpGRES";
  if (r == "MaxJobsReached") return "AssocGrpJobsLimit";
  if (r == "NoFit") return "Resources";
  if (r == "Backoff") return "BeginTime";
  if (r == "Parked") return "PartitionConfig";
  return r.empty() ? "Priority" : r;
}

// The account Slurm would show: the team the job charges, as its quota share or namespace.
std::string account(const Job& j) {
  if (!j.quota_share.empty()) return j.quota_share;
  if (!j.ns.empty()) return j.ns;
  return j.job_queue;
}

HttpResponse squeue(Api& api, const HttpRequest& req) {
  auto view = api.loop().view();
  const Cluster* c = view->find_cluster(req.path_params.at("name"));
  if (!c)
    return error_response(
        not_found_error("cluster \"" + req.path_params.at("name") + "\" not found"));
  if (c->orchestrator != Orchestrator::kSlurm)
    return error_response(validation_error("cluster \"" + c->name + "\" is not a Slurm cluster"));
  const Time now = api.clock().now();
  Json out = Json::array();
  for (const auto& [id, job] : view->jobs) {
    const Job& j = *job;
    if (is_terminal(j.status)) continue;
    const bool here = j.admitted && j.cluster == c->name;
    const bool may_come =
        !j.admitted && (j.clusters.empty() || std::find(j.clusters.begin(), j.clusters.end(),
                                                        c->name) != j.clusters.end());
    if (!here && !may_come) continue;
    std::set<std::string> names;
    std::string partition;
    for (const std::string& node : j.pod_nodes) {
      auto it = c->nodes.find(node);
      if (it == c->nodes.end()) continue;
      names.insert(slurm_node_name(it->second));
      if (const InstanceGroup* g = c->find_group(it->second.group);
          g && partition.empty() && !g->spec.partitions.empty())
        partition = g->spec.partitions.front();
    }
    int64_t pods = 0;
    for (const JobPodSet& ps : j.pod_sets) pods += ps.count;
    Json row{{"JobId", j.id},
             {"Partition", partition.empty() ? "-" : partition},
             {"Name", j.name},
             {"Account", account(j)},
             {"State", here ? "R" : "PD"},
             {"Priority", j.priority},
             {"Nodes", here ? static_cast<int64_t>(names.size()) : pods}};
    if (here) {
      const Duration ran = j.started_at ? now - *j.started_at : Duration::zero();
      row["Time"] = format_duration(std::chrono::floor<std::chrono::seconds>(ran));
      row["NodeList"] = compress_hostlist({names.begin(), names.end()});
    } else {
      row["Time"] = "0s";
      row["Reason"] = slurm_reason(j);
    }
    out.push_back(std::move(row));
  }
  return json_response(200, Json{{"ClusterName", c->name}, {"Jobs", std::move(out)}});
}

}  // namespace

void register_slurm_view_routes(Api& api) {
  Router& r = api.router();
  r.add("GET", "/v1/clusters/{name}/slurm/sinfo",
        [&api](const HttpRequest& req) { return sinfo(api, req); });
  r.add("GET", "/v1/clusters/{name}/slurm/squeue",
        [&api](const HttpRequest& req) { return squeue(api, req); });
}

}  // namespace gf
