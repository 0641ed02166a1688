#include "sim/fleet_kpis.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>

#include "core/resources.h"
#include "model/catalog.h"
#include "model/topology.h"

namespace gf {

namespace {

double r4(double x) { return std::round(x * 1e4) / 1e4; }
double hours(double gpu_us) { return gpu_us / 3.6e9; }
Json ratio(double num, double den) { return den > 0 ? Json(r4(num / den)) : Json(nullptr); }

// Nearest-rank percentile of sorted values.
double pct(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  const size_t rank = static_cast<size_t>(std::ceil(p * static_cast<double>(sorted.size())));
  return sorted[std::min(sorted.size() - 1, rank == 0 ? 0 : rank - 1)];
}

// {count, meanSeconds, p50Seconds, p95Seconds, p99Seconds, maxSeconds} of durations in seconds.
Json summary(std::vector<double> secs, bool p99 = false) {
  std::sort(secs.begin(), secs.end());
  if (secs.empty()) return Json{{"count", 0}};
  double sum = 0;
  for (double s : secs) sum += s;
  Json out = {{"count", secs.size()},
              {"meanSeconds", r4(sum / static_cast<double>(secs.size()))},
              {"p50Seconds", r4(pct(secs, 0.5))},
              {"p95Seconds", r4(pct(secs, 0.95))},
              {"maxSeconds", r4(secs.back())}};
  if (p99) out["p99Seconds"] = r4(pct(secs, 0.99));
  return out;
}

double secs(Duration d) { return static_cast<double>(d.count()) / 1e6; }

}  // namespace

int64_t job_gpus(const Job& job) {
  int64_t gpus = 0;
  for (const JobPodSet& ps : job.pod_sets) {
    if (ps.whole_node) {
      const InstanceTypeInfo* info = Catalog::builtin().find(ps.instance_type);
      if (info != nullptr) gpus += static_cast<int64_t>(info->gpus) * ps.count;
      continue;
    }
    ResourceRegistry reg;
    auto req = ResourceVector::from_json(ps.requests, reg, "requests");
    if (req.ok()) gpus += req->get(kGpu) * ps.count;
  }
  return gpus;
}

namespace {

std::string tenant_of(const Job& job) {
  const std::string_view t = job_tenant(job);
  return t.empty() ? "default" : std::string(t);
}

// Where a run's lost work goes: a node lost under it (fault, remediation drain, failover away
// from pods that could not run), a preemption, or anything else (the job failed, was suspended).
std::string loss_cause(const std::string& ended_by) {
  if (ended_by == "interrupted" || ended_by == "failover") return "failure";
  if (ended_by == "preempted") return "preemption";
  return "other";
}

struct TenantAcc {
  std::vector<double> waits;
  int64_t jobs = 0, never_started = 0, preemptions = 0;
  double busy_us = 0, kept_us = 0, cost_micros = 0;
};

struct LargeJob {
  std::string name, tenant;
  int64_t gpus = 0;
  double gpu_hours = 0;
  double ettr = 0;
  int64_t restarts = 0, preemptions = 0;
  bool finished = false;
  int64_t interruptions = 0;  // runs a fault (or a failover) ended
  double wall_hours = 0;      // first start to its end (or the end of the run)
};

}  // namespace

// Sums over every job of a run (FleetKpis keeps those of the jobs that left the hot state).
struct JobTotals {
  std::vector<double> busy_series, waiting_series;
  std::map<std::string, TenantAcc> tenants;
  double busy = 0, kept = 0, in_progress = 0, in_progress_useful = 0;
  std::map<std::string, double> lost{{"failure", 0}, {"preemption", 0}, {"other", 0}};  // GPU·µs
  double trace_work = 0;  // GPU·µs of work the finished jobs asked for
  std::vector<LargeJob> large;
  int64_t jobs = 0, preempted_jobs = 0, max_preemptions = 0, preemptions = 0;
  // Placement quality (docs/scheduling.md "Topology"): first-start waits by job size, and the
  // runs of multi-pod gangs on labelled nodes, with how many stayed inside one domain per layer.
  std::map<std::string, std::vector<double>> waits_by_size;
  int64_t gang_runs = 0;
  std::array<int64_t, 3> one_domain{};
};

namespace {

// What a job's runs added up to, for its own line.
struct JobRuns {
  double busy = 0;         // GPU·µs
  double open_useful = 0;  // µs of work its open run did since its overhead
  int64_t restarts = 0, interruptions = 0;
  Time wait_from{};  // the end of its last run (or its creation)
};

// A job's runs: busy, kept, lost by cause and in progress into the totals and its tenant's, its
// waits between runs into the queue series. `spread(series, from, to, weight)` adds to a series.
template <typename Spread>
JobRuns add_runs(const Job& job, double g, Time end, const Spread& spread, TenantAcc& t,
                 JobTotals& a) {
  JobRuns out;
  out.wait_from = job.created_at;
  for (size_t i = 0; i < job.runs.size(); ++i) {
    const JobRun& run = job.runs[i];
    spread(a.waiting_series, out.wait_from, run.start, 1.0);
    if (run.pods >= 2 && run.domains[2] > 0) {
      ++a.gang_runs;
      for (size_t l = 0; l < a.one_domain.size(); ++l) a.one_domain[l] += run.domains[l] == 1;
    }
    const Time e = run.end ? *run.end : end;
    const double dur = static_cast<double>((e - run.start).count());
    a.busy += g * dur;
    out.busy += g * dur;
    spread(a.busy_series, run.start, e, g);
    t.cost_micros += static_cast<double>(run.cost_micros(run.start, e));
    out.wait_from = e;
    if (!run.end) {
      // Work an open run did since its overhead counts as done (productive time): it is lost
      // only if the run later ends before its next checkpoint.
      a.in_progress += g * dur;
      const double remaining =
          job.duration ? static_cast<double>((*job.duration - job.progress).count()) : dur;
      out.open_useful = std::clamp(dur - static_cast<double>(run.overhead.count()), 0.0,
                                   std::max(0.0, remaining));
      a.in_progress_useful += g * out.open_useful;
      t.kept_us += g * out.open_useful;
      continue;
    }
    if (i > 0) ++out.restarts;
    out.interruptions += loss_cause(run.ended_by) == "failure";
    a.kept += g * static_cast<double>(run.kept.count());
    t.kept_us += g * static_cast<double>(run.kept.count());
    // A run cut short during its restart overhead spent only what it ran.
    const double over = std::min(dur, static_cast<double>(run.overhead.count()));
    const double rest = dur - over - static_cast<double>(run.kept.count());
    a.lost[loss_cause(run.ended_by)] += g * std::max(0.0, rest);
    // A restart's overhead is lost to whatever ended the run before it.
    a.lost[i > 0 ? loss_cause(job.runs[i - 1].ended_by) : "other"] += g * over;
  }
  return out;
}

constexpr size_t kLargeJobsShown = 20;

// The size classes queueing delay is reported by (docs/scenarios.md "Fleet KPIs").
std::string_view size_class(int64_t gpus) {
  if (gpus <= 8) return "1-8 GPUs";
  if (gpus < 32) return "9-31 GPUs";
  if (gpus <= 64) return "32-64 GPUs";
  return "65+ GPUs";
}

// Queueing delay by job size and the share of gang runs inside one domain per network layer.
Json placement_json(const JobTotals& a) {
  Json by_size = Json::object();
  for (const auto& [cls, waits] : a.waits_by_size) by_size[cls] = summary(waits, true);
  Json one = Json::object();
  for (size_t l = 0; l < a.one_domain.size(); ++l) {
    one[std::string(topology_level_short(static_cast<uint8_t>(l + 1)))] =
        ratio(static_cast<double>(a.one_domain[l]), static_cast<double>(a.gang_runs));
  }
  return Json{{"queueingDelayBySize", std::move(by_size)},
              {"gangRunsOnLabelledNodes", a.gang_runs},
              {"oneDomainShare", std::move(one)}};
}

// Keeps the kLargeJobsShown largest (by GPUs, then GPU-hours, then name), largest first: the
// list stays bounded however many jobs a run has.
void keep_largest(std::vector<LargeJob>& large) {
  std::sort(large.begin(), large.end(), [](const LargeJob& a, const LargeJob& b) {
    if (a.gpus != b.gpus) return a.gpus > b.gpus;
    if (a.gpu_hours != b.gpu_hours) return a.gpu_hours > b.gpu_hours;
    return a.name < b.name;
  });
  if (large.size() > kLargeJobsShown) large.resize(kLargeJobsShown);
}

// A job's line among the large jobs: its effective training time ratio (work done ÷ wall time
// since its first start) and interruptions.
LargeJob large_job(const Job& job, int64_t gpus, const JobRuns& runs, Time end) {
  LargeJob lj{job.name,
              tenant_of(job),
              gpus,
              hours(runs.busy),
              0,
              runs.restarts,
              job.preempted_count,
              job.status == JobStatus::kSucceeded};
  const Time first = job.runs.front().start;
  const Time last = job.status == JobStatus::kSucceeded && job.stopped_at ? *job.stopped_at : end;
  const double progress = static_cast<double>(job.progress.count()) + runs.open_useful;
  if (last > first) lj.ettr = progress / static_cast<double>((last - first).count());
  lj.interruptions = runs.interruptions;
  lj.wall_hours = hours(static_cast<double>((last - first).count()));
  return lj;
}

// One job's part of the totals: its runs, its waits, its tenant's sums, and its line among the
// large jobs. `end` is the end of the simulated run.
template <typename Spread>
void add_job(const Job& job, Time end, const Spread& spread, JobTotals& a) {
  const int64_t gpus = job_gpus(job);
  const auto g = static_cast<double>(gpus);
  TenantAcc& t = a.tenants[tenant_of(job)];
  ++a.jobs;
  ++t.jobs;
  a.preemptions += job.preempted_count;
  t.preemptions += job.preempted_count;
  a.preempted_jobs += job.preempted_count > 0;
  a.max_preemptions = std::max<int64_t>(a.max_preemptions, job.preempted_count);
  // Waiting: created → first start, between runs, and after the last run while not finished.
  const Time stop = job.stopped_at ? *job.stopped_at : end;
  if (job.runs.empty()) {
    ++t.never_started;
  } else {
    t.waits.push_back(secs(job.runs.front().start - job.created_at));
    a.waits_by_size[std::string(size_class(gpus))].push_back(t.waits.back());
  }
  const JobRuns runs = add_runs(job, g, end, spread, t, a);
  t.busy_us += runs.busy;
  if (!is_terminal(job.status) && (job.runs.empty() || job.runs.back().end)) {
    spread(a.waiting_series, runs.wait_from, stop, 1.0);
  }
  if (job.status == JobStatus::kSucceeded && job.duration) {
    a.trace_work += g * static_cast<double>(job.duration->count());
  }
  if (gpus > 0 && job.duration && !job.runs.empty())
    a.large.push_back(large_job(job, gpus, runs, end));
  if (a.large.size() >= 4 * kLargeJobsShown) keep_largest(a.large);
}

// The 20 largest jobs (by GPUs, then GPU-hours) and their mean effective training time ratio.
Json large_jobs_json(std::vector<LargeJob> large) {
  keep_largest(large);
  Json large_json = Json::array();
  double ettr_sum = 0;
  for (const LargeJob& lj : large) {
    ettr_sum += lj.ettr;
    large_json.push_back(
        {{"job", lj.name},
         {"tenant", lj.tenant},
         {"gpus", lj.gpus},
         {"gpuHours", r4(lj.gpu_hours)},
         {"effectiveTrainingTimeRatio", r4(lj.ettr)},
         {"restarts", lj.restarts},
         {"interruptions", lj.interruptions},
         {"mtbiHours", lj.interruptions > 0
                           ? Json(r4(lj.wall_hours / static_cast<double>(lj.interruptions)))
                           : Json(nullptr)},
         {"preemptions", lj.preemptions},
         {"finished", lj.finished}});
  }

  return Json{
      {"jobs", std::move(large_json)},
      {"meanEffectiveTrainingTimeRatio",
       large.empty() ? Json(nullptr) : Json(r4(ettr_sum / static_cast<double>(large.size())))}};
}

// Per tenant: jobs, waits, GPU-hours, preemptions, cost; `all_waits` gets every wait.
Json tenants_json(const std::map<std::string, TenantAcc>& tenants, std::vector<double>& all_waits) {
  Json out = Json::object();
  for (const auto& [name, t] : tenants) {
    all_waits.insert(all_waits.end(), t.waits.begin(), t.waits.end());
    out[name] = {{"jobs", t.jobs},
                 {"neverStarted", t.never_started},
                 {"queueingDelay", summary(t.waits, true)},
                 {"busyGpuHours", r4(hours(t.busy_us))},
                 {"keptGpuHours", r4(hours(t.kept_us))},
                 {"preemptions", t.preemptions},
                 {"costUsd", r4(t.cost_micros / 1e6)}};
  }
  return out;
}

// Repairs: MTTR by phase, automatic vs manual (docs/scenarios.md "Fleet KPIs").
Json mttr_json(const remediate::HealthState& health) {
  struct Phases {
    std::vector<double> detection, approval, gates, idle, repair, rejoin, total;
  };
  Phases all, automatic, manual;
  // A remediation after an earlier one on the same node (a failed attempt, the escalation
  // ladder) counts its detection from that one's end, not from the fault's first observation.
  std::vector<const remediate::Remediation*> by_time;
  for (const auto& [rid, r] : health.remediations) by_time.push_back(&r);
  std::sort(by_time.begin(), by_time.end(), [](const auto* a, const auto* b) {
    return a->created_at != b->created_at ? a->created_at < b->created_at : a->id < b->id;
  });
  std::map<std::string, Time> previous_end;  // node -> the end of its latest remediation
  for (const remediate::Remediation* rp : by_time) {
    const remediate::Remediation& r = *rp;
    Time fault = r.created_at;
    for (const std::string& aid : r.evidence) {
      if (const remediate::AlertRecord* a = health.find_alert(aid)) {
        fault = std::min(fault, a->first_seen);
      }
    }
    if (auto it = previous_end.find(r.node); it != previous_end.end() && it->second > fault) {
      fault = std::min(r.created_at, it->second);
    }
    if (r.completed_at) previous_end[r.node] = *r.completed_at;
    if (r.status != remediate::Status::kSucceeded || !r.completed_at) continue;
    for (Phases* p : {&all, r.auto_approved ? &automatic : &manual}) {
      p->detection.push_back(secs(r.created_at - fault));
      if (r.approved_at) p->approval.push_back(secs(*r.approved_at - r.created_at));
      if (r.approved_at && r.started_at) p->gates.push_back(secs(*r.started_at - *r.approved_at));
      if (r.started_at && r.drained_at) p->idle.push_back(secs(*r.drained_at - *r.started_at));
      if (r.drained_at && r.acted_at) p->repair.push_back(secs(*r.acted_at - *r.drained_at));
      if (r.acted_at) p->rejoin.push_back(secs(*r.completed_at - *r.acted_at));
      p->total.push_back(secs(*r.completed_at - fault));
    }
  }
  auto phases_json = [](const Phases& p) {
    return Json{{"total", summary(p.total)},         {"detection", summary(p.detection)},
                {"approval", summary(p.approval)},   {"gates", summary(p.gates)},
                {"waitingForIdle", summary(p.idle)}, {"repair", summary(p.repair)},
                {"rejoin", summary(p.rejoin)}};
  };
  // Incidents: an alert that a remediation fixed, from its first observation to its end.
  std::vector<double> incident_secs;
  int64_t open_incidents = 0;
  for (const auto& [aid, a] : health.alerts) {
    if (a.active()) {
      ++open_incidents;
      continue;
    }
    if (a.resolved_at && a.state == "resolved" && a.resolved_by != "signal cleared") {
      incident_secs.push_back(secs(*a.resolved_at - a.first_seen));
    }
  }
  return Json{{"incidents", summary(incident_secs, true)},
              {"openAtEnd", open_incidents},
              {"all", phases_json(all)},
              {"automatic", phases_json(automatic)},
              {"manual", phases_json(manual)}};
}

// The failure model's counts and the lemon hosts found (docs/scenarios.md "Fleet KPIs").
Json failures_json(const remediate::HealthState& health, const FailureInjector& failures) {
  const double node_days = failures.node_days();
  Json causes = Json::object();
  for (const auto& [c, n] : failures.by_cause()) causes[c] = n;
  Json repairs = Json::object();
  for (const auto& [c, n] : failures.by_fix()) repairs[c] = n;
  Json effects = Json::object();
  for (const auto& [e, n] : failures.by_effect()) effects[e] = n;
  // Lemons found: the hosts the control plane marked suspect (docs/remediation.md "Suspect
  // hosts"), each with whether the model made it a lemon; and the modelled lemons that showed
  // themselves (at least 2 faults), the most any detector could find.
  std::set<std::string> suspect;
  for (const auto& [rid, r] : health.remediations) {
    if (r.suspect) suspect.insert(r.host);
  }
  Json found = Json::array();
  int64_t true_found = 0;
  for (const std::string& h : suspect) {
    const bool lemon = failures.lemon_hosts().contains(h);
    auto n = failures.faults_by_host().find(h);
    found.push_back({{"host", h},
                     {"faults", n == failures.faults_by_host().end() ? 0 : n->second},
                     {"lemon", lemon}});
    true_found += lemon;
  }
  int64_t showed = 0;
  for (const std::string& h : failures.lemon_hosts()) {
    auto n = failures.faults_by_host().find(h);
    showed += n != failures.faults_by_host().end() && n->second >= 2;
  }
  const int64_t injected = failures.injected();
  return Json{{"injected", injected},
              {"absorbed", failures.absorbed()},
              {"byCause", std::move(causes)},
              {"byFixNeeded", std::move(repairs)},
              {"byEffect", std::move(effects)},
              {"nodeDays", r4(node_days)},
              {"per1000NodeDays", node_days > 0
                                      ? Json(r4(1000.0 * static_cast<double>(injected) / node_days))
                                      : Json(nullptr)},
              {"meanTimeBetweenIncidentsPerNodeDays",
               injected > 0 ? Json(r4(node_days / static_cast<double>(injected))) : Json(nullptr)},
              {"lemonHostsModelled", failures.lemon_hosts().size()},
              {"lemonHostsThatShowed", showed},
              {"lemonHostsFound", std::move(found)},
              {"lemonHostsFoundThatAreLemons", true_found}};
}

}  // namespace

FleetKpis::FleetKpis(Time start, Time end, size_t buckets) : start_(start), end_(end) {
  const Duration span = std::max(end - start, Duration(minutes(1)));
  buckets_ = std::max<size_t>(1, buckets);
  width_ = std::max<Duration>(minutes(1), (span + Duration(static_cast<int64_t>(buckets_) - 1)) /
                                              static_cast<int64_t>(buckets_));
  buckets_ = static_cast<size_t>((span + width_ - Duration(1)) / width_);
  offered_us_.assign(buckets_, 0.0);
}

size_t FleetKpis::bucket_of(Time t) const {
  if (t <= start_) return 0;
  return std::min(buckets_ - 1, static_cast<size_t>((t - start_) / width_));
}

void FleetKpis::spread(std::vector<double>& series, Time from, Time to, double weight) const {
  from = std::max(from, start_);
  to = std::min(to, end_);
  if (to <= from || weight == 0) return;
  for (size_t b = bucket_of(from); b < buckets_; ++b) {
    const Time lo = std::max(from, start_ + width_ * static_cast<int64_t>(b));
    const Time hi = std::min(to, start_ + width_ * static_cast<int64_t>(b + 1));
    if (hi <= lo) break;
    series[b] += weight * static_cast<double>((hi - lo).count());
  }
}

void FleetKpis::add_offered(Time from, Time to, double gpus) {
  spread(offered_us_, from, to, gpus);
}

double FleetKpis::offered_gpu_hours() const {
  double total = 0;
  for (double v : offered_us_) total += v;
  return hours(total);
}

FleetKpis::~FleetKpis() = default;

JobTotals& FleetKpis::retired_totals() {
  if (!retired_) {
    retired_ = std::make_unique<JobTotals>();
    retired_->busy_series.assign(buckets_, 0.0);
    retired_->waiting_series.assign(buckets_, 0.0);
  }
  return *retired_;
}

void FleetKpis::add_retired(const Job& job) {
  auto spread = [this](std::vector<double>& s, Time from, Time to, double w) {
    this->spread(s, from, to, w);
  };
  add_job(job, end_, spread, retired_totals());
}

Json FleetKpis::compute(const FleetView& view, double paid_gpu_hours,
                        const FailureInjector* failures) const {
  JobTotals a;
  if (retired_) {
    a = *retired_;
  } else {
    a.busy_series.assign(buckets_, 0.0);
    a.waiting_series.assign(buckets_, 0.0);
  }
  auto spread = [this](std::vector<double>& s, Time from, Time to, double w) {
    this->spread(s, from, to, w);
  };
  for (const auto& [id, jp] : view.jobs) add_job(*jp, end_, spread, a);
  std::vector<double> all_waits;
  Json tenants = tenants_json(a.tenants, all_waits);
  // Time series.
  Json series = Json::array();
  const double w = static_cast<double>(width_.count());
  for (size_t b = 0; b < buckets_; ++b) {
    series.push_back({{"t", r4(secs(width_ * static_cast<int64_t>(b)))},
                      {"offeredGpus", r4(offered_us_[b] / w)},
                      {"busyGpus", r4(a.busy_series[b] / w)},
                      {"utilization", ratio(a.busy_series[b], offered_us_[b])},
                      {"queueDepth", r4(a.waiting_series[b] / w)}});
  }
  const double paid_us = paid_gpu_hours * 3.6e9;
  const double done = a.kept + a.in_progress_useful;
  Json out = {
      {"goodput", ratio(done, paid_us)},
      {"gpuHours",
       {{"paid", r4(paid_gpu_hours)},
        {"busy", r4(hours(a.busy))},
        {"kept", r4(hours(a.kept))},
        {"inProgress", r4(hours(a.in_progress))},
        {"inProgressDone", r4(hours(a.in_progress_useful))},
        {"lostToFailures", r4(hours(a.lost["failure"]))},
        {"lostToPreemption", r4(hours(a.lost["preemption"]))},
        {"lostOther", r4(hours(a.lost["other"]))},
        {"finishedJobsWork", r4(hours(a.trace_work))}}},
      {"jobGoodput", ratio(done, a.busy)},
      {"utilization", ratio(a.busy, paid_us)},
      {"jobs", a.jobs},
      {"queueingDelay", summary(all_waits, true)},
      {"tenants", std::move(tenants)},
      {"preemptions",
       {{"total", a.preemptions},
        {"jobsPreempted", a.preempted_jobs},
        {"perJob", a.jobs > 0
                       ? Json(r4(static_cast<double>(a.preemptions) / static_cast<double>(a.jobs)))
                       : Json(0)},
        {"max", a.max_preemptions}}},
      {"placement", placement_json(a)},
      {"largeJobs", large_jobs_json(std::move(a.large))},
      {"bucketSeconds", r4(secs(width_))},
      {"series", std::move(series)}};
  out["mttr"] = mttr_json(view.health_state());
  if (failures != nullptr) out["failures"] = failures_json(view.health_state(), *failures);
  return out;
}

}  // namespace gf
