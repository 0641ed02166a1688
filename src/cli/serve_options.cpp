#include "cli/serve_options.h"

namespace gf {

namespace {

// The flags of where serve listens and keeps its journal.
void add_server_options(CLI::App* cmd, ServeArgs& args) {
  cmd->add_option("--data-dir", args.data_dir, "where the embedded journal lives")
      ->capture_default_str();
  cmd->add_option("--listen", args.listen, "HOST:PORT to listen on (port 0 = any free port)")
      ->capture_default_str();
  cmd->add_option("--store", args.store,
                  "state store: sqlite (embedded, in --data-dir) or postgres://user@host:port/db "
                  "(several replicas share it; docs/replication.md)")
      ->capture_default_str();
  cmd->add_option("--lease", args.lease,
                  "postgres store: the leader's lease; a follower takes over this long after the "
                  "leader stops renewing")
      ->capture_default_str();
  cmd->add_option("--replica-id", args.replica_id,
                  "postgres store: this replica's name (default HOST:PORT of --listen)");
  cmd->add_option("--advertise-url", args.advertise_url,
                  "postgres store: the URL followers send writers to when this replica leads "
                  "(default from --listen)");
  cmd->add_option("--snapshot-every", args.snapshot_every, "journal events between snapshots")
      ->capture_default_str();
  cmd->add_option("--job-retention", args.job_retention,
                  "how long a finished job stays in memory before it moves to history "
                  "(docs/operations.md)")
      ->capture_default_str();
  cmd->add_option("--event-retention", args.event_retention,
                  "how long user events stay in memory (GET /v1/events, watches)")
      ->capture_default_str();
  cmd->add_option("--journal-retention", args.journal_retention,
                  "how long events stay in the live journal after a snapshot holds them (at "
                  "least 24h; \"never\" keeps every event)")
      ->capture_default_str();
  cmd->add_option("--audit-retention", args.audit_retention,
                  "how long audit records stay in the live journal")
      ->capture_default_str();
  cmd->add_option("--journal-archive", args.journal_archive,
                  "sqlite store: write the events compaction removes to compressed segments in "
                  "this directory (read with gpufleet journal export)");
  cmd->add_option("--max-body-bytes", args.max_body_bytes, "largest request body accepted")
      ->capture_default_str();
  cmd->add_option("--seed", args.seed, "seed for ids and retry jitter (default: random)");
}

// The flags of the simulated cloud, provisioning, scheduling, alert webhooks and ARNs.
void add_runtime_options(CLI::App* cmd, ServeArgs& args) {
  cmd->add_option("--sim-speed", args.sim_speed,
                  "run the clock N times faster than real time (demos of the simulated cloud)")
      ->capture_default_str();
  cmd->add_option("--sim-cloud", args.cloud_file,
                  "simulated cloud settings (a scenario's cloud: block, YAML or JSON)");
  cmd->add_option("--min-count-timeout", args.min_count_timeout,
                  "how long a group may stay below MinCount before it rolls back")
      ->capture_default_str();
  cmd->add_option("--retry-base", args.retry_base, "first delay after a failed launch round")
      ->capture_default_str();
  cmd->add_option("--retry-max", args.retry_max, "cap of the launch retry backoff")
      ->capture_default_str();
  cmd->add_option("--min-run-time", args.min_run_time,
                  "how long a job runs before it may be preempted to reclaim borrowed quota")
      ->capture_default_str();
  cmd->add_option("--requeue-base", args.requeue_base, "first requeue backoff of a preempted job")
      ->capture_default_str();
  cmd->add_option("--requeue-max", args.requeue_max, "cap of the requeue backoff")
      ->capture_default_str();
  cmd->add_option("--reservation", args.reservation,
                  "reserve real per-node capacity before dispatching a gang (false: estimate a "
                  "cluster's room "
                  "by summing its free resources, as a fleet without resource reservation does)")
      ->capture_default_str();
  cmd->add_option("--backfill", args.backfill,
                  "a gang that cannot start reserves the nodes that free soonest, and smaller "
                  "jobs use them only if they end before it starts (docs/scheduling.md)")
      ->capture_default_str();
  cmd->add_option("--webhook", args.webhook,
                  "URL that receives every alert (firing and resolved) unchanged, as JSON; retried "
                  "with backoff");
  cmd->add_option("--support-webhook", args.support_webhook,
                  "URL that receives alerts with no remediation mapped (support)");
  cmd->add_option("--heartbeat-interval", args.heartbeat_interval,
                  "how often node agents beat; three missed beats raise host-reachability")
      ->capture_default_str();
  cmd->add_option("--rejoin-check", args.rejoin_check,
                  "how long a remediated node must stay free of firing alerts before it is "
                  "uncordoned")
      ->capture_default_str();
  cmd->add_option("--region", args.region, "region part of ARNs")->capture_default_str();
  cmd->add_option("--account", args.account, "account part of ARNs")->capture_default_str();
}

// The flags of the local cloud (docs/local-cloud.md).
void add_local_cloud_options(CLI::App* cmd, ServeArgs& args) {
  cmd->add_option("--cloud", args.cloud,
                  "sim: the simulated cloud; local: every instance is a gpufleet agent process on "
                  "this machine that runs its lifecycle script and pods for real")
      ->capture_default_str();
  cmd->add_option("--local-root", args.local_root,
                  "local cloud: the instances' directories (default <data-dir>/local)");
  cmd->add_option("--local-capacity", args.local_capacity,
                  "local cloud: instances per type, e.g. ml.p5.48xlarge=10,ml.m5.xlarge=4 "
                  "(unlisted: unlimited); raise it while serving in <local-root>/capacity.json");
  cmd->add_option("--local-topology", args.local_topology,
                  "local cloud: label accelerated instances with EC2's network topology, "
                  "NODES_PER_BLOCK[xBLOCKS_PER_SPINE] such as 16x4 (docs/scheduling.md)");
  cmd->add_option("--local-max-instances", args.local_max_instances,
                  "local cloud: instances at most, whatever the types")
      ->capture_default_str();
  cmd->add_option("--lifecycle-root", args.lifecycle_roots,
                  "local cloud: s3://bucket[/prefix]=DIR maps LifeCycleConfig.SourceS3Uri to a "
                  "local directory (repeatable; file:// URIs need none)");
  cmd->add_option("--lifecycle-timeout", args.lifecycle_timeout,
                  "local cloud: a lifecycle script running longer fails")
      ->capture_default_str();
  cmd->add_option("--burn-in-check", args.burn_in_checks,
                  "local cloud: CHECK=COMMAND for burn-in of a freed host (gpu, nccl, infiniband, "
                  "storage; repeatable); its exit code decides");
}

// The flags of authentication, TLS and the HTTP server's limits.
void add_http_options(CLI::App* cmd, ServeArgs& args) {
  cmd->add_option("--auth-file", args.auth_file,
                  "YAML file of tokens (SHA-256 hashes, subjects, roles) and AWS access keys; "
                  "requests then need Authorization: Bearer <token> (see gpufleet token create) "
                  "or a Signature V4 under a listed key (docs/security.md)");
  cmd->add_flag("--insecure", args.insecure, "allow a non-loopback --listen without --auth-file");
  cmd->add_option("--tls-cert", args.tls_cert,
                  "PEM certificate chain: serve HTTPS (with --tls-key)");
  cmd->add_option("--tls-key", args.tls_key, "PEM private key for --tls-cert");
  cmd->add_option(
      "--rate-limit", args.rate_limit,
      "requests per second per identity, answered 429 beyond (0 = no limit; default 1000 with "
      "--auth-file, none without)");
  cmd->add_option("--rate-burst", args.rate_burst,
                  "requests an identity may send at once above the rate")
      ->capture_default_str();
  cmd->add_option("--rate-limit-unauthenticated", args.rate_limit_unauthenticated,
                  "with a rate limit, requests per second per client address without a valid "
                  "token (burst twice as much)")
      ->capture_default_str();
  cmd->add_option("--header-timeout", args.header_timeout,
                  "close a connection whose request headers take longer than this")
      ->capture_default_str();
  cmd->add_option("--idle-timeout", args.idle_timeout,
                  "close a keep-alive connection idle this long")
      ->capture_default_str();
  cmd->add_option("--body-timeout", args.body_timeout,
                  "close a connection whose body takes longer than this")
      ->capture_default_str();
  cmd->add_option("--max-connections", args.max_connections, "open connections at most")
      ->capture_default_str();
  cmd->add_option("--workers", args.workers, "threads that run request handlers")
      ->capture_default_str();
}

}  // namespace

void add_serve_options(CLI::App* cmd, ServeArgs& args) {
  add_server_options(cmd, args);
  add_runtime_options(cmd, args);
  add_local_cloud_options(cmd, args);
  add_http_options(cmd, args);
  cmd->add_flag(
      "--no-fsync", args.no_fsync,
      "do not fsync each batch (faster, loses the last batches on power loss; tests only)");
}

}  // namespace gf
