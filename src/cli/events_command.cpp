#include <CLI/CLI.hpp>

#include <iostream>

#include "cli/app.h"
#include "cli/client.h"
#include "cli/output.h"
#include "core/clock.h"

namespace gf {

namespace {

struct EventsArgs {
  std::string resource_type;
  std::string since;
  int max = 100;
  bool all = false;
};

}  // namespace

void register_events_command(CLI::App& app, CommandContext& ctx) {
  auto args = std::make_shared<EventsArgs>();
  auto* cmd = app.add_subcommand("events", "list control-plane events, newest first");
  cmd->add_option("--resource-type", args->resource_type, "only this ResourceType");
  cmd->add_option("--since", args->since, "only events newer than a duration ago (1h) or a time (2026-01-01T00:00:00Z)");
  cmd->add_option("--max", args->max, "events per page (1-100)")->capture_default_str();
  cmd->add_flag("--all", args->all, "follow NextToken through every page");
  cmd->callback([&ctx, args] {
    ctx.run = [&ctx, args]() -> int {
      auto format = parse_output_format(ctx.global.output);
      if (!format.ok()) {
        std::cerr << "error: " << format.status().message() << "\n";
        return 2;
      }
      std::string query = "?MaxResults=" + std::to_string(args->max);
      if (!args->resource_type.empty()) query += "&ResourceType=" + url_encode(args->resource_type);
      if (!args->since.empty()) {
        std::string after;
        if (auto d = parse_duration(args->since); d.ok()) {
          after = format_iso8601(RealClock().now() - *d);
        } else if (auto t = parse_iso8601(args->since); t.ok()) {
          after = format_iso8601(*t);
        } else {
          std::cerr << "error: --since: expected a duration like 1h or a time like "
                       "2026-01-01T00:00:00Z, got \"" << args->since << "\"\n";
          return 2;
        }
        query += "&EventTimeAfter=" + url_encode(after);
      }
      Client client({ctx.global.server, ctx.global.user, 60});
      Json all = Json::array();
      std::string token;
      do {
        auto page = client.get("/v1/events" + query + (token.empty() ? "" : "&NextToken=" + url_encode(token)));
        if (!page.ok()) {
          std::cerr << "error: " << page.status().message() << "\n";
          return 1;
        }
        for (auto& e : (*page)["Events"]) all.push_back(e);
        token = page->value("NextToken", "");
      } while (args->all && !token.empty());
      if (*format != OutputFormat::kTable) {
        Json out = {{"Events", all}};
        if (!token.empty()) out["NextToken"] = token;
        print_structured(std::cout, out, *format);
        return 0;
      }
      Table table({"TIME", "LEVEL", "TYPE", "DESCRIPTION"});
      for (const auto& e : all) {
        table.add_row({e.value("EventTime", ""), e.value("EventLevel", ""),
                       e.value("ResourceType", ""), e.value("Description", "")});
      }
      table.print(std::cout);
      if (!token.empty()) std::cout << "(more: --all)\n";
      return 0;
    };
  });
}

}  // namespace gf
