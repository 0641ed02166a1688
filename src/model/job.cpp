#include "model/job.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

namespace gf {
namespace {

constexpr std::array<std::pair<JobStatus, std::string_view>, 8> kStatusNames{{
    {JobStatus::kSubmitted, "SUBMITTED"},
    {JobStatus::kPending, "PENDING"},
    {JobStatus::kRunnable, "RUNNABLE"},
    {JobStatus::kScheduled, "SCHEDULED"},
    {JobStatus::kStarting, "STARTING"},
    {JobStatus::kRunning, "RUNNING"},
    {JobStatus::kSucceeded, "SUCCEEDED"},
    {JobStatus::kFailed, "FAILED"},
}};

Json opt_time(const std::optional<Time>& t) { return t ? Json(to_micros(*t)) : Json(nullptr); }
std::optional<Time> read_opt_time(const Json& j, const char* key) {
  if (!j.contains(key) || j.at(key).is_null()) return std::nullopt;
  return from_micros(j.at(key).get<int64_t>());
}

}  // namespace

std::string_view to_string(JobStatus s) {
  for (const auto& [v, name] : kStatusNames) {
    if (v == s) return name;
  }
  return "?";
}

std::optional<JobStatus> parse_job_status(std::string_view s) {
  for (const auto& [v, name] : kStatusNames) {
    if (name == s) return v;
  }
  return std::nullopt;
}

Duration JobRun::billed(Time from, Time to) const {
  const Time b = std::max(start, from);
  const Time e = std::min(end.value_or(to), to);
  return e > b ? e - b : Duration::zero();
}

int64_t JobRun::cost_micros(Time from, Time to) const {
  const __int128 us = billed(from, to).count();
  return static_cast<int64_t>(us * micros_per_hour / 3'600'000'000LL);
}

void Job::add_history(Time t, std::string reason, std::string message) {
  if (history.size() >= kMaxHistory) history.erase(history.begin());
  history.push_back(JobEvent{t, std::move(reason), std::move(message)});
  history_count += 1;
}

namespace {
template <typename T>
Json opt_json(const std::optional<T>& v) {
  return v ? Json(*v) : Json(nullptr);
}
template <typename T>
std::optional<T> read_opt(const Json& j, const char* key) {
  if (!j.contains(key) || j.at(key).is_null()) return std::nullopt;
  return j.at(key).get<T>();
}
}  // namespace

Json Dispatch::to_json() const {
  Json copies = Json::array();
  for (const MemberCopy& c : left) {
    copies.push_back({{"cluster", c.cluster},
                      {"state", c.state},
                      {"since_us", to_micros(c.since)},
                      {"purge_us", opt_time(c.purge_at)},
                      {"restarts", c.restarts}});
  }
  Json out{{"policy", policy},
           {"queued", queued},
           {"toleration_seconds", opt_json(toleration_seconds)},
           {"purge_mode", purge_mode},
           {"grace_period_seconds", grace_period_seconds},
           {"restart_policy", restart_policy},
           {"backoff_limit", opt_json(backoff_limit)},
           {"active_deadline_seconds", opt_json(active_deadline_seconds)},
           {"ttl_seconds_after_finished", opt_json(ttl_seconds_after_finished)},
           {"suspended", suspended},
           {"cluster", cluster},
           {"bound_us", opt_time(bound_at)},
           {"not_running_us", opt_time(not_running_since)},
           {"first_started_us", opt_time(first_started_at)},
           {"restarting", restarting},
           {"restarts", restarts},
           {"excluded", excluded},
           {"left", std::move(copies)},
           {"failovers", failovers}};
  if (failed_starts > 0) out["failed_starts"] = failed_starts;  // absent before issue 39
  if (awaiting_policy) out["awaiting_policy"] = true;           // absent unless held
  return out;
}

Result<Dispatch> Dispatch::from_json(const Json& j) {
  try {
    Dispatch d;
    d.policy = j.at("policy").get<std::string>();
    d.queued = j.at("queued").get<bool>();
    d.toleration_seconds = read_opt<int64_t>(j, "toleration_seconds");
    d.purge_mode = j.at("purge_mode").get<std::string>();
    d.grace_period_seconds = j.at("grace_period_seconds").get<int64_t>();
    d.restart_policy = j.at("restart_policy").get<std::map<std::string, std::string>>();
    d.backoff_limit = read_opt<int32_t>(j, "backoff_limit");
    d.active_deadline_seconds = read_opt<int64_t>(j, "active_deadline_seconds");
    d.ttl_seconds_after_finished = read_opt<int64_t>(j, "ttl_seconds_after_finished");
    d.suspended = j.at("suspended").get<bool>();
    d.cluster = j.at("cluster").get<std::string>();
    d.bound_at = read_opt_time(j, "bound_us");
    d.not_running_since = read_opt_time(j, "not_running_us");
    d.first_started_at = read_opt_time(j, "first_started_us");
    d.restarting = j.at("restarting").get<bool>();
    d.restarts = j.at("restarts").get<int32_t>();
    d.failed_starts = j.value("failed_starts", 0);
    d.awaiting_policy = j.value("awaiting_policy", false);
    d.excluded = j.at("excluded").get<std::vector<std::string>>();
    for (const Json& c : j.at("left")) {
      d.left.push_back(MemberCopy{c.at("cluster").get<std::string>(),
                                  c.at("state").get<std::string>(),
                                  from_micros(c.at("since_us").get<int64_t>()),
                                  read_opt_time(c, "purge_us"), c.at("restarts").get<int32_t>()});
    }
    d.failovers = j.at("failovers").get<int32_t>();
    return d;
  } catch (const Json::exception& e) {
    return validation_error(std::string("job dispatch record: ") + e.what());
  }
}

std::string_view job_tenant(const Job& job) {
  if (!job.quota_share.empty()) return job.quota_share;
  if (!job.ns.empty()) return job.ns;
  return job.job_queue;
}

std::string_view workload_state(const Job& job) {
  if (job.status == JobStatus::kSucceeded) return "Succeeded";
  if (job.status == JobStatus::kFailed) return "Failed";
  if (job.dispatch && job.dispatch->suspended) return "Suspended";
  if (job.dispatch && job.dispatch->restarting) return "Restarting";
  if (job.status == JobStatus::kRunning) return "Running";
  return "Created";
}

namespace {

// The pod sets, each role with its count, requests and instance type.
Json pod_sets_json(const std::vector<JobPodSet>& pod_sets) {
  Json pods = Json::array();
  for (const JobPodSet& p : pod_sets) {
    pods.push_back({{"role", p.role},
                    {"count", p.count},
                    {"requests", p.requests},
                    {"instance_type", p.instance_type},
                    {"whole_node", p.whole_node}});
    if (p.topology) {
      pods.back()["topology"] = {{"level", p.topology->level},
                                 {"required", p.topology->required},
                                 {"whole_job", p.topology->whole_job}};
    }
  }
  return pods;
}

// The recent preemptions, with who preempted the job and by which rule.
Json preemptions_json(const std::vector<JobPreemption>& preemptions) {
  Json pre = Json::array();
  for (const JobPreemption& p : preemptions) {
    pre.push_back({{"time_us", to_micros(p.time)},
                   {"by", p.by},
                   {"rule", p.rule},
                   {"message", p.message},
                   {"terminated", p.terminated}});
  }
  return pre;
}

// The history lines kept (the newest kMaxHistory).
Json history_json(const std::vector<JobEvent>& history) {
  Json hist = Json::array();
  for (const JobEvent& e : history) {
    hist.push_back({{"time_us", to_micros(e.time)}, {"reason", e.reason}, {"message", e.message}});
  }
  return hist;
}

// Every stretch the job ran, with its price, for billing.
Json runs_json(const std::vector<JobRun>& runs) {
  Json run_list = Json::array();
  for (const JobRun& r : runs) {
    Json run = {{"start_us", to_micros(r.start)},
                {"end_us", opt_time(r.end)},
                {"cluster", r.cluster},
                {"micros_per_hour", r.micros_per_hour},
                {"pods", r.pods}};
    // Absent when unset: states of jobs without the lost-work model keep their hash.
    if (r.overhead != Duration::zero()) run["overhead_us"] = r.overhead.count();
    if (r.kept != Duration::zero()) run["kept_us"] = r.kept.count();
    if (!r.ended_by.empty()) run["ended_by"] = r.ended_by;
    if (r.slowed != Duration::zero()) run["slowed_us"] = r.slowed.count();
    if (r.slow_since) {
      run["slow_since_us"] = to_micros(*r.slow_since);
      run["slow_factor"] = r.slow_factor;
    }
    if (r.domains != std::array<int32_t, 3>{}) run["domains"] = r.domains;
    run_list.push_back(std::move(run));
  }
  return run_list;
}

// The readers below throw Json::exception on a missing or mistyped field, as Job::from_json's
// own reads do: its handler turns that into the error.

// What the job asked for: names, queues, priority, pod sets, duration and the request itself.
void read_job_spec(const Json& j, Job& job) {
  job.id = j.at("id").get<std::string>();
  job.key = j.at("key").get<uint64_t>();
  job.submit_seq = j.value("submit_seq", uint64_t{0});
  job.name = j.at("name").get<std::string>();
  job.kind = j.at("kind").get<std::string>();
  job.job_queue = j.at("job_queue").get<std::string>();
  job.quota_share = j.at("quota_share").get<std::string>();
  job.ns = j.at("namespace").get<std::string>();
  job.local_queue = j.at("local_queue").get<std::string>();
  job.priority = j.at("priority").get<int32_t>();
  if (!j.at("max_preemptions").is_null())
    job.max_preemptions = j.at("max_preemptions").get<int32_t>();
  for (const Json& p : j.at("pod_sets")) {
    job.pod_sets.push_back(JobPodSet{p.at("role").get<std::string>(), p.at("count").get<int32_t>(),
                                     p.at("requests"), p.at("instance_type").get<std::string>(),
                                     p.at("whole_node").get<bool>()});
    if (auto t = p.find("topology"); t != p.end()) {
      job.pod_sets.back().topology =
          TopologyRequest{t->at("level").get<std::string>(), t->at("required").get<bool>(),
                          t->at("whole_job").get<bool>()};
    }
  }
  job.clusters = j.at("clusters").get<std::vector<std::string>>();
  if (!j.at("duration_us").is_null()) job.duration = Duration(j.at("duration_us").get<int64_t>());
  if (j.contains("checkpoint_us"))
    job.checkpoint_interval = Duration(j.at("checkpoint_us").get<int64_t>());
  if (j.contains("restart_overhead_us")) {
    job.restart_overhead = Duration(j.at("restart_overhead_us").get<int64_t>());
  }
  job.progress = Duration(j.value("progress_us", int64_t{0}));
  job.request = j.at("request");
}

// The fields after the status: times, preemptions, admission and placement.
void read_job_progress(const Json& j, Job& job) {
  job.status_reason = j.at("status_reason").get<std::string>();
  job.created_at = from_micros(j.at("created_us").get<int64_t>());
  job.started_at = read_opt_time(j, "started_us");
  job.stopped_at = read_opt_time(j, "stopped_us");
  job.preempted_count = j.at("preempted_count").get<int32_t>();
  for (const Json& p : j.at("recent_preemptions")) {
    job.recent_preemptions.push_back(
        JobPreemption{from_micros(p.at("time_us").get<int64_t>()), p.at("by").get<std::string>(),
                      p.at("rule").get<std::string>(), p.at("message").get<std::string>(),
                      p.at("terminated").get<bool>()});
  }
  job.requeue_at = read_opt_time(j, "requeue_us");
  job.admitted = j.at("admitted").get<bool>();
  job.alternative = j.at("alternative").get<int32_t>();
  job.admitted_at = read_opt_time(j, "admitted_us");
  job.cluster = j.at("cluster").get<std::string>();
  job.pod_nodes = j.at("pod_nodes").get<std::vector<std::string>>();
}

// The runs (optional in a record) and the history lines.
void read_job_runs_and_history(const Json& j, Job& job) {
  if (j.contains("runs")) {
    for (const Json& r : j.at("runs")) {
      JobRun run;
      run.start = from_micros(r.at("start_us").get<int64_t>());
      run.end = read_opt_time(r, "end_us");
      run.cluster = r.at("cluster").get<std::string>();
      run.micros_per_hour = r.at("micros_per_hour").get<int64_t>();
      run.pods = r.at("pods").get<int32_t>();
      run.overhead = Duration(r.value("overhead_us", int64_t{0}));
      run.kept = Duration(r.value("kept_us", int64_t{0}));
      run.ended_by = r.value("ended_by", std::string());
      run.slowed = Duration(r.value("slowed_us", int64_t{0}));
      run.slow_since = read_opt_time(r, "slow_since_us");
      run.slow_factor = r.value("slow_factor", 1.0);
      if (auto d = r.find("domains"); d != r.end()) run.domains = d->get<std::array<int32_t, 3>>();
      job.runs.push_back(std::move(run));
    }
  }
  job.history_count = j.value("history_count", uint64_t{0});
  for (const Json& e : j.at("history")) {
    job.history.push_back(JobEvent{from_micros(e.at("time_us").get<int64_t>()),
                                   e.at("reason").get<std::string>(),
                                   e.at("message").get<std::string>()});
  }
}

}  // namespace

std::vector<Job::Pod> Job::pods() const {
  std::vector<Pod> out;
  size_t next = 0;
  for (const JobPodSet& ps : pod_sets) {
    for (int32_t i = 0; i < ps.count && next < pod_nodes.size(); ++i, ++next) {
      out.push_back(Pod{fmt::format("{}-{}-{}", name, ps.role, i), pod_nodes[next]});
    }
  }
  return out;
}

Duration JobRun::slow_loss(Time t) const {
  Duration loss = slowed;
  const Time from = slow_since ? std::max(*slow_since, start + overhead) : t;
  if (slow_since && t > from && slow_factor > 1) {
    const double open = static_cast<double>((t - from).count());
    loss += Duration(std::llround(open * (1 - 1 / slow_factor)));
  }
  return loss;
}

std::optional<Time> Job::completion_time() const {
  if (status != JobStatus::kRunning || !duration || !started_at) return std::nullopt;
  const bool open = !runs.empty() && !runs.back().end;
  const Duration overhead = open ? runs.back().overhead : Duration::zero();
  const Duration remaining = std::max(Duration::zero(), *duration - progress);
  const Time working = *started_at + overhead;  // progress starts after the overhead
  if (!open) return working + remaining;
  const JobRun& run = runs.back();
  if (!run.slow_since || run.slow_factor <= 1) return working + remaining + run.slowed;
  // Slowed since s: the work left then takes slow_factor times as long.
  const Time s = std::max(*run.slow_since, working);
  const Duration done = std::max(Duration::zero(), s - working - run.slowed);
  const double left = static_cast<double>(std::max(Duration::zero(), remaining - done).count());
  return s + Duration(std::llround(left * run.slow_factor));
}

Json Job::to_json() const {
  Json out{{"id", id},
           {"runs", runs_json(runs)},
           {"key", key},
           {"submit_seq", submit_seq},
           {"name", name},
           {"kind", kind},
           {"job_queue", job_queue},
           {"quota_share", quota_share},
           {"namespace", ns},
           {"local_queue", local_queue},
           {"priority", priority},
           {"max_preemptions", max_preemptions ? Json(*max_preemptions) : Json(nullptr)},
           {"pod_sets", pod_sets_json(pod_sets)},
           {"clusters", clusters},
           {"duration_us", duration ? Json(duration->count()) : Json(nullptr)},
           {"request", request},
           {"status", std::string(to_string(status))},
           {"status_reason", status_reason},
           {"created_us", to_micros(created_at)},
           {"started_us", opt_time(started_at)},
           {"stopped_us", opt_time(stopped_at)},
           {"preempted_count", preempted_count},
           {"recent_preemptions", preemptions_json(recent_preemptions)},
           {"requeue_us", opt_time(requeue_at)},
           {"admitted", admitted},
           {"alternative", alternative},
           {"admitted_us", opt_time(admitted_at)},
           {"cluster", cluster},
           {"pod_nodes", pod_nodes},
           {"history", history_json(history)},
           {"history_count", history_count},
           {"dispatch", dispatch ? dispatch->to_json() : Json(nullptr)}};
  // Absent rather than null: states without a waiting job keep the hash they had before.
  if (waiting) out["waiting"] = waiting->to_json();
  if (placements != 0) out["placements"] = placements;
  if (checkpoint_interval) out["checkpoint_us"] = checkpoint_interval->count();
  if (restart_overhead) out["restart_overhead_us"] = restart_overhead->count();
  if (progress != Duration::zero()) out["progress_us"] = progress.count();
  if (!pod_states.empty()) {
    Json pods = Json::object();
    for (const auto& [name, p] : pod_states) pods[name] = p.to_json();
    out["pod_states"] = std::move(pods);
  }
  return out;
}

Json PodState::to_json() const {
  return Json{{"phase", phase},
              {"exit_code", exit_code},
              {"restarts", restarts},
              {"message", message},
              {"node", node}};
}

Result<PodState> PodState::from_json(const Json& j) {
  try {
    PodState p;
    p.phase = j.at("phase").get<std::string>();
    p.exit_code = j.at("exit_code").get<int32_t>();
    p.restarts = j.at("restarts").get<int32_t>();
    p.message = j.at("message").get<std::string>();
    p.node = j.at("node").get<std::string>();
    return p;
  } catch (const Json::exception& e) {
    return validation_error(std::string("pod state: ") + e.what());
  }
}

Result<Job> Job::from_json(const Json& j) {
  try {
    Job job;
    read_job_spec(j, job);
    auto st = parse_job_status(j.at("status").get<std::string>());
    if (!st) return validation_error("job " + job.id + ": unknown status");
    job.status = *st;
    read_job_progress(j, job);
    read_job_runs_and_history(j, job);
    if (j.contains("dispatch") && !j.at("dispatch").is_null()) {
      GF_ASSIGN_OR_RETURN(Dispatch d, Dispatch::from_json(j.at("dispatch")));
      job.dispatch = std::move(d);
    }
    if (j.contains("waiting")) {
      GF_ASSIGN_OR_RETURN(JobWait w, JobWait::from_json(j.at("waiting")));
      job.waiting = std::move(w);
    }
    if (j.contains("placements")) job.placements = j.at("placements").get<int64_t>();
    if (j.contains("pod_states")) {
      for (const auto& [name, p] : j.at("pod_states").items()) {
        GF_ASSIGN_OR_RETURN(PodState s, PodState::from_json(p));
        job.pod_states.emplace(name, std::move(s));
      }
    }
    return job;
  } catch (const Json::exception& e) {
    return validation_error(std::string("job record: ") + e.what());
  }
}

bool JobWait::same_as(const JobWait& o) const {
  JobWait a = *this;
  a.since = o.since;
  return a == o;
}

Json JobWait::to_json() const {
  return Json{{"kind", kind},           {"reason", reason},
              {"message", message},     {"node", node},
              {"limit", limit},         {"resource", resource},
              {"requested", requested}, {"available", available},
              {"shortfall", shortfall}, {"since_us", to_micros(since)}};
}

Result<JobWait> JobWait::from_json(const Json& j) {
  // Every field is required: a record written by this release always has them all.
  try {
    JobWait w;
    w.kind = j.at("kind").get<std::string>();
    w.reason = j.at("reason").get<std::string>();
    w.message = j.at("message").get<std::string>();
    w.node = j.at("node").get<std::string>();
    w.limit = j.at("limit").get<std::string>();
    w.resource = j.at("resource").get<std::string>();
    w.requested = j.at("requested").get<int64_t>();
    w.available = j.at("available").get<int64_t>();
    w.shortfall = j.at("shortfall").get<int64_t>();
    w.since = from_micros(j.at("since_us").get<int64_t>());
    return w;
  } catch (const Json::exception& e) {
    return validation_error(std::string("waiting: ") + e.what());
  }
}

}  // namespace gf
