// Journal event types for clusters, instance groups and nodes (docs/provisioning.md). Appliers live
// in cluster_apply.cpp; user-visible events (ListClusterEvents) are derived there.
#pragma once

#include <string_view>

namespace gf::event_type {

// {Name, Id, Arn, Continuous, Orchestrator, VpcConfig, NodeRecovery, MinCountTimeoutUs, Groups[]}
inline constexpr std::string_view kClusterCreated = "cluster.created";
// {Name, Groups[] (full desired specs), Delete[] (group names)}
inline constexpr std::string_view kClusterUpdated = "cluster.updated";
// {Name}
inline constexpr std::string_view kClusterDeleteRequested = "cluster.delete_requested";
// {Name, Status, FailureMessage?, Reason}
inline constexpr std::string_view kClusterStatus = "cluster.status";
// {Name, Reason}: legacy all-or-nothing update failed; restore the previous specs.
inline constexpr std::string_view kClusterRollback = "cluster.rollback";
// {Name}
inline constexpr std::string_view kClusterRemoved = "cluster.removed";
// {Name, Group, Status, Reason}
inline constexpr std::string_view kGroupStatus = "group.status";
// {Name, Group, Target, Min, Reason}: MinCount timeout rollback (docs/provisioning.md)
inline constexpr std::string_view kGroupRollback = "group.rollback";
// {Name, Group, Failures, NextAttemptUs, Reason}
inline constexpr std::string_view kGroupBackoff = "group.backoff";
// {Name, Group, Target, Reason}: BatchAddClusterNodes / BatchDeleteClusterNodes
inline constexpr std::string_view kGroupTarget = "group.target";
// {Name, Group}
inline constexpr std::string_view kGroupRemoved = "group.removed";
// {Name, Group, InstanceId, InstanceType, Attempt, PriceMicrosPerHour}
inline constexpr std::string_view kNodeLaunchRequested = "node.launch_requested";
// {Name, InstanceId, Reason, Message}
inline constexpr std::string_view kNodeLaunchFailed = "node.launch_failed";
// {Name, InstanceId}: instance up, lifecycle script started (billing starts)
inline constexpr std::string_view kNodeLaunched = "node.launched";
// {Name, InstanceId}
inline constexpr std::string_view kNodeRunning = "node.running";
// {Name, InstanceId, Message}
inline constexpr std::string_view kNodeLifecycleFailed = "node.lifecycle_failed";
// {Name, InstanceId, Message}
inline constexpr std::string_view kNodeUnhealthy = "node.unhealthy";
// {Name, InstanceId, Reason}
inline constexpr std::string_view kNodeTerminateRequested = "node.terminate_requested";
// {Name, InstanceId}
inline constexpr std::string_view kNodeTerminated = "node.terminated";
// {Name, InstanceId, Healthy, Message}: a health verdict on a live node (detectors, agents).
// An unhealthy node keeps running but is the first to go on scale-down or rollback.
inline constexpr std::string_view kNodeHealth = "node.health";

}  // namespace gf::event_type
