// `gpufleet history jobs`: the jobs that left the control plane's memory, from the journal's
// history table (GET /v1/history/jobs), as Slurm's sacct reads its accounting database. See
// docs/operations.md "What is kept where" and docs/cli.md.
#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>

#include "cli/app.h"
#include "cli/command_support.h"
#include "cli/output.h"

namespace gf {

namespace {

struct HistoryArgs {
  std::string tenant, since, until, state, name;
  int limit = 1000;
};

std::string millis_time(const Json& v) {
  if (!v.is_number_integer()) return "";
  return format_iso8601(from_micros(v.get<int64_t>() * 1000));
}

int list_history_jobs(CommandEnv& env, const HistoryArgs& args) {
  if (!args.since.empty()) {
    if (Status st = check_time_flag("--since", args.since); !st.ok()) return print_error(st);
  }
  if (!args.until.empty()) {
    if (Status st = check_time_flag("--until", args.until); !st.ok()) return print_error(st);
  }
  if (args.limit < 1) return usage_error("--limit: must be at least 1");
  Json all = Json::array();
  std::string token;
  do {
    QueryString q;
    q.add("tenant", args.tenant)
        .add("since", args.since)
        .add("until", args.until)
        .add("state", args.state)
        .add("name", args.name)
        .add("limit", std::to_string(std::min(args.limit - static_cast<int>(all.size()), 1000)))
        .add("nextToken", token);
    auto answer = env.client.get("/v1/history/jobs" + q.str());
    if (!answer.ok()) return print_error(answer.status());
    for (const Json& j : array_field(*answer, "jobs")) all.push_back(j);
    token = text_field(*answer, "nextToken");
  } while (!token.empty() && static_cast<int>(all.size()) < args.limit);
  if (print_if_structured(env, Json{{"jobs", all}})) return 0;
  Table table({"JOBID", "NAME", "KIND", "TENANT", "STATE", "CREATED", "ENDED"});
  for (const Json& j : all) {
    table.add_row({text_field(j, "jobId"), text_field(j, "jobName"), text_field(j, "kind"),
                   text_field(j, "tenant"), text_field(j, "historyState"),
                   millis_time(field(j, "createdAt")), millis_time(field(j, "endedAt"))});
  }
  table.print(std::cout);
  return 0;
}

}  // namespace

void register_history_command(CLI::App& app, CommandContext& ctx) {
  auto* history = app.add_subcommand(
      "history", "what left the control plane's memory, from the journal's history (as sacct)");
  history->require_subcommand(1);
  history->fallthrough();
  auto args = std::make_shared<HistoryArgs>();
  auto* jobs = history->add_subcommand(
      "jobs", "finished jobs past --job-retention and deleted workloads, oldest filed first");
  jobs->add_option("--tenant", args->tenant, "only this quota share, namespace or job queue");
  jobs->add_option(
      "--since", args->since,
      "only jobs that ended after a duration ago by the server's clock (7d) or a time");
  jobs->add_option("--until", args->until, "only jobs that ended before a duration ago or a time");
  jobs->add_option("--state", args->state, "only SUCCEEDED, FAILED or DELETED");
  jobs->add_option("--name", args->name, "only jobs of this name");
  jobs->add_option("--limit", args->limit, "at most N jobs")->capture_default_str();
  run_with_client(jobs, ctx, [args](CommandEnv& env) { return list_history_jobs(env, *args); });
}

}  // namespace gf
