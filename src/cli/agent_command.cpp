// `gpufleet agent --server URL --cluster NAME --node-id ID [sources…] [--interval 10s] [--once]`
// (docs/agent.md, the detector part): runs the detectors of src/health/ on the node's real sources
// every interval and reports what they recognise to the server. Sources, flags and what is sent:
// docs/agent.md.
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>

#include "agent/agent.h"
#include "agent/local_node.h"
#include "cli/app.h"
#include "core/clock.h"
#include "core/time.h"

namespace gf {

namespace {

struct AgentArgs {
  agent::AgentOptions options;
  std::string interval = "10s";
  bool once = false;
  std::string local_instance;  // an instance of the local cloud: everything from its directory
};

int run_agent(const CommandContext& ctx, AgentArgs args) {
  if (!args.local_instance.empty()) return agent::run_local_instance(args.local_instance);
  agent::AgentOptions& o = args.options;
  if (o.cluster.empty() || o.node.empty()) {
    std::cerr << "error: --cluster and --node-id are required (or --local-instance DIR)\n";
    return 2;
  }
  o.server = ctx.global.server;
  Result<Duration> interval = parse_duration(args.interval);
  if (!interval.ok() || *interval <= Duration::zero()) {
    std::cerr << "error: --interval: '" << args.interval
              << "' is not a positive duration like 10s or 1m\n";
    return 2;
  }
  o.interval = *interval;
  if (o.max_queue == 0) {
    std::cerr << "error: --queue: must be at least 1\n";
    return 2;
  }
  agent::HttpReporter reporter(o.server, o.cluster, o.node, 10, ctx.global.token,
                               ctx.global.ca_cert);
  agent::NodeAgent node_agent(o, reporter);
  RealClock clock;
  spdlog::info("agent for node {} of cluster {} reporting to {} every {}", o.node, o.cluster,
               o.server, format_duration(o.interval));
  // Heartbeats every 10 s at most (the server raises host-reachability after three missed ones);
  // the sources are polled every --interval.
  const Duration beat = std::min<Duration>(o.interval, seconds(10));
  Time next_poll = clock.now();
  bool beat_failed = false;
  for (;;) {
    // A one-shot run (--once: cron, tests) is no heartbeat source: a single beat would only make
    // the server expect the next ones.
    if (!args.once) {
      const Status hb = reporter.heartbeat();
      if (!hb.ok() && !beat_failed) spdlog::warn("heartbeat not delivered: {}", hb.message());
      beat_failed = !hb.ok();
    }
    if (clock.now() < next_poll) {
      wall_sleep(beat);
      continue;
    }
    next_poll = clock.now() + o.interval;
    const Status s = node_agent.poll(clock.now());
    if (args.once) {
      std::cout << "agent: " << node_agent.sent() << " signal(s) sent, " << node_agent.queued()
                << " unsent, " << node_agent.refused() << " refused\n";
      if (!s.ok()) {
        std::cerr << "error: " << s.message() << "\n";
        return 1;
      }
      return 0;
    }
    wall_sleep(beat);
  }
}

}  // namespace

void register_agent_command(CLI::App& app, CommandContext& ctx) {
  auto args = std::make_shared<AgentArgs>();
  auto* cmd = app.add_subcommand(
      "agent", "run the node agent's detectors and report to the server (see docs/agent.md)");
  cmd->fallthrough();  // --server, --user are the global flags
  agent::AgentOptions& o = args->options;
  cmd->add_option("--cluster", o.cluster, "the node's cluster (required without --local-instance)");
  cmd->add_option("--node-id", o.node,
                  "the node's id, its InstanceId (required without --local-instance)");
  cmd->add_option("--local-instance", args->local_instance,
                  "run as an instance of the local cloud from its directory (serve --cloud local "
                  "starts agents so; docs/local-cloud.md)");
  cmd->add_option("--kernel-log", o.kernel_log, "kernel log file to follow; - to disable")
      ->capture_default_str();
  cmd->add_flag("--from-start", o.from_start,
                "read the kernel log from its start (default: only new lines)");
  cmd->add_option("--proc-mounts", o.proc_mounts, "mount table; - to disable")
      ->capture_default_str();
  cmd->add_option("--infiniband-dir", o.infiniband_dir, "InfiniBand sysfs directory; - to disable")
      ->capture_default_str();
  cmd->add_option("--nvml", o.nvml, "NVML library to dlopen; none to disable")
      ->capture_default_str();
  cmd->add_option("--disk", o.disk, "filesystem to watch for disk pressure; - to disable")
      ->capture_default_str();
  cmd->add_option("--scontrol", o.scontrol,
                  "command printing `scontrol show node NAME -o` (default: none)");
  cmd->add_option("--interval", args->interval, "time between polls")->capture_default_str();
  cmd->add_option("--queue", o.max_queue, "unsent signals kept while the server is unreachable")
      ->capture_default_str();
  cmd->add_flag("--once", args->once,
                "poll every source once, send, and exit (1 when something was not delivered)");
  cmd->callback([&ctx, args] { ctx.run = [&ctx, args] { return run_agent(ctx, *args); }; });
}

}  // namespace gf
