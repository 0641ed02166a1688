#include "provision/cluster_request.h"

#include <fmt/format.h>

#include <algorithm>

#include <regex>
#include <set>

namespace gf {

namespace {

constexpr int64_t kMaxInstanceCount = 6758;  // HyperPod's per-group bound
constexpr size_t kMaxGroups = 100;

bool valid_cluster_name(const std::string& s) {
  static const std::regex re("[A-Za-z0-9-]{1,63}");
  return std::regex_match(s, re);
}

bool valid_group_name(const std::string& s) {
  static const std::regex re("[a-zA-Z0-9](-*[a-zA-Z0-9])*");
  return s.size() <= 63 && std::regex_match(s, re);
}

// One InstanceGroups[i] entry. Defaults (MinInstanceCount) are applied by the caller, which
// knows whether this is a creation or an update.
Result<GroupSpec> parse_group(const Json& j, const std::string& path, const Catalog& catalog,
                              bool& min_given, FieldValidation fields,
                              std::vector<std::string>& warnings) {
  ObjectReader r(j, path);
  GroupSpec g;
  g.name = r.required_string("InstanceGroupName");
  if (r.ok() && !valid_group_name(g.name)) {
    r.fail("InstanceGroupName", "\"" + g.name +
                                    "\" is not a valid name (1-63 letters, digits and hyphens, "
                                    "starting and ending with a letter or digit)");
  }
  g.instance_type = r.required_string("InstanceType");
  if (r.ok() && !catalog.find(g.instance_type)) {
    std::string known;
    for (const auto& n : catalog.names()) known += (known.empty() ? "" : ", ") + n;
    r.fail("InstanceType",
           "unknown instance type \"" + g.instance_type + "\"; the catalog has " + known);
  }
  g.target = r.required_int("InstanceCount");
  if (r.ok() && (g.target < 0 || g.target > kMaxInstanceCount)) {
    r.fail("InstanceCount",
           fmt::format("must be between 0 and {}, got {}", kMaxInstanceCount, g.target));
  }
  auto min = r.optional_int("MinInstanceCount");
  min_given = min.has_value();
  if (min) {
    if (*min < 0)
      r.fail("MinInstanceCount", fmt::format("must be >= 0, got {}", *min));
    else if (r.ok() && *min > g.target) {
      r.fail("MinInstanceCount",
             fmt::format("must not exceed InstanceCount ({}), got {}", g.target, *min));
    }
    g.min = *min;
  }
  g.execution_role = r.optional_string("ExecutionRole").value_or("");
  g.threads_per_core = r.optional_int("ThreadsPerCore");
  if (g.threads_per_core && (*g.threads_per_core < 1 || *g.threads_per_core > 2)) {
    r.fail("ThreadsPerCore", fmt::format("must be 1 or 2, got {}", *g.threads_per_core));
  }
  if (const Json* lc = r.optional_object("LifeCycleConfig")) {
    ObjectReader l(*lc, r.field_path("LifeCycleConfig"));
    l.required_string("SourceS3Uri");
    l.required_string("OnCreate");
    l.optional_string("OnInitComplete");
    r.fail_status(l.status());
    g.lifecycle_config = *lc;
  }
  if (const Json* sc = r.optional_object("SlurmConfig")) {
    ObjectReader s(*sc, r.field_path("SlurmConfig"));
    g.has_slurm_config = true;
    std::string type = s.required_string("NodeType");
    auto t = parse_node_type(type);
    if (s.ok() && (!t || *t == NodeType::kNone)) {
      s.fail("NodeType", "expected Controller, Login or Compute, got \"" + type + "\"");
    } else if (t) {
      g.node_type = *t;
    }
    auto parts = s.optional_string_list("PartitionNames");
    if (parts && !parts->empty() && s.ok() && g.node_type != NodeType::kCompute) {
      s.fail("PartitionNames", "only Compute groups carry partitions; this group is " + type);
    }
    if (parts) g.partitions = *parts;
    // gpufleet's extension: which of its partitions is the cluster's default (docs/slurm.md).
    if (auto def = s.optional_string("DefaultPartition"); def && s.ok()) {
      if (std::find(g.partitions.begin(), g.partitions.end(), *def) == g.partitions.end())
        s.fail("DefaultPartition",
               "\"" + printable(*def, 80) + "\" is not one of this group's PartitionNames");
      else
        g.default_partition = *def;
    }
    r.fail_status(s.status());
  }
  // Fields we know but do not act on are kept verbatim so DescribeCluster echoes them.
  for (const char* kept : {"InstanceStorageConfigs", "OnStartDeepHealthChecks", "TrainingPlanArn",
                           "OverrideVpcConfig", "ScheduledUpdateConfig", "ImageId",
                           "KubernetesConfig", "CapacityRequirements", "NetworkInterface"}) {
    if (const Json* v = r.optional_value(kept)) g.extra[kept] = *v;
  }
  if (!r.ok()) return r.status();
  r.check_unknown(fields, warnings);
  if (!r.ok()) return r.status();
  return g;
}

Status check_orchestrator_rules(const std::vector<GroupSpec>& groups, Orchestrator orch,
                                bool continuous) {
  int controllers = 0;
  std::optional<size_t> default_partition;
  for (size_t i = 0; i < groups.size(); ++i) {
    const GroupSpec& g = groups[i];
    if (g.node_type == NodeType::kController) ++controllers;
    if (!g.default_partition.empty()) {
      if (default_partition) {
        return validation_error(fmt::format(
            "{}.SlurmConfig.DefaultPartition: {} already names the default partition; a "
            "cluster has one",
            path_index("InstanceGroups", i), path_index("InstanceGroups", *default_partition)));
      }
      default_partition = i;
    }
    if (orch == Orchestrator::kSlurm && continuous && !g.has_slurm_config) {
      return validation_error(path_index("InstanceGroups", i) +
                              ".SlurmConfig: is required on every group of a Slurm cluster in "
                              "Continuous mode (the legacy provisioning_parameters.json route is "
                              "not supported with continuous provisioning)");
    }
    if (orch == Orchestrator::kSlurm && g.lifecycle_config.is_null()) {
      return validation_error(
          path_index("InstanceGroups", i) +
          ".LifeCycleConfig: is required for Slurm clusters (SourceS3Uri, OnCreate)");
    }
  }
  if (controllers > 1) {
    return validation_error(
        fmt::format("InstanceGroups: at most one group may have SlurmConfig.NodeType "
                    "Controller, found {}",
                    controllers));
  }
  if (orch == Orchestrator::kSlurm && controllers != 1) {
    return validation_error(
        "InstanceGroups: a Slurm cluster needs exactly one group with "
        "SlurmConfig.NodeType Controller, found none");
  }
  return ok_status();
}

}  // namespace

Result<CreateClusterRequest> parse_create_cluster(const Json& body, const FleetView& state,
                                                  const Catalog& catalog, FieldValidation fields) {
  ObjectReader r(body, "");
  CreateClusterRequest req;
  req.name = r.required_string("ClusterName");
  if (r.ok() && !valid_cluster_name(req.name)) {
    r.fail("ClusterName",
           "\"" + req.name + "\" is not valid: use 1-63 letters, digits and hyphens");
  }
  if (r.ok() && state.find_cluster(req.name)) {
    r.fail("ClusterName", "a cluster named \"" + req.name +
                              "\" already exists; choose another name or delete it first");
  }
  auto mode = r.optional_string("NodeProvisioningMode");
  if (mode && *mode != "Continuous") {
    r.fail("NodeProvisioningMode",
           "expected \"Continuous\" (or leave it out for all-or-nothing "
           "provisioning), got \"" +
               *mode + "\"");
  }
  req.continuous = mode.has_value();
  auto recovery = r.optional_string("NodeRecovery");
  if (recovery && *recovery != "Automatic" && *recovery != "None") {
    r.fail("NodeRecovery", "expected Automatic or None, got \"" + *recovery + "\"");
  }
  req.node_recovery = recovery.value_or("Automatic");
  if (const Json* vpc = r.optional_object("VpcConfig")) req.vpc_config = *vpc;
  const Json* orch = r.optional_object("Orchestrator");
  bool orch_given = false;
  if (orch) {
    ObjectReader o(*orch, "Orchestrator");
    const Json* slurm = o.optional_object("Slurm");
    const Json* native = o.optional_object("Native");
    if (o.ok() && slurm && native) o.fail("Slurm", "give either Slurm or Native, not both");
    if (o.ok() && !slurm && !native) {
      o.fail("Slurm", "expected {\"Slurm\": {}} or {\"Native\": {}}");
    }
    if (o.ok() && slurm) {
      ObjectReader s(*slurm, "Orchestrator.Slurm");
      auto strategy = s.optional_string("SlurmConfigStrategy");
      if (strategy && req.continuous) {
        s.fail("SlurmConfigStrategy",
               "is not supported with NodeProvisioningMode Continuous "
               "(continuous provisioning manages slurm.conf in merge mode "
               "only); remove it");
      } else if (strategy && *strategy != "Overwrite" && *strategy != "Managed" &&
                 *strategy != "Merge") {
        s.fail("SlurmConfigStrategy",
               "expected Overwrite, Managed or Merge, got \"" + *strategy + "\"");
      }
      o.fail_status(s.status());
      req.orchestrator = Orchestrator::kSlurm;
    } else if (o.ok()) {
      req.orchestrator = Orchestrator::kNative;
    }
    orch_given = true;
    r.fail_status(o.status());
  }
  const Json* groups = r.required_value("InstanceGroups");
  if (r.ok() && !groups->is_array()) {
    r.fail("InstanceGroups", "expected array, got " + describe_json_value(*groups));
  }
  if (!r.ok()) return r.status();
  if (groups->empty() || groups->size() > kMaxGroups) {
    return validation_error(
        fmt::format("InstanceGroups: expected 1 to {} groups, got {}", kMaxGroups, groups->size()));
  }
  std::set<std::string> names;
  for (size_t i = 0; i < groups->size(); ++i) {
    const std::string path = path_index("InstanceGroups", i);
    bool min_given = false;
    GF_ASSIGN_OR_RETURN(GroupSpec g,
                        parse_group((*groups)[i], path, catalog, min_given, fields, req.warnings));
    if (!names.insert(g.name).second) {
      return validation_error(path + ".InstanceGroupName: \"" + g.name +
                              "\" is used by another group");
    }
    if (min_given && !req.continuous) {
      return validation_error(path +
                              ".MinInstanceCount: is only supported with "
                              "NodeProvisioningMode Continuous");
    }
    if (!min_given && req.continuous &&
        (g.node_type == NodeType::kController || g.node_type == NodeType::kLogin)) {
      g.min = std::min<int64_t>(1, g.target);  // docs/provisioning.md default at creation
    }
    req.groups.push_back(std::move(g));
  }
  if (!orch_given) {
    bool any_slurm = std::any_of(req.groups.begin(), req.groups.end(),
                                 [](const GroupSpec& g) { return g.has_slurm_config; });
    req.orchestrator = any_slurm ? Orchestrator::kSlurm : Orchestrator::kNative;
  }
  GF_RETURN_IF_ERROR(check_orchestrator_rules(req.groups, req.orchestrator, req.continuous));
  (void)r.optional_string("ClientToken");  // the idempotency token, read by the API layer
  r.check_unknown(fields, req.warnings);
  if (!r.ok()) return r.status();
  return req;
}

Result<UpdateClusterRequest> parse_update_cluster(const std::string& name, const Json& body,
                                                  const FleetView& state, const Catalog& catalog,
                                                  FieldValidation fields) {
  const Cluster* c = state.find_cluster(name);
  if (!c) return not_found_error("cluster \"" + name + "\" not found");
  ObjectReader r(body, "");
  UpdateClusterRequest req;
  req.name = name;
  if (auto n = r.optional_string("ClusterName"); n && *n != name && *n != c->arn) {
    r.fail("ClusterName", "\"" + *n + "\" does not match the cluster in the path (" + name + ")");
  }
  auto recovery = r.optional_string("NodeRecovery");
  if (recovery && *recovery != "Automatic" && *recovery != "None") {
    r.fail("NodeRecovery", "expected Automatic or None, got \"" + *recovery + "\"");
  }
  req.node_recovery = recovery;
  if (const Json* orch = r.optional_object("Orchestrator")) {
    if (orch->contains("Slurm") && (*orch)["Slurm"].is_object() &&
        (*orch)["Slurm"].contains("SlurmConfigStrategy") && c->continuous) {
      r.fail("Orchestrator",
             "Slurm.SlurmConfigStrategy is not supported with continuous provisioning");
    }
  }
  if (auto mode = r.optional_string("NodeProvisioningMode");
      mode && (*mode != "Continuous" || !c->continuous)) {
    r.fail("NodeProvisioningMode", "cannot be changed after creation");
  }
  const Json* groups = r.optional_array("InstanceGroups");
  req.groups_to_delete =
      r.optional_string_list("InstanceGroupsToDelete").value_or(std::vector<std::string>{});
  if (!r.ok()) return r.status();
  if (c->status == ClusterStatus::kDeleting || c->status == ClusterStatus::kFailed) {
    return Status(ErrorCode::kConflict, "cluster \"" + name + "\" is " +
                                            std::string(to_string(c->status)) +
                                            "; it cannot be updated");
  }
  if (!c->continuous && c->status != ClusterStatus::kInService) {
    return Status(ErrorCode::kConflict,
                  "cluster \"" + name + "\" is " + std::string(to_string(c->status)) +
                      "; without continuous provisioning only one update runs at a time — wait "
                      "for InService");
  }
  std::set<std::string> names;
  std::vector<GroupSpec> resulting;  // to check the Controller rule on the outcome
  for (const auto& g : c->groups) {
    if (g.status != GroupStatus::kDeleting) resulting.push_back(g.spec);
  }
  if (groups) {
    for (size_t i = 0; i < groups->size(); ++i) {
      const std::string path = path_index("InstanceGroups", i);
      bool min_given = false;
      GF_ASSIGN_OR_RETURN(
          GroupSpec g, parse_group((*groups)[i], path, catalog, min_given, fields, req.warnings));
      if (!names.insert(g.name).second) {
        return validation_error(path + ".InstanceGroupName: \"" + g.name + "\" appears twice");
      }
      if (min_given && !c->continuous) {
        return validation_error(path +
                                ".MinInstanceCount: is only supported with "
                                "NodeProvisioningMode Continuous");
      }
      const InstanceGroup* existing = c->find_group(g.name);
      if (existing && existing->status == GroupStatus::kDeleting) {
        return Status(ErrorCode::kConflict, path + ": group \"" + g.name + "\" is being deleted");
      }
      if (existing) {
        if (existing->spec.instance_type != g.instance_type) {
          return validation_error(path +
                                  ".InstanceType: cannot change the instance type of "
                                  "existing group \"" +
                                  g.name + "\" (" + existing->spec.instance_type +
                                  "); add a new group instead");
        }
        if (existing->spec.node_type != g.node_type) {
          return validation_error(path +
                                  ".SlurmConfig.NodeType: cannot change the node type of "
                                  "existing group \"" +
                                  g.name + "\"");
        }
        if (!min_given) g.min = std::min(existing->spec.min, g.target);
      } else if (!min_given && c->continuous &&
                 (g.node_type == NodeType::kController || g.node_type == NodeType::kLogin)) {
        g.min = std::min<int64_t>(1, g.target);
      }
      std::erase_if(resulting, [&](const GroupSpec& s) { return s.name == g.name; });
      resulting.push_back(g);
      req.groups.push_back(std::move(g));
    }
  }
  for (size_t i = 0; i < req.groups_to_delete.size(); ++i) {
    const std::string& del = req.groups_to_delete[i];
    const InstanceGroup* g = c->find_group(del);
    if (!g) {
      return validation_error(path_index("InstanceGroupsToDelete", i) + ": no group named \"" +
                              del + "\" in cluster " + name);
    }
    if (names.count(del)) {
      return validation_error(path_index("InstanceGroupsToDelete", i) + ": \"" + del +
                              "\" is also listed in InstanceGroups");
    }
    if (c->orchestrator == Orchestrator::kSlurm && g->spec.node_type == NodeType::kController) {
      return validation_error(path_index("InstanceGroupsToDelete", i) +
                              ": the Controller group of a Slurm cluster cannot be deleted");
    }
    std::erase_if(resulting, [&](const GroupSpec& s) { return s.name == del; });
  }
  if (!groups && req.groups_to_delete.empty() && !req.node_recovery) {
    return validation_error(
        "InstanceGroups: nothing to update (give InstanceGroups, "
        "InstanceGroupsToDelete or NodeRecovery)");
  }
  GF_RETURN_IF_ERROR(check_orchestrator_rules(resulting, c->orchestrator, c->continuous));
  (void)r.optional_string("ClientToken");  // the idempotency token, read by the API layer
  r.check_unknown(fields, req.warnings);
  if (!r.ok()) return r.status();
  return req;
}

Result<std::vector<NodesToAdd>> parse_batch_add(const Json& body) {
  ObjectReader r(body, "");
  const Json* list = r.required_value("NodesToAdd");
  if (r.ok() && !list->is_array()) r.fail("NodesToAdd", "expected array");
  if (!r.ok()) return r.status();
  if (list->empty() || list->size() > 5) {
    return validation_error(
        fmt::format("NodesToAdd: expected 1 to 5 entries, got {}", list->size()));
  }
  std::vector<NodesToAdd> out;
  int64_t total = 0;
  for (size_t i = 0; i < list->size(); ++i) {
    ObjectReader e((*list)[i], path_index("NodesToAdd", i));
    NodesToAdd a;
    a.group = e.required_string("InstanceGroupName");
    a.increment = e.required_int("IncrementTargetCountBy");
    if (e.ok() && (a.increment < 1 || a.increment > 50)) {
      e.fail("IncrementTargetCountBy",
             fmt::format("must be between 1 and 50, got {}", a.increment));
    }
    if (!e.ok()) return e.status();
    total += a.increment;
    out.push_back(a);
  }
  if (total > 50) {
    return validation_error(
        fmt::format("NodesToAdd: at most 50 nodes per request in total, got {}", total));
  }
  return out;
}

Result<std::vector<std::string>> parse_batch_delete(const Json& body) {
  ObjectReader r(body, "");
  auto ids = r.optional_string_list("NodeIds");
  if (r.ok() && (!ids || ids->empty())) r.fail("NodeIds", "is required (1 to 99 instance ids)");
  if (r.ok() && ids->size() > 99)
    r.fail("NodeIds", fmt::format("at most 99 per request, got {}", ids->size()));
  if (!r.ok()) return r.status();
  return *ids;
}

namespace {

constexpr int64_t kMaxWaitIntervalSeconds = 3600;  // HyperPod's bound
constexpr size_t kMaxImageIdBytes = 256;

Status read_deployment_config(ObjectReader& r, SoftwareUpdateRequest& req,
                              std::vector<std::string>& ignored) {
  const Json* dc = r.optional_object("DeploymentConfig");
  if (!dc) return r.status();
  ObjectReader d(*dc, r.field_path("DeploymentConfig"));
  if (const Json* policy = d.optional_object("RollingUpdatePolicy")) {
    ObjectReader p(*policy, d.field_path("RollingUpdatePolicy"));
    if (const Json* size = p.optional_object("MaximumBatchSize")) {
      ObjectReader b(*size, p.field_path("MaximumBatchSize"));
      req.batch_type = b.required_string("Type");
      req.batch_value = b.required_int("Value");
      if (b.ok() && req.batch_type != "INSTANCE_COUNT" && req.batch_type != "CAPACITY_PERCENTAGE")
        b.fail("Type", "expected INSTANCE_COUNT or CAPACITY_PERCENTAGE, got \"" +
                           printable(req.batch_type, 40) + "\"");
      const int64_t max = req.batch_type == "CAPACITY_PERCENTAGE" ? 100 : 10000;
      if (b.ok() && (req.batch_value < 1 || req.batch_value > max))
        b.fail("Value", fmt::format("must be between 1 and {}, got {}", max, req.batch_value));
      b.check_unknown(FieldValidation::kStrict, ignored);
      GF_RETURN_IF_ERROR(b.status());
    }
    p.check_unknown(FieldValidation::kStrict, ignored);
    GF_RETURN_IF_ERROR(p.status());
  }
  if (auto wait = d.optional_int("WaitIntervalInSeconds")) {
    if (*wait < 0 || *wait > kMaxWaitIntervalSeconds) {
      d.fail("WaitIntervalInSeconds",
             fmt::format("must be between 0 and {}, got {}", kMaxWaitIntervalSeconds, *wait));
    }
    req.wait_interval = seconds(*wait);
  }
  d.check_unknown(FieldValidation::kStrict, ignored);
  return d.status();
}

}  // namespace

Result<SoftwareUpdateRequest> parse_software_update(const Json& body, const Cluster& c) {
  ObjectReader r(body, "");
  SoftwareUpdateRequest req;
  std::vector<std::string> ignored;
  r.optional_string("ClusterName");  // HyperPod's body names the cluster; the path does here
  if (const Json* groups = r.optional_array("InstanceGroups")) {
    for (size_t i = 0; i < groups->size(); ++i) {
      ObjectReader g((*groups)[i], path_index(r.field_path("InstanceGroups"), i));
      std::string name = g.required_string("InstanceGroupName");
      g.check_unknown(FieldValidation::kStrict, ignored);
      GF_RETURN_IF_ERROR(g.status());
      const InstanceGroup* group = c.find_group(name);
      if (!group || group->status == GroupStatus::kDeleting) {
        return validation_error(
            fmt::format("{}.InstanceGroupName: no instance group \"{}\" in "
                        "cluster {}",
                        g.path(), printable(name, 80), c.name));
      }
      if (std::find(req.groups.begin(), req.groups.end(), name) == req.groups.end())
        req.groups.push_back(std::move(name));
    }
    if (groups->empty()) r.fail("InstanceGroups", "names no group (leave it out for every group)");
  }
  GF_RETURN_IF_ERROR(read_deployment_config(r, req, ignored));
  if (auto image = r.optional_string("ImageId")) {
    if (image->empty() || image->size() > kMaxImageIdBytes)
      r.fail("ImageId", fmt::format("must be 1 to {} bytes", kMaxImageIdBytes));
    req.image = *image;
  }
  r.check_unknown(FieldValidation::kStrict, ignored);
  GF_RETURN_IF_ERROR(r.status());
  if (req.groups.empty()) {
    for (const InstanceGroup& g : c.groups) {
      if (g.status != GroupStatus::kDeleting) req.groups.push_back(g.spec.name);
    }
  }
  if (c.status != ClusterStatus::kInService) {
    return Status(
        ErrorCode::kConflict,
        fmt::format("cluster {} is {}; a software update starts only on an InService "
                    "cluster{}",
                    c.name, to_string(c.status),
                    c.status == ClusterStatus::kSystemUpdating
                        ? " (one is in progress: gpufleet cluster describe " + c.name + ")"
                        : ""));
  }
  for (const std::string& name : req.groups) {
    if (auto busy = group_busy(c, *c.find_group(name), "UpdateClusterSoftware")) return *busy;
  }
  return req;
}

std::optional<Status> group_busy(const Cluster& c, const InstanceGroup& g,
                                 std::string_view operation) {
  if (g.status != GroupStatus::kCreating && g.status != GroupStatus::kUpdating) return std::nullopt;
  return Status(
      ErrorCode::kConflict,
      fmt::format("{} is refused while InstanceGroup {} of cluster {} is {} "
                  "(CurrentCount {} < MinCount {}); change its "
                  "InstanceCount/MinInstanceCount with UpdateCluster, or delete the group",
                  operation, g.spec.name, c.name, to_string(g.status), c.current_count(g.spec.name),
                  g.spec.min));
}

}  // namespace gf
