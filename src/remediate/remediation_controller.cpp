#include "remediate/remediation_controller.h"

#include <fmt/format.h>

#include <algorithm>

#include "model/fault_classes.h"
#include "state/cluster_events.h"
#include "state/health_events.h"

namespace gf::remediate {

using RStatus = remediate::Status;

namespace {

void wake(ControllerDecision& d, Time t) {
  if (!d.wake_at || t < *d.wake_at) d.wake_at = t;
}

}  // namespace

RemediationController::RemediationController(HealingOptions options, CapacityCheck capacity,
                                             JobsOnNode jobs_on_node, SlurmNotIdle slurm_not_idle)
    : options_(std::move(options)),
      capacity_(std::move(capacity)),
      jobs_on_node_(std::move(jobs_on_node)),
      slurm_not_idle_(std::move(slurm_not_idle)) {}

ControllerDecision RemediationController::decide(const FleetState& state, Time now) {
  ControllerDecision d;
  if (!state.view().health && beats_.empty()) return d;
  auto_in_pass_ = 0;
  reachability(state, now, d);
  alerts(state, now, d);
  deliveries(state, now, d);
  proposals(state, now, d);
  progress(state, now, d);
  burn_in(state, d);
  return d;
}

Result<Decision> RemediationController::handle_heartbeat(const FleetState& state, Time now,
                                                         const std::string& cluster,
                                                         const std::string& node) {
  GF_RETURN_IF_ERROR(live_node(state, cluster, node).status());
  Decision dec;
  auto [it, added] = beats_.try_emplace(
      node, Beat{cluster, health::HeartbeatTracker(options_.heartbeat_interval), false});
  it->second.tracker.beat(now);
  if (it->second.reported) {
    it->second.reported = false;
    dec.events = clear_events(state, node, "host-reachability", "heartbeat resumed", false);
  }
  dec.response = {{"NodeId", node}, {"Interval", format_duration(options_.heartbeat_interval)}};
  return dec;
}

void RemediationController::reachability(const FleetState& state, Time now, ControllerDecision& d) {
  for (auto it = beats_.begin(); it != beats_.end();) {
    Beat& b = it->second;
    Result<const Node*> node = live_node(state, b.cluster, it->first);
    if (!node.ok()) {
      it = beats_.erase(it);  // the node is gone
      continue;
    }
    const Time due = *b.tracker.last_beat() +
                     options_.heartbeat_interval * health::HeartbeatTracker::kMissedBeats +
                     Duration(1);
    // A node drained for a remediation is expected to go quiet while it reboots.
    if (!b.reported && !(*node)->maintenance) {
      if (b.tracker.missed(now)) {
        b.reported = true;
        remediate::Detection det{"host-reachability",
                                 "",
                                 "host-reachability:unreachable",
                                 fmt::format("host missed {} heartbeats in a row (last at {})",
                                             health::HeartbeatTracker::kMissedBeats,
                                             format_iso8601(*b.tracker.last_beat())),
                                 "last_heartbeat=" + format_iso8601(*b.tracker.last_beat()),
                                 std::nullopt};
        for (Event& e : signal_events(state, b.cluster, **node, {det}, Json{{"unreachable", true}},
                                      FaultModel{})) {
          d.events.push_back(std::move(e));
        }
      } else {
        wake(d, due);
      }
    }
    ++it;
  }
}

void RemediationController::alerts(const FleetState& state, Time now, ControllerDecision& d) {
  const HealthState& h = state.view().health_state();
  for (const auto& [key, id] : h.open_alerts) {
    const AlertRecord& a = h.alerts.at(id);
    if (a.state != "pending") continue;
    const Time due = a.first_seen + a.persistence;
    if (due <= now) {
      d.events.push_back(to_event(health_events::AlertFired{a.id}));
    } else {
      wake(d, due);
    }
  }
  for (const auto& [at, id] : h.recurrences) {
    if (at > now) {
      wake(d, at);
      break;
    }
    const AlertRecord* a = h.find_alert(id);
    d.events.push_back(to_event(health_events::AlertRecurred{id}));
    if (!a) continue;
    Result<const Node*> node = live_node(state, a->cluster, a->node);
    Result<std::vector<remediate::Detection>> det = remediate::detect(a->signal);
    if (!node.ok() || !det.ok()) continue;
    for (Event& e : signal_events(state, a->cluster, **node, *det, a->signal,
                                  FaultModel{a->cleared_by, a->recurs - 1})) {
      d.events.push_back(std::move(e));
    }
  }
}

void RemediationController::deliveries(const FleetState& state, Time now, ControllerDecision& d) {
  if (options_.webhook_url.empty() && options_.support_webhook_url.empty()) return;
  const HealthState& h = state.view().health_state();
  auto want = [&](const AlertRecord& a, const std::string& target, const std::string& url,
                  const std::string& st) {
    if (url.empty() || a.delivered.contains(target + ":" + st)) return;
    const std::string key = a.id + "|" + target + "|" + st;
    auto it = delivering_.find(key);
    if (it != delivering_.end()) {
      if (it->second.next == Time::max()) return;  // in flight
      if (it->second.next > now) {
        wake(d, it->second.next);
        return;
      }
    }
    delivering_[key].next = Time::max();
    Intent in;
    in.driver = kWebhookDriver;
    in.kind = kDeliverIntent;
    in.payload = {
        {"Url", url}, {"Target", target}, {"AlertId", a.id}, {"State", st}, {"Body", a.to_json()}};
    d.intents.push_back(std::move(in));
  };
  for (const auto& [id, a] : h.alerts) {
    if (a.state == "pending" || a.state == "discarded") continue;
    if (a.state == "firing" || a.fired_at) want(a, "webhook", options_.webhook_url, "firing");
    if (a.state == "resolved") want(a, "webhook", options_.webhook_url, "resolved");
    if (a.support) want(a, "support", options_.support_webhook_url, "firing");
  }
}

Result<Decision> RemediationController::handle_delivery(const FleetState&, Time now,
                                                        const std::string& alert_id,
                                                        const std::string& target,
                                                        const std::string& alert_state, bool ok,
                                                        const std::string& error) {
  Decision dec;
  const std::string key = alert_id + "|" + target + "|" + alert_state;
  if (ok) {
    delivering_.erase(key);
    dec.events.push_back(to_event(health_events::AlertDelivered{alert_id, target, alert_state}));
    return dec;
  }
  Retry& r = delivering_[key];
  r.failures += 1;
  Duration backoff = options_.delivery_retry_base;
  for (int i = 1; i < r.failures && backoff < options_.delivery_retry_max; ++i) backoff *= 2;
  backoff = std::min(backoff, options_.delivery_retry_max);
  r.next = now + backoff;
  dec.response = {{"Retry", format_duration(backoff)}, {"Error", error}};
  return dec;
}

void RemediationController::proposals(const FleetState& state, Time now, ControllerDecision& d) {
  const HealthState& h = state.view().health_state();
  std::set<std::string> nodes_done;
  // Per alert: remediations proposed for it so far, and whether a person refused one. An alert's
  // remediations are on its node (evidence is always a firing alert of the remediation's node),
  // so only that node's remediations are read.
  auto history = [&](const AlertRecord& a) {
    std::pair<int64_t, bool> out{0, false};
    auto ids = h.by_node.find(a.node);
    if (ids == h.by_node.end()) return out;
    for (const std::string& rid : ids->second) {
      const Remediation* r = h.find_remediation(rid);
      if (!r) continue;
      for (const std::string& aid : r->evidence) {
        if (aid != a.id) continue;
        ++out.first;
        out.second =
            out.second || r->status == RStatus::kRejected || r->status == RStatus::kCancelled;
      }
    }
    return out;
  };
  for (const auto& [key, id] : h.open_alerts) {
    const AlertRecord& a = h.alerts.at(id);
    if (a.state != "firing" || a.support || a.action == "none" || a.action.empty()) continue;
    if (nodes_done.contains(a.node) || h.open_remediation(a.node)) continue;
    const auto [earlier, refused] = history(a);
    if (refused)
      continue;  // a person said no (or it was cancelled): not proposed again for this alert
    ProposalRequest req;
    req.cluster = a.cluster;
    req.node = a.node;
    req.requester = "detector:" + a.detector;
    req.detector = a.detector;
    req.evidence = {a.id};
    req.from_detector = true;
    req.reason = a.summary;
    req.key = fmt::format("remediation:{}:{}", a.id, earlier);
    Result<std::vector<Event>> ev =
        propose(state, now, req, capacity_, auto_in_pass_, static_cast<int64_t>(nodes_done.size()));
    if (!ev.ok()) continue;
    nodes_done.insert(a.node);
    for (Event& e : *ev) {
      if (e.type == event_type::kRemediationProposed) {
        auto proposed = health_events::decode<health_events::RemediationProposed>(e.payload);
        if (proposed.ok() && proposed->remediation.auto_approved) ++auto_in_pass_;
      }
      d.events.push_back(std::move(e));
    }
  }
}

// What progress()'s safety gates count across the open remediations (a node's cooldown is read
// from its own remediations: HealthState::cooldown_until).
struct RemediationController::Gates {
  std::map<std::string, int64_t> in_flight_cluster;
  std::map<std::string, int64_t> in_flight_pool;  // by "<cluster>/<group>"
  std::map<std::string, int64_t> live_nodes;      // by cluster, counted once a pass when needed
  std::map<std::string, int64_t> pool_nodes;      // by "<cluster>/<group>", likewise

  // Why r may not start now for lack of room (the pool's disruption budget, the cluster's
  // concurrency cap); nullopt when there is room.
  std::optional<std::string> no_room(const remediate::Policy& policy, const Remediation& r,
                                     const Cluster& cluster) {
    auto [counted, first] = live_nodes.try_emplace(r.cluster, 0);
    if (first) {
      for (const auto& [nid, n] : cluster.nodes) {
        if (!n.is_live()) continue;
        counted->second += 1;
        pool_nodes[r.cluster + "/" + n.group] += 1;
      }
    }
    const std::string pool = r.cluster + "/" + r.group;
    const int64_t budget = policy.disruption_budget(pool_nodes[pool]);
    if (in_flight_pool[pool] >= budget) {
      return fmt::format("disruption budget of node pool {} reached: {} remediation(s) in flight",
                         r.group, budget);
    }
    const int64_t cap = policy.max_concurrent(counted->second);
    if (in_flight_cluster[r.cluster] >= cap)
      return fmt::format("concurrency cap reached: {} remediation(s) in flight in {}", cap,
                         r.cluster);
    return std::nullopt;
  }
};

void RemediationController::progress(const FleetState& state, Time now, ControllerDecision& d) {
  const HealthState& h = state.view().health_state();
  // Only open remediations move; closed ones feed a node's cooldown only. A pass reads the open
  // ones through their index, in id order, so its cost follows what is open, not every
  // remediation the fleet ever had (docs/performance.md "Fleet-scale simulation").
  std::vector<const Remediation*> open;
  open.reserve(h.open_by_node.size());
  for (const auto& [node, id] : h.open_by_node) {
    if (const Remediation* r = h.find_remediation(id)) open.push_back(r);
  }
  if (open.empty()) return;
  std::sort(open.begin(), open.end(),
            [](const Remediation* a, const Remediation* b) { return a->id < b->id; });
  Gates gates;
  for (const Remediation* r : open) {
    if (remediate::in_flight(r->status)) {
      gates.in_flight_cluster[r->cluster] += 1;
      gates.in_flight_pool[r->cluster + "/" + r->group] += 1;
    }
  }
  std::map<std::string, int64_t> resumed;  // by cluster, in this pass
  for (const Remediation* open_r : open) {
    const Remediation& r = *open_r;
    const Cluster* cluster = state.view().find_cluster(r.cluster);
    const Node* node = nullptr;
    if (cluster) {
      auto it = cluster->nodes.find(r.node);
      if (it != cluster->nodes.end() && it->second.is_live()) node = &it->second;
    }
    if (cancel_if_moot(h, r, node, d)) continue;
    switch (r.status) {
      case RStatus::kProposed:
        // A person approves or rejects; one the breaker held resumes on its own after a reset.
        if (cluster) resume_held(h, r, *cluster, now, resumed, d);
        break;
      case RStatus::kApproved:
        start_if_allowed(h, r, *cluster, *node, gates, now, d);
        break;
      case RStatus::kWaitingForIdle:
        wait_for_idle(state, r, now, d);
        break;
      case RStatus::kDraining:
        if (jobs_on_node_(state, r.cluster, r.node) != 0) break;  // interrupts not recorded yet
        d.events.push_back(
            update_event(r, RStatus::kExecuting,
                         std::string(to_string(r.effective)) + " requested from the cloud driver"));
        break;
      case RStatus::kExecuting:
        if (node != nullptr) request_action(r, *node, d);
        break;
      case RStatus::kRejoining:
        check_rejoin(h, r, now, d);
        break;
      default:
        break;
    }
  }
}

bool RemediationController::cancel_if_moot(const HealthState& h, const Remediation& r,
                                           const Node* node, ControllerDecision& d) {
  const bool started = remediate::in_flight(r.status);
  if (!node && r.status != RStatus::kExecuting && r.status != RStatus::kRejoining) {
    d.events.push_back(update_event(r, RStatus::kCancelled, "node " + r.node + " is gone"));
    return true;
  }
  // A proposal whose alert clears before the node is drained is cancelled (docs/remediation.md).
  if (r.status != RStatus::kProposed && r.status != RStatus::kApproved &&
      r.status != RStatus::kWaitingForIdle) {
    return false;
  }
  std::string cleared;
  bool any_active = false;
  for (const std::string& aid : r.evidence) {
    const AlertRecord* a = h.find_alert(aid);
    if (a && a->active()) any_active = true;
    if (a && !a->active() && cleared.empty()) cleared = aid + " (" + a->fault + ") " + a->state;
  }
  if (r.evidence.empty() || any_active) return false;
  d.events.push_back(update_event(r, RStatus::kCancelled,
                                  fmt::format("alert {} before the remediation {}; nothing to do",
                                              cleared, started ? "drained the node" : "started")));
  return true;
}

void RemediationController::resume_held(const HealthState& h, const Remediation& r,
                                        const Cluster& cluster, Time now,
                                        std::map<std::string, int64_t>& resumed,
                                        ControllerDecision& d) {
  if (!r.held_by_breaker || cluster.node_recovery == "None") return;
  auto b = h.breakers.find(r.cluster);
  if (b == h.breakers.end() || b->second.open) return;  // still halted
  bool firing = false;
  for (const std::string& aid : r.evidence) {
    const AlertRecord* a = h.find_alert(aid);
    firing = firing || (a != nullptr && a->state == "firing");
  }
  if (!firing) return;  // cancelled once its alerts clear (cancel_if_moot)
  // At the breaker's rate: the rest wait for room in its window rather than trip it again.
  const remediate::Policy& policy = h.policy(r.cluster);
  const int64_t recent =
      remediate::recent_auto_approvals(h, r.cluster, now, policy.breaker_window) +
      resumed[r.cluster];
  if (recent + 1 > policy.breaker_max_auto) {
    std::optional<Time> room;
    for (const auto& [rid, other] : h.remediations) {
      if (other.cluster != r.cluster || !other.auto_approved || !other.approved_at) continue;
      if (b->second.reset_at && *other.approved_at < *b->second.reset_at) continue;
      const Time free_at = *other.approved_at + policy.breaker_window;
      if (free_at > now && (!room || free_at < *room)) room = free_at;
    }
    if (room) wake(d, *room);
    return;
  }
  resumed[r.cluster] += 1;
  d.events.push_back(update_event(
      r, RStatus::kApproved,
      fmt::format("circuit breaker reset by {}; its alert still fires: automatic remediation "
                  "resumes",
                  b->second.reset_by.empty() ? std::string("a person") : b->second.reset_by),
      "policy:" + r.rule));
}

void RemediationController::start_if_allowed(const HealthState& h, const Remediation& r,
                                             const Cluster& cluster, const Node& node, Gates& gates,
                                             Time now, ControllerDecision& d) {
  auto waiting = [&](const std::string& why, std::optional<Time> until) {
    if (r.reason != why) d.events.push_back(update_event(r, r.status, why));
    if (until) wake(d, *until);
  };
  if (const std::optional<Time> until = h.cooldown_until(r.node); until && *until > now) {
    waiting("cooldown: the node was remediated recently; starts at " + format_iso8601(*until),
            *until);
    return;
  }
  if (r.auto_approved) {
    auto b = h.breakers.find(r.cluster);
    if (b != h.breakers.end() && b->second.open) {
      waiting(
          "circuit breaker open: automatic remediation halted until a person resets it "
          "(gpufleet circuit-breaker reset " +
              r.cluster + ")",
          std::nullopt);
      return;
    }
  }
  const remediate::Policy& policy = h.policy(r.cluster);
  if (std::optional<std::string> why = gates.no_room(policy, r, cluster)) {
    waiting(*why, std::nullopt);
    return;
  }
  if ((r.effective == Action::kMigrate || r.effective == Action::kReprovision) && capacity_) {
    if (std::optional<std::string> why = capacity_(node.instance_type)) {
      waiting(fmt::format("waiting for a spare {} for {}: {}", node.instance_type,
                          to_string(r.effective), *why),
              now + minutes(5));
      return;
    }
  }
  const std::string how = stops_jobs(h, r)
                              ? std::string(" (its fault stopped them: draining at once)")
                          : policy.max_wait ? " (at most " + format_duration(*policy.max_wait) + ")"
                                            : std::string(" (never interrupts running jobs)");
  health_events::RemediationUpdated u =
      updated(r, RStatus::kWaitingForIdle,
              "cordoned: no new pods; waiting until no GPU pods or Slurm allocations remain" + how);
  if (policy.max_wait) u.idle_deadline = now + *policy.max_wait;
  d.events.push_back(to_event(u));
  gates.in_flight_cluster[r.cluster] += 1;
  gates.in_flight_pool[r.cluster + "/" + r.group] += 1;
}

// Whether r's faults stop the jobs on its node (fatal or hang) and the policy drains such nodes
// at once (WaitForIdle.FatalFaults: Drain, the default).
bool RemediationController::stops_jobs(const HealthState& h, const Remediation& r) {
  if (h.policy(r.cluster).wait_on_fatal) return false;
  for (const std::string& aid : r.evidence) {
    const AlertRecord* a = h.find_alert(aid);
    if (a && health::stops_job(health::fault_class(a->detector, a->fault).effect)) return true;
  }
  return false;
}

void RemediationController::wait_for_idle(const FleetState& state, const Remediation& r, Time now,
                                          ControllerDecision& d) {
  const size_t jobs = jobs_on_node_(state, r.cluster, r.node);
  const std::optional<std::string> slurm =
      slurm_not_idle_ ? slurm_not_idle_(state, r) : std::nullopt;
  if (jobs == 0 && !slurm) {
    d.events.push_back(update_event(r, RStatus::kDraining, "node idle; draining"));
  } else if (r.fault.rfind("host-reachability", 0) == 0) {
    // Nothing to wait for on a host that cannot be reached: its pods are lost
    // (docs/remediation.md).
    d.events.push_back(update_event(
        r, RStatus::kDraining,
        fmt::format("node unreachable: its pods are lost; evicting {} job(s) (their gangs restart "
                    "elsewhere)",
                    jobs)));
  } else if (stops_jobs(state.view().health_state(), r)) {
    // The fault already stopped the job on it (docs/remediation.md "Defaults by fault class"):
    // waiting for idle would only hold its gang on a broken node.
    d.events.push_back(update_event(
        r, RStatus::kDraining,
        fmt::format("{} stops the jobs on the node: draining at once; evicting {} job(s) (their "
                    "gangs restart elsewhere)",
                    r.fault, jobs)));
  } else if (r.idle_deadline && *r.idle_deadline <= now) {
    d.events.push_back(update_event(
        r, RStatus::kDraining,
        fmt::format("max wait reached; evicting {} job(s) (their gangs restart elsewhere){}", jobs,
                    slurm ? "; Slurm: " + *slurm : std::string())));
  } else {
    // Slurm's allocations end on Slurm's time: its next report wakes this pass.
    if (jobs == 0 && slurm && r.reason != "cordoned; " + *slurm)
      d.events.push_back(update_event(r, r.status, "cordoned; " + *slurm));
    if (r.idle_deadline) wake(d, *r.idle_deadline);
  }
}

void RemediationController::request_action(const Remediation& r, const Node& node,
                                           ControllerDecision& d) {
  if (acting_.contains(r.id)) return;
  acting_.insert(r.id);
  Intent in;
  in.driver = kCloudDriver;
  in.kind = kRemediateIntent;
  in.payload = {{"Cluster", r.cluster},
                {"InstanceId", r.node},
                {"InstanceType", node.instance_type},
                {"Action", to_string(r.effective)},
                {"RemediationId", r.id},
                {"Host", r.host}};
  d.intents.push_back(std::move(in));
}

void RemediationController::check_rejoin(const HealthState& h, const Remediation& r, Time now,
                                         ControllerDecision& d) {
  if (!r.acted_at) return;
  const Time check = *r.acted_at + options_.rejoin_check;
  if (now < check) {
    wake(d, check);
    return;
  }
  std::string failing;
  for (const auto& [key, aid] : h.open_alerts) {
    const AlertRecord& a = h.alerts.at(aid);
    if (a.node == r.node && !a.support && a.action != "none" && failing.empty())
      failing = a.id + " (" + a.fault + ")";
  }
  if (failing.empty()) {
    d.events.push_back(update_event(r, RStatus::kSucceeded,
                                    "health checks passed; node uncordoned and back in service"));
  } else {
    d.events.push_back(
        update_event(r, RStatus::kFailed,
                     fmt::format("health checks still failing after {}: {}; node stays cordoned",
                                 to_string(r.effective), failing)));
  }
}

void RemediationController::burn_in(const FleetState& state, ControllerDecision& d) {
  const HealthState& h = state.view().health_state();
  for (const std::string& id : h.hosts_in_inspection) {
    if (burning_.contains(id)) continue;
    const remediate::Host& host = h.hosts.at(id);
    if (host.suspect && host.status == "Inspecting") {
      // Its faults recur: no burn-in would prove it sound (docs/remediation.md "Suspect hosts").
      d.events.push_back(to_event(health_events::HostStatus{
          id, "Repair", host.reason + "; sent to repair without a burn-in", std::nullopt}));
      continue;
    }
    burning_.insert(id);
    if (host.status == "Inspecting") {
      d.events.push_back(to_event(
          health_events::HostStatus{id, "BurnIn", "burn-in after " + host.reason, std::nullopt}));
    }
    Intent in;
    in.driver = kCloudDriver;
    in.kind = kBurnInIntent;
    in.payload = {{"HostId", id}, {"InstanceType", host.instance_type}};
    d.intents.push_back(std::move(in));
  }
}

Result<Decision> RemediationController::handle_report(const FleetState& state, Time,
                                                      const CloudReport& report) {
  Decision dec;
  const HealthState& h = state.view().health_state();
  if (report.kind == CloudReport::Kind::kBurnIn) {
    const std::string host = report.detail.value("HostId", "");
    burning_.erase(host);
    auto it = h.hosts.find(host);
    if (it == h.hosts.end() || it->second.status != "BurnIn") return dec;
    const std::string outcome = report.detail.value("Outcome", "pass");
    health_events::HostStatus e{host, "Interrupted", report.message, std::nullopt};
    if (outcome == "pass") {
      e.status = "InService";
      e.reason = "burn-in passed: " + report.message;
    } else if (outcome == "fail") {
      e.status = "Repair";
      e.checks = report.detail.value("Checks", Json::array());
    }
    dec.events.push_back(to_event(e));
    return dec;
  }
  const std::string id = report.detail.value("RemediationId", "");
  acting_.erase(id);
  const Remediation* r = h.find_remediation(id);
  if (!r || r->status != RStatus::kExecuting) return dec;
  if (!report.detail.value("Ok", false)) {
    dec.events.push_back(update_event(*r, RStatus::kFailed,
                                      std::string(to_string(r->effective)) +
                                          " failed: " + report.message + "; node stays cordoned"));
    return dec;
  }
  health_events::RemediationUpdated rejoin =
      updated(*r, RStatus::kRejoining, report.message + "; running health checks before uncordon");
  if (auto host = report.detail.find("NewHost"); host != report.detail.end() && host->is_string())
    rejoin.new_host = host->get<std::string>();
  dec.events.push_back(to_event(rejoin));
  for (Event& e : clear_events(state, r->node, "", std::string(to_string(r->effective)), true))
    dec.events.push_back(std::move(e));
  if (r->effective == Action::kDelete) {
    dec.events.push_back(
        update_event(*r, RStatus::kSucceeded, "node sent to repair; the provisioner replaces it"));
    dec.events.push_back(to_event(cluster_events::NodeUnhealthy{
        r->cluster, r->node, fmt::format("deleted by {} (sent to repair)", r->id)}));
  }
  return dec;
}

}  // namespace gf::remediate
