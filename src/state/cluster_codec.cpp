#include "state/cluster_codec.h"

namespace gf {

namespace {

Json opt_time(const std::optional<Time>& t) { return t ? Json(to_micros(*t)) : Json(nullptr); }

std::optional<Time> read_opt_time(ObjectReader& r, std::string_view key) {
  auto v = r.optional_int(key);
  if (!v) return std::nullopt;
  return from_micros(*v);
}

Json node_to_json(const Node& n) {
  Json j{{"InstanceId", n.instance_id},
         {"Group", n.group},
         {"InstanceType", n.instance_type},
         {"Status", to_string(n.status)},
         {"Message", n.message},
         {"Attempt", n.attempt},
         {"LaunchOrder", n.launch_order},
         {"RequestedAt", to_micros(n.requested_at)},
         {"LaunchTime", opt_time(n.launch_time)},
         {"RunningAt", opt_time(n.running_at)},
         {"ShuttingDownAt", opt_time(n.shutting_down_at)},
         {"Healthy", n.healthy},
         {"TerminationReason", n.termination_reason},
         {"PriceMicrosPerHour", n.price_micros_per_hour},
         {"Cordoned", n.cordoned},
         {"Maintenance", n.maintenance},
         {"HostId", n.host_id},
         {"Labels", n.labels}};
  // Software fields only once an update happened: snapshots of fleets that never updated stay as
  // they were (and so do their hashes).
  if (!n.image.empty()) j["Image"] = n.image;
  if (n.software_generation != 0) j["SoftwareGeneration"] = n.software_generation;
  if (!n.address.empty()) j["Address"] = n.address;
  if (n.faulted) j["Faulted"] = true;
  if (n.slurm_slot != 0) j["SlurmSlot"] = n.slurm_slot;
  if (n.slurm) {
    j["Slurm"] =
        Json{{"State", n.slurm->state}, {"Reason", n.slurm->reason}, {"Jobs", n.slurm->jobs}};
  }
  return j;
}

Result<Node> node_from_json(const Json& j) {
  ObjectReader r(j, "node");
  Node n;
  n.instance_id = r.required_string("InstanceId");
  n.group = r.required_string("Group");
  n.instance_type = r.required_string("InstanceType");
  auto st = parse_node_status(r.required_string("Status"));
  n.message = r.optional_string("Message").value_or("");
  n.attempt = r.required_int("Attempt");
  n.launch_order = r.required_int("LaunchOrder");
  n.requested_at = from_micros(r.required_int("RequestedAt"));
  n.launch_time = read_opt_time(r, "LaunchTime");
  n.running_at = read_opt_time(r, "RunningAt");
  n.shutting_down_at = read_opt_time(r, "ShuttingDownAt");
  n.healthy = r.optional_bool("Healthy").value_or(true);
  n.termination_reason = r.optional_string("TerminationReason").value_or("");
  n.price_micros_per_hour = r.optional_int("PriceMicrosPerHour").value_or(0);
  n.cordoned = r.optional_bool("Cordoned").value_or(false);
  n.maintenance = r.optional_bool("Maintenance").value_or(false);
  n.faulted = r.optional_bool("Faulted").value_or(false);
  n.host_id = r.optional_string("HostId").value_or("");
  n.image = r.optional_string("Image").value_or("");
  n.software_generation = r.optional_int("SoftwareGeneration").value_or(0);
  n.address = r.optional_string("Address").value_or("");
  n.slurm_slot = r.optional_int("SlurmSlot").value_or(0);
  if (const Json* sl = r.optional_object("Slurm")) {
    ObjectReader sr(*sl, "node.Slurm");
    SlurmNodeReport rep;
    rep.state = sr.optional_string("State").value_or("");
    rep.reason = sr.optional_string("Reason").value_or("");
    rep.jobs = sr.optional_string_list("Jobs").value_or(std::vector<std::string>{});
    GF_RETURN_IF_ERROR(sr.status());
    n.slurm = std::move(rep);
  }
  if (const Json* l = r.optional_object("Labels")) {
    for (auto it = l->begin(); it != l->end(); ++it) {
      if (it.value().is_string()) n.labels[it.key()] = it.value().get<std::string>();
    }
  }
  if (!r.ok()) return r.status();
  if (!st) return validation_error("node.Status: unknown");
  n.status = *st;
  return n;
}

Json group_to_json(const InstanceGroup& g) {
  return Json{{"Spec", g.spec.to_json()},
              {"Status", to_string(g.status)},
              {"CreatedAt", to_micros(g.created_at)},
              {"EverInService", g.ever_in_service},
              {"LastInServiceTarget", g.last_in_service_target},
              {"LastInServiceMin", g.last_in_service_min},
              {"MinDeadline", opt_time(g.min_deadline)},
              {"ConsecutiveFailures", g.consecutive_failures},
              {"NextAttempt", opt_time(g.next_attempt)},
              {"LastFailure", g.last_failure},
              {"LastFailedAttempt", g.last_failed_attempt},
              {"LaunchAttempts", g.launch_attempts}};
}

Result<InstanceGroup> group_from_json(const Json& j) {
  ObjectReader r(j, "group");
  InstanceGroup g;
  const Json* spec = r.required_value("Spec");
  auto st = parse_group_status(r.required_string("Status"));
  g.created_at = from_micros(r.required_int("CreatedAt"));
  g.ever_in_service = r.optional_bool("EverInService").value_or(false);
  g.last_in_service_target = r.optional_int("LastInServiceTarget").value_or(0);
  g.last_in_service_min = r.optional_int("LastInServiceMin").value_or(0);
  g.min_deadline = read_opt_time(r, "MinDeadline");
  g.consecutive_failures = r.optional_int("ConsecutiveFailures").value_or(0);
  g.next_attempt = read_opt_time(r, "NextAttempt");
  g.last_failure = r.optional_string("LastFailure").value_or("");
  g.last_failed_attempt = r.optional_int("LastFailedAttempt").value_or(0);
  g.launch_attempts = r.optional_int("LaunchAttempts").value_or(0);
  if (!r.ok()) return r.status();
  if (!st) return validation_error("group.Status: unknown");
  g.status = *st;
  GF_ASSIGN_OR_RETURN(g.spec, GroupSpec::from_json(*spec));
  return g;
}

}  // namespace

Json cluster_to_snapshot(const Cluster& c) {
  Json groups = Json::array();
  for (const auto& g : c.groups) groups.push_back(group_to_json(g));
  Json nodes = Json::array();
  for (const auto& [id, n] : c.nodes) nodes.push_back(node_to_json(n));
  Json billing = Json::array();
  for (const auto& b : c.billing) billing.push_back(b.to_json());
  Json j = {{"Name", c.name},
            {"Id", c.id},
            {"Arn", c.arn},
            {"Status", to_string(c.status)},
            {"CreationTime", to_micros(c.creation_time)},
            {"FailureMessage", c.failure_message},
            {"Continuous", c.continuous},
            {"Orchestrator", to_string(c.orchestrator)},
            {"VpcConfig", c.vpc_config},
            {"NodeRecovery", c.node_recovery},
            {"EverInService", c.ever_in_service},
            {"MinCountTimeoutUs", c.min_count_timeout.count()},
            {"Groups", groups},
            {"Nodes", nodes},
            {"Billing", billing}};
  if (c.legacy_previous_specs) {
    Json prev = Json::array();
    for (const auto& s : *c.legacy_previous_specs) prev.push_back(s.to_json());
    j["LegacyPreviousSpecs"] = prev;
  }
  if (!c.image.empty()) j["Image"] = c.image;
  if (c.software_generation != 0) j["SoftwareGeneration"] = c.software_generation;
  if (const SoftwareUpdate* u = c.software_update ? &*c.software_update : nullptr) {
    j["SoftwareUpdate"] = Json{{"Image", u->image},
                               {"Groups", u->groups},
                               {"BatchType", u->batch_type},
                               {"BatchValue", u->batch_value},
                               {"WaitIntervalUs", u->wait_interval.count()},
                               {"Started", to_micros(u->started)},
                               {"NextBatchAt", opt_time(u->next_batch_at)},
                               {"Batches", u->batches}};
  }
  return j;
}

namespace {

Result<SoftwareUpdate> software_update_from_json(const Json& j) {
  ObjectReader r(j, "cluster.SoftwareUpdate");
  SoftwareUpdate u;
  u.image = r.required_string("Image");
  u.groups = r.optional_string_list("Groups").value_or(std::vector<std::string>{});
  u.batch_type = r.required_string("BatchType");
  u.batch_value = r.required_int("BatchValue");
  u.wait_interval = Duration(r.required_int("WaitIntervalUs"));
  u.started = from_micros(r.required_int("Started"));
  u.next_batch_at = read_opt_time(r, "NextBatchAt");
  u.batches = r.optional_int("Batches").value_or(0);
  if (!r.ok()) return r.status();
  return u;
}

}  // namespace

Result<Cluster> cluster_from_snapshot(const Json& j) {
  ObjectReader r(j, "cluster");
  Cluster c;
  c.name = r.required_string("Name");
  c.id = r.required_string("Id");
  c.arn = r.required_string("Arn");
  auto st = parse_cluster_status(r.required_string("Status"));
  c.creation_time = from_micros(r.required_int("CreationTime"));
  c.failure_message = r.optional_string("FailureMessage").value_or("");
  c.continuous = r.optional_bool("Continuous").value_or(true);
  c.orchestrator = r.optional_string("Orchestrator").value_or("Slurm") == "Native"
                       ? Orchestrator::kNative
                       : Orchestrator::kSlurm;
  if (const Json* v = r.optional_value("VpcConfig")) c.vpc_config = *v;
  c.node_recovery = r.optional_string("NodeRecovery").value_or("Automatic");
  c.ever_in_service = r.optional_bool("EverInService").value_or(false);
  c.min_count_timeout = Duration(r.optional_int("MinCountTimeoutUs").value_or(hours(3).count()));
  const Json* groups = r.optional_array("Groups");
  const Json* nodes = r.optional_array("Nodes");
  const Json* billing = r.optional_array("Billing");
  const Json* prev = r.optional_array("LegacyPreviousSpecs");
  c.image = r.optional_string("Image").value_or("");
  c.software_generation = r.optional_int("SoftwareGeneration").value_or(0);
  const Json* update = r.optional_object("SoftwareUpdate");
  if (!r.ok()) return r.status();
  if (update) {
    GF_ASSIGN_OR_RETURN(c.software_update, software_update_from_json(*update));
  }
  if (!st) return validation_error("cluster.Status: unknown");
  c.status = *st;
  if (groups) {
    for (const Json& g : *groups) {
      GF_ASSIGN_OR_RETURN(InstanceGroup ig, group_from_json(g));
      c.groups.push_back(std::move(ig));
    }
  }
  if (nodes) {
    for (const Json& n : *nodes) {
      GF_ASSIGN_OR_RETURN(Node node, node_from_json(n));
      std::string id = node.instance_id;
      c.nodes.emplace(std::move(id), std::move(node));
    }
  }
  if (billing) {
    for (const Json& b : *billing) {
      GF_ASSIGN_OR_RETURN(BillingRecord rec, BillingRecord::from_json(b));
      c.billing.push_back(std::move(rec));
    }
  }
  if (prev) {
    std::vector<GroupSpec> specs;
    for (const Json& s : *prev) {
      GF_ASSIGN_OR_RETURN(GroupSpec spec, GroupSpec::from_json(s));
      specs.push_back(std::move(spec));
    }
    c.legacy_previous_specs = std::move(specs);
  }
  return c;
}

}  // namespace gf
