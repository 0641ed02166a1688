// `gpufleet serve`: opens the journal, rebuilds state (snapshot + replay), runs the control loop
// and the HTTP API until SIGTERM/SIGINT, then stops gracefully (finish the batch, record the
// stop, snapshot, close the journal).
#include <fcntl.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>

#include "api/api.h"
#include "api/http_server.h"
#include "cli/app.h"
#include "cli/serve_options.h"
#include "cli/serve_replicas.h"
#include "cli/serve_sqlite.h"
#include "cloud/local/local_cloud.h"
#include "cloud/sim/sim_cloud.h"
#include "core/clock.h"
#include "core/memory.h"
#include "core/random.h"
#include "journal/postgres/pg.h"
#include "journal/sqlite/sqlite_journal.h"
#include "loop/control_loop.h"
#include "runtime/runtime.h"
#include "state/plane_events.h"

namespace gf {

namespace {

bool is_postgres_url(const std::string& store) {
  return store.rfind("postgres://", 0) == 0 || store.rfind("postgresql://", 0) == 0;
}

// The simulated cloud's settings from a file: either a scenario's `cloud:` block on its own, or
// a whole scenario (its `cloud:` key is used). Capacity changes count from the server's start.
Result<SimCloudConfig> load_cloud_config(const std::string& path) {
  std::ifstream in(path);
  if (!in) return validation_error("cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  GF_ASSIGN_OR_RETURN(auto docs, parse_documents(ss.str()));
  if (docs.size() != 1) return validation_error(path + ": expected one document");
  const Json& doc = docs.front();
  const Json& cloud = doc.is_object() && doc.contains("cloud") ? doc["cloud"] : doc;
  return SimCloudConfig::from_json(cloud);
}

// What the server's flags give once checked, before anything is created.
struct ServerConfig {
  std::pair<std::string, int> listen;        // host, port
  std::shared_ptr<const TokenStore> tokens;  // null without --auth-file
  HttpServerOptions http_options;
  double rate_limit = 0;
};

// The tokens of --auth-file. Without one, only a loopback --listen (or --insecure) is accepted.
int load_tokens(const ServeArgs& args, const std::string& host,
                std::shared_ptr<const TokenStore>& tokens) {
  if (!args.auth_file.empty()) {
    auto store = TokenStore::load_file(args.auth_file);
    if (!store.ok()) {
      std::cerr << "error: " << store.status().message() << "\n";
      return 2;
    }
    tokens = std::make_shared<const TokenStore>(std::move(store).value());
  } else if (!is_loopback_host(host) && !args.insecure) {
    std::cerr << "error: --listen: " << host
              << " is not a loopback address and no --auth-file is given: anyone who can reach it "
                 "could act as "
                 "anyone. Give --auth-file FILE (see gpufleet token create), or --insecure to "
                 "accept that.\n";
    return 2;
  }
  return 0;
}

int parse_http_timeouts(const ServeArgs& args, HttpServerOptions& http_options) {
  struct TimeoutFlag {
    const char* flag;
    const std::string* text;
    std::chrono::milliseconds* out;
  };
  for (const TimeoutFlag& f :
       {TimeoutFlag{"--header-timeout", &args.header_timeout, &http_options.header_timeout},
        TimeoutFlag{"--idle-timeout", &args.idle_timeout, &http_options.idle_timeout},
        TimeoutFlag{"--body-timeout", &args.body_timeout, &http_options.body_timeout}}) {
    auto d = parse_duration(*f.text);
    if (!d.ok() || d->count() <= 0) {
      std::cerr << "error: " << f.flag << ": expected a positive duration like 10s, got \""
                << *f.text << "\"\n";
      return 2;
    }
    *f.out = std::chrono::duration_cast<std::chrono::milliseconds>(*d);
  }
  return 0;
}

// Checks the flags of the listener, authentication and HTTP server: 0, or the exit code (2).
int check_server_flags(const ServeArgs& args, ServerConfig& cfg) {
  auto listen = parse_listen_address(args.listen);
  if (!listen.ok()) {
    std::cerr << "error: " << listen.status().message() << "\n";
    return 2;
  }
  cfg.listen = *listen;
  if (args.store != "sqlite" && !is_postgres_url(args.store)) {
    std::cerr << "error: --store: expected sqlite (embedded) or a PostgreSQL URL like "
                 "postgres://user@host:5432/gpufleet (replicas), got \""
              << pg::redact_url(args.store) << "\"\n";
    return 2;
  }
  if (int rc = load_tokens(args, cfg.listen.first, cfg.tokens); rc != 0) return rc;
  HttpServerOptions& http_options = cfg.http_options;
  http_options.tls_cert_file = args.tls_cert;
  http_options.tls_key_file = args.tls_key;
  http_options.max_connections = args.max_connections;
  http_options.worker_threads = args.workers;
  if (int rc = parse_http_timeouts(args, http_options); rc != 0) return rc;
  if (args.workers < 1 || args.workers > 1024) {
    std::cerr << "error: --workers: must be 1 to 1024, got " << args.workers << "\n";
    return 2;
  }
  if (args.rate_limit < -1 || args.rate_burst < 0) {
    std::cerr << "error: --rate-limit and --rate-burst: must be >= 0\n";
    return 2;
  }
  if (!(args.rate_limit_unauthenticated > 0)) {
    std::cerr << "error: --rate-limit-unauthenticated: must be > 0, got "
              << args.rate_limit_unauthenticated << "\n";
    return 2;
  }
  cfg.rate_limit = args.rate_limit >= 0 ? args.rate_limit : (cfg.tokens ? 1000 : 0);
  return 0;
}

// Creates the data directory for the owner only and takes its lock into `lock_fd`: 0, or the exit
// code (1).
int prepare_data_dir(const ServeArgs& args, int& lock_fd) {
  std::error_code ec;
  std::filesystem::create_directories(args.data_dir, ec);
  if (ec) {
    std::cerr << "error: --data-dir: cannot create " << args.data_dir << ": " << ec.message()
              << "\n";
    return 1;
  }
  // The journal holds every request's effects: readable by the serving user only.
  std::filesystem::permissions(args.data_dir, std::filesystem::perms::owner_all,
                               std::filesystem::perm_options::replace, ec);
  if (ec) {
    std::cerr << "error: --data-dir: cannot restrict " << args.data_dir
              << " to its owner: " << ec.message() << "\n";
    return 1;
  }
  ::umask(077);
  // Each handler thread would otherwise keep a malloc arena of its own at its peak size: a burst of
  // large requests then holds memory long after it is answered.
  limit_allocator_arenas();
  // One serve per data directory: a second writer would fork the journal.
  const std::string lock_path = args.data_dir + "/LOCK";
  lock_fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (lock_fd < 0 || ::flock(lock_fd, LOCK_EX | LOCK_NB) != 0) {
    std::cerr << "error: --data-dir: " << args.data_dir
              << " is in use by another gpufleet serve (lock " << lock_path << ")\n";
    return 1;
  }
  return 0;
}

// Files an older release created 0644 are restricted too.
void restrict_data_files(const std::string& data_dir) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(data_dir, ec)) {
    if (entry.is_regular_file()) {
      std::filesystem::permissions(
          entry.path(), std::filesystem::perms::owner_read | std::filesystem::perms::owner_write,
          std::filesystem::perm_options::replace, ec);
    }
  }
}

// Signals are taken synchronously by serve's thread; every thread started after this inherits the
// mask.
sigset_t block_shutdown_signals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  return signals;
}

// The real clock, or with --sim-speed N a clock N times faster (also returned as `scaled`).
std::unique_ptr<Clock> make_clock(int64_t sim_speed, ScaledClock*& scaled) {
  if (sim_speed > 1) {
    auto sc = std::make_unique<ScaledClock>(sim_speed);
    scaled = sc.get();
    return sc;
  }
  return std::make_unique<RealClock>();
}

// The retention flags (docs/operations.md "What is kept where"): 0, or the exit code (2).
int parse_retention(const ServeArgs& args, RuntimeOptions& ropts) {
  auto positive = [](const char* flag, const std::string& text, Duration min) -> Result<Duration> {
    auto d = parse_duration(text);
    if (!d.ok() || *d < min) {
      return validation_error(
          fmt::format("{}: expected a duration of at least {}, like 7d, got \"{}\"", flag,
                      format_duration(min), text));
    }
    return *d;
  };
  auto job = positive("--job-retention", args.job_retention, std::chrono::minutes(1));
  auto event = positive("--event-retention", args.event_retention, std::chrono::minutes(1));
  auto audit = positive("--audit-retention", args.audit_retention, std::chrono::hours(24));
  Result<Duration> journal = Duration{};
  if (args.journal_retention != "never")
    journal = positive("--journal-retention", args.journal_retention, std::chrono::hours(24));
  for (const Status& st : {job.status(), event.status(), audit.status(), journal.status()}) {
    if (!st.ok()) {
      std::cerr << "error: " << st.message() << "\n";
      return 2;
    }
  }
  ropts.retention = RetentionOptions{};
  ropts.retention->job_retention = *job;
  ropts.retention->event_retention = *event;
  ropts.loop.audit_retention = *audit;
  if (args.journal_retention != "never") ropts.loop.journal_retention = *journal;
  return 0;
}

// The duration flags of provisioning and scheduling: 0, or the exit code (2).
int parse_runtime_durations(const ServeArgs& args, RuntimeOptions& ropts) {
  struct DurationFlag {
    const char* flag;
    const std::string* text;
    Duration* out;
  };
  for (const DurationFlag& f :
       {DurationFlag{"--min-count-timeout", &args.min_count_timeout,
                     &ropts.provision.min_count_timeout},
        DurationFlag{"--retry-base", &args.retry_base, &ropts.provision.retry_base},
        DurationFlag{"--retry-max", &args.retry_max, &ropts.provision.retry_max},
        DurationFlag{"--requeue-base", &args.requeue_base, &ropts.scheduler.requeue_base},
        DurationFlag{"--requeue-max", &args.requeue_max, &ropts.scheduler.requeue_max}}) {
    auto d = parse_duration(*f.text);
    if (!d.ok() || d->count() <= 0) {
      std::cerr << "error: " << f.flag << ": expected a positive duration like 30s or 3h, got \""
                << *f.text << "\"\n";
      return 2;
    }
    *f.out = *d;
  }
  if (int rc = parse_retention(args, ropts); rc != 0) return rc;
  auto d = parse_duration(args.min_run_time);
  if (!d.ok() || d->count() < 0) {
    std::cerr << "error: --min-run-time: expected a duration like 0s or 10m, got \""
              << args.min_run_time << "\"\n";
    return 2;
  }
  ropts.scheduler.min_run_time = *d;
  return 0;
}

// The runtime's options from the flags: 0, or the exit code (2).
int runtime_options(const ServeArgs& args, double rate_limit, RuntimeOptions& ropts) {
  ropts.seed = args.seed != 0 ? args.seed : entropy_seed();
  ropts.provision.arn = ArnConfig{args.region, args.account};
  if (int rc = parse_runtime_durations(args, ropts); rc != 0) return rc;
  ropts.scheduler.reservation = args.reservation;
  ropts.scheduler.backfill = args.backfill;
  ropts.healing.webhook_url = args.webhook;
  ropts.healing.support_webhook_url = args.support_webhook;
  ropts.loop.snapshot_every_events = args.snapshot_every;
  ropts.api.max_body_bytes = args.max_body_bytes;
  ropts.api.rate_limit_per_second = rate_limit;
  ropts.api.rate_limit_burst = args.rate_burst;
  ropts.api.unauthenticated_rate_per_second = args.rate_limit_unauthenticated;
  auto beat = parse_duration(args.heartbeat_interval);
  if (!beat.ok() || beat->count() <= 0) {
    std::cerr << "error: --heartbeat-interval: expected a positive duration like 10s, got \""
              << args.heartbeat_interval << "\"\n";
    return 2;
  }
  ropts.healing.heartbeat_interval = *beat;
  auto rejoin = parse_duration(args.rejoin_check);
  if (!rejoin.ok() || rejoin->count() < 0) {
    std::cerr << "error: --rejoin-check: expected a duration like 2m, got \"" << args.rejoin_check
              << "\"\n";
    return 2;
  }
  ropts.healing.rejoin_check = *rejoin;
  if (args.cloud == "local") return 0;  // serve makes the local cloud (it needs the tokens)
  if (args.cloud != "sim") {
    std::cerr << "error: --cloud: expected sim or local, got \"" << args.cloud << "\"\n";
    return 2;
  }
  SimCloudConfig cloud_config;  // without --sim-cloud: unlimited capacity, default latencies
  if (!args.cloud_file.empty()) {
    auto cloud = load_cloud_config(args.cloud_file);
    if (!cloud.ok()) {
      std::cerr << "error: --sim-cloud: " << cloud.status().message() << "\n";
      return 2;
    }
    cloud_config = *cloud;
  }
  ropts.cloud = sim_cloud(std::move(cloud_config));
  return 0;
}

// The agents' own token (with an auth file): <root>/agent-token, made once, readable by the
// serving user only; serve adds it to the token store with the agent role.
Result<std::string> agent_token(const std::string& root) {
  const std::string path = root + "/agent-token";
  std::ifstream in(path);
  std::string token;
  if (in >> token && !token.empty()) return token;
  token = new_token();
  std::ofstream out(path, std::ios::trunc);
  out << token << "\n";
  if (!out) return internal_error("cannot write " + path);
  std::filesystem::permissions(
      path, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write,
      std::filesystem::perm_options::replace);
  return token;
}

// --cloud local: the flags that describe the instances (capacity, lifecycle scripts, burn-in
// checks) into `c`: 0, or the exit code (2).
int parse_local_instance_flags(const ServeArgs& args, LocalCloudConfig& c) {
  auto capacity = LocalCloudConfig::parse_capacity(args.local_capacity);
  if (!capacity.ok()) {
    std::cerr << "error: " << capacity.status().message() << "\n";
    return 2;
  }
  c.capacity = *capacity;
  if (!args.local_topology.empty()) {
    auto topology = LocalCloudConfig::parse_topology(args.local_topology);
    if (!topology.ok()) {
      std::cerr << "error: " << topology.status().message() << "\n";
      return 2;
    }
    c.topology = *topology;
  }
  for (const std::string& r : args.lifecycle_roots) {
    auto root = LocalCloudConfig::parse_lifecycle_root(r);
    if (!root.ok()) {
      std::cerr << "error: " << root.status().message() << "\n";
      return 2;
    }
    c.lifecycle_roots.push_back(*root);
  }
  auto timeout = parse_duration(args.lifecycle_timeout);
  if (!timeout.ok() || timeout->count() <= 0) {
    std::cerr << "error: --lifecycle-timeout: expected a positive duration like 30m\n";
    return 2;
  }
  c.lifecycle_timeout = *timeout;
  for (const std::string& b : args.burn_in_checks) {
    const size_t eq = b.find('=');
    const std::string check = b.substr(0, eq);
    if (eq == std::string::npos || eq + 1 == b.size() ||
        (check != "gpu" && check != "nccl" && check != "infiniband" && check != "storage")) {
      std::cerr << "error: --burn-in-check: \"" << b
                << "\": expected CHECK=COMMAND with CHECK one of gpu, nccl, infiniband, storage\n";
      return 2;
    }
    c.burn_in_checks[check] = b.substr(eq + 1);
  }
  return 0;
}

// --cloud local: the driver's settings from the flags: 0, or the exit code (2).
int local_cloud_options(const ServeArgs& args, ServerConfig& cfg, RuntimeOptions& ropts,
                        LocalCloud** driver) {
  if (args.sim_speed > 1) {
    std::cerr << "error: --sim-speed: the local cloud runs real processes in real time; leave it "
                 "out with --cloud local\n";
    return 2;
  }
  if (!args.cloud_file.empty()) {
    std::cerr << "error: --sim-cloud: settings of the simulated cloud, not of --cloud local\n";
    return 2;
  }
  LocalCloudConfig c;
  c.root = args.local_root.empty() ? args.data_dir + "/local" : args.local_root;
  c.max_instances = args.local_max_instances;
  c.heartbeat_interval = ropts.healing.heartbeat_interval;
  if (int rc = parse_local_instance_flags(args, c); rc != 0) return rc;
  std::error_code ec;
  std::filesystem::create_directories(c.root, ec);
  if (ec) {
    std::cerr << "error: --local-root: cannot create " << c.root << ": " << ec.message() << "\n";
    return 2;
  }
  // A real Slurm cluster's sockets live in /tmp/gfs-<hash> (docs/slurm.md "Paths that work
  // anywhere"): a machine where that cannot work is refused now, not found out as a held job.
  if (Status st = check_slurm_runtime_base(); !st.ok()) {
    std::cerr << "error: --cloud local: " << st.message() << "\n";
    return 2;
  }
  if (cfg.tokens) {
    auto token = agent_token(c.root);
    if (!token.ok()) {
      std::cerr << "error: " << token.status().message() << "\n";
      return 2;
    }
    c.agent_token = *token;
    TokenStore store = *cfg.tokens;
    store.add(TokenEntry{sha256_hex(*token), "local-agents", {"agent"}});
    cfg.tokens = std::make_shared<const TokenStore>(std::move(store));
  }
  c.ca_cert = args.tls_cert;  // a self-signed certificate is its own CA
  ropts.cloud = local_cloud(std::move(c), driver);
  ropts.real_instances = true;
  return 0;
}

// Rebuilds state from the journal, starts the loop and records the start.
Status start_runtime(const ServeArgs& args, Runtime& runtime, const Clock& clock,
                     ScaledClock* scaled) {
  ControlLoop& loop = runtime.loop();
  if (Status st = runtime.recover(); !st.ok()) {
    return Status(st.code(), "cannot rebuild state from the journal: " + st.message());
  }
  if (scaled) scaled->resume_from(loop.view()->applied_time);
  // The simulated cloud's capacity timeline counts from the first start on this data dir, so a
  // restart does not take back capacity that appeared before it.
  const Time first = loop.view()->control_plane.first_started;
  runtime.cloud().started(first != Time{} ? first : clock.now());
  loop.start();
  Request started;
  started.name = "ControlPlaneStarted";
  started.handle = [&args](const FleetState&, Time) -> Result<Decision> {
    Decision d;
    d.events.push_back(
        event_codec::to_event(plane_events::Started{GPUFLEET_VERSION, "sqlite:" + args.data_dir}));
    return d;
  };
  Status recorded = loop.submit(std::move(started)).get().status;
  if (!recorded.ok()) {
    loop.stop("start failed");
    runtime.stop_drivers();
  }
  return recorded;
}

// How serve on SQLite makes a generation: the journal opened, state rebuilt, the loop started and
// its start recorded. The first one starts serve; a later one replaces a generation whose journal
// failed (docs/operations.md). `local` and `agents_url` are read when it runs: the local cloud's
// driver the last generation made, and where its agents reach this server once it listens.
SqliteServer::Open open_generation(const ServeArgs& args, const ServerConfig& cfg,
                                   const RuntimeOptions& ropts, Clock& clock, ScaledClock* scaled,
                                   LocalCloud* const& local, const std::string& agents_url) {
  // The whole file is checked once, by the first generation; a later one rebuilds from a
  // journal this process has been writing, and its replay still checks what it reads.
  auto checked = std::make_shared<bool>(false);
  return [&, scaled, checked]() -> Result<std::shared_ptr<SqliteServer::Generation>> {
    SqliteJournalOptions jopts;
    jopts.fsync = !args.no_fsync;
    jopts.verify_on_open = !*checked;
    jopts.archive_dir = args.journal_archive;
    auto g = std::make_shared<SqliteServer::Generation>();
    GF_ASSIGN_OR_RETURN(g->journal, SqliteJournal::open(args.data_dir + "/journal.db", jopts));
    restrict_data_files(args.data_dir);
    g->runtime = std::make_unique<Runtime>(ropts, clock, *g->journal);
    g->runtime->api().set_tokens(cfg.tokens);
    GF_RETURN_IF_ERROR(start_runtime(args, *g->runtime, clock, scaled));
    if (local != nullptr && !agents_url.empty()) local->set_server_url(agents_url);
    *checked = true;
    return g;
  };
}

void print_banner(const ServeArgs& args, const ServerConfig& cfg, const HttpServer& http,
                  Seq applied_seq) {
  const std::string& host = cfg.listen.first;
  std::cout << "gpufleet " << GPUFLEET_VERSION << " serving on " << (http.tls() ? "https" : "http")
            << "://" << host << ":" << http.port() << "  (data: " << args.data_dir
            << ", journal seq " << applied_seq << ")" << std::endl;
  if (cfg.tokens) {
    std::cout << "authentication: " << cfg.tokens->size() << " token(s)";
    if (cfg.tokens->access_key_count() > 0)
      std::cout << " and " << cfg.tokens->access_key_count() << " AWS access key(s)";
    std::cout << " from " << args.auth_file << "; X-Gpufleet-User is ignored" << std::endl;
  } else {
    std::cout << "authentication: none (no --auth-file): every caller on " << host
              << " may act as anyone; use only on a trusted machine" << std::endl;
  }
}

// Waits for SIGTERM/SIGINT (exit code 0) or a failed loop (1), checking the loop every second.
int wait_for_shutdown(const sigset_t& signals, const std::function<bool()>& failed) {
  while (true) {
    timespec tick{1, 0};
    int sig = sigtimedwait(&signals, nullptr, &tick);
    if (sig == SIGTERM || sig == SIGINT) {
      spdlog::info("signal {}: shutting down", sig);
      return 0;
    }
    if (failed()) return 1;
  }
}

int serve_replicated(const ServeArgs& args, ServerConfig& cfg);

int serve(const ServeArgs& args) {
  ServerConfig cfg;
  if (int rc = check_server_flags(args, cfg); rc != 0) return rc;
  if (is_postgres_url(args.store)) return serve_replicated(args, cfg);
  int lock_fd = -1;
  if (int rc = prepare_data_dir(args, lock_fd); rc != 0) return rc;

  const sigset_t signals = block_shutdown_signals();
  ScaledClock* scaled = nullptr;
  std::unique_ptr<Clock> clock = make_clock(args.sim_speed, scaled);
  RuntimeOptions ropts;
  if (int rc = runtime_options(args, cfg.rate_limit, ropts); rc != 0) return rc;
  LocalCloud* local = nullptr;
  if (args.cloud == "local") {
    if (int rc = local_cloud_options(args, cfg, ropts, &local); rc != 0) return rc;
  }
  std::string agents_url;  // where the local cloud's agents reach this server, once it listens
  SqliteServer server(open_generation(args, cfg, ropts, *clock, scaled, local, agents_url),
                      seconds(1), seconds(30));
  if (Status st = server.start(); !st.ok()) {
    std::cerr << "error: the journal: " << st.message() << "\n";
    return 1;
  }
  HttpServer http([&server](HttpRequest r) { return server.handle(std::move(r)); },
                  ropts.api.max_body_bytes, cfg.http_options);
  if (Status st = http.start(cfg.listen.first, cfg.listen.second); !st.ok()) {
    std::cerr << "error: --listen: " << st.message() << "\n";
    server.stop("listen failed");
    return 1;
  }
  if (local != nullptr) {
    // Agents reach the server on loopback, whatever address it listens on.
    const std::string scheme = cfg.http_options.tls_cert_file.empty() ? "http" : "https";
    agents_url = fmt::format("{}://127.0.0.1:{}", scheme, http.port());
    local->set_server_url(agents_url);
  }
  print_banner(args, cfg, http, server.current()->runtime->loop().view()->applied_seq);

  // Every second: a generation whose journal failed is replaced once the journal takes writes.
  const int exit_code = wait_for_shutdown(signals, [&server] {
    server.supervise(monotonic_nanos());
    return false;
  });
  http.stop();
  server.stop("signal");
  std::cout << "gpufleet stopped" << std::endl;
  ::close(lock_fd);
  return exit_code;
}

// The flags of a replica on PostgreSQL, checked: its lease into `lease`; 0, or the exit code (2).
int check_replica_flags(const ServeArgs& args, const ServerConfig& cfg, Duration& lease) {
  if (args.cloud == "local") {
    std::cerr << "error: --cloud local: the local cloud's instances are processes of one serve and "
                 "do not move between replicas; use the simulated cloud with --store postgres "
                 "(docs/replication.md)\n";
    return 2;
  }
  auto parsed = parse_duration(args.lease);
  if (!parsed.ok() || *parsed < milliseconds(300)) {
    std::cerr << "error: --lease: expected a duration of at least 300ms like 5s, got \""
              << args.lease << "\"\n";
    return 2;
  }
  lease = *parsed;
  const std::string& host = cfg.listen.first;
  if (args.advertise_url.empty() && (host == "0.0.0.0" || host == "::" || host == "[::]")) {
    std::cerr << "error: --advertise-url: --listen " << host
              << " is not an address other replicas and clients can reach; give the URL "
                 "followers should send writers to, e.g. --advertise-url http://10.0.0.5:8470\n";
    return 2;
  }
  return 0;
}

// A replica that won the lease: its clock resumes where the journal stopped, its cloud and loop
// start, and its start is recorded with the store and epoch.
Status start_leading(Runtime& runtime, int64_t epoch, ScaledClock* scaled, const Clock& clock,
                     const std::string& store) {
  ControlLoop& loop = runtime.loop();
  if (scaled) scaled->resume_from(loop.view()->applied_time);
  const Time first = loop.view()->control_plane.first_started;
  runtime.cloud().started(first != Time{} ? first : clock.now());
  loop.start();
  Request started;
  started.name = "ControlPlaneStarted";
  const std::string where = fmt::format("{} epoch {}", store, epoch);
  started.handle = [where](const FleetState&, Time) -> Result<Decision> {
    Decision d;
    d.events.push_back(event_codec::to_event(plane_events::Started{GPUFLEET_VERSION, where}));
    return d;
  };
  return loop.submit(std::move(started)).get().status;
}

// A replica of a control plane on PostgreSQL (docs/replication.md): follows the journal, leads
// when it holds the lease, steps down when it loses it; exits only on a signal.
int serve_replicated(const ServeArgs& args, ServerConfig& cfg) {
  Duration lease{};
  if (int rc = check_replica_flags(args, cfg, lease); rc != 0) return rc;
  ::umask(077);
  limit_allocator_arenas();
  const sigset_t signals = block_shutdown_signals();
  ScaledClock* scaled = nullptr;
  std::unique_ptr<Clock> clock = make_clock(args.sim_speed, scaled);
  RuntimeOptions ropts;
  if (int rc = runtime_options(args, cfg.rate_limit, ropts); rc != 0) return rc;
  const std::string store = pg::redact_url(args.store);

  ReplicatedServeConfig rc;
  rc.store_url = args.store;
  rc.lease = lease;
  rc.make_runtime = [&](Journal& journal) {
    auto runtime = std::make_unique<Runtime>(ropts, *clock, journal);
    runtime->api().set_tokens(cfg.tokens);
    return runtime;
  };
  rc.start_leading = [&](Runtime& runtime, int64_t epoch) {
    return start_leading(runtime, epoch, scaled, *clock, store);
  };
  auto server = ReplicatedServer::open(std::move(rc));
  if (!server.ok()) {
    std::cerr << "error: --store: " << server.status().message() << "\n";
    return 1;
  }
  ReplicatedServer& replica = **server;
  HttpServer http([&replica](HttpRequest r) { return replica.handle(std::move(r)); },
                  ropts.api.max_body_bytes, cfg.http_options);
  if (Status st = http.start(cfg.listen.first, cfg.listen.second); !st.ok()) {
    std::cerr << "error: --listen: " << st.message() << "\n";
    return 1;
  }
  const std::string scheme = http.tls() ? "https" : "http";
  ReplicaOptions ro;
  ro.url = !args.advertise_url.empty()
               ? args.advertise_url
               : fmt::format("{}://{}:{}", scheme, cfg.listen.first, http.port());
  ro.id = !args.replica_id.empty() ? args.replica_id
                                   : fmt::format("{}:{}", cfg.listen.first, http.port());
  ro.lease = lease;
  if (Status st = replica.start(ro); !st.ok()) {
    std::cerr << "error: --store: " << st.message() << "\n";
    return 1;
  }
  std::cout << "gpufleet " << GPUFLEET_VERSION << " serving on " << scheme << "://"
            << cfg.listen.first << ":" << http.port() << "  (store: " << store << ", replica "
            << ro.id << ", " << (replica.leading() ? "leader" : "follower") << ", journal seq "
            << replica.applied_seq() << ")" << std::endl;
  const int exit_code = wait_for_shutdown(signals, [] { return false; });
  http.stop();
  replica.stop("signal");
  std::cout << "gpufleet stopped" << std::endl;
  return exit_code;
}

}  // namespace

void register_serve_command(CLI::App& app, CommandContext& ctx) {
  auto args = std::make_shared<ServeArgs>();
  auto* cmd = app.add_subcommand("serve", "run the control plane (API, controllers, journal)");
  add_serve_options(cmd, *args);
  cmd->callback([&ctx, args] { ctx.run = [args] { return serve(*args); }; });
}

}  // namespace gf
