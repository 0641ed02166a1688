// What the agents of real instances call (docs/local-cloud.md "The agent's API"), and the logs
// they keep:
//   POST /v1/clusters/{name}/nodes/{id}/agent/status    the instance started, or its lifecycle
//                                                       script ended (agent role)
//   GET  /v1/clusters/{name}/nodes/{id}/pods            the pods the node should run (agent role,
//                                                       or anyone who may read)
//   POST /v1/clusters/{name}/nodes/{id}/pods/{pod}/status
//                                                       what became of one of them (agent role)
//   GET  /v1/clusters/{name}/nodes/{id}/logs?source=lifecycle|agent&offset=
//   GET  /v1/objects/pods/{namespace}/{pod}/logs?container=&previous=&offset=
#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "api/api.h"
#include "orchestrator/slurm/slurm_conf.h"
#include "provision/slurm_layout.h"
#include "state/job_events.h"
#include "workload/pod_rules.h"
#include "workload/pod_spec.h"

namespace gf {

namespace {

constexpr int64_t kMaxReportedAge = 3600;  // seconds: an older "At" is not believed

Result<Json> one_body(const HttpRequest& req) {
  GF_ASSIGN_OR_RETURN(auto docs, parse_documents(req.body));
  if (docs.size() != 1 || !docs.front().is_object())
    return validation_error("expected one JSON object");
  return docs.front();
}

// The cluster and node a path names, from the published view.
Result<std::pair<const Cluster*, const Node*>> node_of(const FleetView& v, const HttpRequest& req) {
  const Cluster* c = v.find_cluster(req.path_params.at("name"));
  if (!c) return not_found_error("cluster \"" + req.path_params.at("name") + "\" not found");
  auto it = c->nodes.find(req.path_params.at("id"));
  if (it == c->nodes.end()) {
    return not_found_error("node \"" + req.path_params.at("id") + "\" not found in cluster " +
                           c->name);
  }
  return std::make_pair(c, &it->second);
}

// ---- agent status -------------------------------------------------------------------------

Result<CloudReport> agent_report(const HttpRequest& req, const Json& body, Time now) {
  ObjectReader r(body, "");
  const std::string phase = r.required_string("Phase");
  const std::optional<int64_t> at_us = r.optional_int("AtUs");
  const std::string message = r.optional_string("Message").value_or("");
  const std::string address = r.optional_string("Address").value_or("");
  std::vector<std::string> ignored;
  r.check_unknown(FieldValidation::kStrict, ignored);
  GF_RETURN_IF_ERROR(r.status());
  CloudReport rep;
  rep.cluster = req.path_params.at("name");
  rep.instance_id = req.path_params.at("id");
  rep.message = printable(message, 2000);
  rep.address = printable(address, 200);
  if (phase == "Started") {
    rep.kind = CloudReport::Kind::kLaunched;
  } else if (phase == "LifecycleSucceeded") {
    rep.kind = CloudReport::Kind::kRunning;
  } else if (phase == "LifecycleFailed") {
    rep.kind = CloudReport::Kind::kLifecycleFailed;
    rep.reason = LaunchOutcome::kLifecycleScriptFailure;
  } else {
    return validation_error(
        "Phase: expected Started, LifecycleSucceeded or LifecycleFailed, got \"" +
        printable(phase, 40) + "\"");
  }
  if (at_us) {
    const Time at = from_micros(*at_us);
    if (at <= now && at >= now - seconds(kMaxReportedAge)) rep.at = at;
  }
  return rep;
}

HttpResponse post_agent_status(Api& api, const HttpRequest& req) {
  if (!api.cloud_report_handler()) {
    return error_response(not_found_error(
        "this server's cloud runs no agents of its own (serve --cloud local does)"));
  }
  auto view = api.loop().view();
  if (auto n = node_of(*view, req); !n.ok()) return error_response(n.status());
  auto body_r = one_body(req);
  if (!body_r.ok()) return error_response(body_r.status());
  Json body = std::move(*body_r);
  auto rep_r = agent_report(req, body, api.clock().now());
  if (!rep_r.ok()) return error_response(rep_r.status());
  CloudReport rep = std::move(*rep_r);
  Request r;
  r.name = "AgentStatus";
  r.handle = [handler = api.cloud_report_handler(), rep](const FleetState& s, Time now) {
    return handler(s, now, rep);
  };
  return Api::respond(api.write(std::move(r)));
}

// ---- the node's pods ----------------------------------------------------------------------

struct PodOnNode {
  const Job* job;
  size_t index;
};

// The pod-set entry of the job's pod `index`.
const JobPodSet* pod_set_of(const Job& job, size_t index) {
  size_t i = 0;
  for (const JobPodSet& ps : job.pod_sets) {
    if (index < i + static_cast<size_t>(ps.count)) return &ps;
    i += ps.count;
  }
  return nullptr;
}

std::string address_of(const Cluster& c, const std::string& node) {
  auto it = c.nodes.find(node);
  if (it == c.nodes.end() || it->second.address.empty()) return node;
  return it->second.address;
}

// A cordoned node of a Slurm cluster is drained in Slurm too (docs/slurm.md), with the reason of
// the remediation that cordoned it: the one in flight, else the latest on the node.
std::optional<std::string> slurm_drain(const FleetView& v, const Cluster& c, const Node& n) {
  if (c.orchestrator != Orchestrator::kSlurm || (!n.cordoned && !n.maintenance))
    return std::nullopt;
  const remediate::Remediation* pick = nullptr;
  for (const auto& [id, r] : v.health_state().remediations) {
    if (r.cluster != c.name || r.node != n.instance_id) continue;
    const bool better = !pick ||
                        (remediate::in_flight(r.status) && !remediate::in_flight(pick->status)) ||
                        (remediate::in_flight(r.status) == remediate::in_flight(pick->status) &&
                         r.created_at > pick->created_at);
    if (better) pick = &r;
  }
  if (!pick) return std::string(kSlurmReasonPrefix) + "cordoned";
  return slurm_drain_reason(pick->id, pick->fault);
}

// The pods the node should run now: those of the jobs placed on it, GPUs given out in job
// submission order and pod order from index 0 of the node.
// A pod of a gang on a real Slurm cluster runs inside one Slurm allocation (docs/slurm.md):
// which, on which nodes, in which partition, and whether this node's agent submits it.
Json slurm_allocation(const Cluster& c, const Job& job, size_t index) {
  std::vector<std::string> names;
  std::string partition;
  int64_t here = 0;
  const std::string& node = job.pod_nodes[index];
  for (const std::string& id : job.pod_nodes) {
    auto it = c.nodes.find(id);
    if (it == c.nodes.end()) continue;
    names.push_back(slurm_node_name(it->second));
    here += id == node;
    const InstanceGroup* g = c.find_group(it->second.group);
    if (partition.empty() && g && !g->spec.partitions.empty()) partition = g->spec.partitions[0];
  }
  const std::string hostlist = compress_hostlist(names);
  const size_t distinct = expand_hostlist(hostlist).size();
  return Json{{"Allocation", fmt::format("gf-{}-{}", job.id, job.placements)},
              {"Nodes", hostlist},
              {"NodeCount", distinct},
              {"Partition", partition},
              {"NodeName", slurm_node_name(c.nodes.at(node))},
              {"PodsOnNode", here},
              {"Submitter", index == 0}};
}

Result<Json> node_pods(const FleetView& v, const Cluster& c, const Node& n, const Catalog& catalog,
                       bool real_slurm) {
  std::vector<PodOnNode> pods;
  for (const auto& [id, job] : v.jobs) {
    if (is_terminal(job->status) || !job->admitted || job->cluster != c.name) continue;
    for (size_t i = 0; i < job->pod_nodes.size(); ++i) {
      if (job->pod_nodes[i] == n.instance_id) pods.push_back({job.get(), i});
    }
  }
  std::sort(pods.begin(), pods.end(), [](const PodOnNode& a, const PodOnNode& b) {
    return std::tie(a.job->key, a.index) < std::tie(b.job->key, b.index);
  });
  const InstanceTypeInfo* type = catalog.find(n.instance_type);
  const int32_t node_gpus = type ? type->gpus : 0;
  int32_t next_gpu = 0;
  Json out = Json::array();
  for (const PodOnNode& p : pods) {
    workload::PodPlacement where;
    where.index = p.index;
    where.node = n.instance_id;
    where.node_address = address_of(c, n.instance_id);
    where.master_address = address_of(c, p.job->pod_nodes.front());
    where.placement = p.job->placements;
    const JobPodSet* set = pod_set_of(*p.job, p.index);
    const int64_t want = set ? workload::pod_gpus(*set, node_gpus) : 0;
    for (int64_t g = 0; g < want && next_gpu < node_gpus; ++g) where.gpus.push_back(next_gpu++);
    GF_ASSIGN_OR_RETURN(Json spec, workload::pod_spec(*p.job, where));
    if (real_slurm) spec["Slurm"] = slurm_allocation(c, *p.job, p.index);
    out.push_back(std::move(spec));
  }
  Json answer{{"Node", n.instance_id}, {"Pods", std::move(out)}};
  if (auto drain = slurm_drain(v, c, n)) answer["SlurmDrain"] = *drain;
  return answer;
}

HttpResponse get_node_pods(Api& api, const HttpRequest& req) {
  auto view = api.loop().view();
  auto n = node_of(*view, req);
  if (!n.ok()) return error_response(n.status());
  // Only a compute node runs a slurmd (docs/slurm.md); a pod elsewhere runs as processes.
  const InstanceGroup* group = n->first->find_group(n->second->group);
  const bool real_slurm = api.cloud_report_handler() &&
                          n->first->orchestrator == Orchestrator::kSlurm && group &&
                          group->spec.node_type == NodeType::kCompute;
  auto pods = node_pods(*view, *n->first, *n->second, *api.clusters().catalog, real_slurm);
  if (!pods.ok()) return error_response(pods.status());
  return json_response(200, *pods);
}

// ---- pod status ---------------------------------------------------------------------------

struct PodReport {
  std::string job_id;
  int64_t placement = 0;
  PodState state;
};

Result<PodReport> parse_pod_report(const Json& body, const std::string& node) {
  ObjectReader r(body, "");
  PodReport p;
  p.job_id = r.required_string("JobId");
  p.placement = r.required_int("Placement");
  p.state.phase = r.required_string("Phase");
  const int64_t exit_code = r.optional_int("ExitCode").value_or(0);
  const int64_t restarts = r.optional_int("Restarts").value_or(0);
  if (exit_code < 0 || exit_code > 255 + 128) r.fail("ExitCode", "expected 0 to 383");
  if (restarts < 0 || restarts > 1'000'000) r.fail("Restarts", "expected 0 to 1000000");
  p.state.exit_code = static_cast<int32_t>(exit_code);
  p.state.restarts = static_cast<int32_t>(restarts);
  p.state.message = printable(r.optional_string("Message").value_or(""), 1000);
  p.state.node = node;
  std::vector<std::string> ignored;
  r.check_unknown(FieldValidation::kStrict, ignored);
  GF_RETURN_IF_ERROR(r.status());
  const std::string& ph = p.state.phase;
  if (ph != "Pending" && ph != "Running" && ph != "Succeeded" && ph != "Failed" &&
      ph != "Unknown") {
    return validation_error(
        "Phase: expected Pending, Running, Succeeded, Failed or Unknown, got \"" +
        printable(ph, 40) + "\"");
  }
  if (p.state.restarts < 0) return validation_error("Restarts: must be >= 0");
  return p;
}

// The events one pod report makes: its status, and the job's end when the pods decide it.
Result<Decision> decide_pod_report(const FleetState& s, const std::string& node,
                                   const std::string& pod, const PodReport& p) {
  const Job* job = s.view().job(p.job_id);
  if (job == nullptr) return not_found_error("job \"" + p.job_id + "\" not found");
  const std::vector<std::string> names = workload::pod_names(*job);
  auto it = std::find(names.begin(), names.end(), pod);
  if (it == names.end()) return not_found_error("job " + job->name + " has no pod " + pod);
  Decision d;
  const size_t index = static_cast<size_t>(it - names.begin());
  const bool current = p.placement == job->placements && !is_terminal(job->status) &&
                       index < job->pod_nodes.size() && job->pod_nodes[index] == node;
  if (!current) {  // a pod of an earlier placement, or of a job already over: the node stops it
    d.response = Json{{"Stale", true}};
    return d;
  }
  auto before = job->pod_states.find(pod);
  if (before != job->pod_states.end() && before->second == p.state) {
    d.response = Json{{"Stale", false}};
    return d;
  }
  d.events.push_back(
      event_codec::to_event(job_events::PodStatus{job->id, pod, p.placement, p.state}));
  Job after = *job;
  after.pod_states[pod] = p.state;
  // A gang on a real Slurm cluster: no node restarts a failed pod; its restartPolicy restarts the
  // whole gang, a new placement and allocation (docs/slurm.md "States").
  const Cluster* c = s.view().find_cluster(job->cluster);
  // A simulated node (no agent address) restarts nothing either: its gang follows the same rule.
  const bool has_node = c && c->nodes.contains(node);
  const bool simulated = has_node && c->nodes.at(node).address.empty();
  const bool slurm_gang = has_node && c->orchestrator == Orchestrator::kSlurm && !simulated;
  const std::string_view where = slurm_gang ? "in Slurm" : "on its node";
  if (auto restart = slurm_gang || simulated
                         ? workload::slurm_gang_restart(*job, pod, p.state, where)
                         : std::nullopt) {
    d.events.push_back(event_codec::to_event(job_events::Interrupted{
        job->id, node, *restart, std::string(job_events::kInterruptPodFailed)}));
  } else if (auto verdict = workload::pod_verdict(after)) {
    d.events.push_back(
        event_codec::to_event(job_events::Finished{job->id, verdict->status, verdict->reason}));
  }
  d.response = Json{{"Stale", false}};
  return d;
}

HttpResponse post_pod_status(Api& api, const HttpRequest& req) {
  auto view = api.loop().view();
  if (auto n = node_of(*view, req); !n.ok()) return error_response(n.status());
  auto body_r = one_body(req);
  if (!body_r.ok()) return error_response(body_r.status());
  Json body = std::move(*body_r);
  const std::string node = req.path_params.at("id");
  auto p_r = parse_pod_report(body, node);
  if (!p_r.ok()) return error_response(p_r.status());
  PodReport p = std::move(*p_r);
  Request r;
  r.name = "PodStatus";
  r.handle = [node, pod = req.path_params.at("pod"), p](const FleetState& s, Time) {
    return decide_pod_report(s, node, pod, p);
  };
  return Api::respond(api.write(std::move(r)));
}

// ---- logs ---------------------------------------------------------------------------------

Result<int64_t> offset_param(const HttpRequest& req) {
  const std::string text = req.query_or("offset", "");
  if (text.empty()) return int64_t{-1};
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size() || v < 0)
    return validation_error("offset: expected a byte offset >= 0, got \"" + printable(text, 40) +
                            "\"");
  return v;
}

HttpResponse log_answer(Api& api, const Api::LogQuery& q) {
  if (!api.log_source()) {
    return error_response(not_found_error(
        "no logs: this server's cloud runs no processes (the simulated cloud); serve --cloud "
        "local keeps the logs of its instances and pods"));
  }
  auto chunk = api.log_source()(q);
  if (!chunk.ok()) return error_response(chunk.status());
  HttpResponse r;
  r.content_type = "text/plain; charset=utf-8";
  r.body = std::move(chunk->text);
  r.headers["X-Log-Offset"] = std::to_string(chunk->next_offset);
  return r;
}

HttpResponse get_node_logs(Api& api, const HttpRequest& req) {
  auto view = api.loop().view();
  if (auto n = node_of(*view, req); !n.ok()) return error_response(n.status());
  Api::LogQuery q;
  q.cluster = req.path_params.at("name");
  q.node = req.path_params.at("id");
  q.source = req.query_or("source", "lifecycle");
  if (q.source != "lifecycle" && q.source != "agent") {
    return error_response(validation_error("source: expected lifecycle or agent, got \"" +
                                           printable(q.source, 40) + "\""));
  }
  auto q_offset_r = offset_param(req);
  if (!q_offset_r.ok()) return error_response(q_offset_r.status());
  q.offset = *q_offset_r;
  return log_answer(api, q);
}

// A pod by namespace and name: the job it belongs to and the node it runs (or last ran) on.
// The pod `pod` of a job in `ns` the caller may see (a team sees its own jobs' pods only).
Result<Api::LogQuery> find_pod(const HttpRequest& req, const FleetView& v, const std::string& ns,
                               const std::string& pod) {
  for (const auto& [id, job] : v.jobs) {
    if (!job->ns.empty() && job->ns != ns) continue;
    if (!may_see_job(req, v, *job)) continue;
    if (pod.rfind(job->name + "-", 0) != 0) continue;
    const std::vector<std::string> names = workload::pod_names(*job);
    auto it = std::find(names.begin(), names.end(), pod);
    if (it == names.end()) continue;
    const size_t index = static_cast<size_t>(it - names.begin());
    Api::LogQuery q;
    q.source = "pod";
    q.pod = pod;
    if (index < job->pod_nodes.size() && !job->cluster.empty()) {
      q.cluster = job->cluster;
      q.node = job->pod_nodes[index];
      return q;
    }
    if (auto s = job->pod_states.find(pod); s != job->pod_states.end() && !s->second.node.empty()) {
      q.node = s->second.node;
      return q;
    }
    return not_found_error("pod " + pod + " has not run on a node yet");
  }
  return not_found_error("pod \"" + pod + "\" not found in namespace " + ns);
}

HttpResponse get_pod_logs(Api& api, const HttpRequest& req) {
  auto view = api.loop().view();
  auto q_r = find_pod(req, *view, req.path_params.at("namespace"), req.path_params.at("pod"));
  if (!q_r.ok()) return error_response(q_r.status());
  Api::LogQuery q = std::move(*q_r);
  q.container = req.query_or("container", "");
  const std::string previous = req.query_or("previous", "false");
  if (previous != "true" && previous != "false")
    return error_response(validation_error("previous: expected true or false"));
  q.previous = previous == "true";
  auto q_offset_r = offset_param(req);
  if (!q_offset_r.ok()) return error_response(q_offset_r.status());
  q.offset = *q_offset_r;
  return log_answer(api, q);
}

}  // namespace

void register_node_agent_routes(Api& api) {
  Router& r = api.router();
  r.add("POST", "/v1/clusters/{name}/nodes/{id}/agent/status",
        [&api](const HttpRequest& req) { return post_agent_status(api, req); });
  r.add("GET", "/v1/clusters/{name}/nodes/{id}/pods",
        [&api](const HttpRequest& req) { return get_node_pods(api, req); });
  r.add("POST", "/v1/clusters/{name}/nodes/{id}/pods/{pod}/status",
        [&api](const HttpRequest& req) { return post_pod_status(api, req); });
  r.add("GET", "/v1/clusters/{name}/nodes/{id}/logs",
        [&api](const HttpRequest& req) { return get_node_logs(api, req); });
  r.add("GET", "/v1/objects/pods/{namespace}/{pod}/logs",
        [&api](const HttpRequest& req) { return get_pod_logs(api, req); });
}

}  // namespace gf
