#include "model/health_records.h"

#include <array>

namespace gf::remediate {

namespace {

constexpr std::array<std::string_view, 10> kStatusNames{
    "Proposed",  "Approved",  "WaitingForIdle", "Draining",  "Executing",
    "Rejoining", "Succeeded", "Failed",         "Cancelled", "Rejected"};

Json time_json(bool canonical, Time t) {
  return canonical ? Json(to_micros(t)) : Json(format_iso8601(t));
}
Json opt_time_json(bool canonical, const std::optional<Time>& t) {
  return t ? time_json(canonical, *t) : Json(nullptr);
}
std::optional<Time> read_opt_time(const Json& j, const char* key) {
  if (!j.contains(key) || j.at(key).is_null()) return std::nullopt;
  return from_micros(j.at(key).get<int64_t>());
}
Time read_time(const Json& j, const char* key) { return from_micros(j.value(key, int64_t{0})); }

template <typename F>
auto guarded(const char* what, F&& f) -> Result<decltype(f())> {
  try {
    return f();
  } catch (const std::exception& e) {
    return internal_error(std::string("malformed ") + what + " in snapshot: " + e.what());
  }
}

health::Severity parse_severity(std::string_view s) {
  const std::optional<health::Severity> sev = health::parse_severity(s);
  if (!sev) throw std::runtime_error("unknown Severity \"" + std::string(s) + "\"");
  return *sev;
}

}  // namespace

std::string_view to_string(Status s) { return kStatusNames[static_cast<size_t>(s)]; }

std::optional<Status> parse_status(std::string_view s) {
  for (size_t i = 0; i < kStatusNames.size(); ++i) {
    if (kStatusNames[i] == s) return static_cast<Status>(i);
  }
  return std::nullopt;
}

bool is_open(Status s) { return static_cast<int>(s) <= static_cast<int>(Status::kRejoining); }
bool in_flight(Status s) {
  return static_cast<int>(s) >= static_cast<int>(Status::kWaitingForIdle) && is_open(s);
}

Json AlertRecord::to_json(bool canonical) const {
  Json ev = Json::array();
  for (const health::Evidence& e : evidence) {
    ev.push_back({{"At", time_json(canonical, e.at)}, {"Present", e.present}, {"Text", e.text}});
  }
  Json j = {{"AlertId", id},
            {"ClusterName", cluster},
            {"InstanceGroupName", group},
            {"NodeId", node},
            {"HostId", host},
            {"Detector", detector},
            {"Subject", subject},
            {"Fault", fault},
            {"Severity", health::to_string(severity)},
            {"Summary", summary},
            {"State", state},
            {"FirstSeen", time_json(canonical, first_seen)},
            {"LastSeen", time_json(canonical, last_seen)},
            {"FiredAt", opt_time_json(canonical, fired_at)},
            {"ResolvedAt", opt_time_json(canonical, resolved_at)},
            {"ResolvedBy", resolved_by},
            {"Observations", observations},
            {"Evidence", std::move(ev)},
            {"Action", action},
            {"Support", support}};
  if (canonical) {
    j["PersistenceUs"] = persistence.count();
    j["ClearedBy"] = cleared_by;
    j["Recurs"] = recurs;
    j["Signal"] = signal;
    j["Delivered"] = delivered;
  } else {
    j["Persistence"] = format_duration(persistence);
  }
  return j;
}

Result<AlertRecord> AlertRecord::from_canonical(const Json& j) {
  return guarded("alert", [&] {
    AlertRecord a;
    a.id = j.at("AlertId").get<std::string>();
    a.cluster = j.at("ClusterName").get<std::string>();
    a.group = j.at("InstanceGroupName").get<std::string>();
    a.node = j.at("NodeId").get<std::string>();
    a.host = j.at("HostId").get<std::string>();
    a.detector = j.at("Detector").get<std::string>();
    a.subject = j.at("Subject").get<std::string>();
    a.fault = j.at("Fault").get<std::string>();
    a.severity = parse_severity(j.at("Severity").get<std::string>());
    a.summary = j.at("Summary").get<std::string>();
    a.state = j.at("State").get<std::string>();
    a.first_seen = read_time(j, "FirstSeen");
    a.last_seen = read_time(j, "LastSeen");
    a.fired_at = read_opt_time(j, "FiredAt");
    a.resolved_at = read_opt_time(j, "ResolvedAt");
    a.resolved_by = j.at("ResolvedBy").get<std::string>();
    a.observations = j.at("Observations").get<uint64_t>();
    for (const Json& e : j.at("Evidence")) {
      a.evidence.push_back(health::Evidence{from_micros(e.at("At").get<int64_t>()),
                                            e.at("Present").get<bool>(),
                                            e.at("Text").get<std::string>()});
    }
    a.action = j.at("Action").get<std::string>();
    a.support = j.at("Support").get<bool>();
    a.persistence = Duration(j.at("PersistenceUs").get<int64_t>());
    a.cleared_by = j.at("ClearedBy").get<std::vector<std::string>>();
    a.recurs = j.at("Recurs").get<int64_t>();
    a.signal = j.at("Signal");
    a.delivered = j.at("Delivered").get<std::set<std::string>>();
    return a;
  });
}

Json Remediation::to_json(bool canonical) const {
  Json ev = evidence;
  Json out{{"RemediationId", id},
           {"ClusterName", cluster},
           {"NodeId", node},
           {"InstanceGroupName", group},
           {"HostId", host},
           {"Fault", fault},
           {"Detector", detector},
           {"RequestId", request_id},
           {"Action", to_string(action)},
           {"EffectiveAction", to_string(effective)},
           {"EffectiveActionReason", effective_reason},
           {"Status", to_string(status)},
           {"Requester", requester},
           {"Approver", approver},
           {"Rule", rule},
           {"Evidence", std::move(ev)},
           {"AutoApproved", auto_approved},
           {"CreatedAt", time_json(canonical, created_at)},
           {"ApprovedAt", opt_time_json(canonical, approved_at)},
           {"StartedAt", opt_time_json(canonical, started_at)},
           {"ActedAt", opt_time_json(canonical, acted_at)},
           {"CompletedAt", opt_time_json(canonical, completed_at)},
           {"IdleDeadline", opt_time_json(canonical, idle_deadline)},
           {"Reason", reason}};
  // Only when set: records from before the field keep their form (and state hashes).
  if (held_by_breaker) out["HeldByBreaker"] = true;
  if (drained_at) out["DrainedAt"] = time_json(canonical, *drained_at);
  if (suspect) out["Suspect"] = true;
  return out;
}

Result<Remediation> Remediation::from_canonical(const Json& j) {
  return guarded("remediation", [&]() -> Remediation {
    Remediation r;
    r.id = j.at("RemediationId").get<std::string>();
    r.cluster = j.at("ClusterName").get<std::string>();
    r.node = j.at("NodeId").get<std::string>();
    r.group = j.at("InstanceGroupName").get<std::string>();
    r.host = j.at("HostId").get<std::string>();
    r.fault = j.at("Fault").get<std::string>();
    r.detector = j.at("Detector").get<std::string>();
    r.request_id = j.at("RequestId").get<std::string>();
    r.action = parse_action(j.at("Action").get<std::string>()).value_or(Action::kNone);
    r.effective = parse_action(j.at("EffectiveAction").get<std::string>()).value_or(Action::kNone);
    r.effective_reason = j.at("EffectiveActionReason").get<std::string>();
    r.status = parse_status(j.at("Status").get<std::string>()).value_or(Status::kProposed);
    r.requester = j.at("Requester").get<std::string>();
    r.approver = j.at("Approver").get<std::string>();
    r.rule = j.at("Rule").get<std::string>();
    r.evidence = j.at("Evidence").get<std::vector<std::string>>();
    r.auto_approved = j.at("AutoApproved").get<bool>();
    r.held_by_breaker = j.value("HeldByBreaker", false);
    r.suspect = j.value("Suspect", false);
    r.created_at = read_time(j, "CreatedAt");
    r.approved_at = read_opt_time(j, "ApprovedAt");
    r.started_at = read_opt_time(j, "StartedAt");
    r.acted_at = read_opt_time(j, "ActedAt");
    r.drained_at = read_opt_time(j, "DrainedAt");
    r.completed_at = read_opt_time(j, "CompletedAt");
    r.idle_deadline = read_opt_time(j, "IdleDeadline");
    r.reason = j.at("Reason").get<std::string>();
    return r;
  });
}

Json Host::to_json(bool canonical) const {
  Json out{{"HostId", id},
           {"Status", status},
           {"PreviousStatus", previous},
           {"ClusterName", cluster},
           {"NodeId", node},
           {"InstanceType", instance_type},
           {"Since", time_json(canonical, since)},
           {"Reason", reason},
           {"LastCriticalAlert", opt_time_json(canonical, last_critical)}};
  if (suspect) out["Suspect"] = true;
  return out;
}

Result<Host> Host::from_json(const Json& j) {
  return guarded("host", [&] {
    Host h;
    h.id = j.at("HostId").get<std::string>();
    h.status = j.at("Status").get<std::string>();
    h.previous = j.at("PreviousStatus").get<std::string>();
    h.cluster = j.at("ClusterName").get<std::string>();
    h.node = j.at("NodeId").get<std::string>();
    h.instance_type = j.at("InstanceType").get<std::string>();
    h.since = read_time(j, "Since");
    h.suspect = j.value("Suspect", false);
    h.reason = j.at("Reason").get<std::string>();
    h.last_critical = read_opt_time(j, "LastCriticalAlert");
    return h;
  });
}

Json Ticket::to_json(bool canonical) const {
  return {{"TicketId", id},
          {"HostId", host},
          {"ClusterName", cluster},
          {"NodeId", node},
          {"InstanceType", instance_type},
          {"OpenedAt", time_json(canonical, opened_at)},
          {"Summary", summary},
          {"Checks", checks}};
}

Result<Ticket> Ticket::from_json(const Json& j) {
  return guarded("ticket", [&] {
    Ticket t;
    t.id = j.at("TicketId").get<std::string>();
    t.host = j.at("HostId").get<std::string>();
    t.cluster = j.at("ClusterName").get<std::string>();
    t.node = j.at("NodeId").get<std::string>();
    t.instance_type = j.at("InstanceType").get<std::string>();
    t.opened_at = read_time(j, "OpenedAt");
    t.summary = j.at("Summary").get<std::string>();
    t.checks = j.at("Checks");
    return t;
  });
}

std::string HealthState::alert_key(std::string_view node, std::string_view detector,
                                   std::string_view subject, std::string_view fault) {
  std::string k;
  k.append(node).append("|").append(detector).append("|").append(subject).append("|").append(fault);
  return k;
}

const AlertRecord* HealthState::find_alert(std::string_view id) const {
  auto it = alerts.find(id);
  return it == alerts.end() ? nullptr : &it->second;
}

void HealthState::index_host(const Host& host) {
  if (host.status == "Inspecting" || host.status == "BurnIn") {
    hosts_in_inspection.insert(host.id);
  } else {
    hosts_in_inspection.erase(host.id);
  }
}

const Remediation* HealthState::find_remediation(std::string_view id) const {
  auto it = remediations.find(id);
  return it == remediations.end() ? nullptr : &it->second;
}

std::optional<Time> HealthState::cooldown_until(std::string_view node) const {
  auto ids = by_node.find(node);
  if (ids == by_node.end()) return std::nullopt;
  std::optional<Time> until;
  for (const std::string& id : ids->second) {
    const Remediation* r = find_remediation(id);
    if (!r || !r->completed_at || !r->acted_at) continue;
    const Time t = *r->completed_at + policy(r->cluster).cooldown;
    if (!until || t > *until) until = t;
  }
  return until;
}

const Remediation* HealthState::open_remediation(std::string_view node) const {
  auto it = open_by_node.find(node);
  return it == open_by_node.end() ? nullptr : find_remediation(it->second);
}

const Policy& HealthState::policy(std::string_view cluster) const {
  static const Policy kDefault;
  auto it = policies.find(cluster);
  return it == policies.end() ? kDefault : it->second;
}

Json HealthState::to_json() const {
  Json a = Json::array(), r = Json::array(), h = Json::array(), t = Json::array(),
       p = Json::object(), b = Json::object(), rec = Json::array(), lc = Json::object();
  for (const auto& [id, x] : alerts) a.push_back(x.to_canonical());
  for (const auto& [id, x] : remediations) r.push_back(x.to_canonical());
  for (const auto& [id, x] : hosts) h.push_back(x.to_json(true));
  for (const Ticket& x : tickets) t.push_back(x.to_json(true));
  for (const auto& [c, x] : policies) p[c] = x.to_json();
  for (const auto& [c, x] : breakers) {
    b[c] = {{"Open", x.open},
            {"TrippedAt", opt_time_json(true, x.tripped_at)},
            {"Reason", x.reason},
            {"ResetAt", opt_time_json(true, x.reset_at)},
            {"ResetBy", x.reset_by}};
  }
  for (const auto& [at, id] : recurrences) rec.push_back({to_micros(at), id});
  for (const auto& [host, at] : host_last_critical) lc[host] = opt_time_json(true, at);
  return {{"Alerts", std::move(a)},
          {"Remediations", std::move(r)},
          {"Hosts", std::move(h)},
          {"Tickets", std::move(t)},
          {"Policies", std::move(p)},
          {"Breakers", std::move(b)},
          {"Recurrences", std::move(rec)},
          {"HostLastCritical", std::move(lc)},
          {"Counters", {alert_counter, remediation_counter, ticket_counter, host_counter}}};
}

Result<HealthState> HealthState::from_json(const Json& j) {
  HealthState s;
  if (j.is_null()) return s;
  try {
    for (const Json& x : j.at("Alerts")) {
      GF_ASSIGN_OR_RETURN(AlertRecord a, AlertRecord::from_canonical(x));
      if (a.active()) s.open_alerts[alert_key(a.node, a.detector, a.subject, a.fault)] = a.id;
      s.alerts[a.id] = std::move(a);
    }
    for (const Json& x : j.at("Remediations")) {
      GF_ASSIGN_OR_RETURN(Remediation r, Remediation::from_canonical(x));
      if (!r.request_id.empty()) s.requests[r.detector + "|" + r.request_id] = r.id;
      if (is_open(r.status)) s.open_by_node[r.node] = r.id;
      s.by_node[r.node].push_back(r.id);
      s.remediations[r.id] = std::move(r);
    }
    for (const Json& x : j.at("Hosts")) {
      GF_ASSIGN_OR_RETURN(Host h, Host::from_json(x));
      s.index_host(h);
      s.hosts[h.id] = std::move(h);
    }
    for (const Json& x : j.at("Tickets")) {
      GF_ASSIGN_OR_RETURN(Ticket t, Ticket::from_json(x));
      s.tickets.push_back(std::move(t));
    }
    for (auto it = j.at("Policies").begin(); it != j.at("Policies").end(); ++it) {
      GF_ASSIGN_OR_RETURN(Policy p, Policy::from_json(it.value(), "Policies." + it.key()));
      s.policies[it.key()] = std::move(p);
    }
    for (auto it = j.at("Breakers").begin(); it != j.at("Breakers").end(); ++it) {
      Breaker b;
      b.open = it.value().at("Open").get<bool>();
      b.tripped_at = read_opt_time(it.value(), "TrippedAt");
      b.reason = it.value().at("Reason").get<std::string>();
      b.reset_at = read_opt_time(it.value(), "ResetAt");
      b.reset_by = it.value().at("ResetBy").get<std::string>();
      s.breakers[it.key()] = std::move(b);
    }
    for (const Json& x : j.at("Recurrences"))
      s.recurrences.emplace(from_micros(x.at(0).get<int64_t>()), x.at(1).get<std::string>());
    for (auto it = j.at("HostLastCritical").begin(); it != j.at("HostLastCritical").end(); ++it) {
      s.host_last_critical[it.key()] =
          it.value().is_null() ? std::nullopt
                               : std::optional<Time>(from_micros(it.value().get<int64_t>()));
    }
    const Json& c = j.at("Counters");
    s.alert_counter = c.at(0).get<int64_t>();
    s.remediation_counter = c.at(1).get<int64_t>();
    s.ticket_counter = c.at(2).get<int64_t>();
    s.host_counter = c.at(3).get<int64_t>();
  } catch (const std::exception& e) {
    return internal_error(std::string("malformed health state in snapshot: ") + e.what());
  }
  return s;
}

}  // namespace gf::remediate
