// `gpufleet events [CLUSTER]`: control-plane events (GET /v1/events) or, with a cluster,
// ListClusterEvents (GET /v1/clusters/CLUSTER/events); newest first, following NextToken on --all.
#include <CLI/CLI.hpp>
#include <iostream>
#include <map>
#include <memory>

#include "cli/app.h"
#include "cli/command_support.h"
#include "core/clock.h"

namespace gf {

namespace {

struct EventsArgs {
  std::string cluster;
  std::string group;
  std::string node;
  std::string resource_type;
  std::string level;
  std::string since;
  int max = 100;
  bool all = false;
  bool follow = false;
};

std::vector<std::string> event_row(const Json& e, bool per_cluster) {
  std::vector<std::string> row = {text_field(e, "EventTime"), text_field(e, "EventLevel"),
                                  text_field(e, "ResourceType")};
  if (per_cluster) {
    row.insert(row.end(), {text_field(e, "InstanceGroupName"), text_field(e, "InstanceId")});
  } else {
    row.push_back(text_field(e, "ClusterName"));  // the fleet-wide list names the cluster
  }
  row.push_back(text_field(e, "Description"));
  return row;
}

std::vector<std::string> event_headers(bool per_cluster) {
  std::vector<std::string> headers = {"TIME", "LEVEL", "TYPE"};
  if (per_cluster) {
    headers.insert(headers.end(), {"GROUP", "INSTANCE"});
  } else {
    headers.push_back("CLUSTER");
  }
  headers.push_back("DESCRIPTION");
  return headers;
}

void print_events(const Json& events, bool per_cluster) {
  std::vector<Column> columns;
  for (const std::string& h : event_headers(per_cluster)) {
    columns.push_back(h == "DESCRIPTION" ? text_column(h) : Column(h));
  }
  Table table(std::move(columns));
  for (const auto& e : events) table.add_row(event_row(e, per_cluster));
  table.print(std::cout);
}

// The filters; a page of `max` events (default: --max).
QueryString base_query(const EventsArgs& args, int max = 0) {
  QueryString query;
  query.add("MaxResults", std::to_string(max > 0 ? max : args.max))
      .add("ResourceType", args.resource_type)
      .add("EventLevel", args.level)
      .add("InstanceGroupName", args.group)
      .add("NodeId", args.node);
  return query;
}

std::string events_path(const EventsArgs& args) {
  return (args.cluster.empty() ? "/v1" : cluster_path(args.cluster)) + "/events";
}

// --follow: the events so far oldest first, then each new one as it happens (polled once a
// second; events of the newest second are asked for again and told apart by EventId). Rows are
// aligned on fixed widths so later lines line up with earlier ones. Ends on Ctrl-C or an error.
int follow_events(CommandEnv& env, const EventsArgs& args) {
  const bool per_cluster = !args.cluster.empty();
  std::string after = args.since;
  std::map<std::string, Time> seen;  // EventId -> EventTime of those shown, newer than `after`
  bool first = true;
  while (true) {
    std::vector<Json> fresh;  // newest first, as pages come
    std::string token;
    do {
      QueryString query = base_query(args);
      query.add("EventTimeAfter", after).add("NextToken", token);
      auto page = env.client.get(events_path(args) + query.str());
      if (!page.ok()) return print_error(page.status());
      for (const Json& e : array_field(*page, "Events")) {
        if (!seen.contains(text_field(e, "EventId"))) fresh.push_back(e);
      }
      token = text_field(*page, "NextToken");
    } while (!token.empty() && !first);  // the first round shows the newest page only
    for (auto it = fresh.rbegin(); it != fresh.rend(); ++it) {
      if (env.structured()) {
        std::cout << safe_dump(*it) << "\n";
      } else {
        std::cout << aligned_row(event_row(*it, per_cluster),
                                 {20, 5, 13, per_cluster ? size_t{16} : size_t{20}})
                  << "\n";
      }
    }
    std::cout << std::flush;
    for (const Json& e : fresh) {
      auto t = parse_iso8601(text_field(e, "EventTime"));
      seen.emplace(text_field(e, "EventId"), t.ok() ? *t : Time{});
    }
    if (!fresh.empty()) {
      // Ask again from one second before the newest event: its second may not be over yet.
      if (auto newest = parse_iso8601(text_field(fresh.front(), "EventTime")); newest.ok()) {
        const Time from = *newest - seconds(1);
        after = format_iso8601(from);
        std::erase_if(seen, [from](const auto& kv) { return kv.second <= from; });
        // The first page stops at --max: what else happened in the newest second is history
        // too, not news; it is marked seen, not shown out of order.
        if (first) {
          QueryString query = base_query(args, 100);
          query.add("EventTimeAfter", after);
          auto rest = env.client.get(events_path(args) + query.str());
          if (!rest.ok()) return print_error(rest.status());
          for (const Json& e : array_field(*rest, "Events"))
            seen.emplace(text_field(e, "EventId"), *newest);
        }
      }
    }
    first = false;
    wall_sleep(seconds(1));
  }
}

int list_events(CommandEnv& env, const EventsArgs& args) {
  if (!args.since.empty()) {
    if (Status st = check_time_flag("--since", args.since); !st.ok()) {
      return usage_error(st.message());
    }
  }
  if (args.follow) {
    if (!env.structured())
      std::cout << aligned_row(event_headers(!args.cluster.empty()),
                               {20, 5, 13, args.cluster.empty() ? size_t{20} : size_t{16}})
                << "\n";
    return follow_events(env, args);
  }
  QueryString query = base_query(args);
  query.add("EventTimeAfter", args.since);  // the server resolves "1h" on its own clock
  const std::string path = events_path(args);
  Json all = Json::array();
  std::string token;
  do {
    auto page = env.client.get(path + QueryString(query).add("NextToken", token).str());
    if (!page.ok()) return print_error(page.status());
    for (const auto& e : array_field(*page, "Events")) all.push_back(e);
    token = text_field(*page, "NextToken");
  } while (args.all && !token.empty());
  Json out = {{"Events", all}};
  if (!token.empty()) out["NextToken"] = token;
  if (print_if_structured(env, out)) return 0;
  print_events(all, !args.cluster.empty());
  if (!token.empty()) std::cout << "(more: --all)\n";
  return 0;
}

}  // namespace

void register_events_command(CLI::App& app, CommandContext& ctx) {
  auto args = std::make_shared<EventsArgs>();
  auto* cmd = app.add_subcommand(
      "events", "list control-plane events, or one cluster's events, newest first");
  cmd->add_option("CLUSTER", args->cluster, "only this cluster's events (ListClusterEvents)");
  cmd->add_option("--group", args->group, "only this instance group");
  cmd->add_option("--node", args->node, "only this instance id");
  cmd->add_option("--resource-type", args->resource_type,
                  "only this type, as the TYPE column shows it (Cluster, InstanceGroup, Instance, "
                  "Job, Alert, Remediation, Host, ControlPlane; any case)");
  cmd->add_option("--level", args->level, "only this level: Info, Warn or Error");
  cmd->add_option("--since", args->since,
                  "only events newer than a duration ago (1h) or a time (2026-01-01T00:00:00Z)");
  cmd->add_option("--max", args->max, "events per page (1-100)")->capture_default_str();
  cmd->add_flag("--all", args->all, "follow NextToken through every page");
  cmd->add_flag("-f,--follow", args->follow,
                "keep printing events as they happen, oldest first (Ctrl-C stops); with -o json "
                "one event per line");
  run_with_client(cmd, ctx, [args](CommandEnv& env) { return list_events(env, *args); });
}

}  // namespace gf
