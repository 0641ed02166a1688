// `gpufleet cluster create|wait|describe|list|update|delete` (docs/api.md, docs/provisioning.md).
// --wait reads DescribeCluster when the cluster's events say something changed (GET /v1/watch),
// at least once a second, and shows per-group progress (cli/progress.h).
#include <CLI/CLI.hpp>
#include <charconv>
#include <iostream>
#include <memory>
#include <optional>

#include "cli/app.h"
#include "cli/command_support.h"
#include "cli/progress.h"
#include "core/clock.h"

namespace gf {

namespace {

constexpr Duration kPollInterval = seconds(1);
constexpr int kTimeoutExitCode = 2;

struct WaitArgs {
  bool wait = false;
  bool full = false;
  std::string timeout = "30m";
};

struct FileArgs {
  std::string name;
  std::string file;
  std::string field_validation;  // empty: the server's default (Strict)
  std::string dry_run;           // "" or "server"
  WaitArgs wait;
};

// The request path with ?fieldValidation= and ?dryRun=All when their flags were given.
std::string with_field_validation(std::string path, const FileArgs& args) {
  return path + QueryString()
                    .add("fieldValidation", args.field_validation)
                    .add("dryRun", args.dry_run == "server" ? "All" : "")
                    .str();
}

// 2 (after saying why) when --dry-run is neither server nor none.
int check_dry_run(const FileArgs& args) {
  if (args.dry_run.empty() || args.dry_run == "server" || args.dry_run == "none") return 0;
  return usage_error("--dry-run: expected server or none, got \"" + args.dry_run + "\"");
}

void add_timeout_option(CLI::App* cmd, WaitArgs& args) {
  cmd->add_option("--timeout", args.timeout, "give up waiting after this long (exit 2), e.g. 10m")
      ->capture_default_str();
}

void add_file_option(CLI::App* cmd, FileArgs& args) {
  cmd->add_option("-f,--file", args.file, "the request, JSON or YAML (- reads stdin)")->required();
  cmd->add_option("--field-validation", args.field_validation,
                  "a field the request format does not have: Strict (default) refuses the "
                  "request naming it, Warn accepts it with a warning, Ignore accepts it");
  cmd->add_option("--dry-run", args.dry_run,
                  "server: the server validates the request and answers, and changes nothing");
}

// Exit code for a wait that ended: the last answer in json/yaml mode, a closing line otherwise.
int finish_wait(const CommandEnv& env, const Json& describe, WaitState state, WaitGoal goal) {
  print_if_structured(env, describe);
  const std::string name = text_field(describe, "ClusterName");
  if (state == WaitState::kFailed) {
    return print_error(Status(ErrorCode::kConflict,
                              "cluster " + name + " failed: " + wait_failure_reason(describe)));
  }
  if (!env.structured()) {
    std::cout << "cluster " << name << " is InService"
              << (goal == WaitGoal::kFull ? " with every instance group at its TargetCount" : "")
              << "\n";
  }
  return 0;
}

int timed_out(const CommandEnv& env, const Json& describe, WaitGoal goal,
              const std::string& timeout) {
  const std::string name = text_field(describe, "ClusterName");
  print_if_structured(env, describe);
  std::cerr << "error: timed out after " << timeout << " waiting for cluster " << name
            << " (ClusterStatus " << text_field(describe, "ClusterStatus")
            << "); provisioning goes on in the background: "
            << "run `gpufleet cluster wait " << name << (goal == WaitGoal::kFull ? " --full" : "")
            << "` to keep watching\n";
  return kTimeoutExitCode;
}

// Polls DescribeCluster until the goal is met (0), the cluster failed (1), a request failed (1)
// or the timeout passed (2).
int wait_for_cluster(CommandEnv& env, const std::string& name, WaitGoal goal,
                     const std::string& timeout) {
  auto limit = parse_duration(timeout);
  if (!limit.ok()) return usage_error("--timeout: " + limit.status().message());
  const bool tty = !env.structured() && stdout_is_tty();
  ProgressFrames frames(tty);
  const Time start = client_now();
  const Time deadline = start + *limit;
  std::optional<int64_t> first_running;
  // Woken by the cluster's events as they happen; at most kPollInterval apart, for the display.
  EventWatch watch(env.client.options(), "/v1/watch?kinds=Cluster,InstanceGroup,Instance");
  while (true) {
    auto describe = env.client.get(cluster_path(name));
    if (!describe.ok()) return print_error(describe.status());
    if (!env.structured()) {
      const int64_t running = running_instances(*describe);
      if (!first_running) first_running = running;
      const std::string timing = format_wait_timing(client_now() - start, running - *first_running,
                                                    missing_instances(*describe));
      std::cout << frames.next(render_cluster_progress(*describe, tty ? terminal_width() : 0),
                               timing)
                << std::flush;
    }
    const WaitState state = cluster_wait_state(*describe, goal);
    if (state != WaitState::kPending) return finish_wait(env, *describe, state, goal);
    const Time now = client_now();
    if (now >= deadline) return timed_out(env, *describe, goal, timeout);
    watch.wait_for_news(std::min<Duration>(kPollInterval, deadline - now));
  }
}

// 2 (after saying why) when --timeout is not a duration, else 0: checked before a change is sent.
int check_timeout(const WaitArgs& args) {
  auto limit = parse_duration(args.timeout);
  return limit.ok() ? 0 : usage_error("--timeout: " + limit.status().message());
}

void print_warnings(const Json& answer) {
  const Json& warnings = field(answer, "Warnings");
  if (!warnings.is_array()) return;
  for (const auto& w : warnings) std::cerr << "warning: " << text_of(w) << "\n";
}

// The ClusterName of an accepted create request (the answer carries only the ARN).
std::string cluster_name_of(const std::string& body) {
  auto docs = parse_documents(body);
  return docs.ok() && docs->size() == 1 ? text_field(docs->front(), "ClusterName") : "";
}

int create_cluster(CommandEnv& env, const FileArgs& args) {
  if (int rc = check_timeout(args.wait); rc != 0) return rc;
  if (int rc = check_dry_run(args); rc != 0) return rc;
  auto body = read_input_file(args.file);
  if (!body.ok()) return usage_error(body.status().message());
  auto answer = env.client.post(with_field_validation("/v1/clusters", args), *body,
                                content_type_for(args.file));
  if (!answer.ok()) return print_error(answer.status());
  print_warnings(*answer);
  if (args.dry_run == "server") {
    if (!print_if_structured(env, *answer)) {
      std::cout << text_field(*answer, "ClusterArn") << " (server dry run)\n";
    }
    return 0;
  }
  if (!args.wait.wait) {
    if (!print_if_structured(env, *answer)) std::cout << text_field(*answer, "ClusterArn") << "\n";
    return 0;
  }
  if (!env.structured()) std::cout << text_field(*answer, "ClusterArn") << "\n";
  return wait_for_cluster(env, cluster_name_of(*body), WaitGoal::kInService, args.wait.timeout);
}

int update_cluster(CommandEnv& env, const FileArgs& args) {
  if (int rc = check_timeout(args.wait); rc != 0) return rc;
  if (int rc = check_dry_run(args); rc != 0) return rc;
  auto body = read_input_file(args.file);
  if (!body.ok()) return usage_error(body.status().message());
  auto answer = env.client.put(with_field_validation(cluster_path(args.name), args), *body,
                               content_type_for(args.file));
  if (!answer.ok()) return print_error(answer.status());
  print_warnings(*answer);
  if (!args.wait.wait || args.dry_run == "server") {
    if (!print_if_structured(env, *answer)) {
      std::cout << "updated " << text_field(*answer, "ClusterArn")
                << (args.dry_run == "server" ? " (server dry run)" : "") << "\n";
    }
    return 0;
  }
  return wait_for_cluster(env, args.name, WaitGoal::kFull, args.wait.timeout);
}

std::string orchestrator_name(const Json& describe) {
  const Json& o = field(describe, "Orchestrator");
  return o.is_object() && !o.empty() ? o.begin().key() : "";
}

void print_cluster(const Json& d) {
  print_fields(std::cout,
               {{"Name", text_field(d, "ClusterName")},
                {"Arn", text_field(d, "ClusterArn")},
                {"Status", text_field(d, "ClusterStatus")},
                {"Mode", text_field(d, "NodeProvisioningMode") == "Continuous" ? "Continuous"
                                                                               : "all-or-nothing"},
                {"Orchestrator", orchestrator_name(d)},
                {"Created", text_field(d, "CreationTime")},
                {"FailureMessage", text_field(d, "FailureMessage")}});
  std::cout << "\n";
  Table table({"GROUP", "TYPE", "NODE-TYPE", "CURRENT", "TARGET", "MIN", "STATUS"});
  for (const auto& g : array_field(d, "InstanceGroups")) {
    const std::string node_type = text_field(field(g, "SlurmConfig"), "NodeType");
    table.add_row({text_field(g, "InstanceGroupName"), text_field(g, "InstanceType"),
                   node_type.empty() ? "-" : node_type, text_field(g, "CurrentCount"),
                   text_field(g, "TargetCount"), text_field(g, "MinCount"),
                   text_field(g, "Status")});
  }
  table.print(std::cout);
  const Json& su = field(d, "SoftwareUpdate");
  if (su.is_object()) {
    const Json& size = field(su, "MaximumBatchSize");
    std::cout << "Software update to " << text_field(su, "ImageId") << ": "
              << text_field(su, "Updated") << " of " << text_field(su, "Instances")
              << " instances updated, " << text_field(su, "Updating") << " updating (batch "
              << text_field(su, "Batches") << ", at most " << text_field(size, "Value")
              << (text_field(size, "Type") == "CAPACITY_PERCENTAGE" ? "%" : " instances")
              << " at a time"
              << (text_field(su, "NextBatchTime").empty()
                      ? ""
                      : "; next batch at " + text_field(su, "NextBatchTime"))
              << ")\n";
  }
  // A group short of its target says why and when it tries again (continuous provisioning).
  for (const auto& g : array_field(d, "InstanceGroups")) {
    const std::string next = text_field(g, "NextLaunchAttempt");
    if (next.empty()) continue;
    std::cout << text_field(g, "InstanceGroupName") << ": " << text_field(g, "CurrentCount")
              << " of " << text_field(g, "TargetCount")
              << "; last launch failed: " << text_field(g, "LastLaunchFailure")
              << "; retrying, next attempt at " << next << "\n";
  }
}

int describe_cluster(CommandEnv& env, const std::string& name) {
  auto answer = env.client.get(cluster_path(name));
  if (!answer.ok()) return print_error(answer.status());
  if (!print_if_structured(env, *answer)) print_cluster(*answer);
  return 0;
}

struct ListArgs {
  std::string name_contains;
  ListFlags list;
};

int list_clusters(CommandEnv& env, const ListArgs& args) {
  if (Status st = args.list.check(); !st.ok()) return usage_error(st.message());
  QueryString query;
  query.add("NameContains", args.name_contains);
  args.list.add_to(query);
  auto answer = env.client.get("/v1/clusters" + query.str());
  if (!answer.ok()) return print_error(answer.status());
  if (print_if_structured(env, *answer)) return 0;
  Table table({"NAME", "STATUS", "CREATED", wide_column("ARN")});
  for (const auto& c : array_field(*answer, "ClusterSummaries")) {
    table.add_row({text_field(c, "ClusterName"), text_field(c, "ClusterStatus"),
                   text_field(c, "CreationTime"), text_field(c, "ClusterArn")});
  }
  table.print(std::cout);
  return 0;
}

int delete_cluster(CommandEnv& env, const std::string& name) {
  auto answer = env.client.del(cluster_path(name));
  if (!answer.ok()) return print_error(answer.status());
  if (!print_if_structured(env, *answer)) {
    std::cout << "deleting cluster " << name << " (" << text_field(*answer, "ClusterArn") << ")\n";
  }
  return 0;
}

CLI::App* add_name_command(CLI::App* parent, const char* verb, const char* help,
                           std::string& name) {
  auto* cmd = parent->add_subcommand(verb, help);
  cmd->add_option("NAME", name, "cluster name")->required();
  return cmd;
}

void register_file_commands(CLI::App* cluster, CommandContext& ctx) {
  auto create = std::make_shared<FileArgs>();
  auto* cmd = cluster->add_subcommand("create",
                                      "create a cluster from a CreateCluster request file; "
                                      "prints its ARN");
  add_file_option(cmd, *create);
  cmd->add_flag("--wait", create->wait.wait,
                "show live progress until the cluster is InService (exit 0) or Failed (exit 1); "
                "with -o json|yaml print the last DescribeCluster answer instead");
  add_timeout_option(cmd, create->wait);
  run_with_client(cmd, ctx, [create](CommandEnv& env) { return create_cluster(env, *create); });

  auto update = std::make_shared<FileArgs>();
  cmd = add_name_command(cluster, "update", "update a cluster from an UpdateCluster request file",
                         update->name);
  add_file_option(cmd, *update);
  cmd->add_flag("--wait", update->wait.wait,
                "show live progress until every instance group is at its TargetCount");
  add_timeout_option(cmd, update->wait);
  run_with_client(cmd, ctx, [update](CommandEnv& env) { return update_cluster(env, *update); });
}

struct SoftwareArgs {
  std::string name;
  std::vector<std::string> groups;
  std::string batch_size;  // N or N%
  std::string wait_interval;
  std::string image;
  std::string dry_run;
  WaitArgs wait;
};

// UpdateClusterSoftware's body from the flags; a usage error names the flag.
Result<Json> software_update_body(const SoftwareArgs& a) {
  Json body = Json::object();
  if (!a.groups.empty()) {
    Json groups = Json::array();
    for (const std::string& g : a.groups) groups.push_back({{"InstanceGroupName", g}});
    body["InstanceGroups"] = std::move(groups);
  }
  Json deployment = Json::object();
  if (!a.batch_size.empty()) {
    const bool percent = a.batch_size.back() == '%';
    const std::string digits =
        percent ? a.batch_size.substr(0, a.batch_size.size() - 1) : a.batch_size;
    int64_t value = 0;
    auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (digits.empty() || ec != std::errc() || ptr != digits.data() + digits.size())
      return validation_error("--batch-size: expected a count (4) or a percentage (25%), got \"" +
                              a.batch_size + "\"");
    deployment["RollingUpdatePolicy"] = {
        {"MaximumBatchSize",
         {{"Type", percent ? "CAPACITY_PERCENTAGE" : "INSTANCE_COUNT"}, {"Value", value}}}};
  }
  if (!a.wait_interval.empty()) {
    auto d = parse_duration(a.wait_interval);
    if (!d.ok()) return d.status().with_prefix("--wait-interval");
    deployment["WaitIntervalInSeconds"] = d->count() / 1'000'000;
  }
  if (!deployment.empty()) body["DeploymentConfig"] = std::move(deployment);
  if (!a.image.empty()) body["ImageId"] = a.image;
  return body;
}

int update_software(CommandEnv& env, const SoftwareArgs& a) {
  if (int rc = check_timeout(a.wait); rc != 0) return rc;
  auto body = software_update_body(a);
  if (!body.ok()) return usage_error(body.status().message());
  FileArgs dry;
  dry.dry_run = a.dry_run;
  if (int rc = check_dry_run(dry); rc != 0) return rc;
  auto answer = env.client.post(
      with_field_validation(cluster_path(a.name) + "/software-update", dry), body->dump());
  if (!answer.ok()) return print_error(answer.status());
  const bool dry_run = a.dry_run == "server";
  if (!a.wait.wait || dry_run) {
    if (!print_if_structured(env, *answer)) {
      std::cout << "software update of " << a.name << " started"
                << (dry_run ? " (server dry run)" : "") << "\n";
    }
    return 0;
  }
  return wait_for_cluster(env, a.name, WaitGoal::kInService, a.wait.timeout);
}

void register_software_command(CLI::App* cluster, CommandContext& ctx) {
  auto args = std::make_shared<SoftwareArgs>();
  auto* cmd =
      add_name_command(cluster, "update-software",
                       "update the software of a cluster's nodes, a batch at a time (HyperPod's "
                       "UpdateClusterSoftware; the cluster is SystemUpdating meanwhile)",
                       args->name);
  cmd->add_option("--group", args->groups, "only this instance group (repeatable; default: all)");
  cmd->add_option("--batch-size", args->batch_size,
                  "nodes updated at once: a count (4) or a share of the groups' capacity (25%); "
                  "default 1");
  cmd->add_option("--wait-interval", args->wait_interval,
                  "pause between batches, e.g. 5m (at most 1h; default none)");
  cmd->add_option("--image-id", args->image, "the image to update to (default latest)");
  cmd->add_option("--dry-run", args->dry_run,
                  "server: the server checks the request and changes nothing");
  cmd->add_flag("--wait", args->wait.wait,
                "show live progress until the update is over and the cluster InService");
  add_timeout_option(cmd, args->wait);
  run_with_client(cmd, ctx, [args](CommandEnv& env) { return update_software(env, *args); });
}

}  // namespace

void register_cluster_commands(CLI::App& app, CommandContext& ctx) {
  auto* cluster =
      app.add_subcommand("cluster", "create, watch, inspect, change and delete clusters");
  cluster->require_subcommand(1);
  cluster->fallthrough();
  register_file_commands(cluster, ctx);
  register_slurm_conf_command(cluster, ctx);
  register_software_command(cluster, ctx);

  auto wait = std::make_shared<FileArgs>();
  auto* cmd = add_name_command(cluster, "wait", "show live progress until a cluster is InService",
                               wait->name);
  cmd->add_flag("--full", wait->wait.full,
                "wait until every instance group is at its TargetCount, not just InService");
  add_timeout_option(cmd, wait->wait);
  run_with_client(cmd, ctx, [wait](CommandEnv& env) {
    return wait_for_cluster(env, wait->name,
                            wait->wait.full ? WaitGoal::kFull : WaitGoal::kInService,
                            wait->wait.timeout);
  });

  auto name = std::make_shared<std::string>();
  cmd = add_name_command(cluster, "describe", "a cluster and its instance groups", *name);
  run_with_client(cmd, ctx, [name](CommandEnv& env) { return describe_cluster(env, *name); });
  cmd = add_name_command(cluster, "delete", "delete a cluster and terminate its instances", *name);
  run_with_client(cmd, ctx, [name](CommandEnv& env) { return delete_cluster(env, *name); });
  auto list = std::make_shared<ListArgs>();
  cmd = cluster->add_subcommand("list", "every cluster (-o wide adds the ARN)");
  cmd->add_option("--name-contains", list->name_contains, "only clusters whose name contains this");
  add_list_flags(cmd, list->list);
  run_with_client(cmd, ctx, [list](CommandEnv& env) { return list_clusters(env, *list); });
}

}  // namespace gf
