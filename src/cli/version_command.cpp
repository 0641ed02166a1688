#include <CLI/CLI.hpp>

#include <iostream>

#include "cli/app.h"
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

}  // namespace gf
