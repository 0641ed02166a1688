// `gpufleet completion bash|zsh`: a shell completion script generated from the command tree
// itself, so it never falls behind the commands (docs/cli.md "Shell completion"). Commands and
// flags complete at every level; where a command's first argument is a cluster, the cluster
// names come from the server (`cluster list -o jsonpath=…`, quietly nothing when it is down).
#include <CLI/CLI.hpp>
#include <iostream>
#include <string>
#include <vector>

#include "cli/app.h"
#include "cli/command_support.h"

namespace gf {

namespace {

struct CommandInfo {
  std::string path;                // " cluster create" (a leading space per word; "" = the root)
  std::vector<std::string> words;  // subcommands and flags
  bool takes_cluster = false;      // its first positional names a cluster
};

bool first_positional_is_cluster(CLI::App* app, const std::string& path) {
  for (const CLI::Option* o : app->get_options()) {
    if (!o->get_positional()) continue;
    const std::string name = o->get_name();
    return name == "CLUSTER" || (path.rfind(" cluster ", 0) == 0 && name == "NAME");
  }
  return false;
}

void collect(CLI::App* app, const std::string& path, std::vector<CommandInfo>& out) {
  CommandInfo info;
  info.path = path;
  info.takes_cluster = first_positional_is_cluster(app, path);
  for (CLI::App* sub : app->get_subcommands([](CLI::App* s) { return !s->get_group().empty(); }))
    info.words.push_back(sub->get_name());
  for (const CLI::Option* o : app->get_options()) {
    if (o->get_positional()) continue;
    for (const std::string& l : o->get_lnames()) info.words.push_back("--" + l);
  }
  out.push_back(info);
  for (CLI::App* sub : app->get_subcommands([](CLI::App* s) { return !s->get_group().empty(); }))
    collect(sub, path + " " + sub->get_name(), out);
}

std::string join(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

std::string bash_script(CLI::App& root) {
  std::vector<CommandInfo> commands;
  collect(&root, "", commands);
  std::string known, cases, cluster_paths;
  for (const CommandInfo& c : commands) {
    if (!c.path.empty()) known += (known.empty() ? "" : "|") + ("\"" + c.path + "\"");
    cases += "    \"" + c.path + "\") words=\"" + join(c.words) + "\" ;;\n";
    if (c.takes_cluster)
      cluster_paths += (cluster_paths.empty() ? "" : "|") + ("\"" + c.path + "\"");
  }
  if (cluster_paths.empty()) cluster_paths = "\"-\"";
  return "# gpufleet shell completion (bash; zsh loads it through bashcompinit).\n"
         "#   source <(gpufleet completion bash)\n"
         "_gpufleet() {\n"
         "  local cur=\"${COMP_WORDS[COMP_CWORD]}\" path=\"\" w i words positional=0\n"
         "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
         "    w=\"${COMP_WORDS[i]}\"\n"
         "    case \"$w\" in -*) continue ;; esac\n"
         "    case \"$path $w\" in\n"
         "      " +
         known +
         ") path=\"$path $w\" ;;\n"
         "      *) positional=$((positional + 1)) ;;\n"
         "    esac\n"
         "  done\n"
         "  case \"$path\" in\n" +
         cases +
         "    *) words=\"\" ;;\n"
         "  esac\n"
         "  if [[ \"$cur\" != -* && $positional -eq 0 ]]; then\n"
         "    case \"$path\" in\n"
         "      " +
         cluster_paths +
         ")\n"
         "        words=\"$words $(\"${COMP_WORDS[0]}\" cluster list "
         "-o 'jsonpath={.ClusterSummaries[*].ClusterName}' 2>/dev/null)\" ;;\n"
         "    esac\n"
         "  fi\n"
         "  COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n"
         "}\n"
         "complete -F _gpufleet gpufleet\n";
}

}  // namespace

void register_completion_command(CLI::App& app, CommandContext& ctx) {
  auto shell = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand(
      "completion",
      "print a shell completion script: source <(gpufleet completion bash), or for zsh "
      "source <(gpufleet completion zsh)");
  cmd->add_option("SHELL", *shell, "bash or zsh")
      ->required()
      ->check(CLI::IsMember({"bash", "zsh"}));
  CLI::App* root = &app;
  cmd->callback([&ctx, shell, root] {
    ctx.run = [shell, root] {
      if (*shell == "zsh") {
        std::cout << "# gpufleet shell completion for zsh (through bash's completion).\n"
                     "autoload -U +X compinit && compinit\n"
                     "autoload -U +X bashcompinit && bashcompinit\n";
      }
      std::cout << bash_script(*root);
      return 0;
    };
  });
}

}  // namespace gf
