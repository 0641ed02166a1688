#include "cli/app.h"

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli/command_support.h"
#include "client/client.h"

namespace gf {

namespace {

// ~/.config/gpufleet/config.yaml (or $GPUFLEET_CONFIG): `server:`, `token:`, `ca-cert:`; flags and
// environment variables win over it.
void read_config_file(GlobalOptions& g, bool server_from_env) {
  std::string path;
  if (const char* p = std::getenv("GPUFLEET_CONFIG"); p && *p) {
    path = p;
  } else if (const char* home = std::getenv("HOME"); home && *home) {
    path = std::string(home) + "/.config/gpufleet/config.yaml";
  }
  std::ifstream in(path);
  if (!in) return;
  std::stringstream ss;
  ss << in.rdbuf();
  auto doc = parse_yaml(ss.str());
  if (!doc.ok() || !doc->is_object()) {
    std::cerr << "warning: " << path
              << ": ignored: " << (doc.ok() ? "expected a mapping" : doc.status().message())
              << "\n";
    return;
  }
  auto str = [&](const char* key) {
    return doc->contains(key) && (*doc)[key].is_string() ? (*doc)[key].get<std::string>() : "";
  };
  if (!server_from_env && !str("server").empty()) g.server = str("server");
  if (g.token.empty()) g.token = str("token");
  if (g.ca_cert.empty()) g.ca_cert = str("ca-cert");
}

// kubectl's word order for the fleet's own kinds: `get clusters`, `describe cluster X`,
// `get nodes CLUSTER`, `describe node CLUSTER ID`, `get alert ID`, `describe remediation ID`,
// `get policy CLUSTER`, `get hosts`, `get tickets` become the commands that answer them
// (`cluster list`, `cluster describe X`, ...). The kinds `get` and `describe` already know are
// left as they are.
std::vector<std::string> kind_first_spelling(std::vector<std::string> args) {
  // The first words that are not options (nor the value of a global option).
  static const std::set<std::string, std::less<>> kValued = {
      "--server", "-o", "--output", "--user", "--token", "--ca-cert", "--color"};
  std::vector<size_t> words;
  for (size_t i = 1; i < args.size() && words.size() < 4; ++i) {
    if (args[i] == "--") break;
    if (args[i].size() > 1 && args[i][0] == '-') {
      if (kValued.contains(args[i])) ++i;
      continue;
    }
    words.push_back(i);
  }
  if (words.size() < 2) return args;
  const std::string verb = args[words[0]];
  if (verb != "get" && verb != "describe") return args;
  const std::string kind = args[words[1]];
  struct Spelling {
    std::string_view command, one, many;  // `many`: listing, when nothing is named
  };
  static const std::map<std::string, Spelling, std::less<>> kKinds = {
      {"cluster", {"cluster", "describe", "list"}},
      {"clusters", {"cluster", "describe", "list"}},
      {"node", {"node", "describe", "list"}},
      {"nodes", {"node", "describe", "list"}},
      {"alert", {"alert", "get", "list"}},
      {"alerts", {"alert", "get", "list"}},
      {"remediation", {"remediation", "describe", "list"}},
      {"remediations", {"remediation", "describe", "list"}},
      {"policy", {"policy", "get", "get"}},
      {"host", {"host", "list", "list"}},
      {"hosts", {"host", "list", "list"}},
      {"ticket", {"ticket", "list", "list"}},
      {"tickets", {"ticket", "list", "list"}},
  };
  auto it = kKinds.find(kind);
  if (it == kKinds.end()) return args;
  // A node is named by its cluster and its id: `get nodes C` lists, `get node C ID` shows.
  const bool one =
      verb == "describe" || (it->second.command == "node" ? words.size() > 3 : words.size() > 2);
  args[words[0]] = std::string(it->second.command);
  args[words[1]] = std::string(one ? it->second.one : it->second.many);
  return args;
}

// Where argv's words lead in the command tree: the deepest command they name and, when a word
// stands where that command needs a subcommand, that word. Options are skipped, with the value
// of one that takes a value.
struct CommandPath {
  CLI::App* app = nullptr;
  std::string unknown;
};

CommandPath command_path(CLI::App& root, int argc, char** argv) {
  CommandPath p{&root, ""};
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word == "--") break;
    if (word.size() > 1 && word[0] == '-') {
      if (word.find('=') != std::string::npos) continue;
      for (CLI::App* a = p.app; a != nullptr; a = a->get_parent()) {
        if (const CLI::Option* o = a->get_option_no_throw(word)) {
          if (o->get_items_expected_min() > 0) ++i;
          break;
        }
      }
      continue;
    }
    const std::vector<CLI::App*> sub =
        p.app->get_subcommands([&](CLI::App* s) { return s->check_name(word); });
    if (!sub.empty()) {
      p.app = sub.front();
      continue;
    }
    if (p.app->get_require_subcommand_min() > 0) p.unknown = word;
    break;
  }
  return p;
}

std::string command_name(const CLI::App* a) {
  std::string out;
  for (; a != nullptr; a = a->get_parent()) {
    out = a->get_parent() == nullptr ? "gpufleet" + out : " " + a->get_name() + out;
  }
  return out;
}

std::string subcommand_names(CLI::App* a) {
  std::string out;
  for (const CLI::App* s : a->get_subcommands([](CLI::App* c) { return !c->get_group().empty(); }))
    out += (out.empty() ? "" : ", ") + s->get_name();
  return out;
}

// A command tree error a person can act on: the unknown word and what exists there, or the
// subcommands of a command given none. Other parse errors keep CLI11's message.
int command_error(CLI::App& app, const CLI::ParseError& e, int argc, char** argv) {
  const CommandPath p = command_path(app, argc, argv);
  if (!p.unknown.empty()) {
    return usage_error(fmt::format("unknown command \"{}\" for \"{}\"; the commands are: {}",
                                   p.unknown, command_name(p.app), subcommand_names(p.app)));
  }
  if (dynamic_cast<const CLI::RequiredError*>(&e) != nullptr &&
      p.app->get_require_subcommand_min() > 0) {
    return usage_error(fmt::format("\"{}\" needs a command: {} (see {} --help)",
                                   command_name(p.app), subcommand_names(p.app),
                                   command_name(p.app)));
  }
  // Any other parse error (a bad option value, a missing argument) is a usage error too: CLI11
  // prints its message, and the exit code is the CLI's own 2 (docs/cli.md).
  app.exit(e);
  return 2;
}

}  // namespace

ClientOptions client_options(const GlobalOptions& global, int timeout_seconds) {
  ClientOptions o;
  o.server = global.server;
  o.user = global.user;
  o.timeout_seconds = timeout_seconds;
  o.token = global.token;
  o.ca_cert = global.ca_cert;
  return o;
}

namespace {

// Every subcommand, in the order `--help` lists them.
void register_commands(CLI::App& app, CommandContext& ctx) {
  register_serve_command(app, ctx);
  register_version_command(app, ctx);
  register_status_command(app, ctx);
  register_events_command(app, ctx);
  register_cluster_commands(app, ctx);
  register_node_commands(app, ctx);
  register_billing_command(app, ctx);
  register_simulate_command(app, ctx);
  register_object_commands(app, ctx);
  register_health_commands(app, ctx);
  register_agent_command(app, ctx);
  register_security_commands(app, ctx);
  register_journal_command(app, ctx);
  register_history_command(app, ctx);
  register_slurm_commands(app, ctx);
  register_logs_commands(app, ctx);
  register_kubeconfig_command(app, ctx);
  register_completion_command(app, ctx);
}

}  // namespace

int run_cli(int argc, char** argv) {
  CLI::App app{"gpufleet — a control plane for GPU training fleets"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("gpufleet ") + GPUFLEET_VERSION);

  CommandContext ctx;
  const char* env_server = std::getenv("GPUFLEET_SERVER");
  const char* env_user = std::getenv("GPUFLEET_USER");
  ctx.global.server = env_server && *env_server ? env_server : "http://127.0.0.1:8470";
  ctx.global.user = env_user && *env_user ? env_user : "anonymous";
  if (const char* t = std::getenv("GPUFLEET_TOKEN"); t && *t) ctx.global.token = t;
  if (const char* c = std::getenv("GPUFLEET_CA_CERT"); c && *c) ctx.global.ca_cert = c;
  read_config_file(ctx.global, env_server && *env_server);
  app.add_option("--server", ctx.global.server, "gpufleet API URL ($GPUFLEET_SERVER)")
      ->capture_default_str();
  app.add_option("-o,--output", ctx.global.output,
                 "output format: table, wide (extra columns, nothing cut), json, yaml, "
                 "jsonpath=TEMPLATE (kubectl's, e.g. '{.items[*].metadata.name}') or "
                 "custom-columns=HEADER:PATH,... (docs/cli.md)")
      ->capture_default_str();
  app.add_option("--color", ctx.global.color,
                 "colour status words: auto (on a terminal unless $NO_COLOR is set), always, "
                 "never")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->capture_default_str();
  app.add_option("--user", ctx.global.user,
                 "caller identity sent as X-Gpufleet-User when the server has no auth file "
                 "($GPUFLEET_USER)")
      ->capture_default_str();
  app.add_option("--token", ctx.global.token,
                 "bearer token ($GPUFLEET_TOKEN, or token: in ~/.config/gpufleet/config.yaml)");
  app.add_option("--ca-cert", ctx.global.ca_cert,
                 "PEM file of the CA that signed an https server ($GPUFLEET_CA_CERT)");

  register_commands(app, ctx);

  std::vector<std::string> words = kind_first_spelling(std::vector<std::string>(argv, argv + argc));
  std::vector<char*> spelled;
  for (std::string& w : words) spelled.push_back(w.data());
  const int n = static_cast<int>(spelled.size());
  try {
    app.parse(n, spelled.data());
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    return command_error(app, e, n, spelled.data());
  }
  if (!ctx.run) return 2;
  return ctx.run();
}

}  // namespace gf
