// The logs real instances keep (docs/local-cloud.md "Logs"), as kubectl shows a pod's:
//   gpufleet logs POD [-n NS] [-c CONTAINER] [-p|--previous] [-f|--follow]
//   gpufleet node logs CLUSTER NODE [--agent] [-f]     the lifecycle script's output (or the
//   agent's)
// --follow reads on from where the last read ended, once a second, until Ctrl-C.
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>

#include "cli/app.h"
#include "cli/command_support.h"
#include "core/clock.h"
#include "core/url.h"

namespace gf {

namespace {

struct LogArgs {
  std::string pod, ns = "default", container;
  bool previous = false, follow = false;
  std::string pod_running_timeout = "20s";
  std::string cluster, node;
  bool agent = false;
};

// Prints what `path` answers (text), then with `follow` what comes after it, every second. A pod
// that has not started yet (the server says "… yet") is waited for, up to `wait`, as kubectl's
// --pod-running-timeout does.
int print_log(CommandEnv& env, const std::string& path, bool follow, Duration wait = {}) {
  RealClock clock;
  const Time deadline = clock.now() + wait;
  auto text = env.client.get_text(path);
  while (!text.ok() && text.status().code() == ErrorCode::kNotFound &&
         text.status().message().ends_with(" yet") && clock.now() < deadline) {
    wall_sleep(milliseconds(500));
    text = env.client.get_text(path);
  }
  if (!text.ok()) return print_error(text.status());
  std::cout << *text << std::flush;
  if (!follow) return 0;
  const char* sep = path.find('?') == std::string::npos ? "?" : "&";
  std::string offset = env.client.last_header("X-Log-Offset");
  while (true) {
    wall_sleep(seconds(1));
    auto more = env.client.get_text(path + sep + "offset=" + (offset.empty() ? "0" : offset));
    if (!more.ok()) return print_error(more.status());
    std::cout << *more << std::flush;
    if (const std::string next = env.client.last_header("X-Log-Offset"); !next.empty())
      offset = next;
  }
}

int pod_logs(CommandEnv& env, const LogArgs& a) {
  const std::string path =
      "/v1/objects/pods/" + url_encode(a.ns) + "/" + url_encode(a.pod) + "/logs" +
      QueryString().add("container", a.container).add("previous", a.previous ? "true" : "").str();
  auto wait = parse_duration(a.pod_running_timeout);
  if (!wait.ok() || wait->count() < 0) {
    return usage_error("--pod-running-timeout: expected a duration like 20s, got \"" +
                       a.pod_running_timeout + "\"");
  }
  return print_log(env, path, a.follow, *wait);
}

int node_logs(CommandEnv& env, const LogArgs& a) {
  const std::string path = cluster_path(a.cluster) + "/nodes/" + url_encode(a.node) + "/logs" +
                           QueryString().add("source", a.agent ? "agent" : "lifecycle").str();
  return print_log(env, path, a.follow);
}

}  // namespace

void register_logs_commands(CLI::App& app, CommandContext& ctx) {
  auto args = std::make_shared<LogArgs>();
  auto* cmd = app.add_subcommand(
      "logs", "a pod's output, as its node keeps it (pods run for real on the local cloud)");
  cmd->add_option("POD", args->pod, "the pod, e.g. pytorch-test-worker-1")->required();
  cmd->add_option("-n,--namespace", args->ns, "its namespace")->capture_default_str();
  cmd->add_option("-c,--container", args->container, "the container (when it has several)");
  cmd->add_flag("-p,--previous", args->previous, "the container's run before its last restart");
  cmd->add_flag("-f,--follow", args->follow, "keep printing what it writes (Ctrl-C stops)");
  cmd->add_option("--pod-running-timeout", args->pod_running_timeout,
                  "how long to wait for a pod that has not started yet")
      ->capture_default_str();
  run_with_client(cmd, ctx, [args](CommandEnv& env) { return pod_logs(env, *args); });
}

void register_node_logs_command(CLI::App* node, CommandContext& ctx) {
  auto args = std::make_shared<LogArgs>();
  auto* cmd = node->add_subcommand(
      "logs", "a node's lifecycle script output, one block per attempt (or its agent's log)");
  cmd->add_option("CLUSTER", args->cluster, "the cluster")->required();
  cmd->add_option("NODE", args->node, "the instance id")->required();
  cmd->add_flag("--agent", args->agent, "the agent's own log instead");
  cmd->add_flag("-f,--follow", args->follow, "keep printing what it writes (Ctrl-C stops)");
  run_with_client(cmd, ctx, [args](CommandEnv& env) { return node_logs(env, *args); });
}

}  // namespace gf
