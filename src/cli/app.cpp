#include "cli/app.h"

#include <CLI/CLI.hpp>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include "client/client.h"

namespace gf {

namespace {

// ~/.config/gpufleet/config.yaml (or $GPUFLEET_CONFIG): `server:`, `token:`, `ca-cert:`; flags and
// environment variables win over it.
void read_config_file(GlobalOptions& g, bool server_from_env) {
  std::string path;
  if (const char* p = std::getenv("GPUFLEET_CONFIG"); p && *p) {
    path = p;
  } else if (const char* home = std::getenv("HOME"); home && *home) {
    path = std::string(home) + "/.config/gpufleet/config.yaml";
  }
  std::ifstream in(path);
  if (!in) return;
  std::stringstream ss;
  ss << in.rdbuf();
  auto doc = parse_yaml(ss.str());
  if (!doc.ok() || !doc->is_object()) {
    std::cerr << "warning: " << path
              << ": ignored: " << (doc.ok() ? "expected a mapping" : doc.status().message())
              << "\n";
    return;
  }
  auto str = [&](const char* key) {
    return doc->contains(key) && (*doc)[key].is_string() ? (*doc)[key].get<std::string>() : "";
  };
  if (!server_from_env && !str("server").empty()) g.server = str("server");
  if (g.token.empty()) g.token = str("token");
  if (g.ca_cert.empty()) g.ca_cert = str("ca-cert");
}

}  // namespace

ClientOptions client_options(const GlobalOptions& global, int timeout_seconds) {
  ClientOptions o;
  o.server = global.server;
  o.user = global.user;
  o.timeout_seconds = timeout_seconds;
  o.token = global.token;
  o.ca_cert = global.ca_cert;
  return o;
}

int run_cli(int argc, char** argv) {
  CLI::App app{"gpufleet — a control plane for GPU training fleets"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("gpufleet ") + GPUFLEET_VERSION);

  CommandContext ctx;
  const char* env_server = std::getenv("GPUFLEET_SERVER");
  const char* env_user = std::getenv("GPUFLEET_USER");
  ctx.global.server = env_server && *env_server ? env_server : "http://127.0.0.1:8470";
  ctx.global.user = env_user && *env_user ? env_user : "anonymous";
  if (const char* t = std::getenv("GPUFLEET_TOKEN"); t && *t) ctx.global.token = t;
  if (const char* c = std::getenv("GPUFLEET_CA_CERT"); c && *c) ctx.global.ca_cert = c;
  read_config_file(ctx.global, env_server && *env_server);
  app.add_option("--server", ctx.global.server, "gpufleet API URL ($GPUFLEET_SERVER)")
      ->capture_default_str();
  app.add_option("-o,--output", ctx.global.output, "output format: table, json or yaml")
      ->capture_default_str();
  app.add_option("--user", ctx.global.user,
                 "caller identity sent as X-Gpufleet-User when the server has no auth file "
                 "($GPUFLEET_USER)")
      ->capture_default_str();
  app.add_option("--token", ctx.global.token,
                 "bearer token ($GPUFLEET_TOKEN, or token: in ~/.config/gpufleet/config.yaml)");
  app.add_option("--ca-cert", ctx.global.ca_cert,
                 "PEM file of the CA that signed an https server ($GPUFLEET_CA_CERT)");

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
  register_security_commands(app, ctx);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (!ctx.run) return 2;
  return ctx.run();
}

}  // namespace gf
