// The in-memory model of the fleet. Changed only by apply(), one journal event at a time, in
// sequence order, by the single writer (the control loop). Readers get an immutable FleetView
// published after each batch.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "core/cow_map.h"
#include "core/json.h"
#include "core/resources.h"
#include "journal/journal.h"
#include "model/cluster.h"
#include "model/health_records.h"
#include "model/job.h"
#include "model/propagation_policy.h"
#include "model/quota_objects.h"
#include "state/audit.h"
#include "state/cluster_events.h"
#include "state/event_log.h"
#include "state/events.h"
#include "state/health_events.h"
#include "state/job_events.h"
#include "state/object_events.h"
#include "state/plane_events.h"
#include "state/queue_history.h"

namespace gf::frontend {
struct CompiledQuota;  // published with the view by the scheduler cache; the state never has one
}  // namespace gf::frontend

namespace gf {

struct ControlPlaneInfo {
  std::string version;
  std::string store;
  int64_t starts = 0;
  Time last_started{};
  // The first start on this journal: where a timeline of the simulated cloud (capacity changes)
  // counts from, across restarts. Unset (zero) in snapshots of releases before it was kept.
  Time first_started{};
  bool operator==(const ControlPlaneInfo&) const = default;
};

using ClusterPtr = std::shared_ptr<const Cluster>;
using JobPtr = std::shared_ptr<const Job>;
// PropagationPolicies by (namespace, name).
using PolicyMap = std::map<std::pair<std::string, std::string>, workload::PropagationPolicy>;

// What the scheduler counts for one quota node and its subtree: jobs admitted and pending and
// the usage charged (GET /v1/objects/queues, ClusterQueue and QuotaShare status).
// One resource of a quota node: its limits and what its subtree uses (GET /v1/quota-tree).
struct QuotaAmount {
  std::string resource;
  bool milli = false;  // the values are thousandths (cpu, memory in milli-units)
  int64_t nominal = 0;
  std::optional<int64_t> borrowing_limit;
  std::optional<int64_t> lending_limit;
  int64_t used = 0;
  int64_t subtree = 0;  // S(n): the node's nominal plus what its children bring (saturating)
};
struct QuotaNodeStatus {
  int64_t admitted = 0;
  int64_t pending = 0;
  Json usage = Json::object();
  std::vector<QuotaAmount> amounts;  // the dimensions with a quota or a use
};

// Everything API reads may see. Copying it is cheap: EventLog shares its history, clusters are
// shared immutable objects, copied only when an event changes that cluster, and the per-job maps
// are persistent trees (CowMap): a copy shares every node, a change copies its path.
struct FleetView {
  Seq applied_seq = 0;
  Time applied_time{};  // the time of the last applied event
  EventLog events;
  ControlPlaneInfo control_plane;
  std::map<std::string, ClusterPtr, std::less<>> clusters;
  std::shared_ptr<const std::vector<BillingRecord>> retired_billing;  // of deleted clusters
  int64_t cluster_counter = 0;   // clusters ever created (ids derive from it)
  int64_t instance_counter = 0;  // launch requests ever made (instance ids derive from it)
  // Quota objects as applied (null until the first apply).
  std::shared_ptr<const frontend::ObjectMap> quota_objects;
  CowMap<JobPtr> jobs;      // by job id, finished ones included (copies share structure)
  int64_t job_counter = 0;  // jobs ever submitted (ids and keys)
  std::shared_ptr<const PolicyMap> policies;  // PropagationPolicies (null until the first)
  CowMap<std::string> workload_ids;           // "<kind>/<ns>/<name>" -> live job id
  std::shared_ptr<const remediate::HealthState>
      health;  // alerts, remediations, hosts (null until the first)
  // The newest audit records (at most kAuditKept; the journal keeps every one).
  AppendLog<AuditRecord> audit;
  // Published with the view by the scheduler cache, never held by the state (null before the
  // first publish, or while no quota object exists): what the quota objects compile to, and per
  // node of its graph what the scheduler counts.
  std::shared_ptr<const frontend::CompiledQuota> quota;
  std::shared_ptr<const std::vector<QuotaNodeStatus>> quota_status;
  std::shared_ptr<const QueueHistoryLog> queue_history;  // null before the first publish

  // The fleet model's canonical JSON: a snapshot without the journal position (seq, time),
  // idempotency keys and the audit log. model_hash() is FNV-1a 64 over it (FleetState's).
  Json model_json() const;
  // The same with its two sections that grow with the fleet's history, "jobs" and "events", left
  // empty: what a snapshot's text is streamed around (FleetState::Image::to_text).
  Json model_json_without_jobs_and_events() const;
  uint64_t model_hash() const;

  // Never null-dangerous: an empty HealthState when nothing happened yet.
  const remediate::HealthState& health_state() const;

  // The live workload (PyTorchJob) of that namespace and name, or null.
  const Job* find_workload(std::string_view kind, std::string_view ns, std::string_view name) const;

  const Cluster* find_cluster(std::string_view name) const;
  // By job id (a map lookup), or null.
  const Job* job(std::string_view id) const;
  // By job id, else by name (the newest job of that name: a scan of every job, for the API).
  const Job* find_job(std::string_view id_or_name) const;
};

// The state's indexes over its own records (job by key, pending completions, started gangs,
// workload deadlines, cluster revisions). Derived by the appliers, never serialized.
struct JobIndex;

class FleetState {
 public:
  FleetState();
  ~FleetState();
  FleetState(FleetState&&) noexcept;
  FleetState& operator=(FleetState&&) noexcept;

  // Applies one journal event; its seq must be applied_seq() + 1. An error means the event is
  // malformed (a bug or a corrupt journal): the caller stops rather than diverge.
  Status apply(const EventRecord& record);
  // The same, for an event whose payload is already parsed (the loop's own decisions).
  Status apply(const EventRecord& record, const Json& payload);
  // A job.submitted event given by its job instead of its payload (Event::job): the same state as
  // applying {"job": job.to_json()}, without encoding and decoding it.
  Status apply_submitted(const EventRecord& record, Job job);
  // Applies only events that change clusters (and their groups and nodes), health records or the
  // control plane's record; any other event (jobs, quota objects, policies, audit, user events
  // recorded through the API) only advances applied_seq(), unparsed. The appliers of the former
  // read nothing the latter write, so a state fed this way has the same clusters, health and
  // cluster revisions as one fed everything, and nothing else. The simulation's metrics follow a
  // run with one (docs/scenarios.md "How a run goes").
  Status apply_clusters_and_health(const EventRecord& record);
  // Whether apply_clusters_and_health reads an event of this type (the others it skips unparsed).
  static bool clusters_and_health_reads(std::string_view type);

  Seq applied_seq() const { return view_.applied_seq; }
  const FleetView& view() const { return view_; }

  // Writer-only: the seq of the event that carried this idempotency key.
  std::optional<Seq> find_key(const std::string& key) const;
  size_t key_count() const { return keys_.size(); }
  // The seq of some idempotency key that starts with `prefix`, if any.
  std::optional<Seq> find_key_prefix(std::string_view prefix) const;

  // Canonical serialization (sorted keys): snapshots and the state hash use it.
  Json to_json() const;
  // What a snapshot serializes, taken in the time it takes to copy the idempotency keys: the
  // view's persistent maps are shared, not copied, so another thread may serialize the image
  // (Image::to_json() equals to_json() at this seq) while this state applies later events
  // (docs/operations.md "Restart time").
  struct Image {
    FleetView view;
    std::map<std::string, Seq, std::less<>> keys;
    Json to_json() const;
    // safe_dump(to_json()), written job by job and record by record: the text of a state of any
    // size without its whole JSON tree in memory at once.
    std::string to_text() const;
  };
  Image image() const { return Image{view_, keys_}; }
  static Result<FleetState> from_json(const Json& j);
  // FNV-1a 64 over the canonical serialization: equal states have equal hashes.
  uint64_t hash() const;
  // The same over the fleet model only: without the journal position (seq, time), idempotency
  // keys and the audit log. A refused request (audited, changing nothing) leaves it unchanged.
  uint64_t model_hash() const;
  // How many audit records the state keeps for GET /v1/audit.
  static constexpr size_t kAuditKept = 100'000;

  // By the dense job key, or null.
  const Job* job_by_key(uint64_t key) const;
  // (end time, key) of running jobs with a simulated duration.
  const std::set<std::pair<Time, uint64_t>>& completions() const;
  // Keys of SCHEDULED jobs (admitted, not yet RUNNING).
  const std::set<uint64_t>& scheduled() const;
  // (time, key) of workloads (PyTorchJobs) by the next time the workload controller must look
  // at them (failover, copy purge, deadlines, ttl: workload_deadline()).
  const std::set<std::pair<Time, uint64_t>>& workload_deadlines() const;
  // (stopped_at, key) of finished jobs still in the hot state: what retention retires next
  // (docs/operations.md "What is kept where").
  const std::set<std::pair<Time, uint64_t>>& finished_jobs() const;
  // The jobs the last applied event removed from the hot state (retention.applied, job.deleted),
  // as they were: observers read them while the event is shown to them, the loop files them in
  // the journal's history table. Empty after any other event.
  const std::vector<JobPtr>& retired_jobs() const { return retired_; }
  // Cluster revisions, as etcd's mod revisions: the counter goes up with every event that changes
  // a cluster, its groups or nodes; each name (deleted ones included) maps to the value of its
  // last change. Whoever mirrors clusters (the scheduler cache) syncs what changed since it looked.
  uint64_t cluster_revision() const;
  const std::map<std::string, uint64_t, std::less<>>& cluster_revisions() const;
  // The instance ids of `cluster`'s nodes that changed (or were added or removed) after cluster
  // revision `since`, each once, in id order; nullopt when any node may have changed: a change to
  // the cluster as a whole (its status, groups, deletion) came after `since`, or `since` is older
  // than the per-cluster log keeps (kNodeLogKept entries). A mirror of the nodes (the scheduler
  // cache, the failure model) resyncs only these, so a node event costs O(changed nodes), not
  // O(nodes in the cluster) (docs/performance.md "Fleet-scale simulation").
  std::optional<std::vector<std::string>> nodes_changed_since(std::string_view cluster,
                                                              uint64_t since) const;
  static constexpr size_t kNodeLogKept = 4096;
  // Resource capacity of one node of `instance_type` (catalog), zero when unknown.
  static ResourceVector node_capacity(std::string_view instance_type);

 private:
  Status apply_payload(const EventRecord& record, const Json& payload);
  // Cluster, group and node events, one applier per type (cluster_apply.cpp).
  Status apply_cluster_event(const EventRecord& record, const Json& payload);
  template <typename E>
  Status apply_typed_cluster_event(const EventRecord& record, const Json& payload);
  Status on_cluster_event(const EventRecord& record, const cluster_events::Created& e);
  Status on_cluster_event(const EventRecord& record, const cluster_events::Updated& e, Cluster& c);
  Status on_cluster_event(const EventRecord& record, const cluster_events::DeleteRequested& e,
                          Cluster& c);
  Status on_cluster_event(const EventRecord& record, const cluster_events::StatusChanged& e,
                          Cluster& c);
  Status on_cluster_event(const EventRecord& record, const cluster_events::RolledBack& e,
                          Cluster& c);
  Status on_cluster_event(const EventRecord& record, const cluster_events::Removed& e, Cluster& c);
  Status on_cluster_event(const EventRecord& record, const cluster_events::GroupStatusChanged& e,
                          Cluster& c, InstanceGroup& g);
  Status on_cluster_event(const EventRecord& record, const cluster_events::GroupRolledBack& e,
                          Cluster& c, InstanceGroup& g);
  Status on_cluster_event(const EventRecord& record, const cluster_events::GroupBackoff& e,
                          Cluster& c, InstanceGroup& g);
  Status on_cluster_event(const EventRecord& record, const cluster_events::GroupTargetSet& e,
                          Cluster& c, InstanceGroup& g);
  Status on_cluster_event(const EventRecord& record, const cluster_events::GroupRemoved& e,
                          Cluster& c, InstanceGroup& g);
  Status on_cluster_event(const EventRecord& record, const cluster_events::LaunchRequested& e,
                          Cluster& c, InstanceGroup& g);
  Status on_cluster_event(const EventRecord& record, const cluster_events::LaunchFailed& e,
                          Cluster& c, Node& n);
  Status on_cluster_event(const EventRecord& record, const cluster_events::Launched& e, Cluster& c,
                          Node& n);
  Status on_cluster_event(const EventRecord& record, const cluster_events::NodeRunning& e,
                          Cluster& c, Node& n);
  Status on_cluster_event(const EventRecord& record, const cluster_events::LifecycleFailed& e,
                          Cluster& c, Node& n);
  Status on_cluster_event(const EventRecord& record, const cluster_events::NodeUnhealthy& e,
                          Cluster& c, Node& n);
  Status on_cluster_event(const EventRecord& record, const cluster_events::TerminateRequested& e,
                          Cluster& c, Node& n);
  Status on_cluster_event(const EventRecord& record, const cluster_events::Terminated& e,
                          Cluster& c, Node& n);
  Status on_cluster_event(const EventRecord& record, const cluster_events::NodeHealth& e,
                          Cluster& c, Node& n);
  Status on_cluster_event(const EventRecord& record, const cluster_events::NodeSlurmState& e,
                          Cluster& c, Node& n);
  Status on_cluster_event(const EventRecord& record, const cluster_events::SoftwareUpdateStarted& e,
                          Cluster& c);
  Status on_cluster_event(const EventRecord& record, const cluster_events::NodeUpdateStarted& e,
                          Cluster& c, Node& n);
  Status on_cluster_event(const EventRecord& record, const cluster_events::NodeUpdated& e,
                          Cluster& c, Node& n);
  Status on_cluster_event(const EventRecord& record,
                          const cluster_events::SoftwareUpdateFinished& e, Cluster& c);
  // A node starts shutting down (lifecycle failure, unhealthy, termination asked): billing ends.
  void shut_down_node(const EventRecord& record, Cluster& c, Node& n, const std::string& why,
                      bool unhealthy, EventLevel level, std::string text,
                      std::optional<Time> billed_until = std::nullopt);
  // The small families, one applier per type (fleet_state.cpp; quota objects in job_apply.cpp,
  // policies in workload_apply.cpp).
  template <typename E>
  Status apply_typed_event(const EventRecord& record, const Json& payload);
  Status on_event(const EventRecord& record, const plane_events::Started& e);
  Status on_event(const EventRecord& record, const plane_events::Stopped& e);
  Status on_event(const EventRecord& record, const plane_events::Recorded& e);
  Status on_event(const EventRecord& record, const plane_events::RetentionApplied& e);
  Status on_event(const EventRecord& record, const object_events::QuotaApplied& e);
  Status on_event(const EventRecord& record, const object_events::QuotaDeleted& e);
  Status on_event(const EventRecord& record, const object_events::PolicyApplied& e);
  Status on_event(const EventRecord& record, const object_events::PolicyDeleted& e);
  Status apply_audit_recorded(const EventRecord& record, const Json& payload);
  // A job event, and the user events of the history lines it added.
  Status apply_job_family_event(const EventRecord& record, const Json& payload);
  Status apply_job_family(const std::string& id, const EventRecord& record,
                          const std::function<Status()>& apply_one);
  // What apply() does around every event: the sequence check, the error's context, the key.
  Status apply_record(const EventRecord& record, const std::function<Status()>& apply_one);
  Status apply_job_event(const EventRecord& record, const Json& payload);
  // Alerts, remediations, hosts, breakers, remediation policies, one applier per type
  // (health_apply.cpp).
  Status apply_health_event(const EventRecord& record, const Json& payload);
  template <typename E>
  Status apply_typed_health_event(const EventRecord& record, const Json& payload);
  Status on_health_event(const EventRecord& record, const health_events::AlertSignal& e);
  Status on_health_event(const EventRecord& record, const health_events::AlertFired& e);
  Status on_health_event(const EventRecord& record, const health_events::AlertRecurred& e);
  Status on_health_event(const EventRecord& record, const health_events::AlertDelivered& e);
  Status on_health_event(const EventRecord& record, const health_events::RemediationProposed& e);
  Status on_health_event(const EventRecord& record, const health_events::RemediationUpdated& e);
  Status on_health_event(const EventRecord& record, const health_events::PolicySet& e);
  Status on_health_event(const EventRecord& record, const health_events::HostStatus& e);
  Status on_health_event(const EventRecord& record, const health_events::BreakerTripped& e);
  Status on_health_event(const EventRecord& record, const health_events::BreakerReset& e);
  Status on_health_event(const EventRecord& record, const health_events::NodeLabels& e);
  std::string retire_host(const EventRecord& record, remediate::Remediation& r,
                          const std::optional<std::string>& new_host);
  // The effects of `r` moving from `before` to `e.status` (times, approver, node flags, a retired
  // host), and what they add to the user event's `text`. A new reason alone has none.
  void apply_remediation_transition(const EventRecord& record,
                                    const health_events::RemediationUpdated& e,
                                    remediate::Status before, remediate::Remediation& r,
                                    std::string& text);
  void add_health_user_event(const EventRecord& record, std::string resource_type, EventLevel level,
                             std::string text, Json details, const std::string& cluster,
                             const std::string& node);
  void add_alert_user_event(const EventRecord& record, const remediate::AlertRecord& a,
                            const std::string& what);
  remediate::HealthState& mutable_health();
  void set_node_faulted(const std::string& cluster, const std::string& node, bool faulted);
  // Stragglers (docs/scenarios.md "Failures"): how many times slower a degraded node makes a
  // gang (1: not degraded), a run's pace, and the pace of every gang on a node.
  double node_slowdown(const std::string& node) const;
  void set_run_pace(Job& job, Time t, double factor);
  void repace_jobs_on(const std::string& node, Time t);
  void set_node_flags(const std::string& cluster, const std::string& node,
                      std::optional<bool> cordoned, std::optional<bool> maintenance);
  // The job no longer runs (nor is about to): its pending completion and start are dropped.
  void drop_job_run(uint64_t key);
  // Removes a job's record (a deleted workload, a retired job); it joins retired_.
  void forget_job(uint64_t key, const std::string& id);
  // Files the job in finished_jobs() when it is finished, out of it when not.
  void note_finished(const Job& job);
  // Job events, one applier per type (job_apply.cpp; the workload-only ones — failover, copy
  // purged, suspend, delete — in workload_apply.cpp).
  Status apply_job_submitted(const EventRecord& record, const Json& payload);
  Status on_submitted(const EventRecord& record, Job job);
  template <typename E>
  Status apply_typed_job_event(const EventRecord& record, const Json& payload);
  Status on_job_event(const EventRecord& record, const job_events::Admitted& e, Job& job);
  Status on_job_event(const EventRecord& record, const job_events::Running& e, Job& job);
  Status on_job_event(const EventRecord& record, const job_events::Preempted& e, Job& job);
  Status on_job_event(const EventRecord& record, const job_events::Interrupted& e, Job& job);
  Status on_job_event(const EventRecord& record, const job_events::Finished& e, Job& job);
  Status on_job_event(const EventRecord& record, const job_events::PriorityChanged& e, Job& job);
  Status on_job_event(const EventRecord& record, const job_events::Waiting& e, Job& job);
  Status on_job_event(const EventRecord& record, const job_events::Failover& e, Job& job);
  Status on_job_event(const EventRecord& record, const job_events::CopyPurged& e, Job& job);
  Status on_job_event(const EventRecord& record, const job_events::Suspend& e, Job& job);
  Status on_job_event(const EventRecord& record, const job_events::Annotations& e, Job& job);
  Status on_job_event(const EventRecord& record, const job_events::PolicyBound& e, Job& job);
  Status on_job_event(const EventRecord& record, const job_events::Deleted& e, Job& job);
  Status on_job_event(const EventRecord& record, const job_events::PodStatus& e, Job& job);
  void end_run(Job& job, Time t, std::string_view cause);
  void set_workload_id(const std::string& key, const std::string& id);
  Status restore_indexes();
  // A change to cluster `name`: to one node only when `node` is given, else to the whole cluster.
  void mark_cluster_dirty(const std::string& name, std::string_view node = {});
  Job* mutable_job(std::string_view id);
  void add_user_event(const EventRecord& record, UserEvent event);
  void add_job_user_event(const EventRecord& record, const Job& job, const JobEvent& line);
  void refresh_workload_deadline(const Job& job);
  // Copy-on-write access for apply code: clones the cluster if a published view shares it.
  Cluster* mutable_cluster(std::string_view name);

  FleetView view_;
  std::map<std::string, Seq, std::less<>> keys_;
  int user_events_in_record_ = 0;
  std::vector<JobPtr> retired_;
  std::unique_ptr<JobIndex> index_;
};

}  // namespace gf
