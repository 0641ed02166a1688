// The local cloud (docs/local-cloud.md): every instance is a `gpufleet agent` process on this
// machine with its own directory, that runs its lifecycle script and its pods for real. The
// driver starts and stops agents for the intents controllers decide (launch, terminate,
// remediate, burn-in); the agents report for themselves through the API (started, lifecycle
// script done), so a launch is over only when its agent says so. Capacity per instance type is
// enforced; the limits can be raised while it runs (<root>/capacity.json).
//
// Agents outlive `serve`: a restarted server finds them by their pid files and does not launch
// them again. execute(), rebuild() and spare() run on the loop thread; a monitor thread reaps
// agents and burn-in checks, finishes stops and reports what happened; read_log() and
// set_server_url() may be called from any thread.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cloud/cloud_driver.h"
#include "core/clock.h"
#include "model/cloud_ops.h"
#include "model/topology.h"

namespace gf {

struct LocalCloudConfig {
  std::string root;                         // one directory per instance under it
  std::string agent_binary;                 // gpufleet itself ("" = /proc/self/exe)
  std::map<std::string, int64_t> capacity;  // per instance type; unlisted: unlimited
  int64_t max_instances = 64;               // in all, whatever the types (a runaway guard)
  // s3://bucket[/prefix] -> a local directory, for LifeCycleConfig.SourceS3Uri.
  std::vector<std::pair<std::string, std::string>> lifecycle_roots;
  Duration lifecycle_timeout = minutes(30);
  Duration heartbeat_interval = seconds(10);  // what the agents beat at (the server's)
  Duration poll_interval = seconds(1);        // how often agents look for their pods
  Duration stop_grace = seconds(10);          // SIGTERM to SIGKILL for an agent
  // Burn-in of a freed host: one command per check (gpu, nccl, infiniband, storage); its exit
  // code decides. A check without one passes, saying it has no script.
  std::map<std::string, std::string> burn_in_checks;
  Duration burn_in_timeout = minutes(10);
  std::string agent_token;  // the bearer token agents present (with an auth file)
  std::string ca_cert;      // the CA agents trust (https)
  // Network topology labels of accelerated instances (docs/scheduling.md "Topology").
  TopologyLayout topology;

  // "ml.p5.48xlarge=10,ml.m5.xlarge=4"; the error names the item.
  static Result<std::map<std::string, int64_t>> parse_capacity(const std::string& text);
  // "16" or "16x4": nodes per block, blocks per spine (--local-topology).
  static Result<TopologyLayout> parse_topology(const std::string& text);
  // "s3://bucket/prefix=DIR"; the error names the item.
  static Result<std::pair<std::string, std::string>> parse_lifecycle_root(const std::string& text);
};

// The script LifeCycleConfig names, as a local path: a file:// URI as it is, an s3:// URI through
// `roots` (the longest matching prefix); nullopt when there is no LifeCycleConfig; an error
// naming the URI when nothing maps it.
Result<std::optional<std::string>> resolve_lifecycle_script(
    const Json& lifecycle_config, const std::vector<std::pair<std::string, std::string>>& roots);

class LocalCloud final : public CloudDriver {
 public:
  LocalCloud(LocalCloudConfig config, const Clock& clock, ReportFn report);
  ~LocalCloud() override;  // stops the monitor; the agents go on running
  LocalCloud(const LocalCloud&) = delete;
  LocalCloud& operator=(const LocalCloud&) = delete;

  void execute(const Intent& intent) override;
  // Agents the state shows as launched are found again by their pid files; those gone stay gone
  // (their heartbeats stop; the health controller sees to them).
  void rebuild(const std::map<std::string, ClusterPtr, std::less<>>& clusters) override;
  std::optional<std::string> spare(const std::string& type) const override;
  void started(Time) override {}
  bool real_instances() const override { return true; }
  Result<LogChunk> read_log(const LogQuery& query) const override;
  std::string instance_directory(const std::string& instance_id) const override;
  std::string slurm_directory(const std::string& cluster) const override;
  std::map<std::string, std::string> instance_labels(const std::string& instance_id) const override;

  // The URL agents report to, known once the server listens; launches wait for it.
  void set_server_url(const std::string& url);

  // Instances held (starting, up or stopping), per type.
  int64_t held(const std::string& type) const;

 private:
  Json launch_document(const LaunchOp& op) const;
  enum class Action { kNone, kTerminate, kReboot, kReprovision, kMigrate };
  struct Instance {
    std::string cluster, group, id, type;
    pid_t pid = 0;
    bool child = false;  // started by this process (reaped with waitpid)
    Action action = Action::kNone;
    std::string remediation{};  // the remediation an action carries out
    Time stop_sent{};           // SIGTERM sent (an action in progress)
    bool restarting = false;    // stopped for an action; started again, awaiting its agent
    Time restarted{};
    Json launch{};  // the instance.json it was started with
  };
  // A new instance whose agent started: recorded, with its place in the topology. Locked.
  void hold(Instance inst);
  struct BurnIn {
    std::string host;
    std::vector<std::string> checks;  // left to run
    Json results = Json::array();
    pid_t pid = 0;
    std::string check, log;
    Time started{};
    bool failed = false, interrupted = false;
  };

  void launch(const LaunchOp& op);
  void terminate(const TerminateOp& op);
  void remediate(const Intent& intent);
  void burn_in(const Intent& intent);
  // Starts (or starts again) the agent of `inst` from its instance.json. Locked.
  Status start_agent(Instance& inst);
  // Rewrites the instance's instance.json when it names another server URL (a restarted serve
  // listening elsewhere); its agent reads it again when its calls fail. Locked.
  void point_at_server(Instance& inst);
  std::string dir(const std::string& id) const;
  int64_t capacity_of(const std::string& type) const;  // -1 = unlimited
  void monitor();
  void step_instances(Time now, std::vector<std::pair<Time, CloudReport>>& out);
  void step_burn_ins(Time now, std::vector<std::pair<Time, CloudReport>>& out);
  void next_check(BurnIn& b, Time now);
  void prune_terminated() const;
  std::map<std::string, Instance>::iterator finish_terminate(
      std::map<std::string, Instance>::iterator it, Time now,
      std::vector<std::pair<Time, CloudReport>>& out);
  void end_cluster(const std::string& cluster);

  LocalCloudConfig config_;
  const Clock& clock_;
  ReportFn report_;
  mutable std::mutex mu_;
  std::string server_url_;
  std::vector<LaunchOp> waiting_;              // launches before the server listens
  std::map<std::string, Instance> instances_;  // by instance id
  TopologySlots slots_{TopologyLayout{}};      // config_.topology's, filled at launch
  std::vector<BurnIn> burn_ins_;
  std::atomic<bool> stop_{false};
  std::condition_variable wake_;
  std::thread monitor_;
};

// Whether the runtime directories of real Slurm clusters (slurm_runtime_dir, under /tmp) can be
// made here: /tmp a directory this user may create entries in. The error says what to fix.
Status check_slurm_runtime_base();

// The factory the runtime takes; the driver it makes is also handed to `out` (serve tells it the
// server's URL once it listens).
CloudDriverFactory local_cloud(LocalCloudConfig config, LocalCloud** out = nullptr);

}  // namespace gf
