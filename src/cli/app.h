// The `gpufleet` command line: `serve`, `version`, `events`, … with the global flags
// --server URL, -o table|json|yaml and --user.
#pragma once

#include <functional>
#include <string>

namespace CLI {
class App;
}

namespace gf {

struct GlobalOptions {
  std::string server;
  std::string output = "table";
  std::string color = "auto";  // --color auto|always|never
  std::string user;
  std::string token;    // --token, $GPUFLEET_TOKEN, or the config file's token
  std::string ca_cert;  // --ca-cert, $GPUFLEET_CA_CERT, or the config file's ca-cert
};

// The client options the global flags give (the request timeout is the caller's).
struct ClientOptions;
ClientOptions client_options(const GlobalOptions& global, int timeout_seconds);

// Each subcommand registers itself and sets `run` when chosen; it returns the exit code.
struct CommandContext {
  GlobalOptions global;
  std::function<int()> run;
};

void register_serve_command(CLI::App& app, CommandContext& ctx);
// `token create` and `audit` (security_commands.cpp).
void register_journal_command(CLI::App& app, CommandContext& ctx);
void register_security_commands(CLI::App& app, CommandContext& ctx);
void register_history_command(CLI::App& app, CommandContext& ctx);
void register_version_command(CLI::App& app, CommandContext& ctx);
// `gpufleet kubeconfig` (kubeconfig_command.cpp, docs/kubernetes.md).
void register_kubeconfig_command(CLI::App& app, CommandContext& ctx);
// The `kubectl amc` plugin: this binary run as `kubectl-amc` (docs/kubernetes.md).
int run_kubectl_amc(int argc, char** argv);
void register_status_command(CLI::App& app, CommandContext& ctx);
void register_events_command(CLI::App& app, CommandContext& ctx);
void register_cluster_commands(CLI::App& app, CommandContext& ctx);
void register_node_commands(CLI::App& app, CommandContext& ctx);
void register_billing_command(CLI::App& app, CommandContext& ctx);
void register_simulate_command(CLI::App& app, CommandContext& ctx);
void register_object_commands(CLI::App& app, CommandContext& ctx);
// alert, remediation, policy, circuit-breaker, host, ticket; node signal|clear|label (after
// register_node_commands, whose `node` group it extends).
void register_health_commands(CLI::App& app, CommandContext& ctx);
// agent: the node agent's detectors (src/agent/).
void register_agent_command(CLI::App& app, CommandContext& ctx);
// sinfo and squeue (slurm_commands.cpp); `cluster slurm-conf` is added to the cluster group.
void register_slurm_commands(CLI::App& app, CommandContext& ctx);
void register_slurm_conf_command(CLI::App* cluster, CommandContext& ctx);
// logs POD, and `node logs` in the node group (logs_command.cpp).
void register_logs_commands(CLI::App& app, CommandContext& ctx);
void register_node_logs_command(CLI::App* node, CommandContext& ctx);
// completion bash|zsh: a completion script from the command tree (last: it walks the tree).
void register_completion_command(CLI::App& app, CommandContext& ctx);

int run_cli(int argc, char** argv);

}  // namespace gf
