// What Slurm users type, on a Slurm cluster (docs/cli.md "Slurm"):
//   gpufleet sinfo CLUSTER                  PARTITION AVAIL TIMELIMIT NODES STATE NODELIST
//   gpufleet squeue CLUSTER                 JOBID PARTITION NAME ACCOUNT ST TIME NODES
//                                           NODELIST(REASON)
//   gpufleet cluster slurm-conf CLUSTER [-f slurm.conf]
//                                           the file with gpufleet's managed NodeName and
//                                           PartitionName blocks merged in (merge mode)
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>

#include "cli/app.h"
#include "cli/command_support.h"

namespace gf {

namespace {

int show_sinfo(CommandEnv& env, const std::string& cluster) {
  auto answer = env.client.get(cluster_path(cluster) + "/slurm/sinfo");
  if (!answer.ok()) return print_error(answer.status());
  if (print_if_structured(env, *answer)) return 0;
  Table t({"PARTITION", "AVAIL", "TIMELIMIT", "NODES", "STATE", "NODELIST"});
  for (const Json& p : array_field(*answer, "Partitions")) {
    t.add_row({text_field(p, "Partition"), text_field(p, "Avail"), text_field(p, "TimeLimit"),
               text_field(p, "Nodes"), text_field(p, "State"), text_field(p, "NodeList")});
  }
  t.print(std::cout);
  return 0;
}

int show_squeue(CommandEnv& env, const std::string& cluster) {
  auto answer = env.client.get(cluster_path(cluster) + "/slurm/squeue");
  if (!answer.ok()) return print_error(answer.status());
  if (print_if_structured(env, *answer)) return 0;
  Table t({"JOBID", "PARTITION", "NAME", "ACCOUNT", "ST", "TIME", "NODES", "NODELIST(REASON)"});
  for (const Json& j : array_field(*answer, "Jobs")) {
    const std::string reason = text_field(j, "Reason");
    t.add_row({text_field(j, "JobId"), text_field(j, "Partition"), text_field(j, "Name"),
               text_field(j, "Account"), text_field(j, "State"), text_field(j, "Time"),
               text_field(j, "Nodes"),
               reason.empty() ? text_field(j, "NodeList") : "(" + reason + ")"});
  }
  t.print(std::cout);
  return 0;
}

struct SlurmConfArgs {
  std::string cluster;
  std::string file;  // the cluster's current slurm.conf ("" = none yet)
};

int show_slurm_conf(CommandEnv& env, const SlurmConfArgs& a) {
  std::string existing;
  if (!a.file.empty()) {
    auto text = read_input_file(a.file);
    if (!text.ok()) return usage_error(text.status().message());
    existing = std::move(*text);
  }
  auto answer =
      env.client.post(cluster_path(a.cluster) + "/slurm-conf/merge", existing, "text/plain");
  if (!answer.ok()) return print_error(answer.status());
  if (print_if_structured(env, *answer)) return 0;
  for (const Json& w : array_field(*answer, "Warnings"))
    std::cerr << "warning: " << text_of(w) << "\n";
  std::cout << text_field(*answer, "SlurmConf");
  return 0;
}

}  // namespace

void register_slurm_commands(CLI::App& app, CommandContext& ctx) {
  auto sinfo_cluster = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand(
      "sinfo", "a Slurm cluster's partitions and node states (idle, mix, alloc, drain, down)");
  cmd->add_option("CLUSTER", *sinfo_cluster, "the Slurm cluster")->required();
  run_with_client(cmd, ctx,
                  [sinfo_cluster](CommandEnv& env) { return show_sinfo(env, *sinfo_cluster); });

  auto squeue_cluster = std::make_shared<std::string>();
  cmd = app.add_subcommand(
      "squeue", "the jobs running on a Slurm cluster and those waiting for it, with why");
  cmd->add_option("CLUSTER", *squeue_cluster, "the Slurm cluster")->required();
  run_with_client(cmd, ctx,
                  [squeue_cluster](CommandEnv& env) { return show_squeue(env, *squeue_cluster); });
}

void register_slurm_conf_command(CLI::App* cluster, CommandContext& ctx) {
  auto args = std::make_shared<SlurmConfArgs>();
  auto* cmd = cluster->add_subcommand(
      "slurm-conf",
      "the slurm.conf of a Slurm cluster: gpufleet's NodeName/PartitionName blocks merged into "
      "the file given (every other line kept byte for byte), or alone");
  cmd->add_option("CLUSTER", args->cluster, "the Slurm cluster")->required();
  cmd->add_option("-f,--file", args->file, "the cluster's current slurm.conf (- reads stdin)");
  run_with_client(cmd, ctx, [args](CommandEnv& env) { return show_slurm_conf(env, *args); });
}

}  // namespace gf
