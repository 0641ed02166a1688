// Health, alerts and remediation (docs/remediation.md): alerts, node signals (what an agent reports
// and a scenario's fault/clear steps send), remediation policies, requests and decisions, circuit
// breakers, node labels, hosts and tickets.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "api/api.h"
#include "core/k8s_names.h"
#include "remediate/engine.h"
#include "state/health_events.h"

namespace gf {

namespace {

using remediate::Remediation;
using RStatus = remediate::Status;

Result<Json> body_json(const HttpRequest& req, bool required = true) {
  if (req.body.empty()) {
    if (required) return validation_error("a JSON (or YAML) body is required");
    return Json::object();
  }
  GF_ASSIGN_OR_RETURN(auto docs, parse_documents(req.body));
  if (docs.size() != 1)
    return validation_error(fmt::format("expected one document, got {}", docs.size()));
  return docs.front();
}

// The optional string field `key` of a body that is either empty or an object with no other
// field: anything else (an array, a number, garbage, a non-string value) is a 400 that changes
// nothing.
Result<std::string> optional_body_field(const HttpRequest& req, const std::string& key) {
  GF_ASSIGN_OR_RETURN(Json body, body_json(req, false));
  ObjectReader r(body, "");
  std::string value = r.optional_string(key).value_or("");
  if (r.ok() && value.size() > 1024)
    r.fail(key, fmt::format("at most 1024 characters, got {}", value.size()));
  for (const std::string& f : r.unknown_fields())
    r.fail_status(validation_error(f + ": unknown field (expected only " + key + ")"));
  if (!r.ok()) return r.status();
  return value;
}

Result<remediate::FaultModel> fault_model(ObjectReader& r) {
  remediate::FaultModel m;
  if (auto list = r.optional_string_list("ClearedBy")) {
    for (const std::string& a : *list) {
      const std::optional<remediate::Action> act = remediate::parse_action(a);
      if (!act || *act == remediate::Action::kNone) {
        r.fail("ClearedBy", "'" + a + "' is not an action (reboot, reprovision, migrate, delete)");
        return r.status();
      }
    }
    m.cleared_by = *list;
  }
  if (auto n = r.optional_int("Recurs")) {
    if (*n < 0 || *n > 1000) {
      r.fail("Recurs", "must be 0 to 1000");
      return r.status();
    }
    m.recurs = *n;
  }
  if (!r.ok()) return r.status();
  return m;
}

Json filtered_alerts(const FleetView& v, const HttpRequest& req) {
  const std::string cluster = req.query_or("cluster", ""), node = req.query_or("node", ""),
                    state = req.query_or("state", ""), severity = req.query_or("severity", "");
  Json list = Json::array();
  const remediate::HealthState& h = v.health_state();
  std::vector<const remediate::AlertRecord*> all;
  for (const auto& [id, a] : h.alerts) all.push_back(&a);
  std::sort(all.begin(), all.end(), [](auto* a, auto* b) {
    return a->first_seen != b->first_seen ? a->first_seen < b->first_seen : a->id < b->id;
  });
  for (const auto* a : all) {
    if ((!cluster.empty() && a->cluster != cluster) || (!node.empty() && a->node != node) ||
        (!state.empty() && a->state != state) ||
        (!severity.empty() && health::to_string(a->severity) != severity)) {
      continue;
    }
    list.push_back(a->to_json());
  }
  return list;
}

Status check_filter(const HttpRequest& req, const std::string& key,
                    std::initializer_list<std::string_view> allowed) {
  const std::string v = req.query_or(key, "");
  if (v.empty()) return ok_status();
  for (std::string_view a : allowed) {
    if (v == a) return ok_status();
  }
  std::string list;
  for (std::string_view a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
  return validation_error(key + ": unknown value '" + v + "' (one of " + list + ")");
}

// approve / reject / cancel.
HttpResponse decide(Api& api, const HttpRequest& req, RStatus to) {
  Result<std::string> reason_field = optional_body_field(req, "Reason");
  if (!reason_field.ok()) return error_response(reason_field.status());
  const std::string id = req.path_params.at("id");
  const std::string by = req.caller;
  const std::string reason = *reason_field;
  Request w;
  w.name = to == RStatus::kApproved   ? "ApproveRemediation"
           : to == RStatus::kRejected ? "RejectRemediation"
                                      : "CancelRemediation";
  w.handle = [id, by, reason, to](const FleetState& s, Time) -> Result<Decision> {
    const Remediation* r = s.view().health_state().find_remediation(id);
    if (!r) return not_found_error("remediation '" + id + "' not found");
    const std::string now_status(to_string(r->status));
    if (to == RStatus::kApproved) {
      if (r->status != RStatus::kProposed)
        return conflict_error("remediation " + id + " is " + now_status +
                              "; only a Proposed one can be approved");
      if ((r->effective == remediate::Action::kMigrate ||
           r->effective == remediate::Action::kDelete) &&
          normalize_identity(by) == normalize_identity(r->requester)) {
        return validation_error("Approver: " + by + " requested remediation " + id + " (" +
                                std::string(to_string(r->effective)) +
                                ") and cannot approve it; a second person must");
      }
    } else if (to == RStatus::kRejected) {
      if (r->status != RStatus::kProposed && r->status != RStatus::kApproved) {
        return conflict_error("remediation " + id + " is " + now_status +
                              "; only a Proposed or Approved one not yet started can be rejected");
      }
    } else if (r->status == RStatus::kExecuting || r->status == RStatus::kRejoining ||
               !remediate::is_open(r->status)) {
      return conflict_error("remediation " + id + " is " + now_status +
                            "; it can no longer be cancelled");
    }
    Decision d;
    std::string why = reason;
    if (why.empty())
      why = to == RStatus::kApproved   ? "approved"
            : to == RStatus::kRejected ? "rejected"
                                       : "cancelled";
    if (to != RStatus::kApproved) why += " by " + by;
    d.events.push_back(remediate::update_event(*r, to, why, by));
    Remediation after = *r;
    after.status = to;
    if (to == RStatus::kApproved) after.approver = by;
    d.response = after.to_json();
    return d;
  };
  return Api::respond(api.write(std::move(w)));
}

HttpResponse request_remediation(Api& api, const Json& body, const std::string& caller,
                                 const std::string& idem) {
  ObjectReader r(body, "");
  remediate::ProposalRequest req;
  req.cluster = r.required_string("ClusterName");
  req.node = r.required_string("NodeId");
  const std::string action = r.required_string("Action");
  req.detector = r.optional_string("Detector").value_or("api");
  req.request_id = r.optional_string("RequestId").value_or("");
  req.reason = r.optional_string("Reason").value_or("");
  for (const std::string& f : r.unknown_fields())
    r.fail_status(validation_error(f + ": unknown field"));
  if (!r.ok()) return error_response(r.status());
  const std::optional<remediate::Action> a = remediate::parse_action(action);
  if (!a || *a == remediate::Action::kNone) {
    return error_response(validation_error(
        "Action: must be reboot, reprovision, migrate or delete; got '" + action + "'"));
  }
  req.action = *a;
  req.requester = caller;
  const std::string dedup = req.detector + "|" + req.request_id;
  req.key = req.request_id.empty() ? idem : "remediation-request:" + dedup;
  Request w;
  w.name = "RequestRemediation";
  w.idempotency_key = req.key;
  const remediate::CapacityCheck capacity = api.capacity_check();
  w.handle = [req, dedup, capacity](const FleetState& s, Time now) -> Result<Decision> {
    const remediate::HealthState& h = s.view().health_state();
    if (!req.request_id.empty()) {
      if (auto it = h.requests.find(dedup); it != h.requests.end()) {
        Decision d;  // (detector, request id) creates at most one remediation
        d.response = h.remediations.at(it->second).to_json();
        return d;
      }
    }
    GF_ASSIGN_OR_RETURN(std::vector<Event> events, remediate::propose(s, now, req, capacity));
    Decision d;
    d.response = events.front().payload.at("Remediation");
    GF_ASSIGN_OR_RETURN(Remediation rec, Remediation::from_canonical(d.response));
    d.response = rec.to_json();
    d.events = std::move(events);
    return d;
  };
  w.on_duplicate = [dedup](const FleetState& s, Seq) {
    const remediate::HealthState& h = s.view().health_state();
    auto it = h.requests.find(dedup);
    return it == h.requests.end() ? Json::object() : h.remediations.at(it->second).to_json();
  };
  return Api::respond(api.write(std::move(w), 201), 201);
}

// Of a burst of the same fault in one request (an Xid storm), an alert keeps only its first
// observation and the last kMaxRecentEvidence: the others are dropped before anything is recorded.
Status keep_first_and_recent(std::vector<remediate::Detection>& det) {
  std::map<std::string, std::vector<size_t>> by_fault;
  for (size_t i = 0; i < det.size(); ++i) {
    const remediate::Detection& x = det[i];
    by_fault[x.detector + "|" + x.subject + "|" + x.fault].push_back(i);
  }
  if (by_fault.size() > remediate::kMaxDetectionsPerSignal) {
    return validation_error(
        fmt::format("Signal: {} different faults in one request is over the limit of {}; send the "
                    "kernel log in smaller batches (nothing was recorded)",
                    by_fault.size(), remediate::kMaxDetectionsPerSignal));
  }
  std::vector<bool> keep(det.size(), false);
  for (const auto& [key, idx] : by_fault) {
    for (size_t k = 0; k < idx.size(); ++k) {
      if (k == 0 || k + remediate::kMaxRecentEvidence >= idx.size()) keep[idx[k]] = true;
    }
  }
  std::vector<remediate::Detection> kept;
  for (size_t i = 0; i < det.size(); ++i) {
    if (keep[i]) kept.push_back(std::move(det[i]));
  }
  det = std::move(kept);
  return ok_status();
}

// Validates `labels` (a map of label key to string value) into the map PutNodeLabels records.
Result<std::map<std::string, std::string>> parse_node_labels(const Json& labels) {
  if (!labels.is_object())
    return validation_error("Labels: expected a map of label to string value");
  std::map<std::string, std::string> map;
  for (auto it = labels.begin(); it != labels.end(); ++it) {
    const std::string field = "Labels." + printable(it.key(), 80);
    if (std::string why = label_key_error(it.key()); !why.empty()) {
      return validation_error(field + ": invalid label key: " + why);
    }
    if (!it.value().is_string()) return validation_error(field + ": expected a string value");
    if (std::string why = label_value_error(it.value().get_ref<const std::string&>());
        !why.empty()) {
      return validation_error(field + ": invalid label value: " + why);
    }
    map[it.key()] = it.value().get<std::string>();
  }
  return map;
}

// GET /v1/alerts: every alert, oldest first, filtered by cluster, node, state and severity.
HttpResponse list_alerts(Api& api, const HttpRequest& req) {
  for (const Status& s :
       {check_filter(req, "state", {"pending", "firing", "resolved", "discarded"}),
        check_filter(req, "severity", {"critical", "warning", "info"})}) {
    if (!s.ok()) return error_response(s);
  }
  return json_response(200, Json{{"Alerts", filtered_alerts(*api.loop().view(), req)}});
}

// GET /v1/alerts/{id}: one alert.
HttpResponse get_alert(Api& api, const HttpRequest& req) {
  auto view = api.loop().view();
  const remediate::AlertRecord* a = view->health_state().find_alert(req.path_params.at("id"));
  if (!a)
    return error_response(not_found_error("alert '" + req.path_params.at("id") + "' not found"));
  return json_response(200, a->to_json());
}

// POST /v1/clusters/{name}/nodes/{id}/signals: what an agent reports, or a scenario's fault step:
// raw detector input for one node.
HttpResponse post_node_signal(Api& api, const HttpRequest& req) {
  Result<Json> body = body_json(req);
  if (!body.ok()) return error_response(body.status());
  ObjectReader rd(*body, "");
  const Json* raw = rd.required_value("Signal");
  Result<remediate::FaultModel> model = fault_model(rd);
  for (const std::string& f : rd.unknown_fields())
    rd.fail_status(validation_error(f + ": unknown field"));
  if (!rd.ok()) return error_response(rd.status());
  if (!model.ok()) return error_response(model.status());
  Result<std::vector<remediate::Detection>> det = remediate::detect(*raw);
  if (!det.ok()) return error_response(det.status());
  const size_t detected = det->size();
  if (Status st = keep_first_and_recent(*det); !st.ok()) return error_response(st);
  Request w;
  w.name = "NodeSignal";
  const std::string cluster = req.path_params.at("name"), node = req.path_params.at("id");
  w.handle = [cluster, node, raw = *raw, det = *det, model = *model, detected](
                 const FleetState& s, Time) -> Result<Decision> {
    GF_ASSIGN_OR_RETURN(const Node* n, remediate::live_node(s, cluster, node));
    Decision d;
    d.events = remediate::signal_events(s, cluster, *n, det, raw, model);
    Json found = Json::array();
    for (const Event& e : d.events) {
      found.push_back({{"Detector", e.payload.at("Detector")},
                       {"Fault", e.payload.at("Fault")},
                       {"Severity", e.payload.at("Severity")},
                       {"Action", e.payload.at("Action")}});
    }
    d.response = {{"Detections", std::move(found)}};
    if (d.events.empty())
      d.response["Message"] = "no detector recognised the signal; nothing recorded";
    if (detected > d.events.size()) {
      d.response["Message"] = fmt::format(
          "{} detections of {} recorded: of each fault repeated in one request, the first and "
          "the last {} are kept",
          detected, d.events.size(), remediate::kMaxRecentEvidence);
    }
    return d;
  };
  return Api::respond(api.write(std::move(w)));
}

// POST /v1/clusters/{name}/nodes/{id}/heartbeat: a node agent's heartbeat; three missed ones raise
// a host-reachability alert.
HttpResponse post_node_heartbeat(Api& api, const HttpRequest& req) {
  if (!api.heartbeat_handler())
    return error_response(unavailable_error("heartbeats are not tracked by this server"));
  Request w;
  w.name = "NodeHeartbeat";
  const std::string cluster = req.path_params.at("name"), node = req.path_params.at("id");
  Api::HeartbeatHandler h = api.heartbeat_handler();
  w.handle = [h, cluster, node](const FleetState& s, Time now) { return h(s, now, cluster, node); };
  return Api::respond(api.write(std::move(w)));
}

// POST /v1/clusters/{name}/nodes/{id}/signals/clear: a scenario's clear step; the node's open
// alerts (all, or those of the body's Detector) stop being present.
HttpResponse clear_node_signals(Api& api, const HttpRequest& req) {
  Result<std::string> detector_field = optional_body_field(req, "Detector");
  if (!detector_field.ok()) return error_response(detector_field.status());
  const std::string detector = *detector_field;
  Request w;
  w.name = "NodeSignalClear";
  const std::string cluster = req.path_params.at("name"), node = req.path_params.at("id");
  w.handle = [cluster, node, detector](const FleetState& s, Time) -> Result<Decision> {
    if (!s.view().find_cluster(cluster))
      return not_found_error("cluster '" + cluster + "' does not exist");
    Decision d;
    d.events = remediate::clear_events(s, node, detector, "signal cleared", false);
    d.response = {{"Cleared", d.events.size()}};
    return d;
  };
  return Api::respond(api.write(std::move(w)));
}

// GET /v1/clusters/{name}/remediation-policy: the cluster's policy (the default if none was set).
HttpResponse get_remediation_policy(Api& api, const HttpRequest& req) {
  auto view = api.loop().view();
  const std::string name = req.path_params.at("name");
  if (!view->find_cluster(name))
    return error_response(not_found_error("cluster '" + name + "' does not exist"));
  Json out = view->health_state().policy(name).to_json();
  out["ClusterName"] = name;
  // What applies where no rule matches, so the answer shows the whole effective table.
  Json defaults = Json::array();
  for (const remediate::DefaultRule& d : remediate::default_rules()) {
    defaults.push_back({{"Detector", d.detector},
                        {"Faults", d.faults},
                        {"Action", d.action},
                        {"Approval", d.approval}});
  }
  out["DefaultRules"] = std::move(defaults);
  return json_response(200, out);
}

// PUT /v1/clusters/{name}/remediation-policy: replaces the cluster's policy.
HttpResponse put_remediation_policy(Api& api, const HttpRequest& req) {
  Result<Json> body = body_json(req);
  if (!body.ok()) return error_response(body.status());
  Json doc = *body;
  if (doc.is_object()) {  // what GET adds, so its answer can be edited and sent back
    doc.erase("ClusterName");
    doc.erase("DefaultRules");
  }
  Result<remediate::Policy> pol = remediate::Policy::from_json(doc, "");
  if (!pol.ok()) return error_response(pol.status());
  Request w;
  w.name = "PutRemediationPolicy";
  const std::string name = req.path_params.at("name");
  w.handle = [name, pol = *pol](const FleetState& s, Time) -> Result<Decision> {
    if (!s.view().find_cluster(name))
      return not_found_error("cluster '" + name + "' does not exist");
    Decision d;
    d.events.push_back(event_codec::to_event(health_events::PolicySet{name, pol}));
    d.response = pol.to_json();
    d.response["ClusterName"] = name;
    return d;
  };
  return Api::respond(api.write(std::move(w)));
}

// POST /v1/remediations: a request for a remediation; a (Detector, RequestId) pair makes at most
// one.
HttpResponse post_remediation(Api& api, const HttpRequest& req) {
  Result<Json> body = body_json(req);
  if (!body.ok()) return error_response(body.status());
  return request_remediation(api, *body, req.caller, idempotency_key(req, &*body));
}

// GET /v1/remediations: every remediation, oldest first, filtered by cluster, node and status.
HttpResponse list_remediations(Api& api, const HttpRequest& req) {
  if (Status st = check_filter(req, "status",
                               {"Proposed", "Approved", "WaitingForIdle", "Draining", "Executing",
                                "Rejoining", "Succeeded", "Failed", "Cancelled", "Rejected"});
      !st.ok()) {
    return error_response(st);
  }
  auto view = api.loop().view();
  const std::string cluster = req.query_or("cluster", ""), node = req.query_or("node", ""),
                    status = req.query_or("status", "");
  Json list = Json::array();
  std::vector<const Remediation*> all;
  for (const auto& [id, rem] : view->health_state().remediations) all.push_back(&rem);
  std::sort(all.begin(), all.end(), [](auto* a, auto* b) {
    return a->created_at != b->created_at ? a->created_at < b->created_at : a->id < b->id;
  });
  for (const Remediation* rem : all) {
    if ((!cluster.empty() && rem->cluster != cluster) || (!node.empty() && rem->node != node) ||
        (!status.empty() && to_string(rem->status) != status)) {
      continue;
    }
    list.push_back(rem->to_json());
  }
  return json_response(200, Json{{"Remediations", std::move(list)}});
}

// GET /v1/remediations/{id}: one remediation with the timeline of its events.
HttpResponse get_remediation(Api& api, const HttpRequest& req) {
  auto view = api.loop().view();
  const Remediation* rem = view->health_state().find_remediation(req.path_params.at("id"));
  if (!rem)
    return error_response(
        not_found_error("remediation '" + req.path_params.at("id") + "' not found"));
  Json out = rem->to_json();
  Json timeline = Json::array();
  for (size_t i = 0; i < view->events.size(); ++i) {
    const UserEvent& e = view->events.at(i);
    if (e.resource_type == "Remediation" && e.details.value("RemediationId", "") == rem->id) {
      timeline.push_back({{"EventTime", format_iso8601(e.time)}, {"Description", e.description}});
    }
  }
  out["Timeline"] = std::move(timeline);
  return json_response(200, out);
}

// GET /v1/clusters/{name}/circuit-breaker: the breaker's state and the auto-approvals it counts.
HttpResponse get_circuit_breaker(Api& api, const HttpRequest& req) {
  auto view = api.loop().view();
  const std::string name = req.path_params.at("name");
  if (!view->find_cluster(name))
    return error_response(not_found_error("cluster '" + name + "' does not exist"));
  const remediate::HealthState& h = view->health_state();
  const remediate::Policy& p = h.policy(name);
  remediate::Breaker b;
  if (auto it = h.breakers.find(name); it != h.breakers.end()) b = it->second;
  Json out = {{"ClusterName", name},
              {"State", b.open ? "Open" : "Closed"},
              {"Reason", b.reason},
              {"TrippedAt", b.tripped_at ? Json(format_iso8601(*b.tripped_at)) : Json(nullptr)},
              {"ResetAt", b.reset_at ? Json(format_iso8601(*b.reset_at)) : Json(nullptr)},
              {"ResetBy", b.reset_by},
              {"MaxAuto", p.breaker_max_auto},
              {"Window", format_duration(p.breaker_window)},
              {"AutoApprovalsInWindow",
               remediate::recent_auto_approvals(h, name, api.clock().now(), p.breaker_window)}};
  return json_response(200, out);
}

// POST /v1/clusters/{name}/circuit-breaker/reset: closes an open breaker (a no-op if it is closed).
HttpResponse reset_circuit_breaker(Api& api, const HttpRequest& req) {
  Request w;
  w.name = "ResetCircuitBreaker";
  const std::string name = req.path_params.at("name"), by = req.caller;
  w.handle = [name, by](const FleetState& s, Time) -> Result<Decision> {
    if (!s.view().find_cluster(name))
      return not_found_error("cluster '" + name + "' does not exist");
    const remediate::HealthState& h = s.view().health_state();
    auto it = h.breakers.find(name);
    Decision d;
    if (it == h.breakers.end() || !it->second.open) {
      d.response = {{"ClusterName", name},
                    {"State", "Closed"},
                    {"Message", "the circuit breaker was not open"}};
      return d;
    }
    d.events.push_back(event_codec::to_event(health_events::BreakerReset{name, by}));
    d.response = {{"ClusterName", name}, {"State", "Closed"}, {"ResetBy", by}};
    return d;
  };
  return Api::respond(api.write(std::move(w)));
}

// PUT /v1/clusters/{name}/nodes/{id}/labels: replaces the node's labels; a new value of
// gpufleet.io/remediate also proposes that remediation.
HttpResponse put_node_labels(Api& api, const HttpRequest& req) {
  Result<Json> body = body_json(req);
  if (!body.ok()) return error_response(body.status());
  const Json labels = body->is_object() && body->contains("Labels") ? body->at("Labels") : *body;
  Result<std::map<std::string, std::string>> parsed = parse_node_labels(labels);
  if (!parsed.ok()) return error_response(parsed.status());
  std::map<std::string, std::string> map = std::move(parsed).value();
  std::optional<remediate::Action> wanted;
  if (auto it = map.find("gpufleet.io/remediate"); it != map.end()) {
    wanted = remediate::parse_action(it->second);
    if (!wanted || *wanted == remediate::Action::kNone) {
      return error_response(validation_error(
          "Labels.gpufleet.io/remediate: must be reboot, reprovision, migrate or delete; got '" +
          it->second + "'"));
    }
  }
  Request w;
  w.name = "PutNodeLabels";
  const std::string cluster = req.path_params.at("name"), node = req.path_params.at("id"),
                    caller = req.caller;
  const remediate::CapacityCheck capacity = api.capacity_check();
  w.handle = [cluster, node, map, wanted, caller, capacity](const FleetState& s,
                                                            Time now) -> Result<Decision> {
    GF_ASSIGN_OR_RETURN(const Node* n, remediate::live_node(s, cluster, node));
    Decision d;
    d.events.push_back(event_codec::to_event(health_events::NodeLabels{cluster, node, map}));
    d.response = {{"ClusterName", cluster}, {"NodeId", node}, {"Labels", map}};
    auto before = n->labels.find("gpufleet.io/remediate");
    const bool changed =
        wanted && (before == n->labels.end() || before->second != map.at("gpufleet.io/remediate"));
    if (changed) {
      remediate::ProposalRequest pr;
      pr.cluster = cluster;
      pr.node = node;
      pr.action = wanted;
      pr.requester = "label:gpufleet.io/remediate (" + caller + ")";
      pr.detector = "node-label";
      pr.request_id =
          fmt::format("{}/{}/{}", node, map.at("gpufleet.io/remediate"), s.applied_seq());
      pr.key = "remediation-request:node-label|" + pr.request_id;
      GF_ASSIGN_OR_RETURN(std::vector<Event> ev, remediate::propose(s, now, pr, capacity));
      d.response["RemediationId"] = ev.front().payload.at("Remediation").at("RemediationId");
      for (Event& e : ev) d.events.push_back(std::move(e));
    }
    return d;
  };
  return Api::respond(api.write(std::move(w)));
}

// GET /v1/hosts: the hosts with a record, and every launched live node's host (InService).
HttpResponse list_hosts(Api& api, const HttpRequest& req) {
  auto view = api.loop().view();
  const std::string status = req.query_or("status", "");
  Json list = Json::array();
  const remediate::HealthState& h = view->health_state();
  std::set<std::string> listed;
  for (const auto& [id, host] : h.hosts) {
    listed.insert(id);
    if (status.empty() || host.status == status) list.push_back(host.to_json());
  }
  for (const auto& [cname, c] : view->clusters) {
    for (const auto& [nid, n] : c->nodes) {
      if (!n.is_live() || !n.launched() || listed.contains(n.host())) continue;
      remediate::Host host;
      host.id = n.host();
      host.cluster = cname;
      host.node = nid;
      host.instance_type = n.instance_type;
      host.since = n.launch_time.value_or(n.requested_at);
      if (auto lc = h.host_last_critical.find(host.id); lc != h.host_last_critical.end())
        host.last_critical = lc->second;
      if (status.empty() || status == "InService") list.push_back(host.to_json());
    }
  }
  return json_response(200, Json{{"Hosts", std::move(list)}});
}

// GET /v1/tickets: the repair tickets of hosts sent to Repair.
HttpResponse list_tickets(Api& api) {
  auto view = api.loop().view();
  Json list = Json::array();
  for (const remediate::Ticket& t : view->health_state().tickets) list.push_back(t.to_json());
  return json_response(200, Json{{"Tickets", std::move(list)}});
}

}  // namespace

void register_health_routes(Api& api) {
  Router& r = api.router();
  r.add("GET", "/v1/alerts", [&api](const HttpRequest& req) { return list_alerts(api, req); });
  r.add("GET", "/v1/alerts/{id}", [&api](const HttpRequest& req) { return get_alert(api, req); });
  r.add("POST", "/v1/clusters/{name}/nodes/{id}/signals",
        [&api](const HttpRequest& req) { return post_node_signal(api, req); });
  r.add("POST", "/v1/clusters/{name}/nodes/{id}/heartbeat",
        [&api](const HttpRequest& req) { return post_node_heartbeat(api, req); });
  r.add("POST", "/v1/clusters/{name}/nodes/{id}/signals/clear",
        [&api](const HttpRequest& req) { return clear_node_signals(api, req); });
  r.add("GET", "/v1/clusters/{name}/remediation-policy",
        [&api](const HttpRequest& req) { return get_remediation_policy(api, req); });
  r.add("PUT", "/v1/clusters/{name}/remediation-policy",
        [&api](const HttpRequest& req) { return put_remediation_policy(api, req); });
  r.add("POST", "/v1/remediations",
        [&api](const HttpRequest& req) { return post_remediation(api, req); });
  r.add("GET", "/v1/remediations",
        [&api](const HttpRequest& req) { return list_remediations(api, req); });
  r.add("GET", "/v1/remediations/{id}",
        [&api](const HttpRequest& req) { return get_remediation(api, req); });
  r.add("POST", "/v1/remediations/{id}/approve",
        [&api](const HttpRequest& req) { return decide(api, req, RStatus::kApproved); });
  r.add("POST", "/v1/remediations/{id}/reject",
        [&api](const HttpRequest& req) { return decide(api, req, RStatus::kRejected); });
  r.add("POST", "/v1/remediations/{id}/cancel",
        [&api](const HttpRequest& req) { return decide(api, req, RStatus::kCancelled); });
  r.add("GET", "/v1/clusters/{name}/circuit-breaker",
        [&api](const HttpRequest& req) { return get_circuit_breaker(api, req); });
  r.add("POST", "/v1/clusters/{name}/circuit-breaker/reset",
        [&api](const HttpRequest& req) { return reset_circuit_breaker(api, req); });
  r.add("PUT", "/v1/clusters/{name}/nodes/{id}/labels",
        [&api](const HttpRequest& req) { return put_node_labels(api, req); });
  r.add("GET", "/v1/hosts", [&api](const HttpRequest& req) { return list_hosts(api, req); });
  r.add("GET", "/v1/tickets", [&api](const HttpRequest&) { return list_tickets(api); });
}

}  // namespace gf
