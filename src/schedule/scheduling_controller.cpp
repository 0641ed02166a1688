#include "schedule/scheduling_controller.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <set>

#include "schedule/workload_controller.h"
#include "state/job_events.h"

namespace gf {
namespace {

std::vector<std::string> instance_ids(const sched::Scheduler& s, const sched::Placement& p) {
  std::vector<std::string> out;
  out.reserve(p.pods.size());
  for (const sched::PodBinding& b : p.pods) out.push_back(s.placement().instance_id(b.node));
  return out;
}

using job_events::to_event;

// Whether a pod of the admitted job ran: always, except for a gang on a real Slurm cluster none
// of whose pods reported Running or Succeeded — moving such a gang restarts nothing, so its
// restartPolicy has nothing to refuse.
bool any_pod_started(const FleetState& state, const Job& job);

// A gang came down because `a.node` left: the job.interrupted event, and for a workload whose
// failed pods may not restart (restartPolicy, backoffLimit) the job.finished that fails it. When
// the whole member cluster became unusable (failed, being deleted, gone) no pod failed on its
// own: the job waits for failover (docs/dispatch.md) whatever its restart policy.
void record_interrupt(const FleetState& state, const sched::Scheduler& s, const Job& job,
                      const sched::Action& a, std::vector<Event>& out) {
  job_events::Interrupted e{job.id, s.placement().instance_id(a.node), a.message};
  if (a.move) e.cause = std::string(job_events::kInterruptMove);
  out.push_back(to_event(std::move(e)));
  if (!job.dispatch || a.move || !any_pod_started(state, job)) return;  // a move, not a restart
  const Cluster* c = state.view().find_cluster(job.dispatch->cluster);
  if (c == nullptr || !c->runs_jobs()) return;
  std::vector<std::string> roles;
  for (const sched::PodBinding& b : a.placement.pods) {
    if (b.node != a.node || b.pod_set >= job.pod_sets.size()) continue;
    const std::string& role = job.pod_sets[b.pod_set].role;
    if (std::find(roles.begin(), roles.end(), role) == roles.end()) roles.push_back(role);
  }
  if (auto refusal = restart_refusal(job, roles)) {
    out.push_back(to_event(job_events::Finished{job.id, JobStatus::kFailed, *refusal}));
  }
}

// A job's wait as its record keeps it (docs/scheduling.md "Why a job waits").
JobWait job_wait(const sched::WaitReason& w, Time now) {
  JobWait out;
  out.kind = std::string(sched::wait_kind_name(w.kind));
  out.reason = std::string(sched::condition_reason(w));
  out.message = w.message;
  out.node = w.node;
  out.limit = w.limit;
  out.resource = w.resource;
  out.requested = w.requested;
  out.available = w.available;
  out.shortfall = w.shortfall;
  out.since = now;
  return out;
}

// The scheduler names other jobs by their dense key ("job 123"); people know them by name.
std::string name_jobs(const FleetState& state, const std::string& message) {
  std::string out;
  size_t from = 0;
  for (size_t at = message.find("job "); at != std::string::npos;
       at = message.find("job ", at + 4)) {
    size_t end = at + 4;
    while (end < message.size() && std::isdigit(static_cast<unsigned char>(message[end]))) ++end;
    if (end == at + 4) continue;
    uint64_t key = 0;
    std::from_chars(message.data() + at + 4, message.data() + end, key);
    const Job* other = state.job_by_key(key);
    if (other == nullptr) continue;
    out.append(message, from, at - from);
    out += fmt::format("job {} ({})", other->name, other->id);
    from = end;
  }
  return out + message.substr(from);
}

// After a pass: a job.waiting event for every job whose reason to wait changed. Only jobs the
// scheduler touched since the last pass are explained (the others' reasons stand).
void record_waits(const FleetState& state, sched::Scheduler& s, Time now,
                  const sched::PassResult& pass, std::vector<Event>& out) {
  std::set<sched::JobKey> admitted;  // their record's reason is cleared when the event applies
  for (const sched::Action& a : pass.actions) {
    if (a.kind == sched::ActionKind::kAdmit) admitted.insert(a.job);
  }
  for (sched::JobKey key : s.take_touched()) {
    const Job* job = state.job_by_key(key);
    if (job == nullptr || is_terminal(job->status)) continue;
    const sched::WaitReason w = s.explain(key, now);
    if (w.kind == sched::WaitKind::kNotWaiting) continue;  // admission clears the record
    JobWait next = job_wait(w, now);
    next.message = name_jobs(state, next.message);
    const JobWait* before = admitted.contains(key) || !job->waiting ? nullptr : &*job->waiting;
    if (before != nullptr && before->same_as(next)) continue;
    if (before != nullptr && before->reason == next.reason) next.since = before->since;
    out.push_back(to_event(job_events::Waiting{job->id, next}));
  }
}

// A gang placed on the nodes of a real Slurm cluster (the local cloud's agents run its pods).
bool real_slurm_gang(const FleetState& state, const Job& job);

// Whether the admitted job's gang started. A gang on a real Slurm cluster (docs/slurm.md "One
// source of truth") runs when Slurm runs it: once every pod of its placement reports Running (or
// already Succeeded), never when it is merely placed. Elsewhere placing it starts it.
bool real_slurm_gang(const FleetState& state, const Job& job) {
  const Cluster* c = state.view().find_cluster(job.cluster);
  if (c == nullptr || c->orchestrator != Orchestrator::kSlurm) return false;
  return std::any_of(job.pod_nodes.begin(), job.pod_nodes.end(), [&](auto& id) {
    auto it = c->nodes.find(id);
    return it != c->nodes.end() && !it->second.address.empty();
  });
}

bool gang_started(const FleetState& state, const Job& job) {
  if (!real_slurm_gang(state, job)) return true;
  for (const Job::Pod& p : job.pods()) {
    auto s = job.pod_states.find(p.name);
    if (s == job.pod_states.end() ||
        (s->second.phase != "Running" && s->second.phase != "Succeeded"))
      return false;
  }
  return true;
}

bool any_pod_started(const FleetState& state, const Job& job) {
  if (!real_slurm_gang(state, job)) return true;
  return std::any_of(job.pod_states.begin(), job.pod_states.end(), [](const auto& p) {
    return p.second.phase == "Running" || p.second.phase == "Succeeded";
  });
}

// Facts first: gangs that lost nodes, jobs whose run is over, gangs that started.
void record_facts(SchedulingCache& cache, const FleetState& state, const sched::Scheduler& s,
                  Time now, bool simulated_runs, std::vector<Event>& out) {
  for (const sched::Action& a : cache.take_interrupts(state)) {
    const Job* job = state.job_by_key(a.job);
    if (job == nullptr) continue;
    record_interrupt(state, s, *job, a, out);
  }
  for (const auto& [end, key] : state.completions()) {
    if (!simulated_runs || end > now) break;
    const Job* job = state.job_by_key(key);
    if (job == nullptr) continue;
    out.push_back(to_event(job_events::Finished{
        job->id, JobStatus::kSucceeded,
        "completed after " + format_duration(job->duration.value_or(Duration::zero()))}));
  }
  for (uint64_t key : state.scheduled()) {
    const Job* job = state.job_by_key(key);
    if (job != nullptr && gang_started(state, *job))
      out.push_back(to_event(job_events::Running{job->id}));
  }
}

// The pass's decisions as job events, in decision order.
void record_actions(const FleetState& state, const sched::Scheduler& s,
                    const sched::PassResult& pass, std::vector<Event>& out) {
  for (const sched::Action& a : pass.actions) {
    const Job* job = state.job_by_key(a.job);
    if (job == nullptr) continue;
    switch (a.kind) {
      case sched::ActionKind::kAdmit:
        out.push_back(to_event(job_events::Admitted{
            job->id, a.alternative, s.placement().cluster_name(a.placement.cluster),
            instance_ids(s, a.placement), a.borrowing, a.replaced}));
        break;
      case sched::ActionKind::kPreempt: {
        const Job* by = state.job_by_key(a.other);
        std::string message = a.message;
        if (by != nullptr) {
          message =
              fmt::format("{}: preempted by {} ({}, priority {}){}",
                          quota::preemption_reason_name(a.reason), by->id, by->name, by->priority,
                          a.terminated ? "; preemptionRetriesBeforeTermination exhausted" : "");
        }
        out.push_back(to_event(job_events::Preempted{
            job->id, by != nullptr ? by->id : "",
            std::string(quota::preemption_reason_name(a.reason)), message, a.until, a.terminated}));
        break;
      }
      case sched::ActionKind::kInterrupt:
        record_interrupt(state, s, *job, a, out);
        break;
    }
  }
}

}  // namespace

ControllerDecision SchedulingController::decide(const FleetState& state, Time now) {
  ControllerDecision d;
  sched::Scheduler& s = cache_.scheduler(state);

  record_facts(cache_, state, s, now, simulated_runs_, d.events);
  if (!d.events.empty()) return d;  // applied first; the loop calls again for the pass

  std::optional<Time> next_completion;
  if (simulated_runs_ && !state.completions().empty())
    next_completion = state.completions().begin()->first;
  const bool due = wake_ && *wake_ <= now;
  if (cache_.generation(state) == seen_generation_ && !due) {
    d.wake_at = wake_;
    if (next_completion && (!d.wake_at || *next_completion < *d.wake_at))
      d.wake_at = next_completion;
    return d;
  }

  const sched::PassResult pass = s.schedule(now);
  passes_ += 1;
  record_actions(state, s, pass, d.events);
  record_waits(state, s, now, pass, d.events);
  // Our own events bump the generation when applied; what they change is already in the
  // scheduler, so the next call need not pass again unless something else changes.
  seen_generation_ = cache_.generation(state) + d.events.size();
  wake_ = pass.next_wake;
  d.wake_at = wake_;
  if (next_completion && (!d.wake_at || *next_completion < *d.wake_at)) d.wake_at = next_completion;
  return d;
}

}  // namespace gf
