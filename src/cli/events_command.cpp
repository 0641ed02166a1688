// `gpufleet events [CLUSTER]`: control-plane events (GET /v1/events) or, with a cluster,
// ListClusterEvents (GET /v1/clusters/CLUSTER/events); newest first, following NextToken on --all.
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>

#include "cli/app.h"
#include "cli/command_support.h"

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
};

void print_events(const Json& events, bool per_cluster) {
  std::vector<std::string> headers = {"TIME", "LEVEL", "TYPE"};
  if (per_cluster) {
    headers.insert(headers.end(), {"GROUP", "INSTANCE"});
  } else {
    headers.push_back("CLUSTER");  // the fleet-wide list says which cluster an event is about
  }
  headers.push_back("DESCRIPTION");
  Table table(headers);
  for (const auto& e : events) {
    std::vector<std::string> row = {text_field(e, "EventTime"), text_field(e, "EventLevel"),
                                    text_field(e, "ResourceType")};
    if (per_cluster) {
      row.insert(row.end(), {text_field(e, "InstanceGroupName"), text_field(e, "InstanceId")});
    } else {
      row.push_back(text_field(e, "ClusterName"));
    }
    row.push_back(text_field(e, "Description"));
    table.add_row(std::move(row));
  }
  table.print(std::cout);
}

int list_events(CommandEnv& env, const EventsArgs& args) {
  QueryString query;
  query.add("MaxResults", std::to_string(args.max))
      .add("ResourceType", args.resource_type)
      .add("EventLevel", args.level)
      .add("InstanceGroupName", args.group)
      .add("NodeId", args.node);
  if (!args.since.empty()) {
    auto after = parse_time_flag("--since", args.since, client_now());
    if (!after.ok()) return usage_error(after.status().message());
    query.add("EventTimeAfter", format_iso8601(*after));
  }
  const std::string path = (args.cluster.empty() ? "/v1" : cluster_path(args.cluster)) + "/events";
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
  run_with_client(cmd, ctx, [args](CommandEnv& env) { return list_events(env, *args); });
}

}  // namespace gf
