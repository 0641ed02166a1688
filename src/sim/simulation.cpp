#include "sim/simulation.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include "cloud/sim/sim_cloud.h"
#include "journal/observed/observed_journal.h"
#include "journal/sqlite/sqlite_journal.h"
#include "loop/virtual_runner.h"
#include "model/catalog.h"
#include "runtime/runtime.h"
#include "sim/fleet_kpis.h"
#include "sim/metrics_replay.h"
#include "state/cluster_events.h"
#include "workload/pod_rules.h"

namespace gf {

namespace {

namespace fs = std::filesystem;

// Steps whose components are not built yet: accepted, answered 501 and recorded like any call.
Status not_built(StepKind kind) {
  std::string why;
  switch (kind) {
    case StepKind::kFault:
    case StepKind::kClear:
      why = std::string(step_kind_name(kind)) +
            " steps need health detectors (docs/health.md), not built yet";
      break;
    case StepKind::kApprove:
    case StepKind::kReject:
    case StepKind::kCancel:
    case StepKind::kRequest:
      why = std::string(step_kind_name(kind)) +
            " steps need remediations (docs/remediation.md, /v1/remediations), not built yet";
      break;
    case StepKind::kCall:
    case StepKind::kApply:
    case StepKind::kDelete:
    case StepKind::kPriority:
      break;  // executed by the simulation
  }
  return Status(ErrorCode::kNotImplemented, why);
}

Json response_body(const HttpResponse& r) {
  if (r.body.empty()) return nullptr;
  auto j = parse_json(r.body);
  return j.ok() ? *j : Json(r.body);
}

double round4(double x) { return std::round(x * 1e4) / 1e4; }

// Writes one output file whole, reporting a failure to write as an error.
Status write_file(const fs::path& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
  out.close();
  if (!out) return unavailable_error("cannot write " + path.string());
  return ok_status();
}

// Snapshots and state.json list jobs and pods only up to this many jobs (docs/scenarios.md).
constexpr size_t kMaxListedJobs = 5000;

// GPU-hours busy and queueing delays (submission to first start) of jobs, as metrics.json's
// utilization and queueingDelay count them.
struct JobSums {
  double busy = 0;  // GPU-hours
  std::vector<double> delays;
  int64_t never_started = 0;
  void add(const Job& j, Time end) {
    const int64_t gpus = job_gpus(j);
    for (const JobRun& r : j.runs) {
      busy += static_cast<double>((r.end.value_or(end) - r.start).count()) *
              static_cast<double>(gpus) / 3.6e9;
    }
    if (!j.runs.empty()) {
      delays.push_back(static_cast<double>((j.runs.front().start - j.created_at).count()) / 1e6);
    } else {
      never_started += 1;
    }
  }
};

// A job that leaves the run's state (retention) keeps its part of the fleet KPIs and of the job
// metrics (a retired job has finished: none of its runs is open).
class RetiredJobs final : public EventObserver {
 public:
  explicit RetiredJobs(FleetKpis& kpis) : kpis_(kpis) {}
  Status observe(const FleetState& state, const EventRecord& record, const Json&) override {
    if (record.type == event_type::kRetentionApplied) {
      for (const JobPtr& job : state.retired_jobs()) {
        kpis_.add_retired(*job);
        sums_.add(*job, record.time);
      }
    }
    return ok_status();
  }
  const JobSums& sums() const { return sums_; }
  Status observe_submitted(const FleetState&, const EventRecord&, const std::string&) override {
    return ok_status();
  }
  Status restore(const FleetState&) override { return ok_status(); }
  void publish(const FleetState&, FleetView&) override {}

 private:
  FleetKpis& kpis_;
  JobSums sums_;
};

class Simulation {
 public:
  Simulation(const Scenario& scenario, const SimulationOptions& options)
      : scenario_(scenario), options_(options), out_(options.out_dir) {}

  Result<SimulationReport> run() {
    report_.scenario = scenario_.name;
    report_.seed = options_.seed.value_or(scenario_.seed.value_or(1));
    report_.until = options_.until.value_or(scenario_.last_scheduled() + kDefaultSimTail);
    if (options_.snapshot_every && *options_.snapshot_every <= Duration(0)) {
      return validation_error("--snapshot-every: must be greater than 0");
    }
    GF_RETURN_IF_ERROR(prepare_out_dir());

    // The metrics follow the journal as it is appended; the journal itself is written to
    // DIR/journal.db only when asked (`sqlite3 DIR/journal.db` then shows every fact recorded).
    kpis_ = std::make_unique<FleetKpis>(kSimEpoch, end());
    replay_ = std::make_unique<MetricsReplay>(kpis_.get());
    if (options_.keep_journal) {
      const fs::path journal_path = out_ / "journal.db";
      auto journal = SqliteJournal::open(journal_path.string(), {.fsync = false});
      if (!journal.ok()) return journal.status().with_prefix("journal " + journal_path.string());
      stored_ = std::move(*journal);
    }
    journal_ = std::make_unique<ObservedJournal>(
        stored_.get(), [this](const EventRecord& rec) { return replay_->on_record(rec); },
        &MetricsReplay::reads_payload);

    RuntimeOptions ropts;
    ropts.seed = report_.seed;
    scenario_.config.apply_to(ropts.provision);
    scenario_.config.apply_to(ropts.scheduler);
    SimCloudConfig cloud = scenario_.cloud;
    cloud.epoch = kSimEpoch;
    ropts.cloud = sim_cloud(std::move(cloud));
    ropts.api.drive_loop_inline = true;
    // A run never recovers from its journal: snapshots of the whole state would only cost time.
    ropts.loop.snapshot_every_events = 0;
    if (options_.job_retention) {
      ropts.retention->job_retention = *options_.job_retention;
      ropts.retention->event_retention = *options_.job_retention;
    }
    runtime_ = std::make_unique<Runtime>(ropts, clock_, *journal_);
    retired_ = std::make_unique<RetiredJobs>(*kpis_);
    runtime_->loop().add_observer(retired_.get());
    GF_RETURN_IF_ERROR(runtime_->recover().with_prefix("recovering the journal"));
    runner_ = std::make_unique<VirtualRunner>(runtime_->loop(), clock_);
    if (scenario_.failures) {
      injector_ = std::make_unique<FailureInjector>(*scenario_.failures, report_.seed);
    }

    GF_RETURN_IF_ERROR(run_timeline());
    GF_RETURN_IF_ERROR(write_outputs());
    if (stored_) report_.files.push_back((out_ / "journal.db").string());
    return std::move(report_);
  }

 private:
  Status prepare_out_dir() {
    std::error_code ec;
    fs::create_directories(out_, ec);
    if (ec) return unavailable_error("--out: cannot create " + out_.string() + ": " + ec.message());
    // A previous run's journal would be replayed into this one, or be taken for this run's.
    for (const char* name : {"journal.db", "journal.db-wal", "journal.db-shm", "snapshots.jsonl"}) {
      fs::remove(out_ / name, ec);
      if (ec) {
        return unavailable_error("--out: cannot remove " + (out_ / name).string() + ": " +
                                 ec.message());
      }
    }
    return ok_status();
  }

  Time end() const { return kSimEpoch + report_.until; }

  // The fleet as the loop's own state has it. The loop runs in manual mode on this thread and
  // is idle between two runner calls, so the simulation reads its state directly: building a
  // published view (for each failure-model sweep) would share the job maps' leaves with it, and
  // the next job event would copy a leaf (docs/performance.md "Fleet-scale simulation").
  const FleetView& fleet() const { return runtime_->loop().state().view(); }

  // Steps and snapshots in time order; at equal times the step runs first, so a snapshot at T
  // shows the fleet after everything that happened at T.
  Status run_timeline() {
    std::string calls;
    std::string snapshots;
    const std::optional<Duration> every = options_.snapshot_every;
    Time next_snapshot = every ? kSimEpoch + *every : Time::max();
    size_t i = 0;
    size_t ti = 0;  // next trace job
    const std::vector<TraceJob>& trace = scenario_.trace_jobs;
    while (true) {
      const bool step_due = i < scenario_.steps.size() && scenario_.steps[i].at <= report_.until;
      const bool trace_due = ti < trace.size() && trace[ti].at <= report_.until;
      const bool snapshot_due = next_snapshot <= end();
      const Time fail_at = injector_ ? injector_->next_due() : Time::max();
      const bool fail_due = fail_at <= end();
      if (!step_due && !snapshot_due && !trace_due && !fail_due) break;
      const Time step_at = step_due ? kSimEpoch + scenario_.steps[i].at : Time::max();
      const Time trace_at = trace_due ? kSimEpoch + trace[ti].at : Time::max();
      // At equal times: steps, then trace jobs, then faults, then the snapshot.
      if (step_due && step_at <= next_snapshot && step_at <= trace_at && step_at <= fail_at) {
        runner_->run_until(step_at);
        GF_RETURN_IF_ERROR(loop_health());
        calls += execute(scenario_.steps[i]).dump() + "\n";
        ++i;
      } else if (trace_due && trace_at <= next_snapshot && trace_at <= fail_at) {
        runner_->run_until(trace_at);
        GF_RETURN_IF_ERROR(loop_health());
        for (; ti < trace.size() && kSimEpoch + trace[ti].at == trace_at; ++ti) {
          submit_trace_job(trace[ti], calls);
        }
      } else if (fail_due && fail_at <= next_snapshot) {
        runner_->run_until(fail_at);
        GF_RETURN_IF_ERROR(loop_health());
        inject_failures(calls);
      } else {
        runner_->run_until(next_snapshot);
        GF_RETURN_IF_ERROR(loop_health());
        GF_ASSIGN_OR_RETURN(Json snap, fleet_object());
        snapshots += snap.dump() + "\n";
        ++report_.snapshots;
        next_snapshot += *every;
      }
    }
    report_.steps_skipped = scenario_.steps.size() - i;
    report_.trace_jobs_skipped = trace.size() - ti;
    runner_->run_until(end());
    GF_RETURN_IF_ERROR(loop_health());
    GF_RETURN_IF_ERROR(write_file(out_ / "calls.jsonl", calls));
    report_.files.push_back((out_ / "calls.jsonl").string());
    if (every) {
      GF_RETURN_IF_ERROR(write_file(out_ / "snapshots.jsonl", snapshots));
      report_.files.push_back((out_ / "snapshots.jsonl").string());
    }
    return ok_status();
  }

  Status loop_health() const {
    if (runtime_->loop().failed()) {
      return unavailable_error("the control loop stopped (journal failure) at " +
                               format_iso8601(clock_.now()));
    }
    return ok_status();
  }

  Json stamp(Json record) const {
    record["t"] = seconds_since_start(clock_.now());
    record["EventTime"] = format_iso8601(clock_.now());
    return record;
  }

  HttpResponse call(const std::string& method, const std::string& path,
                    std::map<std::string, std::string> query = {}, std::string body = "",
                    const std::string& as = "anonymous") {
    HttpRequest req;
    req.method = method;
    req.path = path;
    req.query = std::move(query);
    req.body = std::move(body);
    req.headers["x-gpufleet-user"] = as;
    if (!req.body.empty()) req.headers["content-type"] = "application/json";
    return runtime_->api().handle(std::move(req));
  }

  // `node: GROUP/INDEX` (the INDEX-th live node of that group in launch order, at this moment)
  // or `node: i-…` → (cluster, instance id).
  Result<std::pair<std::string, std::string>> resolve_node(const std::string& ref) const {
    const FleetView* view = &fleet();
    if (ref.rfind("i-", 0) == 0) {
      for (const auto& [name, c] : view->clusters) {
        if (c->nodes.contains(ref)) return std::make_pair(name, ref);
      }
      return not_found_error("node: no cluster has node " + ref);
    }
    const size_t slash = ref.rfind('/');
    const std::string group = ref.substr(0, slash);
    const size_t index = std::stoul(ref.substr(slash + 1));
    for (const auto& [name, c] : view->clusters) {
      if (!c->find_group(group)) continue;
      std::vector<const Node*> live;
      for (const auto& [id, n] : c->nodes) {
        if (n.group == group && n.is_live()) live.push_back(&n);
      }
      std::sort(live.begin(), live.end(),
                [](const Node* a, const Node* b) { return a->launch_order < b->launch_order; });
      if (index < live.size()) return std::make_pair(name, live[index]->instance_id);
      return not_found_error(
          fmt::format("node: group {} of cluster {} has {} live node(s); there is no index {}",
                      group, name, live.size(), index));
    }
    return not_found_error("node: no cluster has an instance group named " + group);
  }

  // fault / clear / approve / reject / cancel / request (docs/scenarios.md) as the API calls they
  // stand for.
  HttpResponse health_step(const ScenarioStep& step) {
    Result<std::pair<std::string, std::string>> node = resolve_node(step.value.value("node", ""));
    if (!node.ok()) return error_response(node.status());
    const auto& [cluster, id] = *node;
    const std::string base = "/v1/clusters/" + cluster + "/nodes/" + id;
    switch (step.kind) {
      case StepKind::kFault: {
        Json body = {{"Signal", step.value.at("signal")}};
        if (step.value.contains("clearedBy")) body["ClearedBy"] = step.value.at("clearedBy");
        if (step.value.contains("recurs")) body["Recurs"] = step.value.at("recurs");
        return call("POST", base + "/signals", {}, body.dump(), step.as);
      }
      case StepKind::kClear:
        return call("POST", base + "/signals/clear", {}, "{}", step.as);
      case StepKind::kRequest: {
        Json body = {{"ClusterName", cluster},
                     {"NodeId", id},
                     {"Action", step.value.value("action", "")},
                     {"Detector", step.value.value("detector", "scenario")}};
        if (step.value.contains("requestId")) body["RequestId"] = step.value.at("requestId");
        return call("POST", "/v1/remediations", {}, body.dump(), step.as);
      }
      case StepKind::kApprove:
      case StepKind::kReject:
      case StepKind::kCancel: {
        const FleetView* view = &fleet();
        const remediate::Remediation* open = view->health_state().open_remediation(id);
        if (!open)
          return error_response(not_found_error("node " + id + " has no open remediation"));
        const std::string verb = step.kind == StepKind::kApprove  ? "approve"
                                 : step.kind == StepKind::kReject ? "reject"
                                                                  : "cancel";
        Json body = Json::object();
        if (step.value.contains("reason")) body["Reason"] = step.value.at("reason");
        return call("POST", "/v1/remediations/" + open->id + "/" + verb, {}, body.dump(), step.as);
      }
      default:
        return error_response(not_built(step.kind));
    }
  }

  // One trace row as the PyTorchJob it stands for (docs/scenarios.md "Traces"). Refused ones are
  // counted and recorded in calls.jsonl; accepted ones only counted (a trace has many rows).
  void submit_trace_job(const TraceJob& job, std::string& calls) {
    const TraceSpec& spec = scenario_.traces[job.trace];
    HttpResponse r = call("POST", "/v1/apply", {}, trace_job_manifest(job, spec).dump(), "trace");
    ++report_.trace_jobs_submitted;
    if (r.status >= 400) {
      ++report_.trace_jobs_refused;
      calls += stamp(Json{{"trace", spec.file},
                          {"row", job.row},
                          {"job", job.ns + "/" + job.name},
                          {"call", "POST /v1/apply"},
                          {"as", "trace"},
                          {"status", r.status},
                          {"body", response_body(r)}})
                   .dump() +
               "\n";
    }
  }

  // A fault that stops jobs: every gang with a pod on the node fails that pod through the
  // pod-status API, as a node agent reports a crashed process, so the job's restartPolicy
  // restarts the gang (docs/scenarios.md "Failures"). Only while the fault is still there.
  void stop_gangs(const FaultEffect& e) {
    const remediate::HealthState& health = fleet().health_state();
    const auto alert = health.open_alerts.lower_bound(e.node + "|");
    if (alert == health.open_alerts.end() || !alert->first.starts_with(e.node + "|")) return;
    std::vector<std::pair<std::string, Json>> reports;
    for (const auto& [id, job] : fleet().jobs) {
      if (job->status != JobStatus::kRunning || job->cluster != e.cluster) continue;
      const std::vector<std::string> names = workload::pod_names(*job);
      for (size_t i = 0; i < job->pod_nodes.size() && i < names.size(); ++i) {
        if (job->pod_nodes[i] != e.node) continue;
        reports.emplace_back(names[i], Json{{"JobId", job->id},
                                            {"Placement", job->placements},
                                            {"Phase", "Failed"},
                                            {"ExitCode", 1},
                                            {"Message", "node fault (" + e.cause + ")"}});
        break;  // one failed pod restarts the gang
      }
    }
    for (const auto& [pod, body] : reports) {
      call("POST", "/v1/clusters/" + e.cluster + "/nodes/" + e.node + "/pods/" + pod + "/status",
           {}, body.dump(), "failure-model");
      ++report_.operator_actions["gang-stopped"];
    }
  }

  // The failure model's faults due now, as signals calls, what they do to the gangs on their
  // nodes, then what the on-call person does.
  void inject_failures(std::string& calls) {
    const Time now = clock_.now();
    std::vector<FaultInjection> faults;
    std::vector<OperatorAction> actions;
    {
      const FleetView* view = &fleet();
      faults = injector_->due(runtime_->loop().state(), now);
      actions = injector_->operator_actions(*view, now);
    }
    for (const FaultInjection& f : faults) {
      if (!f.injected) continue;
      Json body = {{"Signal", f.signal}};
      if (!f.cleared_by.empty()) body["ClearedBy"] = f.cleared_by;
      HttpResponse r = call("POST", "/v1/clusters/" + f.cluster + "/nodes/" + f.node + "/signals",
                            {}, body.dump(), "failure-model");
      if (r.status >= 400) {
        calls +=
            stamp(Json{{"fault", f.cause},
                       {"node", f.node},
                       {"call", "POST /v1/clusters/" + f.cluster + "/nodes/" + f.node + "/signals"},
                       {"as", "failure-model"},
                       {"status", r.status},
                       {"body", response_body(r)}})
                .dump() +
            "\n";
      }
    }
    for (const FaultEffect& e : injector_->due_effects(now)) {
      if (e.stop) {
        stop_gangs(e);
      } else {
        call("POST", "/v1/clusters/" + e.cluster + "/nodes/" + e.node + "/signals/clear", {}, "{}",
             "failure-model");
      }
    }
    for (const OperatorAction& a : actions) {
      HttpResponse r = call("POST", a.path, {}, a.body.dump(), a.as);
      ++report_.operator_actions[a.what];
      (void)r;  // a remediation that moved on meanwhile answers 409: nothing to do
    }
  }

  Json execute(const ScenarioStep& step) {
    HttpResponse r;
    if (step.kind == StepKind::kCall) {
      r = call(step.method, step.path, step.query, step.body ? step.body->dump() : "", step.as);
    } else if (step.kind == StepKind::kApply) {
      // One document, or several as a YAML multi-document stream.
      std::string body;
      if (step.value.is_array()) {
        for (const Json& doc : step.value) body += "---\n" + to_yaml(doc) + "\n";
      } else {
        body = step.value.dump();
      }
      r = call("POST", "/v1/apply", {}, std::move(body), step.as);
    } else if (step.kind == StepKind::kDelete) {
      std::string plural = step.value.value("kind", "");
      for (char& c : plural) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      plural += plural.ends_with("y") ? "" : "s";
      if (plural.ends_with("y")) plural = plural.substr(0, plural.size() - 1) + "ies";
      r = call("DELETE",
               "/v1/objects/" + plural + "/" +
                   step.value.value("namespace", std::string("default")) + "/" +
                   step.value.value("name", ""),
               {}, "", step.as);
    } else if (step.kind == StepKind::kPriority) {
      r = call("PATCH", "/v1/service-jobs/" + step.value.value("serviceJob", ""), {},
               Json{{"schedulingPriority", step.value.value("value", 0)}}.dump(), step.as);
    } else {
      r = health_step(step);
    }
    ++report_.steps_run;
    report_.steps_failed += r.status >= 400;
    report_.steps_not_implemented += r.status == 501;
    return stamp(Json{{"step", step.index},
                      {"call", step.label()},
                      {"as", step.as},
                      {"status", r.status},
                      {"body", response_body(r)}});
  }

  Result<Json> get(const std::string& path, std::map<std::string, std::string> query = {}) {
    HttpResponse r = call("GET", path, std::move(query));
    if (r.status != 200) {
      return internal_error(fmt::format("GET {} answered {}: {}", path, r.status, r.body));
    }
    return response_body(r);
  }

  // The snapshot / state.json object: the API's own shapes, read through its handlers.
  Result<Json> fleet_object() {
    GF_ASSIGN_OR_RETURN(Json list, get("/v1/clusters"));
    Json clusters = Json::array();
    Json nodes = Json::object();
    for (const auto& summary : list["ClusterSummaries"]) {
      const std::string name = summary.value("ClusterName", "");
      GF_ASSIGN_OR_RETURN(Json described, get("/v1/clusters/" + name));
      clusters.push_back(std::move(described));
      GF_ASSIGN_OR_RETURN(Json listed, get("/v1/clusters/" + name + "/nodes"));
      nodes[name] = std::move(listed["ClusterNodeSummaries"]);
    }
    // A fleet-scale run (a trace) has tens of thousands of jobs: listing each in every snapshot
    // would write gigabytes; metrics.json has what they add up to (docs/scenarios.md).
    const size_t job_count = fleet().jobs.size();
    const bool list_jobs = job_count <= kMaxListedJobs;
    Json jobs = Json{{"items", Json::array()}};
    Json pods = Json{{"items", Json::array()}};
    if (list_jobs) {
      GF_ASSIGN_OR_RETURN(jobs, get("/v1/objects/pytorchjobs"));
      GF_ASSIGN_OR_RETURN(pods, get("/v1/objects/pods"));
    }
    Json service_jobs = Json{{"jobSummaryList", Json::array()}};
    if (list_jobs) {
      GF_ASSIGN_OR_RETURN(service_jobs, get("/v1/service-jobs"));
    }
    GF_ASSIGN_OR_RETURN(Json alerts, get("/v1/alerts"));
    GF_ASSIGN_OR_RETURN(Json remediations, get("/v1/remediations"));
    GF_ASSIGN_OR_RETURN(Json hosts, get("/v1/hosts"));
    GF_ASSIGN_OR_RETURN(Json tickets, get("/v1/tickets"));
    Json described = Json::array();
    for (const Json& sj : service_jobs["jobSummaryList"]) {
      if (sj.value("jobId", "").empty()) continue;
      GF_ASSIGN_OR_RETURN(Json d, get("/v1/service-jobs/" + sj.value("jobId", "")));
      described.push_back(std::move(d));
    }
    Json out{{"clusters", std::move(clusters)},
             {"nodes", std::move(nodes)},
             {"jobs", std::move(jobs["items"])},
             {"pods", std::move(pods["items"])},
             {"serviceJobs", std::move(described)},
             {"alerts", std::move(alerts["Alerts"])},
             {"remediations", std::move(remediations["Remediations"])},
             {"hosts", std::move(hosts["Hosts"])},
             {"tickets", std::move(tickets["Tickets"])}};
    if (!list_jobs) out["jobsOmitted"] = job_count;
    return stamp(std::move(out));
  }

  Status write_outputs() {
    // events.jsonl: every user event, oldest first, in the envelope GET /v1/events answers.
    // Written a megabyte at a time: the whole file (100 MB for a two-month trace) is never held.
    const FleetView* view = &fleet();
    {
      const fs::path path = out_ / "events.jsonl";
      std::ofstream file(path, std::ios::binary | std::ios::trunc);
      std::string chunk;
      for (size_t i = 0; i < view->events.size(); ++i) {
        const UserEvent& e = view->events.at(i);
        chunk += e.to_wire_text({{"t", seconds_since_start(e.time)}});
        chunk += '\n';
        if (chunk.size() >= (1u << 20) || i + 1 == view->events.size()) {
          file.write(chunk.data(), static_cast<std::streamsize>(chunk.size()));
          chunk.clear();
        }
      }
      file.close();
      if (!file) return unavailable_error("cannot write " + path.string());
    }
    report_.events = view->events.size();
    report_.files.push_back((out_ / "events.jsonl").string());

    GF_ASSIGN_OR_RETURN(report_.state, fleet_object());
    GF_RETURN_IF_ERROR(write_file(out_ / "state.json", report_.state.dump(2) + "\n"));
    report_.files.push_back((out_ / "state.json").string());

    GF_ASSIGN_OR_RETURN(report_.metrics, metrics());
    GF_RETURN_IF_ERROR(write_file(out_ / "metrics.json", report_.metrics.dump(2) + "\n"));
    report_.files.push_back((out_ / "metrics.json").string());
    if (injector_) {
      // Every fault the model drew, injected or absorbed by a node already failing: the same
      // lines in every variant of a run (common random numbers, docs/scenarios.md "What-if").
      std::string faults;
      for (const FaultInjection& f : injector_->history()) {
        Json line = f.to_json();
        line["t"] = seconds_since_start(f.at);
        faults += line.dump() + "\n";
      }
      GF_RETURN_IF_ERROR(write_file(out_ / "faults.jsonl", faults));
      report_.files.push_back((out_ / "faults.jsonl").string());
    }
    return ok_status();
  }

  Result<Json> metrics() {
    replay_->finish(end());
    const MetricsReplay& replay = *replay_;
    FleetKpis& kpis = *kpis_;
    Json m = replay.to_json(report_.state["clusters"]);
    GF_ASSIGN_OR_RETURN(Json by_cluster, get("/v1/billing", {{"groupBy", "cluster"}}));
    GF_ASSIGN_OR_RETURN(Json by_group, get("/v1/billing", {{"groupBy", "group"}}));
    m["billing"] = Json{{"byCluster", std::move(by_cluster)}, {"byGroup", std::move(by_group)}};
    // Sections the later components fill (jobs and quotas: docs/quota.md–4; health:
    // docs/remediation.md).
    job_metrics(replay.gpu_hours(), m);
    m["remediations"] = remediation_metrics();
    {
      const FleetView* view = &fleet();
      m["fleet"] = kpis.compute(*view, replay.gpu_hours(), injector_.get());
    }
    if (!scenario_.traces.empty()) {
      Json traces = Json::array();
      for (size_t t = 0; t < scenario_.traces.size(); ++t) {
        std::vector<TraceJob> of;
        for (const TraceJob& j : scenario_.trace_jobs) {
          if (j.trace == t) of.push_back(j);
        }
        traces.push_back({{"file", scenario_.traces[t].file},
                          {"jobs", of.size()},
                          {"gpuHours", round4(trace_gpu_hours(of))}});
      }
      m["traces"] = {{"files", std::move(traces)},
                     {"submitted", report_.trace_jobs_submitted},
                     {"refused", report_.trace_jobs_refused},
                     {"notSubmittedAfterUntil", report_.trace_jobs_skipped}};
    }
    if (injector_) {
      Json ops = Json::object();
      for (const auto& [what, n] : report_.operator_actions) ops[what] = n;
      m["operator"] = std::move(ops);
    }
    m["scenario"] = report_.scenario;
    m["seed"] = report_.seed;
    m["until"] = format_duration(report_.until);
    m["steps"] = {{"run", report_.steps_run},
                  {"failed", report_.steps_failed},
                  {"notImplemented", report_.steps_not_implemented},
                  {"skippedAfterUntil", report_.steps_skipped}};
    return stamp(std::move(m));
  }

  // Alerts and remediations by outcome (docs/scenarios.md metrics.json "remediation counts").
  Json remediation_metrics() const {
    const FleetView* view = &fleet();
    const remediate::HealthState& h = view->health_state();
    int64_t fired = 0, discarded = 0, approved = 0, executed = 0, succeeded = 0, failed = 0,
            escalated = 0, cancelled = 0, rejected = 0, auto_approved = 0;
    for (const auto& [id, a] : h.alerts) {
      fired += a.fired_at.has_value();
      discarded += a.state == "discarded";
    }
    for (const auto& [id, r] : h.remediations) {
      approved += r.approved_at.has_value();
      auto_approved += r.auto_approved;
      executed += r.acted_at.has_value();
      succeeded += r.status == remediate::Status::kSucceeded;
      failed += r.status == remediate::Status::kFailed;
      cancelled += r.status == remediate::Status::kCancelled;
      rejected += r.status == remediate::Status::kRejected;
      escalated += r.effective != r.action;
    }
    return {{"measured", true},
            {"alerts", h.alerts.size()},
            {"fired", fired},
            {"discarded", discarded},
            {"proposed", h.remediations.size()},
            {"approved", approved},
            {"autoApproved", auto_approved},
            {"executed", executed},
            {"succeeded", succeeded},
            {"failed", failed},
            {"cancelled", cancelled},
            {"rejected", rejected},
            {"escalated", escalated},
            {"tickets", h.tickets.size()}};
  }

  // Utilization (GPU-hours jobs held over GPU-hours running instances offered) and queueing
  // delay (submission to first start), from the job records: those still in the state and those
  // retention took out of it earlier.
  void job_metrics(double offered_gpu_hours, Json& m) {
    JobSums sums = retired_->sums();
    for (const auto& [id, j] : fleet().jobs) sums.add(*j, clock_.now());
    const double busy = sums.busy;
    std::vector<double>& delays = sums.delays;
    const int64_t never_started = sums.never_started;
    m["utilization"] = {
        {"measured", true},
        {"busyGpuHours", round4(busy)},
        {"offeredGpuHours", round4(offered_gpu_hours)},
        {"busyFraction",
         offered_gpu_hours > 0 ? Json(round4(busy / offered_gpu_hours)) : Json(nullptr)}};
    std::sort(delays.begin(), delays.end());
    auto pct = [&](double q) -> Json {
      if (delays.empty()) return nullptr;
      return round4(delays[std::min(delays.size() - 1,
                                    static_cast<size_t>(q * static_cast<double>(delays.size())))]);
    };
    double sum = 0;
    for (double d : delays) sum += d;
    m["queueingDelay"] = {
        {"measured", true},
        {"jobs", delays.size()},
        {"neverStarted", never_started},
        {"meanSeconds",
         delays.empty() ? Json(nullptr) : Json(round4(sum / static_cast<double>(delays.size())))},
        {"p50Seconds", pct(0.5)},
        {"p95Seconds", pct(0.95)},
        {"maxSeconds", delays.empty() ? Json(nullptr) : Json(round4(delays.back()))}};
  }

  const Scenario& scenario_;
  const SimulationOptions& options_;
  const fs::path out_;
  SimulationReport report_;
  VirtualClock clock_{kSimEpoch};
  std::unique_ptr<FleetKpis> kpis_;
  std::unique_ptr<RetiredJobs> retired_;
  std::unique_ptr<MetricsReplay> replay_;  // fed by journal_ as the run appends
  std::unique_ptr<SqliteJournal> stored_;  // DIR/journal.db, with --journal only
  std::unique_ptr<ObservedJournal> journal_;
  std::unique_ptr<Runtime> runtime_;  // declared after journal_: destroyed before it
  std::unique_ptr<VirtualRunner> runner_;
  std::unique_ptr<FailureInjector> injector_;  // the failure model, when the scenario has one
};

}  // namespace

Json seconds_since_start(Time t) {
  const int64_t us = (t - kSimEpoch).count();
  if (us % 1'000'000 == 0) return us / 1'000'000;
  return static_cast<double>(us) / 1e6;
}

namespace {

Result<SimulationReport> run_and_maybe_leave(std::unique_ptr<Simulation> sim,
                                             const SimulationOptions& options) {
  Result<SimulationReport> report = sim->run();
  if (options.leave_at_exit && !options.keep_journal) {
    // Reachable from a static until the process ends (SimulationOptions::leave_at_exit).
    static auto* const left = new std::vector<Simulation*>();
    left->push_back(sim.release());
  }
  return report;
}

// `failures.remediation` (docs/scenarios.md "What-if"): manual leaves every remediation to the
// on-call (NodeRecovery None on every cluster the scenario creates); none also has no on-call.
void apply_remediation_mode(Scenario& scenario) {
  if (!scenario.failures || scenario.failures->remediation == RemediationMode::kAutomatic) return;
  if (scenario.failures->remediation == RemediationMode::kNone)
    scenario.failures->operator_response.reset();
  for (ScenarioStep& step : scenario.steps) {
    if (step.kind != StepKind::kCall || step.method != "POST" || step.path != "/v1/clusters" ||
        !step.body || !step.body->is_object())
      continue;
    (*step.body)["NodeRecovery"] = "None";
  }
}

}  // namespace

Result<SimulationReport> run_simulation(const Scenario& scenario,
                                        const SimulationOptions& options) {
  const bool mode =
      scenario.failures && scenario.failures->remediation != RemediationMode::kAutomatic;
  const bool traces = !scenario.traces.empty() && scenario.trace_jobs.empty();
  if (mode || traces) {
    Scenario changed = scenario;
    apply_remediation_mode(changed);
    // Traces not read yet (the CLI reads them first, to tell a bad trace by its exit status).
    if (traces)
      GF_RETURN_IF_ERROR(load_traces(changed, options.seed.value_or(scenario.seed.value_or(1))));
    return run_and_maybe_leave(std::make_unique<Simulation>(changed, options), options);
  }
  return run_and_maybe_leave(std::make_unique<Simulation>(scenario, options), options);
}

}  // namespace gf
