// `gpufleet serve`'s flags (docs/cli.md "serve"): what they hold once parsed, and their
// registration, grouped as --help lists them. What serve does with them is serve_command.cpp.
#pragma once

#include <CLI/CLI.hpp>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace gf {

struct ServeArgs {
  std::string data_dir = "./gpufleet-data";
  std::string listen = "127.0.0.1:8470";
  std::string store = "sqlite";
  int64_t snapshot_every = 10000;
  // What is kept where (docs/operations.md "What is kept where").
  std::string job_retention = "7d";
  std::string event_retention = "7d";
  std::string journal_retention = "7d";
  std::string audit_retention = "90d";
  std::string journal_archive;
  size_t max_body_bytes = 4 << 20;
  bool no_fsync = false;
  uint64_t seed = 0;  // 0 = from the OS's entropy
  int64_t sim_speed = 1;
  std::string cloud_file;
  std::string min_count_timeout = "3h";
  std::string retry_base = "30s";
  std::string retry_max = "10m";
  std::string min_run_time = "0s";
  std::string requeue_base = "10s";
  std::string requeue_max = "10m";
  bool reservation = true;
  bool backfill = true;
  std::string webhook;
  std::string support_webhook;
  std::string region = "local";
  std::string account = "000000000000";
  std::string auth_file;
  bool insecure = false;
  std::string tls_cert;
  std::string tls_key;
  double rate_limit = -1;  // -1: 1000 with --auth-file, none without (a loopback dev server)
  double rate_burst = 2000;
  double rate_limit_unauthenticated = 10;
  std::string header_timeout = "10s";
  std::string idle_timeout = "60s";
  std::string body_timeout = "30s";
  size_t max_connections = 20000;
  int workers = 16;
  // The cloud: sim (default) or local (docs/local-cloud.md).
  std::string cloud = "sim";
  std::string local_root;  // default <data-dir>/local
  std::string local_capacity;
  std::string local_topology;  // "" = no topology labels
  int64_t local_max_instances = 64;
  std::vector<std::string> lifecycle_roots;
  std::string lifecycle_timeout = "30m";
  std::vector<std::string> burn_in_checks;
  std::string heartbeat_interval = "10s";
  std::string rejoin_check = "2m";
  // Replicas on PostgreSQL (docs/replication.md).
  std::string lease = "5s";
  std::string replica_id;
  std::string advertise_url;
};

// Adds every flag of serve to `cmd`, in the order --help lists them.
void add_serve_options(CLI::App* cmd, ServeArgs& args);

}  // namespace gf
