#include "model/remediation_policy.h"

#include <fmt/format.h>

#include <algorithm>

namespace gf::remediate {

std::string_view to_string(Action a) {
  switch (a) {
    case Action::kNone:
      return "none";
    case Action::kReboot:
      return "reboot";
    case Action::kReprovision:
      return "reprovision";
    case Action::kMigrate:
      return "migrate";
    case Action::kDelete:
      return "delete";
  }
  return "none";
}

std::optional<Action> parse_action(std::string_view s) {
  for (Action a :
       {Action::kNone, Action::kReboot, Action::kReprovision, Action::kMigrate, Action::kDelete}) {
    if (s == to_string(a)) return a;
  }
  return std::nullopt;
}

std::string_view to_string(Approval a) { return a == Approval::kAuto ? "auto" : "manual"; }

namespace {

// Windows are added to times (a remediation's completion + Cooldown, now + MaxWait); beyond this
// bound the sum could leave the int64 microsecond range. Ten years is beyond any useful window.
constexpr Duration kMaxPolicyDuration = days(3650);

std::optional<Duration> read_duration(ObjectReader& r, std::string_view key) {
  const Json* v = r.optional_value(key);
  if (!v) return std::nullopt;
  Result<Duration> d = read_bounded_duration(*v, kMaxPolicyDuration);
  if (!d.ok()) {
    r.fail(key, d.status().message());
    return std::nullopt;
  }
  return *d;
}

void refuse_unknown(ObjectReader& r) {
  // unknown_fields() already names the full path ("WaitForIdle.X"); fail() would prefix it again.
  for (const std::string& f : r.unknown_fields())
    r.fail_status(validation_error(f + ": unknown field"));
}

bool valid_fault_pattern(std::string_view p) {
  if (p.empty()) return false;
  if (p == "*") return true;
  if (p.starts_with("xid:")) {
    std::string_view rest = p.substr(4);
    if (rest == "*") return true;
    return !rest.empty() &&
           std::all_of(rest.begin(), rest.end(), [](char c) { return c >= '0' && c <= '9'; });
  }
  // A detector name, or a detector's fault code ("dcgm:row-remap-failure").
  return std::all_of(p.begin(), p.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == ':' || c == '_';
  });
}

// One entry of Rules: a fault pattern, a policy action (never delete) and auto/manual approval.
Result<Rule> parse_rule(const Json& j, const std::string& path) {
  ObjectReader rr(j, path);
  if (!rr.ok()) return rr.status();
  Rule rule;
  rule.fault = rr.required_string("Fault");
  rule.node_pool = rr.optional_string("NodePool").value_or("");
  const std::string action = rr.required_string("Action");
  const std::string approval = rr.optional_string("Approval").value_or("auto");
  if (rr.ok() && !valid_fault_pattern(rule.fault)) {
    rr.fail("Fault", "'" + rule.fault +
                         "' is not a fault pattern (xid:119, xid:*, a detector name such as "
                         "dcgm-row-remap, or *)");
  }
  if (std::optional<Action> a = parse_action(action); rr.ok() && !a) {
    rr.fail("Action", "must be one of none, reboot, reprovision, migrate; got '" + action + "'");
  } else if (a && *a == Action::kDelete) {
    rr.fail("Action",
            "delete sends a node to repair and is done only by a person, never by a policy");
  } else if (a) {
    rule.action = *a;
  }
  if (approval == "auto") {
    rule.approval = Approval::kAuto;
  } else if (approval == "manual") {
    rule.approval = Approval::kManual;
  } else if (rr.ok()) {
    rr.fail("Approval", "must be auto or manual; got '" + approval + "'");
  }
  refuse_unknown(rr);
  if (!rr.ok()) return rr.status();
  return rule;
}

// Rules, in order: the first bad rule is the error.
Status parse_rules(ObjectReader& r, Policy& p) {
  if (const Json* rules = r.optional_array("Rules")) {
    for (size_t i = 0; i < rules->size(); ++i) {
      GF_ASSIGN_OR_RETURN(Rule rule,
                          parse_rule((*rules)[i], r.field_path(fmt::format("Rules[{}]", i))));
      p.rules.push_back(std::move(rule));
    }
  }
  return ok_status();
}

// WaitForIdle: a MaxWait up to the 24h cap, or Never: true, not both.
Status parse_wait_for_idle(ObjectReader& r, Policy& p) {
  if (const Json* w = r.optional_object("WaitForIdle")) {
    ObjectReader wr(*w, r.field_path("WaitForIdle"));
    const bool never = wr.optional_bool("Never").value_or(false);
    if (std::optional<std::string> f = wr.optional_string("FatalFaults")) {
      if (*f == "Drain" || *f == "Wait") {
        p.wait_on_fatal = *f == "Wait";
      } else {
        wr.fail("FatalFaults", "expected Drain or Wait, got \"" + printable(*f, 40) + "\"");
      }
    }
    std::optional<Duration> max = read_duration(wr, "MaxWait");
    if (never && max) wr.fail("Never", "give either MaxWait or Never: true, not both");
    if (max && *max > kMaxWaitCap) {
      wr.fail("MaxWait",
              format_duration(*max) +
                  " is above the 24h cap; use Never: true to never interrupt running jobs");
    }
    refuse_unknown(wr);
    if (!wr.ok()) return wr.status();
    if (never) {
      p.max_wait = std::nullopt;
    } else if (max) {
      p.max_wait = *max;
    }
  }
  return ok_status();
}

// AlertPersistence: one duration for every detector, or a map of detector name (or *) to one.
Status parse_alert_persistence(ObjectReader& r, Policy& p) {
  if (const Json* ap = r.optional_value("AlertPersistence")) {
    if (ap->is_object()) {
      ObjectReader ar(*ap, r.field_path("AlertPersistence"));
      for (auto it = ap->begin(); it != ap->end(); ++it) {
        if (it.key() != "*" && !health::detector_rule(it.key())) {
          ar.fail(it.key(),
                  "unknown detector (use a detector name such as xid, or * for every detector)");
          break;
        }
        if (std::optional<Duration> d = read_duration(ar, it.key())) p.persistence[it.key()] = *d;
      }
      if (!ar.ok()) return ar.status();
    } else if (std::optional<Duration> d = read_duration(r, "AlertPersistence")) {
      p.persistence["*"] = *d;
    }
  }
  return ok_status();
}

// MaxConcurrent: a count of at least 1 or a percent from 1% to 100%. A bad value fails `r`, like
// Cooldown's, rather than returning: the later reads of `r` become no-ops.
void parse_count_or_percent(ObjectReader& r, const char* field, int64_t& count, int64_t& percent) {
  if (const Json* mc = r.optional_value(field)) {
    if (mc->is_number_integer() && mc->get<int64_t>() >= 1) {
      count = mc->get<int64_t>();
      percent = 0;
    } else if (mc->is_string() && mc->get<std::string>().ends_with("%")) {
      const std::string s = mc->get<std::string>();
      try {
        size_t used = 0;
        const int64_t pct = std::stoll(s.substr(0, s.size() - 1), &used);
        if (used != s.size() - 1 || pct < 1 || pct > 100) throw std::invalid_argument("range");
        percent = pct;
        count = 0;
      } catch (const std::exception&) {
        r.fail(field, "'" + printable(s, 40) + "' is not a percent from 1% to 100%");
      }
    } else {
      r.fail(field, "must be a count of at least 1 or a percent such as \"5%\"");
    }
  }
}

// A count within a window: `field: {<count>: N, Window: D}` (CircuitBreaker: MaxAuto at least 1;
// Suspect: Faults from 0, which turns it off, to 1000), the window longer than zero.
struct CountInWindow {
  const char* field;
  const char* count;
  int64_t min, max;
  const char* range;  // how the count's range reads in the error
};

Status parse_count_in_window(ObjectReader& r, const CountInWindow& spec, int64_t& count,
                             Duration& window) {
  const Json* v = r.optional_object(spec.field);
  if (v == nullptr) return ok_status();
  ObjectReader cr(*v, r.field_path(spec.field));
  if (std::optional<int64_t> n = cr.optional_int(spec.count)) {
    if (*n < spec.min || *n > spec.max) {
      cr.fail(spec.count, spec.range);
    } else {
      count = *n;
    }
  }
  if (std::optional<Duration> d = read_duration(cr, "Window")) {
    if (*d == Duration::zero()) cr.fail("Window", "must be longer than 0s");
    window = *d;
  }
  refuse_unknown(cr);
  return cr.ok() ? ok_status() : cr.status();
}

}  // namespace

Result<Policy> Policy::from_json(const Json& j, const std::string& path) {
  Policy p;
  ObjectReader r(j, path);
  if (!r.ok()) return r.status();
  GF_RETURN_IF_ERROR(parse_rules(r, p));
  GF_RETURN_IF_ERROR(parse_wait_for_idle(r, p));
  GF_RETURN_IF_ERROR(parse_alert_persistence(r, p));
  if (std::optional<Duration> d = read_duration(r, "Cooldown")) p.cooldown = *d;
  parse_count_or_percent(r, "MaxConcurrent", p.max_concurrent_count, p.max_concurrent_percent);
  parse_count_or_percent(r, "DisruptionBudget", p.budget_count, p.budget_percent);
  if (std::optional<bool> b = r.optional_bool("UsualFixFirst")) p.usual_fix_first = *b;
  GF_RETURN_IF_ERROR(
      parse_count_in_window(r, {"Suspect", "Faults", 0, 1000, "must be from 0 (never) to 1000"},
                            p.suspect_faults, p.suspect_window));
  GF_RETURN_IF_ERROR(
      parse_count_in_window(r, {"CircuitBreaker", "MaxAuto", 1, INT64_MAX, "must be at least 1"},
                            p.breaker_max_auto, p.breaker_window));
  if (std::optional<Duration> d = read_duration(r, "EscalationWindow")) p.escalation_window = *d;
  if (std::optional<Duration> d = read_duration(r, "MigrationEvidenceWindow"))
    p.migration_evidence_window = *d;
  refuse_unknown(r);
  if (!r.ok()) return r.status();
  return p;
}

Json Policy::to_json() const {
  Json rules_json = Json::array();
  for (const Rule& rule : rules) {
    Json o = {{"Fault", rule.fault},
              {"Action", to_string(rule.action)},
              {"Approval", to_string(rule.approval)}};
    if (!rule.node_pool.empty()) o["NodePool"] = rule.node_pool;
    rules_json.push_back(std::move(o));
  }
  Json wait = max_wait ? Json{{"MaxWait", format_duration(*max_wait)}} : Json{{"Never", true}};
  wait["FatalFaults"] = wait_on_fatal ? "Wait" : "Drain";
  Json persist = Json::object();
  persist["*"] = format_duration(health::kDefaultPersistence);
  for (const auto& [k, v] : persistence) persist[k] = format_duration(v);
  Json mc = max_concurrent_count > 0 ? Json(max_concurrent_count)
                                     : Json(fmt::format("{}%", max_concurrent_percent));
  return {{"Rules", std::move(rules_json)},
          {"WaitForIdle", std::move(wait)},
          {"AlertPersistence", std::move(persist)},
          {"Cooldown", format_duration(cooldown)},
          {"MaxConcurrent", std::move(mc)},
          {"DisruptionBudget",
           budget_count > 0 ? Json(budget_count) : Json(fmt::format("{}%", budget_percent))},
          {"UsualFixFirst", usual_fix_first},
          {"Suspect", {{"Faults", suspect_faults}, {"Window", format_duration(suspect_window)}}},
          {"CircuitBreaker",
           {{"MaxAuto", breaker_max_auto}, {"Window", format_duration(breaker_window)}}},
          {"EscalationWindow", format_duration(escalation_window)},
          {"MigrationEvidenceWindow", format_duration(migration_evidence_window)}};
}

int64_t Policy::max_concurrent(int64_t cluster_nodes) const {
  if (max_concurrent_count > 0) return max_concurrent_count;
  return std::max<int64_t>(1, cluster_nodes * max_concurrent_percent / 100);
}

int64_t Policy::disruption_budget(int64_t pool_nodes) const {
  if (budget_count > 0) return budget_count;
  return std::max<int64_t>(1, pool_nodes * budget_percent / 100);
}

Duration Policy::persistence_for(std::string_view detector) const {
  if (auto it = persistence.find(detector); it != persistence.end()) return it->second;
  if (auto it = persistence.find("*"); it != persistence.end()) return it->second;
  if (const health::DetectorRule* r = health::detector_rule(detector)) return r->persistence;
  return health::kDefaultPersistence;
}

namespace {

// 0 = no match; higher = more specific.
int specificity(const Rule& rule, std::string_view detector, std::string_view fault,
                std::string_view pool) {
  int s = 0;
  if (rule.fault == fault) {
    s = 40;
  } else if (rule.fault.ends_with(":*") &&
             fault.starts_with(std::string_view(rule.fault).substr(0, rule.fault.size() - 1))) {
    s = 30;
  } else if (rule.fault == detector) {
    s = 20;
  } else if (rule.fault == "*") {
    s = 10;
  } else {
    return 0;
  }
  if (!rule.node_pool.empty()) {
    if (rule.node_pool != pool) return 0;
    s += 5;
  }
  return s;
}

Action table_action(std::string_view name) {
  if (name == health::kActionReboot) return Action::kReboot;
  if (name == health::kActionReprovision) return Action::kReprovision;
  if (name == health::kActionMigrate) return Action::kMigrate;
  return Action::kNone;
}

}  // namespace

RuleMatch match(const Policy& policy, std::string_view detector, std::string_view fault,
                std::string_view node_pool, std::optional<Action> default_action) {
  const Rule* best = nullptr;
  int best_s = 0;
  for (const Rule& rule : policy.rules) {
    const int s = specificity(rule, detector, fault, node_pool);
    if (s > best_s) {
      best = &rule;
      best_s = s;
    }
  }
  if (best) {
    return RuleMatch{best->action, best->approval, false,
                     best->fault + (best->node_pool.empty() ? "" : "@" + best->node_pool)};
  }
  const health::AlertClass c = health::classify(detector, fault);
  RuleMatch m;
  m.rule = "default:" + std::string(fault.empty() ? detector : fault);
  if (c.action == health::kActionSupport ||
      (c.action == health::kActionDriverRecovery && !default_action)) {
    m.support = true;
    return m;
  }
  m.action = default_action ? *default_action : table_action(c.action);
  m.approval =
      (c.approval_required || m.action == Action::kMigrate) ? Approval::kManual : Approval::kAuto;
  return m;
}

namespace {

DefaultRule default_row(std::string_view detector, std::string faults, std::string_view probe) {
  const std::string_view table = health::classify(detector, probe).action;
  // Xid 154's action comes from the driver's message (reboot or reprovision, approved alike).
  const std::optional<Action> named = table == health::kActionDriverRecovery
                                          ? std::optional<Action>(Action::kReboot)
                                          : std::nullopt;
  const RuleMatch m = match(Policy{}, detector, probe, "", named);
  const bool acts = !m.support && m.action != Action::kNone;
  return DefaultRule{std::string(detector), std::move(faults), std::string(table),
                     acts ? std::string(to_string(m.approval)) : "-"};
}

std::string xid_list(std::span<const int> codes) {
  std::string out;
  for (int c : codes) out += fmt::format("{}xid:{}", out.empty() ? "" : ",", c);
  return out;
}

}  // namespace

std::vector<DefaultRule> default_rules() {
  std::vector<DefaultRule> out;
  for (const health::DetectorRule& r : health::detector_rules()) {
    if (r.detector == "xid") {
      const std::string reboot = fmt::format("xid:{}", health::kXidDetectorAction[0]);
      const std::string quiet = fmt::format("xid:{}", health::kXidRecordOnly[0]);
      const std::string driver = fmt::format("xid:{}", health::kXidDriverRecovery);
      out.push_back(default_row(r.detector, xid_list(health::kXidDetectorAction), reboot));
      out.push_back(default_row(r.detector, xid_list(health::kXidRecordOnly), quiet));
      out.push_back(default_row(r.detector, driver, driver));
      out.push_back(default_row(r.detector, "*", "xid:0"));
      continue;
    }
    out.push_back(default_row(r.detector, "*", ""));
    if (r.detector == "dcgm-row-remap") {
      out.push_back(
          default_row(r.detector, std::string(health::kRowRemapFailure), health::kRowRemapFailure));
    }
    if (r.detector == "ib-link") {
      out.push_back(
          default_row(r.detector, std::string(health::kIbSymbolErrors), health::kIbSymbolErrors));
    }
  }
  return out;
}

Effective escalate(Action asked, std::string_view fault, std::span<const Attempt> history, Time now,
                   Duration window) {
  Effective e{asked, ""};
  auto tried = [&](Action a) {
    int64_t n = 0;
    for (const Attempt& at : history) {
      if (at.counts && at.action == a && at.fault == fault && now - at.at <= window) ++n;
    }
    return n;
  };
  if (e.action == Action::kReboot) {
    if (int64_t n = tried(Action::kReboot); n >= 2) {
      e.action = Action::kReprovision;
      e.reason = fmt::format("escalated: {} came back after {} reboots of this machine within {}",
                             fault, n, format_duration(window));
    }
  }
  if (e.action == Action::kReprovision) {
    if (int64_t n = tried(Action::kReprovision); n >= 2) {
      e.reason = fmt::format("{}{} came back after {} reprovisions of this machine within {}",
                             e.reason.empty() ? "escalated: " : e.reason + "; then ", fault, n,
                             format_duration(window));
      e.action = Action::kMigrate;
    }
  }
  return e;
}

Effective require_migration_evidence(Action action, bool critical_now,
                                     std::optional<Time> last_critical, Time now, Duration window) {
  if (action != Action::kMigrate) return {action, ""};
  if (critical_now) return {action, ""};
  if (last_critical && now - *last_critical <= window) return {action, ""};
  return {Action::kReprovision,
          "migrate needs a critical alert firing now or recorded on this machine within " +
              format_duration(window) + "; none found, so fast reprovision instead"};
}

}  // namespace gf::remediate
