// `gpufleet serve`: opens the journal, rebuilds state (snapshot + replay), runs the control loop
// and the HTTP API until SIGTERM/SIGINT, then stops gracefully (finish the batch, record the
// stop, snapshot, close the journal).
#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "api/api.h"
#include "api/http_server.h"
#include "cli/app.h"
#include "cloud/sim/sim_cloud.h"
#include "core/clock.h"
#include "core/random.h"
#include "journal/sqlite/sqlite_journal.h"
#include "loop/control_loop.h"
#include "runtime/runtime.h"
#include "state/plane_events.h"

namespace gf {

namespace {

struct ServeArgs {
  std::string data_dir = "./gpufleet-data";
  std::string listen = "127.0.0.1:8470";
  std::string store = "sqlite";
  int64_t snapshot_every = 10000;
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
  std::string header_timeout = "10s";
  std::string idle_timeout = "60s";
  std::string body_timeout = "30s";
  size_t max_connections = 20000;
  int workers = 16;
};

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

int serve(const ServeArgs& args) {
  auto listen = parse_listen_address(args.listen);
  if (!listen.ok()) {
    std::cerr << "error: " << listen.status().message() << "\n";
    return 2;
  }
  if (args.store != "sqlite") {
    std::cerr
        << "error: --store: only the embedded store \"sqlite\" is available in this build, got \""
        << args.store << "\"\n";
    return 2;
  }
  std::shared_ptr<const TokenStore> tokens;
  if (!args.auth_file.empty()) {
    auto store = TokenStore::load_file(args.auth_file);
    if (!store.ok()) {
      std::cerr << "error: " << store.status().message() << "\n";
      return 2;
    }
    tokens = std::make_shared<const TokenStore>(std::move(store).value());
  } else if (!is_loopback_host(listen->first) && !args.insecure) {
    std::cerr << "error: --listen: " << listen->first
              << " is not a loopback address and no --auth-file is given: anyone who can reach it "
                 "could act as "
                 "anyone. Give --auth-file FILE (see gpufleet token create), or --insecure to "
                 "accept that.\n";
    return 2;
  }
  HttpServerOptions http_options;
  http_options.tls_cert_file = args.tls_cert;
  http_options.tls_key_file = args.tls_key;
  http_options.max_connections = args.max_connections;
  http_options.worker_threads = args.workers;
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
  if (args.workers < 1 || args.workers > 1024) {
    std::cerr << "error: --workers: must be 1 to 1024, got " << args.workers << "\n";
    return 2;
  }
  if (args.rate_limit < -1 || args.rate_burst < 0) {
    std::cerr << "error: --rate-limit and --rate-burst: must be >= 0\n";
    return 2;
  }
  const double rate_limit = args.rate_limit >= 0 ? args.rate_limit : (tokens ? 1000 : 0);
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
  ::mallopt(M_ARENA_MAX, 2);
  // One serve per data directory: a second writer would fork the journal.
  const std::string lock_path = args.data_dir + "/LOCK";
  int lock_fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (lock_fd < 0 || ::flock(lock_fd, LOCK_EX | LOCK_NB) != 0) {
    std::cerr << "error: --data-dir: " << args.data_dir
              << " is in use by another gpufleet serve (lock " << lock_path << ")\n";
    return 1;
  }

  SqliteJournalOptions jopts;
  jopts.fsync = !args.no_fsync;
  auto journal = SqliteJournal::open(args.data_dir + "/journal.db", jopts);
  if (!journal.ok()) {
    std::cerr << "error: cannot open the journal: " << journal.status().message() << "\n";
    return 1;
  }

  // Files an older release created 0644 are restricted too.
  for (const auto& entry : std::filesystem::directory_iterator(args.data_dir, ec)) {
    if (entry.is_regular_file()) {
      std::filesystem::permissions(
          entry.path(), std::filesystem::perms::owner_read | std::filesystem::perms::owner_write,
          std::filesystem::perm_options::replace, ec);
    }
  }

  // Signals are taken synchronously by this thread; every thread started below inherits the mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  std::unique_ptr<Clock> clock;
  ScaledClock* scaled = nullptr;
  if (args.sim_speed > 1) {
    auto sc = std::make_unique<ScaledClock>(args.sim_speed);
    scaled = sc.get();
    clock = std::move(sc);
  } else {
    clock = std::make_unique<RealClock>();
  }
  RuntimeOptions ropts;
  ropts.seed = args.seed != 0 ? args.seed : entropy_seed();
  ropts.provision.arn = ArnConfig{args.region, args.account};
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
  {
    auto d = parse_duration(args.min_run_time);
    if (!d.ok() || d->count() < 0) {
      std::cerr << "error: --min-run-time: expected a duration like 0s or 10m, got \""
                << args.min_run_time << "\"\n";
      return 2;
    }
    ropts.scheduler.min_run_time = *d;
  }
  ropts.scheduler.reservation = args.reservation;
  ropts.healing.webhook_url = args.webhook;
  ropts.healing.support_webhook_url = args.support_webhook;
  ropts.loop.snapshot_every_events = args.snapshot_every;
  ropts.api.max_body_bytes = args.max_body_bytes;
  ropts.api.rate_limit_per_second = rate_limit;
  ropts.api.rate_limit_burst = args.rate_burst;
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
  auto runtime = std::make_unique<Runtime>(ropts, *clock, **journal);
  ControlLoop& loop = runtime->loop();
  if (Status st = runtime->recover(); !st.ok()) {
    std::cerr << "error: cannot rebuild state from the journal: " << st.message() << "\n";
    return 1;
  }
  if (scaled) scaled->resume_from(loop.view()->applied_time);
  runtime->cloud().started(clock->now());
  loop.start();
  Request started;
  started.name = "ControlPlaneStarted";
  started.handle = [&args](const FleetState&, Time) -> Result<Decision> {
    Decision d;
    d.events.push_back(
        event_codec::to_event(plane_events::Started{GPUFLEET_VERSION, "sqlite:" + args.data_dir}));
    return d;
  };
  if (Outcome o = loop.submit(std::move(started)).get(); !o.status.ok()) {
    std::cerr << "error: " << o.status.message() << "\n";
    return 1;
  }

  runtime->api().set_tokens(tokens);
  HttpServer http(runtime->api(), http_options);
  if (Status st = http.start(listen->first, listen->second); !st.ok()) {
    std::cerr << "error: --listen: " << st.message() << "\n";
    loop.stop("listen failed");
    return 1;
  }
  auto view = loop.view();
  std::cout << "gpufleet " << GPUFLEET_VERSION << " serving on " << (http.tls() ? "https" : "http")
            << "://" << listen->first << ":" << http.port() << "  (data: " << args.data_dir
            << ", journal seq " << view->applied_seq << ")" << std::endl;
  if (tokens) {
    std::cout << "authentication: " << tokens->size() << " token(s) from " << args.auth_file
              << "; X-Gpufleet-User is ignored" << std::endl;
  } else {
    std::cout << "authentication: none (no --auth-file): every caller on " << listen->first
              << " may act as anyone; use only on a trusted machine" << std::endl;
  }

  int exit_code = 0;
  while (true) {
    timespec tick{1, 0};
    int sig = sigtimedwait(&signals, nullptr, &tick);
    if (sig == SIGTERM || sig == SIGINT) {
      spdlog::info("signal {}: shutting down", sig);
      break;
    }
    if (loop.failed()) {
      exit_code = 1;
      break;
    }
  }
  http.stop();
  loop.stop(exit_code == 0 ? "signal" : "journal failure");
  std::cout << "gpufleet stopped" << std::endl;
  ::close(lock_fd);
  return exit_code;
}

}  // namespace

void register_serve_command(CLI::App& app, CommandContext& ctx) {
  auto args = std::make_shared<ServeArgs>();
  auto* cmd = app.add_subcommand("serve", "run the control plane (API, controllers, journal)");
  cmd->add_option("--data-dir", args->data_dir, "where the embedded journal lives")
      ->capture_default_str();
  cmd->add_option("--listen", args->listen, "HOST:PORT to listen on (port 0 = any free port)")
      ->capture_default_str();
  cmd->add_option("--store", args->store, "state store: sqlite (embedded)")->capture_default_str();
  cmd->add_option("--snapshot-every", args->snapshot_every, "journal events between snapshots")
      ->capture_default_str();
  cmd->add_option("--max-body-bytes", args->max_body_bytes, "largest request body accepted")
      ->capture_default_str();
  cmd->add_option("--seed", args->seed, "seed for ids and retry jitter (default: random)");
  cmd->add_option("--sim-speed", args->sim_speed,
                  "run the clock N times faster than real time (demos of the simulated cloud)")
      ->capture_default_str();
  cmd->add_option("--sim-cloud", args->cloud_file,
                  "simulated cloud settings (a scenario's cloud: block, YAML or JSON)");
  cmd->add_option("--min-count-timeout", args->min_count_timeout,
                  "how long a group may stay below MinCount before it rolls back")
      ->capture_default_str();
  cmd->add_option("--retry-base", args->retry_base, "first delay after a failed launch round")
      ->capture_default_str();
  cmd->add_option("--retry-max", args->retry_max, "cap of the launch retry backoff")
      ->capture_default_str();
  cmd->add_option("--min-run-time", args->min_run_time,
                  "how long a job runs before it may be preempted to reclaim borrowed quota")
      ->capture_default_str();
  cmd->add_option("--requeue-base", args->requeue_base, "first requeue backoff of a preempted job")
      ->capture_default_str();
  cmd->add_option("--requeue-max", args->requeue_max, "cap of the requeue backoff")
      ->capture_default_str();
  cmd->add_option("--reservation", args->reservation,
                  "reserve real per-node capacity before dispatching a gang (false: estimate a "
                  "cluster's room "
                  "by summing its free resources, as a fleet without resource reservation does)")
      ->capture_default_str();
  cmd->add_option("--webhook", args->webhook,
                  "URL that receives every alert (firing and resolved) unchanged, as JSON; retried "
                  "with backoff");
  cmd->add_option("--support-webhook", args->support_webhook,
                  "URL that receives alerts with no remediation mapped (support)");
  cmd->add_option("--region", args->region, "region part of ARNs")->capture_default_str();
  cmd->add_option("--account", args->account, "account part of ARNs")->capture_default_str();
  cmd->add_option("--auth-file", args->auth_file,
                  "YAML file of tokens (SHA-256 hashes, subjects, roles); requests then need "
                  "Authorization: Bearer <token> (see gpufleet token create)");
  cmd->add_flag("--insecure", args->insecure, "allow a non-loopback --listen without --auth-file");
  cmd->add_option("--tls-cert", args->tls_cert,
                  "PEM certificate chain: serve HTTPS (with --tls-key)");
  cmd->add_option("--tls-key", args->tls_key, "PEM private key for --tls-cert");
  cmd->add_option(
      "--rate-limit", args->rate_limit,
      "requests per second per identity, answered 429 beyond (0 = no limit; default 1000 with "
      "--auth-file, none without)");
  cmd->add_option("--rate-burst", args->rate_burst,
                  "requests an identity may send at once above the rate")
      ->capture_default_str();
  cmd->add_option("--header-timeout", args->header_timeout,
                  "close a connection whose request headers take longer than this")
      ->capture_default_str();
  cmd->add_option("--idle-timeout", args->idle_timeout,
                  "close a keep-alive connection idle this long")
      ->capture_default_str();
  cmd->add_option("--body-timeout", args->body_timeout,
                  "close a connection whose body takes longer than this")
      ->capture_default_str();
  cmd->add_option("--max-connections", args->max_connections, "open connections at most")
      ->capture_default_str();
  cmd->add_option("--workers", args->workers, "threads that run request handlers")
      ->capture_default_str();
  cmd->add_flag(
      "--no-fsync", args->no_fsync,
      "do not fsync each batch (faster, loses the last batches on power loss; tests only)");
  cmd->callback([&ctx, args] { ctx.run = [args] { return serve(*args); }; });
}

}  // namespace gf
