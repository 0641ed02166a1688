#include "cli/app.h"

#include <CLI/CLI.hpp>

#include <cstdlib>
#include <iostream>

namespace gf {

int run_cli(int argc, char** argv) {
  CLI::App app{"gpufleet — a control plane for GPU training fleets"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("gpufleet ") + GPUFLEET_VERSION);

  CommandContext ctx;
  const char* env_server = std::getenv("GPUFLEET_SERVER");
  const char* env_user = std::getenv("GPUFLEET_USER");
  ctx.global.server = env_server && *env_server ? env_server : "http://127.0.0.1:8470";
  ctx.global.user = env_user && *env_user ? env_user : "anonymous";
  app.add_option("--server", ctx.global.server, "gpufleet API URL ($GPUFLEET_SERVER)")
      ->capture_default_str();
  app.add_option("-o,--output", ctx.global.output, "output format: table, json or yaml")
      ->capture_default_str();
  app.add_option("--user", ctx.global.user, "caller identity sent as X-Gpufleet-User ($GPUFLEET_USER)")
      ->capture_default_str();

  register_serve_command(app, ctx);
  register_version_command(app, ctx);
  register_events_command(app, ctx);
  register_cluster_commands(app, ctx);
  register_node_commands(app, ctx);
  register_billing_command(app, ctx);
  register_simulate_command(app, ctx);
  register_object_commands(app, ctx);
  register_health_commands(app, ctx);
  register_agent_command(app, ctx);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (!ctx.run) return 2;
  return ctx.run();
}

}  // namespace gf
