#include "state/fleet_state.h"

#include <fmt/format.h>

#include <set>

#include "core/hash.h"
#include "core/ids.h"
#include "state/cluster_codec.h"
#include "state/job_events.h"
#include "state/object_events.h"
#include "state/plane_events.h"
#include "state/workload_state.h"

namespace gf {

Event record_event(std::string resource_type, EventLevel level, std::string description,
                   Json details) {
  plane_events::Recorded e;
  e.resource_type = std::move(resource_type);
  e.level = level;
  e.description = std::move(description);
  e.details = std::move(details);
  return event_codec::to_event(e);
}

UserEvent plane_events::Recorded::user_event() const {
  UserEvent u;
  u.resource_type = resource_type;
  u.level = level;
  u.description = description;
  u.details = details;
  u.cluster_name = cluster_name.value_or("");
  u.cluster_arn = cluster_arn.value_or("");
  u.instance_group = instance_group.value_or("");
  u.instance_id = instance_id.value_or("");
  return u;
}

std::optional<Seq> FleetState::find_key(const std::string& key) const {
  auto it = keys_.find(key);
  if (it == keys_.end()) return std::nullopt;
  return it->second;
}

std::optional<Seq> FleetState::find_key_prefix(std::string_view prefix) const {
  auto it = keys_.lower_bound(prefix);
  if (it == keys_.end() || it->first.compare(0, prefix.size(), prefix) != 0) return std::nullopt;
  return it->second;
}

void FleetState::add_user_event(const EventRecord& record, UserEvent event) {
  event.seq = record.seq;
  event.time = record.time;
  event.event_id = event_id(record.seq, user_events_in_record_++);
  view_.events.append(std::move(event));
}

void FleetState::add_job_user_event(const EventRecord& record, const Job& job,
                                    const JobEvent& line) {
  static const std::set<std::string, std::less<>> kWarnings = {
      "Failover", "PodsPending", "Restarting", "Preempted", "Interrupted", "FAILED", "Failed"};
  UserEvent e;
  e.resource_type = "Job";
  e.level = kWarnings.contains(line.reason) ? EventLevel::kWarn : EventLevel::kInfo;
  e.description = job.kind + " " + (job.dispatch ? job.ns + "/" : "") + job.name + ": " +
                  line.reason + ": " + line.message;
  // Member by member: an initializer list builds a two-element array per member first.
  e.details["JobId"] = job.id;
  e.details["JobName"] = job.name;
  e.details["Kind"] = job.kind;
  e.details["Reason"] = line.reason;
  if (!job.ns.empty()) e.details["Namespace"] = job.ns;
  const std::string cluster =
      job.dispatch && !job.dispatch->cluster.empty() ? job.dispatch->cluster : job.cluster;
  if (const Cluster* c = view_.find_cluster(cluster)) {
    e.cluster_name = c->name;
    e.cluster_arn = c->arn;
  }
  add_user_event(record, std::move(e));
}

namespace {

// Event families by type prefix (apply_payload routes them; apply_clusters_and_health keeps them).
bool is_cluster_type(std::string_view t) {
  return t.starts_with("cluster.") || t.starts_with("group.") || t.starts_with("node.");
}
bool is_health_type(std::string_view t) {
  return t.starts_with("alert.") || t.starts_with("remediation.") || t.starts_with("host.") ||
         t.starts_with("breaker.") || t.starts_with("health.");
}

Status next_in_sequence(const EventRecord& record, Seq applied) {
  if (record.seq == applied + 1) return ok_status();
  return internal_error(
      fmt::format("journal event {} applied after {}: sequence gap", record.seq, applied));
}

}  // namespace

Status FleetState::apply(const EventRecord& record) {
  GF_ASSIGN_OR_RETURN(Json payload, parse_json(record.payload, kStoredTextLimits));
  return apply(record, payload);
}

Status FleetState::apply(const EventRecord& record, const Json& payload) {
  return apply_record(record, [&] { return apply_payload(record, payload); });
}

Status FleetState::apply_submitted(const EventRecord& record, Job job) {
  if (record.type != event_type::kJobSubmitted)
    return internal_error("journal event " + record.type + " given as a submitted job");
  const std::string id = job.id;
  return apply_record(record, [&] {
    return apply_job_family(id, record, [&] { return on_submitted(record, std::move(job)); });
  });
}

Status FleetState::apply_record(const EventRecord& record,
                                const std::function<Status()>& apply_one) {
  GF_RETURN_IF_ERROR(next_in_sequence(record, view_.applied_seq));
  user_events_in_record_ = 0;
  retired_.clear();
  GF_RETURN_IF_ERROR(
      apply_one().with_prefix(fmt::format("journal event {} ({})", record.seq, record.type)));
  if (!record.idempotency_key.empty()) keys_.emplace(record.idempotency_key, record.seq);
  view_.applied_seq = record.seq;
  view_.applied_time = record.time;
  return ok_status();
}

bool FleetState::clusters_and_health_reads(std::string_view t) {
  return is_cluster_type(t) || is_health_type(t) || t.starts_with("controlplane.");
}

Status FleetState::apply_clusters_and_health(const EventRecord& record) {
  if (clusters_and_health_reads(record.type)) return apply(record);
  GF_RETURN_IF_ERROR(next_in_sequence(record, view_.applied_seq));
  view_.applied_seq = record.seq;
  view_.applied_time = record.time;
  return ok_status();
}

template <typename E>
Status FleetState::apply_typed_event(const EventRecord& rec, const Json& p) {
  GF_ASSIGN_OR_RETURN(const E e, event_codec::decode<E>(p));
  return on_event(rec, e);
}

// Every event type is found by its wire name: the small families here, the cluster, job and
// health families in their own tables (cluster_apply.cpp, job_apply.cpp, health_apply.cpp).
Status FleetState::apply_payload(const EventRecord& record, const Json& payload) {
  using Applier = Status (FleetState::*)(const EventRecord&, const Json&);
  static const std::map<std::string_view, Applier> kAppliers = {
      {plane_events::Started::kType, &FleetState::apply_typed_event<plane_events::Started>},
      {plane_events::Stopped::kType, &FleetState::apply_typed_event<plane_events::Stopped>},
      {plane_events::Recorded::kType, &FleetState::apply_typed_event<plane_events::Recorded>},
      {plane_events::RetentionApplied::kType,
       &FleetState::apply_typed_event<plane_events::RetentionApplied>},
      {AuditRecorded::kType, &FleetState::apply_audit_recorded},
      {object_events::QuotaApplied::kType,
       &FleetState::apply_typed_event<object_events::QuotaApplied>},
      {object_events::QuotaDeleted::kType,
       &FleetState::apply_typed_event<object_events::QuotaDeleted>},
      {object_events::PolicyApplied::kType,
       &FleetState::apply_typed_event<object_events::PolicyApplied>},
      {object_events::PolicyDeleted::kType,
       &FleetState::apply_typed_event<object_events::PolicyDeleted>},
  };
  const std::string& type = record.type;
  if (auto it = kAppliers.find(type); it != kAppliers.end())
    return (this->*(it->second))(record, payload);
  if (is_cluster_type(type)) return apply_cluster_event(record, payload);
  if (type.starts_with("job.")) return apply_job_family_event(record, payload);
  if (is_health_type(type)) return apply_health_event(record, payload);
  return internal_error("unknown event type \"" + type +
                        "\" (journal written by a newer gpufleet?)");
}

// Every new line of a job's history is also a user event (ResourceType Job, docs/scenarios.md).
Status FleetState::apply_job_family_event(const EventRecord& record, const Json& payload) {
  return apply_job_family(job_events::job_id_of(record.type, payload), record,
                          [&] { return apply_job_event(record, payload); });
}

Status FleetState::apply_job_family(const std::string& id, const EventRecord& record,
                                    const std::function<Status()>& apply_one) {
  auto it = view_.jobs.find(id);
  const uint64_t count_before = it == view_.jobs.end() ? 0 : it->second->history_count;
  GF_RETURN_IF_ERROR(apply_one());
  it = view_.jobs.find(id);
  if (it == view_.jobs.end()) return ok_status();
  const Job* after = it->second.get();
  const uint64_t added =
      std::min<uint64_t>(after->history_count - count_before, after->history.size());
  for (size_t i = after->history.size() - added; i < after->history.size(); ++i)
    add_job_user_event(record, *after, after->history[i]);
  if (after->dispatch) refresh_workload_deadline(*after);
  note_finished(*after);
  return ok_status();
}

Status FleetState::on_event(const EventRecord& record, const plane_events::Started& e) {
  view_.control_plane.version = e.version;
  view_.control_plane.store = e.store.value_or("");
  if (view_.control_plane.starts == 0) view_.control_plane.first_started = record.time;
  view_.control_plane.starts += 1;
  view_.control_plane.last_started = record.time;
  UserEvent u;
  u.resource_type = "ControlPlane";
  u.description = fmt::format("gpufleet {} started ({})", e.version,
                              e.store ? *e.store : std::string("embedded store"));
  u.details = Json{{"version", e.version}};
  if (e.store) u.details["store"] = *e.store;
  add_user_event(record, std::move(u));
  return ok_status();
}

Status FleetState::on_event(const EventRecord& record, const plane_events::Stopped& e) {
  UserEvent u;
  u.resource_type = "ControlPlane";
  u.description = "gpufleet stopped: " + e.reason;
  u.details = Json{{"reason", e.reason}};
  add_user_event(record, std::move(u));
  return ok_status();
}

Status FleetState::on_event(const EventRecord& record, const plane_events::Recorded& e) {
  add_user_event(record, e.user_event());
  return ok_status();
}

Status FleetState::on_event(const EventRecord& record, const plane_events::RetentionApplied& e) {
  (void)record;
  for (const std::string& id : e.jobs) {
    const Job* job = view_.job(id);
    if (job == nullptr) return internal_error("no job " + id + " to retire");
    if (!is_terminal(job->status)) {
      return internal_error("job " + id + " is " + std::string(to_string(job->status)) +
                            ", not finished: only a finished job is retired");
    }
    if (job->dispatch) {
      const std::string key = workload_key(job->kind, job->ns, job->name);
      if (auto it = view_.workload_ids.find(key);
          it != view_.workload_ids.end() && it->second == id)
        view_.workload_ids.erase(key);
    }
    forget_job(job->key, id);
  }
  if (e.events_before) {
    while (const UserEvent* newest = view_.events.oldest_chunk_newest()) {
      if (newest->time >= *e.events_before) break;
      view_.events.drop_oldest_chunk();
    }
    // The audit records in memory (GET /v1/audit) go by the same window; the journal keeps them
    // for the audit retention.
    while (const AuditRecord* newest = view_.audit.oldest_chunk_newest()) {
      if (newest->time >= *e.events_before) break;
      view_.audit.drop_oldest_chunk();
    }
  }
  return ok_status();
}

Status FleetState::apply_audit_recorded(const EventRecord& record, const Json& payload) {
  GF_ASSIGN_OR_RETURN(AuditRecord a, AuditRecord::from_payload(payload, record.seq, record.time));
  view_.audit.append(std::move(a));
  while (view_.audit.size() > kAuditKept + EventLog::kChunkSize &&
         view_.audit.drop_oldest_chunk()) {
  }
  return ok_status();
}

Json FleetView::model_json() const {
  Json out = model_json_without_jobs_and_events();
  Json& events = out["events"];
  for (size_t i = 0; i < this->events.size(); ++i) events.push_back(this->events.at(i).to_json());
  Json& jobs = out["jobs"];
  for (const auto& [id, job] : this->jobs) jobs.push_back(job->to_json());
  return out;
}

Json FleetView::model_json_without_jobs_and_events() const {
  const FleetView& view_ = *this;
  Json events = Json::array();
  Json clusters = Json::array();
  for (const auto& [name, c] : view_.clusters) clusters.push_back(cluster_to_snapshot(*c));
  Json retired = Json::array();
  if (view_.retired_billing) {
    for (const auto& b : *view_.retired_billing) retired.push_back(b.to_json());
  }
  Json quota_objects = Json::array();
  if (view_.quota_objects) {
    for (const auto& [key, obj] : *view_.quota_objects) {
      quota_objects.push_back({{"kind", std::string(frontend::kind_name(key.kind))},
                               {"namespace", key.ns},
                               {"name", key.name},
                               {"doc", obj.doc}});
    }
  }
  Json jobs = Json::array();
  Json policies = Json::array();
  if (view_.policies) {
    for (const auto& [key, pol] : *view_.policies) {
      policies.push_back({{"namespace", key.first}, {"name", key.second}, {"doc", pol.doc}});
    }
  }
  Json out{{"format", 1},
           {"quota_objects", std::move(quota_objects)},
           {"jobs", std::move(jobs)},
           {"policies", std::move(policies)},
           {"health", view_.health ? view_.health->to_json() : Json(nullptr)},
           {"job_counter", view_.job_counter},
           {"clusters", std::move(clusters)},
           {"retired_billing", std::move(retired)},
           {"cluster_counter", view_.cluster_counter},
           {"instance_counter", view_.instance_counter},
           {"control_plane",
            {{"version", view_.control_plane.version},
             {"store", view_.control_plane.store},
             {"starts", view_.control_plane.starts},
             {"last_started_us", to_micros(view_.control_plane.last_started)},
             {"first_started_us", to_micros(view_.control_plane.first_started)}}},
           {"events", std::move(events)}};
  // Written only once retention dropped events, so a state that never did hashes as before.
  if (view_.events.dropped_through() > 0)
    out["events_dropped_through"] = view_.events.dropped_through();
  return out;
}

uint64_t FleetView::model_hash() const { return fnv1a(safe_dump(model_json())); }

namespace {

Json state_json(const FleetView& view, const std::map<std::string, Seq, std::less<>>& keys) {
  Json j = view.model_json();
  Json key_json = Json::object();
  for (const auto& [k, seq] : keys) key_json[k] = seq;
  Json audit = Json::array();
  for (size_t i = 0; i < view.audit.size(); ++i) audit.push_back(view.audit.at(i).to_json());
  j["applied_seq"] = view.applied_seq;
  j["applied_time_us"] = to_micros(view.applied_time);
  j["audit"] = std::move(audit);
  j["idempotency_keys"] = std::move(key_json);
  return j;
}

}  // namespace

Json FleetState::to_json() const { return state_json(view_, keys_); }

Json FleetState::Image::to_json() const { return state_json(view, keys); }

std::string FleetState::Image::to_text() const {
  // The small sections as one tree (their bulky arrays and maps empty); then its keys in their
  // order (sorted, as dump() writes them), the bulky ones element by element.
  Json rest = view.model_json_without_jobs_and_events();
  rest["applied_seq"] = view.applied_seq;
  rest["applied_time_us"] = to_micros(view.applied_time);
  rest["audit"] = Json::array();
  rest["idempotency_keys"] = Json::object();
  std::string out = "{";
  auto each = [&out](size_t n, const auto& element_text) {
    for (size_t i = 0; i < n; ++i) {
      if (i > 0) out += ',';
      out += element_text(i);
    }
  };
  for (auto it = rest.begin(); it != rest.end(); ++it) {
    if (out.size() > 1) out += ',';
    out += safe_dump(Json(it.key())) + ":";
    const std::string& key = it.key();
    if (key == "jobs") {
      out += '[';
      bool first = true;
      for (const auto& [id, job] : view.jobs) {
        if (!first) out += ',';
        first = false;
        out += safe_dump(job->to_json());
      }
      out += ']';
    } else if (key == "events") {
      out += '[';
      each(view.events.size(), [&](size_t i) { return safe_dump(view.events.at(i).to_json()); });
      out += ']';
    } else if (key == "audit") {
      out += '[';
      each(view.audit.size(), [&](size_t i) { return safe_dump(view.audit.at(i).to_json()); });
      out += ']';
    } else if (key == "idempotency_keys") {
      out += '{';
      bool first = true;
      for (const auto& [k, seq] : keys) {
        if (!first) out += ',';
        first = false;
        out += safe_dump(Json(k)) + ":" + std::to_string(seq);
      }
      out += '}';
    } else {
      out += safe_dump(it.value());
    }
  }
  out += '}';
  return out;
}

namespace {

// snapshot.control_plane: what the last start recorded about the running release.
void read_control_plane(ObjectReader& r, ControlPlaneInfo& out) {
  if (const Json* cp = r.optional_object("control_plane")) {
    ObjectReader c(*cp, "snapshot.control_plane");
    out.version = c.optional_string("version").value_or("");
    out.store = c.optional_string("store").value_or("");
    out.starts = c.optional_int("starts").value_or(0);
    out.last_started = from_micros(c.optional_int("last_started_us").value_or(0));
    out.first_started = from_micros(c.optional_int("first_started_us").value_or(0));
    r.fail_status(c.status());
  }
}

// snapshot.events and snapshot.audit, oldest first.
Status read_events_and_audit(ObjectReader& r, FleetView& v) {
  if (const Json* events = r.optional_array("events")) {
    for (const Json& ej : *events) {
      auto e = UserEvent::from_json(ej);
      if (!e.ok()) return e.status().with_prefix("snapshot.events");
      v.events.append(std::move(e).value());
    }
  }
  v.events.set_dropped_through(r.optional_int("events_dropped_through").value_or(0));
  if (const Json* audit = r.optional_array("audit")) {
    for (const Json& aj : *audit) {
      auto a = AuditRecord::from_json(aj);
      if (!a.ok()) return a.status().with_prefix("snapshot.audit");
      v.audit.append(std::move(a).value());
    }
  }
  return ok_status();
}

// snapshot.clusters, and the billing records of deleted ones (kept null when there are none).
Status read_clusters(ObjectReader& r, FleetView& v) {
  if (const Json* clusters = r.optional_array("clusters")) {
    for (const Json& cj : *clusters) {
      auto c = cluster_from_snapshot(cj);
      if (!c.ok()) return c.status().with_prefix("snapshot.clusters");
      std::string name = c->name;
      v.clusters.emplace(std::move(name), std::make_shared<const Cluster>(std::move(c).value()));
    }
  }
  if (const Json* retired = r.optional_array("retired_billing")) {
    auto list = std::make_shared<std::vector<BillingRecord>>();
    for (const Json& bj : *retired) {
      auto b = BillingRecord::from_json(bj);
      if (!b.ok()) return b.status().with_prefix("snapshot.retired_billing");
      list->push_back(std::move(b).value());
    }
    if (!list->empty()) v.retired_billing = std::move(list);
  }
  return ok_status();
}

// snapshot.idempotency_keys: key -> the seq of the event that carried it.
Status read_idempotency_keys(ObjectReader& r, std::map<std::string, Seq, std::less<>>& out) {
  if (const Json* keys = r.optional_object("idempotency_keys")) {
    for (auto it = keys->begin(); it != keys->end(); ++it) {
      if (!it.value().is_number_integer()) {
        return validation_error("snapshot.idempotency_keys." + it.key() + ": expected integer");
      }
      out.emplace(it.key(), it.value().get<Seq>());
    }
  }
  return ok_status();
}

// snapshot.quota_objects, in quota.applied's shape (kept null when there are none).
Status read_quota_objects(ObjectReader& r, FleetView& v) {
  if (const Json* objects = r.optional_array("quota_objects")) {
    auto map = std::make_shared<frontend::ObjectMap>();
    for (const Json& o : *objects) {
      object_events::QuotaObjectDoc d;  // the same shape as in quota.applied
      try {
        event_codec::Codec<object_events::QuotaObjectDoc>::take(o, d);
      } catch (const std::exception& e) {
        return validation_error(std::string("snapshot.quota_objects: ") + e.what());
      }
      frontend::QuotaObject obj;
      obj.key = frontend::ObjectKey{d.kind, d.ns, d.name};
      obj.doc = std::move(d.doc);
      (*map)[obj.key] = std::move(obj);
    }
    if (!map->empty()) v.quota_objects = std::move(map);
  }
  return ok_status();
}

// snapshot.jobs, by id.
Status read_jobs(ObjectReader& r, FleetView& v) {
  if (const Json* jobs = r.optional_array("jobs")) {
    for (const Json& jj : *jobs) {
      auto job = Job::from_json(jj);
      if (!job.ok()) return job.status().with_prefix("snapshot.jobs");
      std::string id = job->id;
      v.jobs.emplace(std::move(id), std::make_shared<const Job>(std::move(job).value()));
    }
  }
  return ok_status();
}

// snapshot.health (null or absent before the first alert), then snapshot.policies (kept null
// when there are none).
Status read_health_and_policies(ObjectReader& r, FleetView& v) {
  if (const Json* health = r.optional_value("health"); health && !health->is_null()) {
    auto h = remediate::HealthState::from_json(*health);
    if (!h.ok()) return h.status();
    v.health = std::make_shared<const remediate::HealthState>(std::move(h).value());
  }
  if (const Json* policies = r.optional_array("policies")) {
    auto map = std::make_shared<PolicyMap>();
    for (const Json& o : *policies) {
      auto pol = workload::parse_propagation_policy(o.value("doc", Json::object()));
      if (!pol.ok()) return pol.status().with_prefix("snapshot.policies");
      (*map)[{o.value("namespace", ""), o.value("name", "")}] = std::move(pol).value();
    }
    if (!map->empty()) v.policies = std::move(map);
  }
  return ok_status();
}

}  // namespace

Result<FleetState> FleetState::from_json(const Json& j) {
  ObjectReader r(j, "snapshot");
  FleetState s;
  FleetView& v = s.view_;
  if (r.required_int("format") != 1) r.fail("format", "unsupported snapshot format");
  v.applied_seq = r.required_int("applied_seq");
  v.applied_time = from_micros(r.optional_int("applied_time_us").value_or(0));
  read_control_plane(r, v.control_plane);
  GF_RETURN_IF_ERROR(read_events_and_audit(r, v));
  v.cluster_counter = r.optional_int("cluster_counter").value_or(0);
  v.instance_counter = r.optional_int("instance_counter").value_or(0);
  GF_RETURN_IF_ERROR(read_clusters(r, v));
  GF_RETURN_IF_ERROR(read_idempotency_keys(r, s.keys_));
  // "resources" (resource names in registry order), written by releases whose state held the
  // scheduler's registry, is ignored: the scheduler cache registers names as it rebuilds.
  GF_RETURN_IF_ERROR(read_quota_objects(r, v));
  v.job_counter = r.optional_int("job_counter").value_or(0);
  GF_RETURN_IF_ERROR(read_jobs(r, v));
  GF_RETURN_IF_ERROR(read_health_and_policies(r, v));
  if (!r.ok()) return r.status();
  GF_RETURN_IF_ERROR(s.restore_indexes().with_prefix("snapshot"));
  return s;
}

uint64_t FleetState::hash() const { return fnv1a(safe_dump(to_json())); }

uint64_t FleetState::model_hash() const { return view_.model_hash(); }

}  // namespace gf
