// The node half of the agent, for an instance of the local cloud (docs/local-cloud.md): it says
// the instance started, runs its lifecycle script, and runs the pods the server places on it as
// processes — restarting them by their restartPolicy and reporting what becomes of them — the way
// a kubelet does. Everything lives in the instance's directory:
//   instance.json       what the cloud launched (cluster, group, server, lifecycle script, …)
//   agent.state         when it registered, whether its lifecycle script is done (the driver reads
//   it) lifecycle.log       the script's output, one block per attempt; lifecycle.done: it
//   succeeded kern.log, proc-mounts, infiniband/   the detectors' sources (a fault is a line
//   appended here) scratch/            local scratch; pods/<pod>/: a pod's working data and
//   <container>.log
// No clock of its own: step() takes the time. The server calls go through NodeApi (tests give
// their own).
#pragma once

#include <sys/types.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "client/client.h"
#include "core/json.h"
#include "core/result.h"
#include "core/time.h"

namespace gf::agent {

class SlurmPod;

// <dir>/instance.json, as the local cloud wrote it.
struct LocalInstance {
  std::string dir;
  std::string cluster, group, instance_id, instance_type, server, token, ca_cert;
  int64_t attempt = 0;
  std::optional<std::string> lifecycle_script;  // the OnCreate script as a local path
  std::string lifecycle_error;                  // why the script could not be found
  Json lifecycle_config;                        // as the group gave it
  Json slurm;  // a Slurm cluster's node: {Role, NodeName, Dir} (docs/slurm.md); null otherwise
  Duration lifecycle_timeout = minutes(30);
  Duration heartbeat = seconds(10);
  Duration poll = seconds(1);
  static Result<LocalInstance> load(const std::string& dir);
};

// What the node asks of the server.
class NodeApi {
 public:
  virtual ~NodeApi() = default;
  // POST …/agent/status {Phase, AtUs, Message, Address}.
  virtual Status status(const std::string& phase, Time at, const std::string& message) = 0;
  // GET …/pods: {"Pods": [...]}.
  virtual Result<Json> pods() = 0;
  // POST …/pods/{pod}/status; the answer's "Stale" says the pod is no longer the job's.
  virtual Result<Json> pod_status(const std::string& pod, const Json& body) = 0;
  // GET /v1/clusters/{cluster} and …/nodes (for the lifecycle script's resource_config.json).
  virtual Result<Json> cluster() = 0;
  virtual Result<Json> nodes() = 0;
  // A Slurm cluster's nodes (docs/slurm.md): GET /v1/clusters/{cluster}/slurm/layout, and POST
  // …/slurm with what slurmctld says of this node.
  virtual Result<Json> slurm_layout() { return not_found_error("no Slurm layout here"); }
  virtual Status slurm_report(const Json&) { return not_found_error("no Slurm here"); }
};

// NodeApi over the API's HTTP client.
class HttpNodeApi final : public NodeApi {
 public:
  explicit HttpNodeApi(const LocalInstance& inst);
  Status status(const std::string& phase, Time at, const std::string& message) override;
  Result<Json> pods() override;
  Result<Json> pod_status(const std::string& pod, const Json& body) override;
  Result<Json> cluster() override;
  Result<Json> nodes() override;
  Result<Json> slurm_layout() override;
  Status slurm_report(const Json& body) override;
  void set_server(std::string server) { client_.set_server(std::move(server)); }

 private:
  std::string node_path() const;
  std::string cluster_, node_;
  Client client_;
};

class LocalNode {
 public:
  LocalNode(LocalInstance instance, NodeApi& api);
  ~LocalNode();  // kills what still runs (out of line: SlurmPod is complete there)
  LocalNode(const LocalNode&) = delete;
  LocalNode& operator=(const LocalNode&) = delete;

  // One step at `now`: register, start or await the lifecycle script, then (once it succeeded)
  // reconcile the pods with what the server places here and report what changed. Never blocks
  // on a process.
  void step(Time now);
  // Shutdown (SIGTERM to the agent): every pod gets SIGTERM, SIGKILL after its grace period.
  // Returns true once nothing runs.
  bool stop(Time now);

  // kGone: the server does not know the instance (terminated while the agent was away).
  enum class Phase { kRegistering, kLifecycle, kLifecycleFailed, kReady, kGone };
  Phase phase() const { return phase_; }
  // The reason the server wants this node drained with in Slurm, from its last pods answer (an
  // empty optional: no drain); nullopt before the first answer.
  const std::optional<std::optional<std::string>>& slurm_drain() const { return slurm_drain_; }
  // The pods this node runs now, by name (tests).
  std::vector<std::string> running_pods() const;

 private:
  struct Container {
    Json spec;
    pid_t pid = 0;
    int restarts = 0;
    std::optional<int> exit_code{};  // of its last run
    bool done = false;               // will not run again
    std::optional<Time> restart_at{};
  };
  struct Pod {
    Json spec;
    std::string name, job_id;
    int64_t placement = 0;
    std::vector<Container> containers;
    std::optional<Time> stopping_since;  // SIGTERM sent
    Json reported;                       // the last status the server took
    // On a Slurm cluster the pod is part of a Slurm allocation: it runs there, not as a process
    // of this agent (slurm_pod.h).
    std::unique_ptr<SlurmPod> slurm{};
  };

  void register_instance(Time now);
  void lifecycle(Time now);
  void start_lifecycle(Time now);
  void write_resource_config();
  void finish_lifecycle(Time now, bool ok, const std::string& message);
  void write_state();
  void reconcile(Time now);
  void start_pod(const Json& spec, Time now);
  void start_container(Pod& pod, Container& c, Time now);
  // A container's command ended (or could not start: 127); its pod's restartPolicy decides.
  void container_ended(Pod& pod, Container& c, int exit_code, Time now);
  void supervise(Pod& pod, Time now);
  void report(Pod& pod, Time now);
  Json pod_status(const Pod& pod) const;
  void stop_pod(Pod& pod, Time now);
  std::string pod_dir(const std::string& pod) const;

  LocalInstance inst_;
  NodeApi& api_;
  Phase phase_ = Phase::kRegistering;
  std::optional<Time> registered_;
  pid_t lifecycle_pid_ = 0;
  bool isolate_pods_ = false;  // pods in their own namespaces (os::namespaces_allowed)
  Time lifecycle_started_{};
  std::optional<std::pair<bool, std::string>> lifecycle_result_;  // not yet delivered
  Time lifecycle_ended_{};
  std::optional<Time> next_pods_poll_;
  std::map<std::string, Pod> pods_;  // by pod name
  std::optional<std::optional<std::string>> slurm_drain_;
  // The server did not answer: its next call waits (200 ms doubling to 5 s); pods go on.
  void server_failed(const Status& st, Time now);
  void server_answered() { backoff_ = Duration::zero(); }
  Duration backoff_ = Duration::zero();
  std::optional<Time> retry_at_;
};

// `gpufleet agent --local-instance DIR`: the detectors on the instance's own sources, heartbeats
// and the LocalNode, until SIGTERM. Returns the exit code.
int run_local_instance(const std::string& dir);

}  // namespace gf::agent
