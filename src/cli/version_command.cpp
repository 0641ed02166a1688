#include <CLI/CLI.hpp>

#include <fmt/format.h>

#include <iostream>

#include "cli/app.h"
#include "cli/command_support.h"
#include "cli/output.h"
#include "client/client.h"

namespace gf {

void register_version_command(CLI::App& app, CommandContext& ctx) {
  auto* cmd =
      app.add_subcommand("version", "print the client's version, and the server's if reachable");
  cmd->callback([&ctx] {
    ctx.run = [&ctx]() -> int {
      auto format = parse_output(ctx.global.output);
      if (!format.ok()) {
        std::cerr << "error: " << format.status().message() << "\n";
        return 2;
      }
      Client client(client_options(ctx.global, 5));
      auto server = client.get("/v1/version");
      Json out = {{"Client", GPUFLEET_VERSION}};
      if (server.ok()) out["Server"] = *server;
      if (format->structured()) {
        Status printed = print_structured(std::cout, out, *format);
        if (!printed.ok()) std::cerr << "error: " << printed.message() << "\n";
        return printed.ok() ? 0 : 1;
      }
      std::cout << "client: gpufleet " << GPUFLEET_VERSION << "\n";
      if (server.ok()) {
        std::cout << "server: gpufleet " << server->value("Version", "?") << " at "
                  << ctx.global.server << " (journal seq " << server->value("AppliedSeq", 0)
                  << ")\n";
      } else {
        std::cout << "server: not reachable at " << ctx.global.server << "\n";
      }
      return 0;
    };
  });
}

// `gpufleet status`: the server this CLI talks to and the replicas of its journal.
void register_status_command(CLI::App& app, CommandContext& ctx) {
  auto* cmd = app.add_subcommand(
      "status", "show the server and every control-plane replica (role, lease epoch, journal seq)");
  run_with_client(cmd, ctx, [](CommandEnv& env) -> int {
    auto answer = env.client.get("/v1/replicas");
    if (!answer.ok()) return print_error(answer.status());
    if (print_if_structured(env, *answer)) return 0;
    const Json self = answer->value("Self", Json::object());
    std::cout << "server:  " << env.client.server() << " (" << self.value("Role", "?") << ", store "
              << self.value("Store", "?") << ", journal seq " << self.value("AppliedSeq", 0)
              << ")\n";
    if (self.value("Store", "") != "sqlite") {
      const std::string leader = self.value("LeaderUrl", "");
      std::cout << "leader:  " << (leader.empty() ? "none elected right now" : leader)
                << " (lease epoch " << self.value("Epoch", 0) << ")\n";
    }
    Table table({"REPLICA", "ROLE", "EPOCH", "APPLIED-SEQ", "SEEN", "URL"});
    for (const Json& r : answer->value("Replicas", Json::array())) {
      table.add_row({r.value("Id", ""), r.value("Role", ""), std::to_string(r.value("Epoch", 0)),
                     std::to_string(r.value("AppliedSeq", 0)),
                     r.contains("SeenSecondsAgo")
                         ? fmt::format("{:.1f}s ago", r.value("SeenSecondsAgo", 0.0))
                         : "now",
                     r.value("Url", "")});
    }
    table.print(std::cout);
    return 0;
  });
}

}  // namespace gf
