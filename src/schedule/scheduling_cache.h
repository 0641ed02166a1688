// The scheduler's working memory (docs/architecture.md "Scheduler cache"): one sched::Scheduler
// kept in step with the journal. The loop shows it every applied event (an EventObserver), so it
// mirrors each recorded decision exactly as replay does; the scheduling controller runs passes on
// it, which "assume" their decisions ahead of the events that record them (Kueue's cache does the
// same). Never serialized: after a snapshot load it is rebuilt from the state, else by replay.
//
// Lives on the loop thread. The state it reads is the writer's FleetState, never a copy.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "loop/controller.h"
#include "quota/frontends/quota_objects.h"
#include "schedule/scheduler.h"

namespace gf {

class SchedulingCache : public EventObserver {
 public:
  SchedulingCache();

  // EventObserver.
  Status observe(const FleetState& state, const EventRecord& record, const Json& payload) override;
  Status observe_submitted(const FleetState& state, const EventRecord& record,
                           const std::string& job_id) override;
  Status restore(const FleetState& state) override;
  // Publishes the quota engine's per-node counts and usage (QuotaNodeStatus) with the view.
  void publish(const FleetState& state, FleetView& view) override;

  void set_options(const sched::SchedulerOptions& options) { scheduler_.set_options(options); }
  // The scheduler, its node index first brought in step with the clusters changed since the
  // last call (gangs that lost a node are kept for take_interrupts()).
  sched::Scheduler& scheduler(const FleetState& state);
  // Gangs interrupted by node changes that syncing found and no event records yet.
  std::vector<sched::Action> take_interrupts(const FleetState& state);
  // Changes whenever something the scheduler depends on changed (jobs, quota, clusters): the
  // scheduling controller skips a pass while it stands still.
  uint64_t generation(const FleetState& state) const {
    return generation_ + state.cluster_revision();
  }
  // The scheduler's view of a job record (queue, alternatives, allowed clusters).
  Result<sched::JobSpec> job_spec(const Job& job);
  // What the state's quota objects compile to (null while there are none).
  const frontend::CompiledQuota* quota() const { return quota_.get(); }

  // Queue depth samples: one per `interval` of model time at most, the newest `keep`.
  static constexpr Duration kHistoryInterval = std::chrono::minutes(1);
  static constexpr size_t kHistoryKept = 24 * 60;

 private:
  // Node n's quota per resource with its subtree's usage (QuotaNodeStatus::amounts).
  std::vector<QuotaAmount> amounts(const quota::QuotaEngine& e, quota::NodeId n) const;
  // Adds a sample of `status` to the history when the last one is `kHistoryInterval` old.
  void sample_history(Time at, const std::vector<QuotaNodeStatus>& status);
  Status observe_job(const FleetState& state, const EventRecord& record, const Json& payload);
  Status on_admitted(sched::JobKey key, const Json& payload, Time t);
  Status on_hold_changed(const std::string& type, const std::string& id, const Job* job, bool held,
                         sched::JobKey key);
  Status on_preempted(sched::JobKey key, const Json& payload, Time t);
  // Interrupts the gangs on a Slurm node that takes no work now and that have not started.
  void move_unstarted_gangs(const FleetState& state, const std::string& cluster,
                            const std::string& instance_id, const Node& node);
  Status on_submitted(const FleetState& state, const std::string& job_id);
  // Compiles the state's quota objects and hands the graph to the scheduler.
  Status set_quota(const FleetState& state);
  Status submit(const Job& job);
  // job_spec()'s quota parts: a job queued on a quota share (its leaf and its service
  // environment's clusters), and a job queued on its namespace's quota (its leaf; returns
  // `charged` without the dimensions that quota does not charge).
  void share_job(const Job& job, sched::JobSpec& spec);
  ResourceVector namespace_job(const Job& job, sched::JobSpec& spec, ResourceVector charged) const;
  void sync_clusters(const FleetState& state);

  const std::shared_ptr<QueueHistoryLog> history_ =
      std::make_shared<QueueHistoryLog>(kHistoryInterval, kHistoryKept);
  std::shared_ptr<const std::vector<std::string>> history_nodes_;
  void drop_interrupts(sched::JobKey key);

  // Resource names and their ids: the quota engine's dimensions, in the order first used (so a
  // replay gives every name the id it had). Outlives scheduler_, which names resources with it.
  std::unique_ptr<ResourceRegistry> registry_;
  std::shared_ptr<const frontend::CompiledQuota> quota_;
  sched::Scheduler scheduler_;
  uint64_t generation_ = 1;
  uint64_t synced_revision_ = 0;                   // the cluster revision last synced
  std::vector<sched::Action> interrupts_;          // found by syncing, not yet recorded
  std::map<std::string, sched::JobKey> keys_;      // job id -> key, for jobs the scheduler holds
  std::map<std::string, sched::ShapePtr> shapes_;  // interned job shapes
  // The last published quota status and the generation it was built at.
  std::shared_ptr<const std::vector<QuotaNodeStatus>> published_;
  uint64_t published_generation_ = 0;
  const frontend::CompiledQuota* published_quota_ = nullptr;  // the quota it was built for
};

}  // namespace gf
