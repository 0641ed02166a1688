#include "api/cluster_wire.h"

#include "model/health_records.h"
#include "provision/slurm_layout.h"

namespace gf {

namespace {

Json group_details(const Cluster& c, const InstanceGroup& g) {
  Json j = {{"InstanceGroupName", g.spec.name},
            {"InstanceType", g.spec.instance_type},
            {"TargetCount", g.spec.target},
            {"CurrentCount", c.current_count(g.spec.name)},
            {"MinCount", g.spec.min},
            {"Status", to_string(g.status)},
            {"ExecutionRole", g.spec.execution_role}};
  if (!g.spec.lifecycle_config.is_null()) j["LifeCycleConfig"] = g.spec.lifecycle_config;
  if (g.spec.threads_per_core) j["ThreadsPerCore"] = *g.spec.threads_per_core;
  if (g.spec.has_slurm_config) {
    Json sc = {{"NodeType", to_string(g.spec.node_type)}};
    if (!g.spec.partitions.empty()) sc["PartitionNames"] = g.spec.partitions;
    if (!g.spec.default_partition.empty()) sc["DefaultPartition"] = g.spec.default_partition;
    j["SlurmConfig"] = sc;
  }
  int64_t pending = 0;
  for (const auto& [id, n] : c.nodes) {
    if (n.group == g.spec.name && n.status != NodeStatus::kRunning) ++pending;
  }
  if (pending > 0 || c.live_count(g.spec.name) != g.spec.target) {
    j["ActiveOperations"] = Json{{"Scaling", 1}};
  }
  if (g.next_attempt) {
    j["NextLaunchAttempt"] = format_iso8601(*g.next_attempt);
    j["LastLaunchFailure"] = g.last_failure;
  }
  for (auto it = g.spec.extra.begin(); it != g.spec.extra.end(); ++it) j[it.key()] = it.value();
  return j;
}

}  // namespace

Json describe_cluster(const Cluster& c) {
  Json groups = Json::array();
  for (const auto& g : c.groups) groups.push_back(group_details(c, g));
  Json orch = c.orchestrator == Orchestrator::kSlurm ? Json{{"Slurm", Json::object()}}
                                                     : Json{{"Native", Json::object()}};
  Json j = {{"ClusterArn", c.arn},
            {"ClusterName", c.name},
            {"ClusterStatus", to_string(c.status)},
            {"CreationTime", format_iso8601(c.creation_time)},
            {"Orchestrator", orch},
            {"NodeRecovery", c.node_recovery},
            {"InstanceGroups", groups}};
  if (c.continuous) j["NodeProvisioningMode"] = "Continuous";
  if (!c.failure_message.empty()) j["FailureMessage"] = c.failure_message;
  if (!c.vpc_config.is_null()) j["VpcConfig"] = c.vpc_config;
  if (!c.image.empty()) j["ImageId"] = c.image;
  if (const SoftwareUpdate* u = c.software_update ? &*c.software_update : nullptr) {
    // Progress of UpdateClusterSoftware: nodes of the updated groups on the new software, being
    // updated, and still to go.
    int64_t updated = 0, updating = 0, total = 0;
    for (const auto& [id, n] : c.nodes) {
      if (!u->updates(n.group) || !n.is_live()) continue;
      ++total;
      if (n.status == NodeStatus::kSystemUpdating) {
        ++updating;
      } else if (n.software_generation >= c.software_generation) {
        ++updated;
      }
    }
    Json su{{"ImageId", u->image},
            {"InstanceGroups", u->groups},
            {"MaximumBatchSize", {{"Type", u->batch_type}, {"Value", u->batch_value}}},
            {"WaitIntervalInSeconds", u->wait_interval.count() / 1'000'000},
            {"StartTime", format_iso8601(u->started)},
            {"Batches", u->batches},
            {"Updated", updated},
            {"Updating", updating},
            {"Instances", total}};
    if (u->next_batch_at) su["NextBatchTime"] = format_iso8601(*u->next_batch_at);
    j["SoftwareUpdate"] = std::move(su);
  }
  return j;
}

Json cluster_summary(const Cluster& c) {
  return Json{{"ClusterArn", c.arn},
              {"ClusterName", c.name},
              {"ClusterStatus", to_string(c.status)},
              {"CreationTime", format_iso8601(c.creation_time)}};
}

NodeActivity NodeActivity::of(const FleetView& view, const Cluster& c) {
  NodeActivity a;
  for (const auto& [id, job] : view.jobs) {
    if (!job->admitted || job->cluster != c.name) continue;
    for (const Job::Pod& p : job->pods()) a.pods[p.node].push_back({p.name, job->name, job->id});
  }
  return a;
}

Json node_summary(const FleetView& view, const Cluster& c, const Node& n,
                  const NodeActivity& activity) {
  Json status = {{"Status", to_string(n.status)}};
  if (!n.message.empty()) status["Message"] = n.message;
  Json j{{"InstanceGroupName", n.group},
         {"InstanceId", n.instance_id},
         {"InstanceType", n.instance_type},
         {"InstanceStatus", status},
         {"LaunchTime", format_iso8601(n.launch_time.value_or(n.requested_at))},
         {"Cordoned", n.cordoned}};
  // The name slurm.conf and sinfo give the node (docs/provisioning.md), beside the instance id.
  if (c.orchestrator == Orchestrator::kSlurm) j["SlurmNodeName"] = slurm_node_name(n);
  // A real Slurm node: what slurmctld said of it when its agent last looked (docs/slurm.md
  // "Placement follows Slurm": a node Slurm starts nothing on takes no gang).
  if (n.slurm) {
    j["SlurmState"] = Json{{"State", n.slurm->state}, {"Reason", n.slurm->reason}};
    if (auto why = slurm_unschedulable(*n.slurm)) j["SlurmUnschedulable"] = *why;
  }
  if (!n.image.empty()) j["ImageId"] = n.image;
  if (!n.address.empty()) j["PrivatePrimaryIp"] = n.address;  // as its agent reported it
  if (!n.labels.empty()) {                                    // what `node list -l` selects on
    Json labels = Json::object();
    for (const auto& [k, v] : n.labels) labels[k] = v;
    j["Labels"] = std::move(labels);
  }
  auto pods = activity.pods.find(n.instance_id);
  j["PodCount"] = pods == activity.pods.end() ? 0 : pods->second.size();
  if (const remediate::Remediation* r = view.health_state().open_remediation(n.instance_id)) {
    j["RemediationId"] = r->id;
    j["RemediationStatus"] = std::string(remediate::to_string(r->status));
  }
  return j;
}

Json node_detail(const FleetView& view, const Cluster& c, const Node& n, Time now) {
  const NodeActivity activity = NodeActivity::of(view, c);
  Json j = node_summary(view, c, n, activity);
  if (const InstanceGroup* g = c.find_group(n.group)) {
    if (!g->spec.lifecycle_config.is_null()) j["LifeCycleConfig"] = g->spec.lifecycle_config;
    if (g->spec.threads_per_core) j["ThreadsPerCore"] = *g->spec.threads_per_core;
  }
  if (!j.contains("Labels")) j["Labels"] = Json::object();
  j["Health"] = Json{{"Healthy", n.healthy}};
  Json pods = Json::array();
  if (auto it = activity.pods.find(n.instance_id); it != activity.pods.end()) {
    for (const NodeActivity::Pod& p : it->second)
      pods.push_back({{"Name", p.name}, {"Job", p.job}, {"JobId", p.job_id}});
  }
  j["Workload"] = Json{{"Pods", std::move(pods)}};
  Json billing = {{"PricePerHour", format_money(n.price_micros_per_hour)},
                  {"Billing", n.launched()}};
  if (n.launch_time) {
    BillingRecord b;
    b.price_micros_per_hour = n.price_micros_per_hour;
    b.start = *n.launch_time;
    b.end = n.shutting_down_at;
    billing["BillingStart"] = format_iso8601(*n.launch_time);
    if (n.shutting_down_at) billing["BillingEnd"] = format_iso8601(*n.shutting_down_at);
    billing["Cost"] = format_money(b.cost_micros(now));
  }
  j["Billing"] = billing;
  j["LaunchAttempt"] = n.attempt;
  return j;
}

}  // namespace gf
