// Journal event types for clusters, instance groups and nodes (docs/provisioning.md), typed as
// state/event_codec.h describes. Appliers live in cluster_apply.cpp; the user-visible events of
// ListClusterEvents are derived there. Every type names its cluster in "Name".
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/json.h"
#include "core/time.h"
#include "model/cluster.h"
#include "state/event_codec.h"

namespace gf::event_codec {
template <>
struct Codec<ClusterStatus>
    : EnumCodec<ClusterStatus, static_cast<std::string_view (*)(ClusterStatus)>(&to_string),
                &parse_cluster_status> {};
template <>
struct Codec<GroupStatus>
    : EnumCodec<GroupStatus, static_cast<std::string_view (*)(GroupStatus)>(&to_string),
                &parse_group_status> {};
template <>
struct Codec<Orchestrator>
    : EnumCodec<Orchestrator, static_cast<std::string_view (*)(Orchestrator)>(&to_string),
                &parse_orchestrator> {};
}  // namespace gf::event_codec

namespace gf::cluster_events {

using event_codec::decode;
using event_codec::field;
using event_codec::to_event;
using event_codec::to_json;

// A cluster is created with its groups (CreateCluster); nodes follow from the provisioner.
struct Created {
  static constexpr std::string_view kType = "cluster.created";
  std::string cluster;
  std::string id;
  std::string arn;
  bool continuous = false;
  Orchestrator orchestrator = Orchestrator::kSlurm;
  Json vpc_config;
  std::string node_recovery;
  Duration min_count_timeout{};
  std::vector<GroupSpec> groups;
  static constexpr auto fields() {
    return std::tuple{field("Name", &Created::cluster),
                      field("Id", &Created::id),
                      field("Arn", &Created::arn),
                      field("Continuous", &Created::continuous),
                      field("Orchestrator", &Created::orchestrator),
                      field("VpcConfig", &Created::vpc_config),
                      field("NodeRecovery", &Created::node_recovery),
                      field("MinCountTimeoutUs", &Created::min_count_timeout),
                      field("Groups", &Created::groups)};
  }
};
// UpdateCluster: the full desired specs of the groups it names, and the groups to delete.
struct Updated {
  static constexpr std::string_view kType = "cluster.updated";
  std::string cluster;
  std::vector<GroupSpec> groups;
  std::vector<std::string> delete_groups;
  std::optional<std::string> node_recovery;
  static constexpr auto fields() {
    return std::tuple{field("Name", &Updated::cluster), field("Groups", &Updated::groups),
                      field("Delete", &Updated::delete_groups),
                      field("NodeRecovery", &Updated::node_recovery)};
  }
};
// DeleteCluster: every group scales to zero, then the cluster is removed.
struct DeleteRequested {
  static constexpr std::string_view kType = "cluster.delete_requested";
  std::string cluster;
  static constexpr auto fields() { return std::tuple{field("Name", &DeleteRequested::cluster)}; }
};
// The cluster's status changed; a Failed one carries its FailureMessage.
struct StatusChanged {
  static constexpr std::string_view kType = "cluster.status";
  std::string cluster;
  ClusterStatus status = ClusterStatus::kCreating;
  std::string reason;
  std::optional<std::string> failure_message;
  static constexpr auto fields() {
    return std::tuple{field("Name", &StatusChanged::cluster),
                      field("Status", &StatusChanged::status),
                      field("Reason", &StatusChanged::reason),
                      field("FailureMessage", &StatusChanged::failure_message)};
  }
};
// A legacy all-or-nothing update failed: the previous specs are restored.
struct RolledBack {
  static constexpr std::string_view kType = "cluster.rollback";
  std::string cluster;
  std::string reason;
  static constexpr auto fields() {
    return std::tuple{field("Name", &RolledBack::cluster), field("Reason", &RolledBack::reason)};
  }
};
// The last node of a deleting cluster is gone: the cluster leaves (its billing is kept).
struct Removed {
  static constexpr std::string_view kType = "cluster.removed";
  std::string cluster;
  static constexpr auto fields() { return std::tuple{field("Name", &Removed::cluster)}; }
};
// An instance group's status changed (empty reason: the standard text).
struct GroupStatusChanged {
  static constexpr std::string_view kType = "group.status";
  std::string cluster;
  std::string group;
  GroupStatus status = GroupStatus::kCreating;
  std::string reason;
  static constexpr auto fields() {
    return std::tuple{
        field("Name", &GroupStatusChanged::cluster), field("Group", &GroupStatusChanged::group),
        field("Status", &GroupStatusChanged::status), field("Reason", &GroupStatusChanged::reason)};
  }
};
// MinCount was not reached in time: the group rolls back to its last InService counts
// (docs/provisioning.md).
struct GroupRolledBack {
  static constexpr std::string_view kType = "group.rollback";
  std::string cluster;
  std::string group;
  int64_t target = 0;
  int64_t min = 0;
  std::string reason;
  static constexpr auto fields() {
    return std::tuple{
        field("Name", &GroupRolledBack::cluster), field("Group", &GroupRolledBack::group),
        field("Target", &GroupRolledBack::target), field("Min", &GroupRolledBack::min),
        field("Reason", &GroupRolledBack::reason)};
  }
};
// A launch round failed: the group retries at `next_attempt` (`failures` rounds in a row;
// `attempt` is the failed one).
struct GroupBackoff {
  static constexpr std::string_view kType = "group.backoff";
  std::string cluster;
  std::string group;
  int64_t failures = 0;
  int64_t attempt = 0;
  Time next_attempt{};
  std::string reason;
  static constexpr auto fields() {
    return std::tuple{field("Name", &GroupBackoff::cluster),
                      field("Group", &GroupBackoff::group),
                      field("Failures", &GroupBackoff::failures),
                      field("Attempt", &GroupBackoff::attempt),
                      field("NextAttemptUs", &GroupBackoff::next_attempt),
                      field("Reason", &GroupBackoff::reason)};
  }
};
// BatchAddClusterNodes / BatchDeleteClusterNodes set the group's TargetCount.
struct GroupTargetSet {
  static constexpr std::string_view kType = "group.target";
  std::string cluster;
  std::string group;
  int64_t target = 0;
  std::string reason;
  static constexpr auto fields() {
    return std::tuple{
        field("Name", &GroupTargetSet::cluster), field("Group", &GroupTargetSet::group),
        field("Target", &GroupTargetSet::target), field("Reason", &GroupTargetSet::reason)};
  }
};
// A deleted group has no node left and leaves the cluster.
struct GroupRemoved {
  static constexpr std::string_view kType = "group.removed";
  std::string cluster;
  std::string group;
  static constexpr auto fields() {
    return std::tuple{field("Name", &GroupRemoved::cluster), field("Group", &GroupRemoved::group)};
  }
};
// An instance launch was asked of the cloud (the node is Pending).
struct LaunchRequested {
  static constexpr std::string_view kType = "node.launch_requested";
  std::string cluster;
  std::string group;
  std::string instance_id;
  std::string instance_type;
  int64_t attempt = 0;
  int64_t price_micros_per_hour = 0;
  // A Slurm cluster's node: its place in the group, which names it in Slurm (docs/slurm.md).
  std::optional<int64_t> slurm_slot{};
  static constexpr auto fields() {
    return std::tuple{field("Name", &LaunchRequested::cluster),
                      field("Group", &LaunchRequested::group),
                      field("InstanceId", &LaunchRequested::instance_id),
                      field("InstanceType", &LaunchRequested::instance_type),
                      field("Attempt", &LaunchRequested::attempt),
                      field("PriceMicrosPerHour", &LaunchRequested::price_micros_per_hour),
                      field("SlurmSlot", &LaunchRequested::slurm_slot)};
  }
};
// The cloud could not launch it (`reason`: InsufficientCapacity, …): the node is gone.
struct LaunchFailed {
  static constexpr std::string_view kType = "node.launch_failed";
  std::string cluster;
  std::string instance_id;
  std::string reason;
  std::string message;
  static constexpr auto fields() {
    return std::tuple{
        field("Name", &LaunchFailed::cluster), field("InstanceId", &LaunchFailed::instance_id),
        field("Reason", &LaunchFailed::reason), field("Message", &LaunchFailed::message)};
  }
};
// The instance is up and its lifecycle script started (billing starts). `at`: when, as the node
// reported it (a real instance's agent; absent: when the event happened); `address`: where its
// pods are reached (the agent's; absent for simulated instances).
struct Launched {
  static constexpr std::string_view kType = "node.launched";
  std::string cluster;
  std::string instance_id;
  std::optional<Time> at{};
  std::optional<std::string> address{};
  // Labels the cloud gave the instance: its network topology (docs/scheduling.md "Topology").
  std::optional<std::map<std::string, std::string>> labels{};
  static constexpr auto fields() {
    return std::tuple{field("Name", &Launched::cluster),
                      field("InstanceId", &Launched::instance_id), field("AtUs", &Launched::at),
                      field("Address", &Launched::address), field("Labels", &Launched::labels)};
  }
};
// The lifecycle script succeeded: the node is Running (`at` as for Launched).
struct NodeRunning {
  static constexpr std::string_view kType = "node.running";
  std::string cluster;
  std::string instance_id;
  std::optional<Time> at{};
  static constexpr auto fields() {
    return std::tuple{field("Name", &NodeRunning::cluster),
                      field("InstanceId", &NodeRunning::instance_id),
                      field("AtUs", &NodeRunning::at)};
  }
};
// The lifecycle script failed: the node shuts down and is replaced; billing ends `at` (the
// script's end as the node reported it; absent: when the event happened).
struct LifecycleFailed {
  static constexpr std::string_view kType = "node.lifecycle_failed";
  std::string cluster;
  std::string instance_id;
  std::string message;
  std::optional<Time> at{};
  static constexpr auto fields() {
    return std::tuple{field("Name", &LifecycleFailed::cluster),
                      field("InstanceId", &LifecycleFailed::instance_id),
                      field("Message", &LifecycleFailed::message),
                      field("AtUs", &LifecycleFailed::at)};
  }
};
// The node failed its health checks: it shuts down and is replaced.
struct NodeUnhealthy {
  static constexpr std::string_view kType = "node.unhealthy";
  std::string cluster;
  std::string instance_id;
  std::string message;
  static constexpr auto fields() {
    return std::tuple{field("Name", &NodeUnhealthy::cluster),
                      field("InstanceId", &NodeUnhealthy::instance_id),
                      field("Message", &NodeUnhealthy::message)};
  }
};
// Termination was asked of the cloud (scale-down, deletion, BatchDeleteClusterNodes).
struct TerminateRequested {
  static constexpr std::string_view kType = "node.terminate_requested";
  std::string cluster;
  std::string instance_id;
  std::string reason;
  static constexpr auto fields() {
    return std::tuple{field("Name", &TerminateRequested::cluster),
                      field("InstanceId", &TerminateRequested::instance_id),
                      field("Reason", &TerminateRequested::reason)};
  }
};
// The instance is gone (billing ends).
struct Terminated {
  static constexpr std::string_view kType = "node.terminated";
  std::string cluster;
  std::string instance_id;
  static constexpr auto fields() {
    return std::tuple{field("Name", &Terminated::cluster),
                      field("InstanceId", &Terminated::instance_id)};
  }
};
// A health verdict on a live node. An unhealthy node keeps running but is the first to go on
// scale-down or rollback.
struct NodeHealth {
  static constexpr std::string_view kType = "node.health";
  std::string cluster;
  std::string instance_id;
  bool healthy = false;
  std::string message;
  static constexpr auto fields() {
    return std::tuple{
        field("Name", &NodeHealth::cluster), field("InstanceId", &NodeHealth::instance_id),
        field("Healthy", &NodeHealth::healthy), field("Message", &NodeHealth::message)};
  }
};

// What the cluster's slurmctld says of a real Slurm node, as its agent read it (docs/slurm.md):
// recorded when it changes. Wait-for-idle reads its job list.
struct NodeSlurmState {
  static constexpr std::string_view kType = "node.slurm_state";
  std::string cluster;
  std::string instance_id;
  std::string state;
  std::string reason;
  std::vector<std::string> jobs;
  static constexpr auto fields() {
    return std::tuple{
        field("Name", &NodeSlurmState::cluster), field("InstanceId", &NodeSlurmState::instance_id),
        field("State", &NodeSlurmState::state), field("Reason", &NodeSlurmState::reason),
        field("Jobs", &NodeSlurmState::jobs)};
  }
};

// UpdateClusterSoftware (docs/provisioning.md "Software updates"): the cluster (and the groups it
// updates) is SystemUpdating; new nodes launch with `image` from now on, at generation
// `generation`; Running nodes follow batch by batch.
struct SoftwareUpdateStarted {
  static constexpr std::string_view kType = "cluster.software_update_started";
  std::string cluster;
  std::string image;
  int64_t generation = 0;
  std::vector<std::string> groups;
  std::string batch_type;
  int64_t batch_value = 1;
  Duration wait_interval{};
  static constexpr auto fields() {
    return std::tuple{field("Name", &SoftwareUpdateStarted::cluster),
                      field("Image", &SoftwareUpdateStarted::image),
                      field("Generation", &SoftwareUpdateStarted::generation),
                      field("Groups", &SoftwareUpdateStarted::groups),
                      field("BatchType", &SoftwareUpdateStarted::batch_type),
                      field("BatchValue", &SoftwareUpdateStarted::batch_value),
                      field("WaitIntervalUs", &SoftwareUpdateStarted::wait_interval)};
  }
};
// A node of the update's current batch: SystemUpdating until the cloud reports it updated (its
// pods come down, as on any node that stops taking pods).
struct NodeUpdateStarted {
  static constexpr std::string_view kType = "node.update_started";
  std::string cluster;
  std::string instance_id;
  int64_t batch = 0;
  static constexpr auto fields() {
    return std::tuple{field("Name", &NodeUpdateStarted::cluster),
                      field("InstanceId", &NodeUpdateStarted::instance_id),
                      field("Batch", &NodeUpdateStarted::batch)};
  }
};
// The cloud updated the node: Running again, on `image` at `generation`.
struct NodeUpdated {
  static constexpr std::string_view kType = "node.updated";
  std::string cluster;
  std::string instance_id;
  std::string image;
  int64_t generation = 0;
  static constexpr auto fields() {
    return std::tuple{
        field("Name", &NodeUpdated::cluster), field("InstanceId", &NodeUpdated::instance_id),
        field("Image", &NodeUpdated::image), field("Generation", &NodeUpdated::generation)};
  }
};
// Every node the update covers is on the new image: the cluster and its groups are InService.
struct SoftwareUpdateFinished {
  static constexpr std::string_view kType = "cluster.software_update_finished";
  std::string cluster;
  int64_t updated = 0;
  static constexpr auto fields() {
    return std::tuple{field("Name", &SoftwareUpdateFinished::cluster),
                      field("Updated", &SoftwareUpdateFinished::updated)};
  }
};

}  // namespace gf::cluster_events

namespace gf::event_type {

inline constexpr std::string_view kClusterCreated = cluster_events::Created::kType;
inline constexpr std::string_view kClusterUpdated = cluster_events::Updated::kType;
inline constexpr std::string_view kClusterDeleteRequested = cluster_events::DeleteRequested::kType;
inline constexpr std::string_view kClusterStatus = cluster_events::StatusChanged::kType;
inline constexpr std::string_view kClusterRollback = cluster_events::RolledBack::kType;
inline constexpr std::string_view kClusterRemoved = cluster_events::Removed::kType;
inline constexpr std::string_view kGroupStatus = cluster_events::GroupStatusChanged::kType;
inline constexpr std::string_view kGroupRollback = cluster_events::GroupRolledBack::kType;
inline constexpr std::string_view kGroupBackoff = cluster_events::GroupBackoff::kType;
inline constexpr std::string_view kGroupTarget = cluster_events::GroupTargetSet::kType;
inline constexpr std::string_view kGroupRemoved = cluster_events::GroupRemoved::kType;
inline constexpr std::string_view kNodeLaunchRequested = cluster_events::LaunchRequested::kType;
inline constexpr std::string_view kNodeLaunchFailed = cluster_events::LaunchFailed::kType;
inline constexpr std::string_view kNodeLaunched = cluster_events::Launched::kType;
inline constexpr std::string_view kNodeRunning = cluster_events::NodeRunning::kType;
inline constexpr std::string_view kNodeLifecycleFailed = cluster_events::LifecycleFailed::kType;
inline constexpr std::string_view kNodeUnhealthy = cluster_events::NodeUnhealthy::kType;
inline constexpr std::string_view kNodeTerminateRequested =
    cluster_events::TerminateRequested::kType;
inline constexpr std::string_view kNodeTerminated = cluster_events::Terminated::kType;
inline constexpr std::string_view kNodeHealth = cluster_events::NodeHealth::kType;
inline constexpr std::string_view kSoftwareUpdateStarted =
    cluster_events::SoftwareUpdateStarted::kType;
inline constexpr std::string_view kNodeUpdateStarted = cluster_events::NodeUpdateStarted::kType;
inline constexpr std::string_view kNodeUpdated = cluster_events::NodeUpdated::kType;
inline constexpr std::string_view kSoftwareUpdateFinished =
    cluster_events::SoftwareUpdateFinished::kType;

}  // namespace gf::event_type
