// The REST API: one Router holding every resource family's routes. Reads serve the loop's
// published view; writes go through the loop as Requests and answer after the journal commit.
#pragma once

#include <atomic>
#include <functional>

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "api/auth.h"
#include "api/http.h"
#include "api/refusal_audit.h"
#include "api/router.h"
#include "core/ids.h"
#include "core/metrics.h"
#include "loop/control_loop.h"
#include "model/catalog.h"
#include "model/cloud_ops.h"
#include "model/node_logs.h"
#include "remediate/engine.h"

namespace gf {

// What cluster requests need to know about provisioning: the instance catalog, how cluster ids
// and ARNs are made, and the MinCount timeout stamped on a new cluster (the provisioner's).
struct ClusterSettings {
  const Catalog* catalog = &Catalog::builtin();
  ArnConfig arn;
  uint64_t id_seed = 0;
  Duration min_count_timeout = hours(3);
};

struct ApiOptions {
  size_t max_body_bytes = 4 << 20;
  std::chrono::milliseconds write_timeout{30000};
  // Requests per second per identity (token bucket; 0 = no limit) and the burst it allows.
  // /healthz and /metrics are exempt.
  double rate_limit_per_second = 0;
  double rate_limit_burst = 0;
  // With a rate limit, callers without a valid token are limited per client address to this
  // (burst twice as much): they cannot do anything but be refused.
  double unauthenticated_rate_per_second = 10;
  // Manual mode (simulate, scenario tests): the caller's thread drives the loop, so a write
  // drains it right after submitting instead of waiting for a loop thread.
  bool drive_loop_inline = false;
};

// Where this server stands among the replicas of its journal (docs/replication.md). A server on
// SQLite is always its only replica, the leader.
struct ReplicaState {
  std::string role = "leader";  // "leader" | "follower"
  std::string store = "sqlite";
  std::string id{};
  int64_t epoch = 0;         // the lease epoch this replica leads at, or last saw
  std::string leader_url{};  // where writes go ("" while no leader is known)
  Seq known_seq = 0;         // the highest seq this replica knows is journaled
  double lag_seconds = 0;    // how long it has been behind (0 when caught up)
  // Why this replica cannot reach the journal's database now ("" when it can): writes are paused
  // and /healthz says so (docs/operations.md "An unreachable database").
  std::string store_error{};
};

class Api {
 public:
  // Without `clusters` only the system and event routes exist; `clock` answers "now" for reads
  // such as billing of instances still running.
  Api(ApiOptions options, ControlLoop& loop, Metrics& metrics, const Clock& clock,
      std::optional<ClusterSettings> clusters = std::nullopt);

  // Validates (size, UTF-8), authenticates, rate-limits, routes and audits one request; counts
  // gpufleet_http_requests_total{route,code}. Never throws: anything unexpected is a 500
  // InternalFailure naming the request id, and the server keeps serving.
  HttpResponse handle(HttpRequest request);

  // With tokens, every request must carry one of them (X-Gpufleet-User is then ignored).
  void set_tokens(std::shared_ptr<const TokenStore> tokens) { tokens_ = std::move(tokens); }
  bool authenticating() const { return tokens_ != nullptr; }

  Router& router() { return router_; }
  // Runs `inner`, the REST request an AWS call became (src/api/aws/), through the router as if it
  // had come itself: its route is authorized, and its write idempotent and audited, as its own.
  // Only from a handler that Api::handle runs.
  // Each write it runs is audited as its own call (a refused one as refused).
  HttpResponse dispatch_inner(HttpRequest inner);
  // An AWS door names the operation it serves and whether it writes, before it dispatches: a
  // write it refuses before it made any REST call is still audited, as the operation.
  void door_call(const std::string& operation, bool writes);
  // A door whose protocol answers errors its own way (the Kubernetes door's Status objects)
  // reshapes every answer, however early it failed (401, 413, 429): called last, on each answer.
  using ResponseShaper = std::function<void(const HttpRequest&, HttpResponse&)>;
  void add_response_shaper(ResponseShaper s) { shapers_.push_back(std::move(s)); }
  ControlLoop& loop() { return loop_; }
  const Clock& clock() const { return clock_; }
  const ClusterSettings& clusters() const { return *clusters_; }
  Metrics& metrics() { return metrics_; }
  const ApiOptions& options() const { return options_; }
  // The cloud driver's spare-capacity check for remediation requests (runs on the loop thread).
  void set_capacity_check(remediate::CapacityCheck check) { capacity_check_ = std::move(check); }
  const remediate::CapacityCheck& capacity_check() const { return capacity_check_; }
  // Where node agents' heartbeats go (the health controller; runs on the loop thread).
  using HeartbeatHandler = std::function<Result<Decision>(
      const FleetState&, Time, const std::string& cluster, const std::string& node)>;
  void set_heartbeat_handler(HeartbeatHandler h) { heartbeat_ = std::move(h); }
  const HeartbeatHandler& heartbeat_handler() const { return heartbeat_; }
  // Where a real instance's own reports go (its agent says it started, or how its lifecycle
  // script ended; docs/local-cloud.md): the provisioner, on the loop thread. Unset: this server's
  // cloud has no agents of its own, and the routes answer 404.
  using CloudReportHandler =
      std::function<Result<Decision>(const FleetState&, Time, const CloudReport&)>;
  void set_cloud_report_handler(CloudReportHandler h) { cloud_report_ = std::move(h); }
  const CloudReportHandler& cloud_report_handler() const { return cloud_report_; }
  // The logs of real instances (lifecycle script, agent, pods), read where the cloud keeps them.
  // Unset: the cloud runs no processes, and log routes say so (404).
  using LogQuery = gf::LogQuery;
  using LogChunk = gf::LogChunk;
  using LogSource = std::function<Result<LogChunk>(const LogQuery&)>;
  void set_log_source(LogSource s) { log_source_ = std::move(s); }
  const LogSource& log_source() const { return log_source_; }
  // Where a real instance lives on this machine (its directory; "" when unknown), shown by
  // DescribeClusterNode as LocalDirectory.
  using InstanceDirectory = std::function<std::string(const std::string& instance_id)>;
  void set_instance_directory(InstanceDirectory d) { instance_directory_ = std::move(d); }
  const InstanceDirectory& instance_directory() const { return instance_directory_; }
  // A real Slurm cluster's Slurm directory (DescribeCluster shows its SlurmConfPath).
  using SlurmDirectory = std::function<std::string(const std::string& cluster)>;
  void set_slurm_directory(SlurmDirectory d) { slurm_directory_ = std::move(d); }
  // Replication (docs/replication.md): the replica's state, asked per request (writes on a
  // follower are redirected to the leader), and the list of replicas for GET /v1/replicas.
  using ReplicaStateFn = std::function<ReplicaState()>;
  using ReplicaListFn = std::function<Result<Json>()>;
  void set_replica(ReplicaStateFn state, ReplicaListFn list) {
    replica_state_ = std::move(state);
    replica_list_ = std::move(list);
  }
  ReplicaState replica_state() const;
  const ReplicaListFn& replica_list() const { return replica_list_; }
  const SlurmDirectory& slurm_directory() const { return slurm_directory_; }
  // The journal's history table (what left the hot state: docs/operations.md "What is kept
  // where"); null on a control plane that keeps none (a simulation without a journal).
  void set_history(std::shared_ptr<HistoryReader> h) { history_ = std::move(h); }
  HistoryReader* history() const { return history_.get(); }

  // Runs a write through the loop and waits for the commit (or the timeout). Called from a
  // handler that Api::handle runs, it carries that call's audit record and fingerprints its
  // idempotency key. A write still queued at the timeout is abandoned: its 503 means "not
  // applied, safe to retry".
  Outcome write(Request request, int success_code = 200);
  // Outcome → HTTP answer: errors in docs/api.md shape, success as `status` with the response body.
  static HttpResponse respond(const Outcome& outcome, int success_status = 200);

 private:
  ApiOptions options_;
  ControlLoop& loop_;
  Metrics& metrics_;
  const Clock& clock_;
  std::optional<ClusterSettings> clusters_;
  Router router_;
  remediate::CapacityCheck capacity_check_;
  HeartbeatHandler heartbeat_;
  CloudReportHandler cloud_report_;
  LogSource log_source_;
  InstanceDirectory instance_directory_;
  SlurmDirectory slurm_directory_;
  std::shared_ptr<HistoryReader> history_;
  std::shared_ptr<const TokenStore> tokens_;
  std::vector<ResponseShaper> shapers_;
  ReplicaStateFn replica_state_;
  ReplicaListFn replica_list_;
  struct Limiter;
  std::unique_ptr<Limiter> limiter_;
  std::string boot_nonce_;
  std::shared_ptr<RefusalAudit> refusals_ = std::make_shared<RefusalAudit>();
  std::atomic<uint64_t> request_counter_{0};

  HttpResponse handle_checked(HttpRequest& request);
  // A follower's answer to a write (a redirect to the leader), or to a read whose minSeq it has
  // not reached in time; nullopt when the request goes on to its route (replica_api.cpp).
  std::optional<HttpResponse> replica_gate(HttpRequest& request, bool mutating);
  // A read's ?minSeq= (removed from the query): an error, or a follower's wait for it.
  std::optional<HttpResponse> min_seq_gate(HttpRequest& request, bool mutating);
  // 429 when the caller (its identity if `vouched`, else its address) is over its rate.
  std::optional<HttpResponse> rate_limited(const HttpRequest& request, bool vouched);
  // A follower holding a ?minSeq= read until it applied `wanted` (bounded): true once it has.
  bool wait_for_min_seq(Seq wanted) const;
  // True on the leader and on a server without replicas: it has published every committed event.
  bool leads() const;
  // 401 when tokens are configured and the request carries none of them; fills caller and roles.
  Status authenticate(HttpRequest& request) const;
  Status authenticate_sigv4(HttpRequest& request, const std::string& header) const;
  // Journals the audit record of a call that never reached the loop (refused before), or counts
  // it into its source's and reason's record of the minute (refusal_audit.h).
  void audit_refused(const HttpRequest& request, int code, const std::string& error);
  // At `at`, journals the count records of the minutes that ended.
  void record_refusal_counts(Time at);

 public:
  ~Api();
};

// Route registration, one function per resource family (api/<family>_api.cpp).
void register_system_routes(Api& api);
void register_event_routes(Api& api);
// GET /v1/watch: user events as server-sent events (watch_api.cpp).
void register_watch_routes(Api& api);
void register_cluster_routes(Api& api);
// sinfo and squeue of a Slurm cluster (slurm_views_api.cpp).
void register_slurm_view_routes(Api& api);
// What real instances' agents call, and the logs they keep (node_agent_api.cpp,
// docs/local-cloud.md).
void register_node_agent_routes(Api& api);
void register_slurm_agent_routes(Api& api);
void register_billing_routes(Api& api);
void register_quota_routes(Api& api);
// GET /v1/quota-tree (quota_tree_api.cpp).
void register_quota_tree_routes(Api& api);
void register_job_routes(Api& api);
void register_health_routes(Api& api);
void register_audit_routes(Api& api);
void register_history_routes(Api& api);
// GET /v1/replicas (replica_api.cpp).
void register_replica_routes(Api& api);
// GET / and GET /console/{file}: the web console, public (console_api.cpp, docs/console.md).
void register_console_routes(Api& api);
// The AWS SDKs' doors (src/api/aws/, docs/aws-compatibility.md): SageMaker's awsJson1_1 at
// `POST /` and AWS Batch's REST-JSON at `POST /v1/<operation>`, onto the routes above.
void register_aws_routes(Api& api);
// The Kubernetes door (src/api/k8s/, docs/kubernetes.md): /version, /api, /apis and /openapi for
// kubectl and the Kubernetes clients, onto the routes above.
void register_k8s_routes(Api& api);
bool is_console_path(std::string_view path);

// Every read answers from the view the loop published after its last batch, on the caller's
// thread: it never queues on the writer (docs/api.md "Reads"). `fn`'s error is the 4xx answer.
HttpResponse read_view(Api& api, const std::function<Result<Json>(const FleetView&)>& fn);

// Every billing record: the retired clusters', the closed ones, and one still open per launched
// instance not yet shutting down (billing_api.cpp).
std::vector<BillingRecord> billing_records(const FleetView& v);

// The fleet as Prometheus gauges, computed from the view at scrape time (fleet_metrics.cpp):
// instances by cluster, group and status; alerts by state and severity; remediations by status;
// jobs admitted and pending per queue; cost so far and burn rate per cluster.
std::string render_fleet_metrics(const FleetView& v, Time now);

// The idempotency key of a write: the Idempotency-Key header, else the body's ClientToken.
std::string idempotency_key(const HttpRequest& request, const Json* body);

}  // namespace gf
