#include "model/cloud_ops.h"

namespace gf {

Json LaunchOp::to_json() const {
  Json j{{"Cluster", cluster},        {"Group", group},
         {"InstanceId", instance_id}, {"InstanceType", instance_type},
         {"Attempt", attempt},        {"Resume", resume_lifecycle}};
  if (!lifecycle_config.is_null()) j["LifeCycleConfig"] = lifecycle_config;
  if (!slurm_role.empty()) j["Slurm"] = Json{{"Role", slurm_role}, {"NodeName", slurm_name}};
  return j;
}

Result<LaunchOp> LaunchOp::from_json(const Json& j) {
  ObjectReader r(j, "launch");
  LaunchOp op;
  op.cluster = r.required_string("Cluster");
  op.group = r.required_string("Group");
  op.instance_id = r.required_string("InstanceId");
  op.instance_type = r.required_string("InstanceType");
  op.attempt = r.required_int("Attempt");
  op.resume_lifecycle = r.optional_bool("Resume").value_or(false);
  if (const Json* lc = r.optional_value("LifeCycleConfig")) op.lifecycle_config = *lc;
  if (const Json* sl = r.optional_object("Slurm")) {
    ObjectReader sr(*sl, "launch.Slurm");
    op.slurm_role = sr.required_string("Role");
    op.slurm_name = sr.optional_string("NodeName").value_or("");
    if (!sr.ok()) return sr.status();
  }
  if (!r.ok()) return r.status();
  return op;
}

Json TerminateOp::to_json() const {
  return Json{{"Cluster", cluster}, {"InstanceId", instance_id}, {"InstanceType", instance_type}};
}

Result<TerminateOp> TerminateOp::from_json(const Json& j) {
  ObjectReader r(j, "terminate");
  TerminateOp op;
  op.cluster = r.required_string("Cluster");
  op.instance_id = r.required_string("InstanceId");
  op.instance_type = r.required_string("InstanceType");
  if (!r.ok()) return r.status();
  return op;
}

Json UpdateSoftwareOp::to_json() const {
  return Json{{"Cluster", cluster},
              {"InstanceId", instance_id},
              {"InstanceType", instance_type},
              {"Image", image}};
}

Result<UpdateSoftwareOp> UpdateSoftwareOp::from_json(const Json& j) {
  ObjectReader r(j, "update-software");
  UpdateSoftwareOp op;
  op.cluster = r.required_string("Cluster");
  op.instance_id = r.required_string("InstanceId");
  op.instance_type = r.required_string("InstanceType");
  op.image = r.required_string("Image");
  if (!r.ok()) return r.status();
  return op;
}

std::string_view to_string(LaunchOutcome o) {
  switch (o) {
    case LaunchOutcome::kOk:
      return "Ok";
    case LaunchOutcome::kInsufficientCapacity:
      return "InsufficientCapacity";
    case LaunchOutcome::kUnhealthyInstance:
      return "UnhealthyInstance";
    case LaunchOutcome::kLifecycleScriptFailure:
      return "LifecycleScriptFailure";
  }
  return "Ok";
}

std::optional<LaunchOutcome> parse_launch_outcome(std::string_view s) {
  for (auto o : {LaunchOutcome::kOk, LaunchOutcome::kInsufficientCapacity,
                 LaunchOutcome::kUnhealthyInstance, LaunchOutcome::kLifecycleScriptFailure}) {
    if (to_string(o) == s) return o;
  }
  return std::nullopt;
}

std::string_view to_string(CloudReport::Kind k) {
  switch (k) {
    case CloudReport::Kind::kLaunched:
      return "Launched";
    case CloudReport::Kind::kRunning:
      return "Running";
    case CloudReport::Kind::kLaunchFailed:
      return "LaunchFailed";
    case CloudReport::Kind::kLifecycleFailed:
      return "LifecycleFailed";
    case CloudReport::Kind::kUnhealthy:
      return "Unhealthy";
    case CloudReport::Kind::kTerminated:
      return "Terminated";
    case CloudReport::Kind::kRemediated:
      return "Remediated";
    case CloudReport::Kind::kBurnIn:
      return "BurnIn";
    case CloudReport::Kind::kSoftwareUpdated:
      return "SoftwareUpdated";
  }
  return "Launched";
}

}  // namespace gf
