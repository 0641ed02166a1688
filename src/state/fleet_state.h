// The in-memory model of the fleet. Changed only by apply(), one journal event at a time, in
// sequence order, by the single writer (the control loop). Readers get an immutable FleetView
// published after each batch.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "core/json.h"
#include "journal/journal.h"
#include "model/cluster.h"
#include "state/event_log.h"
#include "state/events.h"

namespace gf {

struct ControlPlaneInfo {
  std::string version;
  std::string store;
  int64_t starts = 0;
  Time last_started{};
  bool operator==(const ControlPlaneInfo&) const = default;
};

using ClusterPtr = std::shared_ptr<const Cluster>;

// Everything API reads may see. Copying it is cheap: EventLog shares its history and clusters
// are shared immutable objects, copied only when an event changes that cluster.
struct FleetView {
  Seq applied_seq = 0;
  Time applied_time{};  // the time of the last applied event
  EventLog events;
  ControlPlaneInfo control_plane;
  std::map<std::string, ClusterPtr, std::less<>> clusters;
  std::shared_ptr<const std::vector<BillingRecord>> retired_billing;  // of deleted clusters
  int64_t cluster_counter = 0;   // clusters ever created (ids derive from it)
  int64_t instance_counter = 0;  // launch requests ever made (instance ids derive from it)

  const Cluster* find_cluster(std::string_view name) const;
};

class FleetState {
 public:
  FleetState() = default;

  // Applies one journal event; its seq must be applied_seq() + 1. An error means the event is
  // malformed (a bug or a corrupt journal): the caller stops rather than diverge.
  Status apply(const EventRecord& record);
  // The same, for an event whose payload is already parsed (the loop's own decisions).
  Status apply(const EventRecord& record, const Json& payload);

  Seq applied_seq() const { return view_.applied_seq; }
  const FleetView& view() const { return view_; }

  // Writer-only: the seq of the event that carried this idempotency key.
  std::optional<Seq> find_key(const std::string& key) const;
  size_t key_count() const { return keys_.size(); }

  // Canonical serialization (sorted keys): snapshots and the state hash use it.
  Json to_json() const;
  static Result<FleetState> from_json(const Json& j);
  // FNV-1a 64 over the canonical serialization: equal states have equal hashes.
  uint64_t hash() const;

 private:
  Status apply_payload(const EventRecord& record, const Json& payload);
  Status apply_cluster_event(const EventRecord& record, const Json& payload);
  void add_user_event(const EventRecord& record, UserEvent event);
  // Copy-on-write access for apply code: clones the cluster if a published view shares it.
  Cluster* mutable_cluster(std::string_view name);

  FleetView view_;
  std::map<std::string, Seq, std::less<>> keys_;
  int user_events_in_record_ = 0;
};

}  // namespace gf
