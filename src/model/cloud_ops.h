// The contract between the provisioning controller and cloud drivers: what an intent asks
// (launch/terminate) and what a driver reports back. Plain data, so neither side includes the
// other (docs/architecture.md: controllers never include a driver).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/json.h"
#include "core/time.h"

namespace gf {

inline constexpr char kCloudDriver[] = "cloud";
inline constexpr char kLaunchIntent[] = "launch";
inline constexpr char kTerminateIntent[] = "terminate";
inline constexpr char kUpdateSoftwareIntent[] = "update-software";

struct LaunchOp {
  std::string cluster;
  std::string group;
  std::string instance_id;
  std::string instance_type;
  int64_t attempt = 0;            // the group's launch attempt number (1-based)
  bool resume_lifecycle = false;  // already launched before a restart: only finish the lifecycle
  Json lifecycle_config;  // the group's LifeCycleConfig (null when none): real clouds run it
  // A node of a Slurm cluster: its role ("Controller", "Login", "Compute"; "" for the native
  // orchestrator) and its Slurm node name (docs/slurm.md). Real clouds start its daemons.
  std::string slurm_role{};
  std::string slurm_name{};
  Json to_json() const;
  static Result<LaunchOp> from_json(const Json& j);
};

struct TerminateOp {
  std::string cluster;
  std::string instance_id;
  std::string instance_type;
  Json to_json() const;
  static Result<TerminateOp> from_json(const Json& j);
};

// Bring a running instance's software to `image` (UpdateClusterSoftware; the node is
// SystemUpdating meanwhile). A repeat for the same instance is the same operation.
struct UpdateSoftwareOp {
  std::string cluster;
  std::string instance_id;
  std::string instance_type;
  std::string image;
  Json to_json() const;
  static Result<UpdateSoftwareOp> from_json(const Json& j);
};

enum class LaunchOutcome {
  kOk,
  kInsufficientCapacity,
  kUnhealthyInstance,
  kLifecycleScriptFailure
};
std::string_view to_string(LaunchOutcome o);
std::optional<LaunchOutcome> parse_launch_outcome(std::string_view s);

struct CloudReport {
  enum class Kind {
    kLaunched,
    kRunning,
    kLaunchFailed,
    kLifecycleFailed,
    kUnhealthy,
    kTerminated,
    kRemediated,      // a reboot/reprovision/migrate/delete finished (detail: RemediationId, Ok,
                      // NewHost?)
    kBurnIn,          // a freed host's burn-in finished (detail: HostId, Outcome, Checks)
    kSoftwareUpdated  // an update-software finished (message: the image)
  };
  Kind kind = Kind::kLaunched;
  std::string cluster;
  std::string instance_id;
  LaunchOutcome reason = LaunchOutcome::kOk;
  std::string message;
  Json detail = Json::object();
  // A real instance's own account (docs/local-cloud.md): when it happened by the node's clock,
  // and the address it is reached at. Absent for simulated reports, which arrive at their time.
  std::optional<Time> at{};
  std::string address{};
};
std::string_view to_string(CloudReport::Kind k);

}  // namespace gf
