// Slurm's views of a Slurm cluster, as its users read them (docs/cli.md "Slurm"):
//   GET /v1/clusters/{name}/slurm/sinfo   partitions x node states, hostlist-compressed (sinfo)
//   GET /v1/clusters/{name}/slurm/squeue  the jobs placed there and those waiting for it (squeue)
// A real Slurm cluster (the local cloud, docs/slurm.md "Which view reads what") is read from its
// slurmctld with Slurm's own client tools: every node and every job, users' own included, with
// gpufleet's gangs marked; a controller that does not answer is a 503, never a guess. A simulated
// one is computed from the published view: node states follow what gpufleet knows of each node
// (its InstanceStatus, health, cordon and the GPUs its placed pods hold).
#include <fmt/format.h>

#include <atomic>
#include <map>
#include <set>

#include "api/api.h"
#include "api/auth.h"
#include "core/quantity.h"
#include "orchestrator/slurm/slurm_conf.h"
#include "orchestrator/slurm/slurm_control.h"
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

// sinfo's rows: (partition, state) -> node names, partitions in the order their groups name
// them (then any other a real controller shows).
class SinfoRows {
 public:
  explicit SinfoRows(const Cluster& c) {
    for (const InstanceGroup& g : c.groups) {
      for (const std::string& p : g.spec.partitions) partition(p);
    }
  }
  void add(const std::string& p, const std::string& state, std::string node) {
    partition(p)[state].push_back(std::move(node));
  }
  // One row per partition and state; a partition without nodes gets one row `n/a`.
  Json json() const {
    Json out = Json::array();
    for (const std::string& p : order_) {
      const auto& states = rows_.at(p);
      for (const auto& [state, names] : states) {
        out.push_back(row(p, state, names.size(), compress_hostlist(names)));
      }
      if (states.empty()) out.push_back(row(p, "n/a", 0, ""));
    }
    return out;
  }

 private:
  std::map<std::string, std::vector<std::string>>& partition(const std::string& p) {
    if (!rows_.contains(p)) order_.push_back(p);
    return rows_[p];
  }
  static Json row(const std::string& p, const std::string& state, size_t nodes, std::string list) {
    return Json{{"Partition", p}, {"Avail", "up"},  {"TimeLimit", "infinite"},
                {"Nodes", nodes}, {"State", state}, {"NodeList", std::move(list)}};
  }
  std::vector<std::string> order_;
  std::map<std::string, std::map<std::string, std::vector<std::string>>> rows_;
};

// ---- a real cluster: what its slurmctld says ---------------------------------------------

// At most this many API threads wait on a slurmctld at once (each read may take up to its 10 s
// timeout when the controller hangs): the others answer 503 at once, and the threads that serve
// agents and the loop's writes stay free.
constexpr int kMaxSlurmReads = 4;
std::atomic<int> slurm_reads{0};

class SlurmReadSlot {
 public:
  SlurmReadSlot() : held_(slurm_reads.fetch_add(1) < kMaxSlurmReads) {}
  ~SlurmReadSlot() { slurm_reads.fetch_sub(1); }
  SlurmReadSlot(const SlurmReadSlot&) = delete;
  SlurmReadSlot& operator=(const SlurmReadSlot&) = delete;
  bool held() const { return held_; }

 private:
  bool held_;
};

HttpResponse slurm_reads_busy(const Cluster& c) {
  return error_response(unavailable_error(
      "cluster " + c.name + ": " + std::to_string(kMaxSlurmReads) +
      " reads of its slurmctld are in flight already; try again in a few seconds"));
}

// The cluster's slurm.conf when it is a real Slurm cluster whose controller wrote it, else "".
std::string real_slurm_conf(Api& api, const Cluster& c) {
  if (!api.slurm_directory()) return "";
  const std::string dir = api.slurm_directory()(c.name);
  if (dir.empty()) return "";
  return dir + "/slurm.conf";
}

// sinfo's state word for a node, as sinfo prints it (`*`: not responding).
std::string sinfo_state(const slurm::NodeState& n) {
  std::string word;
  if (n.down()) {
    word = "down";
  } else if (n.drained()) {
    word = n.allocated() || n.state == "COMPLETING" ? "drng" : "drain";
  } else if (n.state == "ALLOCATED") {
    word = "alloc";
  } else if (n.state == "MIXED") {
    word = "mix";
  } else if (n.state == "COMPLETING" || n.has_flag("COMPLETING")) {
    word = "comp";
  } else {
    word = n.state;
    for (char& ch : word) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  }
  return n.has_flag("NOT_RESPONDING") ? word + "*" : word;
}

HttpResponse real_sinfo(const Cluster& c, const std::string& conf) {
  SlurmReadSlot slot;
  if (!slot.held()) return slurm_reads_busy(c);
  slurm::SlurmCli cli(conf, std::chrono::seconds(10));
  auto nodes = cli.nodes();
  if (!nodes.ok())
    return error_response(unavailable_error("the slurmctld of cluster " + c.name +
                                            " does not answer: " + nodes.status().message()));
  SinfoRows rows(c);
  for (const slurm::NodeState& n : *nodes) {
    for (const std::string& p : n.partitions) rows.add(p, sinfo_state(n), n.name);
  }
  return json_response(
      200, Json{{"ClusterName", c.name}, {"Source", "slurmctld"}, {"Partitions", rows.json()}});
}

// squeue's short state codes.
std::string squeue_code(const std::string& state) {
  static const std::map<std::string, std::string, std::less<>> kCodes = {
      {"PENDING", "PD"},   {"RUNNING", "R"},         {"COMPLETING", "CG"}, {"COMPLETED", "CD"},
      {"FAILED", "F"},     {"CANCELLED", "CA"},      {"TIMEOUT", "TO"},    {"CONFIGURING", "CF"},
      {"NODE_FAIL", "NF"}, {"PREEMPTED", "PR"},      {"SUSPENDED", "S"},   {"REQUEUED", "RQ"},
      {"BOOT_FAIL", "BF"}, {"OUT_OF_MEMORY", "OOM"}, {"DEADLINE", "DL"},   {"REQUEUE_HOLD", "RH"}};
  auto it = kCodes.find(state);
  return it == kCodes.end() ? state : it->second;
}

// A team-only caller sees only the rows of gpufleet jobs filed under its teams: not other teams'
// gangs, nor what was submitted to Slurm directly, which is filed under no team (docs/security.md
// "Who sees a job").
HttpResponse real_squeue(const HttpRequest& req, const FleetView& v, const Cluster& c,
                         const std::string& conf) {
  SlurmReadSlot slot;
  if (!slot.held()) return slurm_reads_busy(c);
  slurm::SlurmCli cli(conf, std::chrono::seconds(10));
  auto jobs = cli.jobs();
  if (!jobs.ok())
    return error_response(unavailable_error("the slurmctld of cluster " + c.name +
                                            " does not answer: " + jobs.status().message()));
  Json out = Json::array();
  for (const slurm::JobState& j : *jobs) {
    if (j.finished()) continue;  // squeue's default: what is pending or running
    Json row{{"JobId", std::to_string(j.id)},
             {"Partition", j.partition.empty() ? "-" : j.partition},
             {"Name", j.name},
             {"Account", "-"},
             {"State", squeue_code(j.state)},
             {"SlurmState", j.state},
             {"Time", "-"},
             {"Nodes", j.node_count}};
    // One of gpufleet's gangs: "gf-<job id>-<placement>".
    const Job* job = nullptr;
    if (j.name.rfind("gf-", 0) == 0) {
      const std::string rest = j.name.substr(3);
      job = v.job(rest.substr(0, rest.rfind('-')));
      if (job != nullptr) {
        row["GpufleetJob"] = job->id;
        row["Account"] = "gpufleet:" + job->name;
      }
    }
    if (job == nullptr ? !sees_every_job(req) : !may_see_job(req, v, *job)) continue;
    if (j.state == "PENDING" || j.nodes.empty()) {
      row["Reason"] = j.reason.empty() ? "None" : j.reason;
    } else {
      row["NodeList"] = compress_hostlist(j.nodes);
    }
    out.push_back(std::move(row));
  }
  return json_response(
      200, Json{{"ClusterName", c.name}, {"Source", "slurmctld"}, {"Jobs", std::move(out)}});
}

HttpResponse sinfo(Api& api, const HttpRequest& req) {
  auto view = api.loop().view();
  const Cluster* c = view->find_cluster(req.path_params.at("name"));
  if (!c)
    return error_response(
        not_found_error("cluster \"" + req.path_params.at("name") + "\" not found"));
  if (c->orchestrator != Orchestrator::kSlurm)
    return error_response(validation_error("cluster \"" + c->name + "\" is not a Slurm cluster"));
  if (const std::string conf = real_slurm_conf(api, *c); !conf.empty()) return real_sinfo(*c, conf);
  const Catalog& catalog = *api.clusters().catalog;
  const auto used = gpus_in_use(*view, *c, catalog);
  SinfoRows rows(*c);
  for (const auto& [id, n] : c->nodes) {
    if (!n.launched() || n.status == NodeStatus::kShuttingDown) continue;  // not in slurm.conf
    const InstanceGroup* g = c->find_group(n.group);
    if (!g) continue;
    const InstanceTypeInfo* t = catalog.find(n.instance_type);
    auto u = used.find(id);
    const std::string state = slurm_state(n, u == used.end() ? 0 : u->second, t ? t->gpus : 0);
    for (const std::string& p : g->spec.partitions) rows.add(p, state, slurm_node_name(n));
  }
  return json_response(200, Json{{"ClusterName", c->name}, {"Partitions", rows.json()}});
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
  if (const std::string conf = real_slurm_conf(api, *c); !conf.empty())
    return real_squeue(req, *view, *c, conf);
  const Time now = api.clock().now();
  Json out = Json::array();
  for (const auto& [id, job] : view->jobs) {
    const Job& j = *job;
    if (is_terminal(j.status) || !may_see_job(req, *view, j)) continue;
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
