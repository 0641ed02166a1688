// What the agents of a real Slurm cluster's nodes ask and tell (docs/slurm.md):
//   GET  /v1/clusters/{name}/slurm/layout          the managed slurm.conf blocks the controller
//                                                  node writes (every declared node, partitions)
//   POST /v1/clusters/{name}/nodes/{id}/slurm      what slurmctld says of the node now: State,
//                                                  Reason, Jobs (agent role); recorded on change
// The drain a node should carry comes with its pods (GET …/pods, "SlurmDrain").
#include <fmt/format.h>

#include <algorithm>

#include "api/api.h"
#include "orchestrator/slurm/slurm_conf.h"
#include "provision/slurm_layout.h"
#include "state/cluster_events.h"

namespace gf {

namespace {

constexpr size_t kMaxJobs = 4096;       // jobs reported on one node
constexpr size_t kMaxJobIdBytes = 32;   // "123", "123_4" (array), "123+1" (het job)
constexpr size_t kMaxStateBytes = 100;  // "IDLE+DRAIN+NOT_RESPONDING"
constexpr size_t kMaxReasonBytes = 400;

Result<const Cluster*> slurm_cluster(const FleetView& v, const std::string& name) {
  const Cluster* c = v.find_cluster(name);
  if (!c) return not_found_error("cluster \"" + printable(name, 100) + "\" not found");
  if (c->orchestrator != Orchestrator::kSlurm)
    return validation_error("cluster " + c->name + " is not a Slurm cluster");
  return c;
}

HttpResponse get_layout(Api& api, const HttpRequest& req) {
  auto view = api.loop().view();
  auto c = slurm_cluster(*view, req.path_params.at("name"));
  if (!c.ok()) return error_response(c.status());
  const SlurmLayout layout = slurm_real_layout(**c, *api.clusters().catalog);
  Json out = slurm_layout_to_json(layout);
  out["ClusterName"] = (*c)->name;
  return json_response(200, out);
}

bool job_id_ok(const std::string& id) {
  return !id.empty() && id.size() <= kMaxJobIdBytes &&
         std::all_of(id.begin(), id.end(),
                     [](char ch) { return (ch >= '0' && ch <= '9') || ch == '_' || ch == '+'; });
}

Result<SlurmNodeReport> parse_report(const Json& body) {
  ObjectReader r(body, "");
  SlurmNodeReport rep;
  rep.state = r.required_string("State");
  rep.reason = r.optional_string("Reason").value_or("");
  rep.jobs = r.optional_string_list("Jobs").value_or(std::vector<std::string>{});
  std::vector<std::string> ignored;
  r.check_unknown(FieldValidation::kStrict, ignored);
  GF_RETURN_IF_ERROR(r.status());
  if (rep.state.empty() || rep.state.size() > kMaxStateBytes ||
      !std::all_of(rep.state.begin(), rep.state.end(), [](char ch) {
        return (ch >= 'A' && ch <= 'Z') || ch == '_' || ch == '+' || ch == '*';
      })) {
    return validation_error(fmt::format(
        "State: expected Slurm's node state in capitals (IDLE, MIXED+DRAIN, …), at most {} bytes",
        kMaxStateBytes));
  }
  if (rep.reason.size() > kMaxReasonBytes)
    return validation_error(fmt::format("Reason: at most {} bytes", kMaxReasonBytes));
  if (printable(rep.reason, kMaxReasonBytes) != rep.reason)
    return validation_error("Reason: expected printable text");
  if (rep.jobs.size() > kMaxJobs)
    return validation_error(fmt::format("Jobs: at most {} jobs", kMaxJobs));
  for (size_t i = 0; i < rep.jobs.size(); ++i) {
    if (!job_id_ok(rep.jobs[i]))
      return validation_error(fmt::format("Jobs[{}]: expected a Slurm job id", i));
  }
  std::sort(rep.jobs.begin(), rep.jobs.end());
  rep.jobs.erase(std::unique(rep.jobs.begin(), rep.jobs.end()), rep.jobs.end());
  return rep;
}

HttpResponse post_node_slurm(Api& api, const HttpRequest& req) {
  const std::string cluster = req.path_params.at("name");
  const std::string node = req.path_params.at("id");
  {
    auto view = api.loop().view();
    auto c = slurm_cluster(*view, cluster);
    if (!c.ok()) return error_response(c.status());
    if (!(*c)->nodes.contains(node)) {
      return error_response(
          not_found_error("node \"" + printable(node, 100) + "\" not found in cluster " + cluster));
    }
  }
  auto docs = parse_documents(req.body);
  if (!docs.ok()) return error_response(docs.status());
  if (docs->size() != 1 || !docs->front().is_object())
    return error_response(validation_error("expected one JSON object"));
  auto rep = parse_report(docs->front());
  if (!rep.ok()) return error_response(rep.status());
  Request r;
  r.name = "NodeSlurmState";
  r.handle = [cluster, node, rep = *rep](const FleetState& s, Time) -> Result<Decision> {
    Decision d;
    d.response = Json{{"Recorded", false}};
    const Cluster* c = s.view().find_cluster(cluster);
    if (!c) return not_found_error("cluster \"" + cluster + "\" not found");
    auto it = c->nodes.find(node);
    if (it == c->nodes.end())
      return not_found_error("node \"" + node + "\" not found in cluster " + cluster);
    if (it->second.slurm == rep) return d;
    d.events.push_back(event_codec::to_event(
        cluster_events::NodeSlurmState{cluster, node, rep.state, rep.reason, rep.jobs}));
    d.response = Json{{"Recorded", true}};
    return d;
  };
  return Api::respond(api.write(std::move(r)));
}

}  // namespace

void register_slurm_agent_routes(Api& api) {
  Router& r = api.router();
  r.add("GET", "/v1/clusters/{name}/slurm/layout",
        [&api](const HttpRequest& req) { return get_layout(api, req); });
  r.add("POST", "/v1/clusters/{name}/nodes/{id}/slurm",
        [&api](const HttpRequest& req) { return post_node_slurm(api, req); });
}

}  // namespace gf
