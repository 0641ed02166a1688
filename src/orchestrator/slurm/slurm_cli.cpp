// SlurmCli: the controller through Slurm's client tools (slurm_control.h).
#include <fmt/format.h>

#include <cctype>

#include "orchestrator/slurm/slurm_conf.h"
#include "orchestrator/slurm/slurm_control.h"
#include "os/process.h"

namespace gf::slurm {
namespace {

// The tools' own words, trimmed, for an error message.
std::string said(const std::string& out) {
  std::string s = out.substr(0, 2000);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  return s.empty() ? "(nothing printed)" : s;
}

// A reason scontrol stores as given: printable ASCII, no quotes, at most 200 characters.
Status check_reason(std::string_view reason) {
  if (reason.empty() || reason.size() > 200) {
    return validation_error("reason: expected 1 to 200 characters");
  }
  for (char c : reason) {
    if (c < 0x20 || c > 0x7e || c == '"' || c == '\'') {
      return validation_error("reason: only printable characters without quotes");
    }
  }
  return ok_status();
}

// A variable a job may be given: a shell name, and not one that changes the tools themselves
// (the environment reaches sbatch before the job).
Status check_env_name(std::string_view name) {
  bool ok = !name.empty() && name.size() <= 128 &&
            (std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_');
  for (char c : name) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
  if (!ok) {
    return validation_error(fmt::format("env: \"{}\" is not a variable name", name.substr(0, 40)));
  }
  if (name == "PATH" || name.starts_with("LD_") || name.starts_with("SLURM_") ||
      name.starts_with("SBATCH_")) {
    return validation_error(fmt::format(
        "env: {} would change how sbatch runs; PATH, LD_*, SLURM_* and SBATCH_* are refused",
        name));
  }
  return ok_status();
}

}  // namespace

Status check_slurm_name(std::string_view what, std::string_view name) {
  if (name.empty() || name.size() > 64) {
    return validation_error(fmt::format("{}: expected 1 to 64 characters", what));
  }
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') {
      return validation_error(
          fmt::format("{}: \"{}\" may hold only letters, digits, '-', '_' and '.'", what, name));
    }
  }
  return ok_status();
}

SlurmCli::SlurmCli(std::string slurm_conf, std::chrono::milliseconds timeout)
    : conf_(std::move(slurm_conf)), timeout_(timeout) {}

Result<std::string> SlurmCli::tool(std::vector<std::string> argv,
                                   std::vector<std::pair<std::string, std::string>> env) {
  os::SpawnOptions o;
  const std::string shown = fmt::format("{}", fmt::join(argv, " "));
  o.argv = std::move(argv);
  o.env = std::move(env);
  o.env.emplace_back("SLURM_CONF", conf_);
  o.new_session = true;
  GF_ASSIGN_OR_RETURN(os::Output out, os::run(std::move(o), timeout_));
  if (out.timed_out) {
    return unavailable_error(fmt::format("`{}` did not answer within {} ms (is slurmctld up?)",
                                         shown, timeout_.count()));
  }
  if (out.exit.code != 0) {
    return unavailable_error(
        fmt::format("`{}` failed (exit {}): {}", shown, out.exit.code, said(out.out)));
  }
  if (out.truncated) return unavailable_error(fmt::format("`{}`: answer too large", shown));
  return std::move(out.out);
}

Result<std::vector<NodeState>> SlurmCli::nodes() {
  GF_ASSIGN_OR_RETURN(std::string text, tool({"sinfo", "--json"}));
  return parse_sinfo_json(text);
}

Result<std::vector<JobState>> SlurmCli::jobs() {
  GF_ASSIGN_OR_RETURN(std::string text, tool({"squeue", "--json"}));
  return parse_squeue_json(text);
}

Status SlurmCli::update_node(const std::string& node, const std::string& state,
                             const std::string& reason) {
  GF_RETURN_IF_ERROR(check_slurm_name("node", node));
  std::vector<std::string> argv = {"scontrol", "update", "NodeName=" + node, "State=" + state};
  if (!reason.empty()) {
    GF_RETURN_IF_ERROR(check_reason(reason));
    argv.push_back("Reason=" + reason);  // one argument: scontrol keeps its blanks
  }
  return tool(std::move(argv)).status();
}

Status SlurmCli::drain(const std::string& node, const std::string& reason) {
  if (reason.empty()) return validation_error("reason: a drain needs one");
  return update_node(node, "DRAIN", reason);
}

Status SlurmCli::resume(const std::string& node) { return update_node(node, "RESUME", ""); }

Status SlurmCli::down(const std::string& node, const std::string& reason) {
  if (reason.empty()) return validation_error("reason: DOWN needs one");
  return update_node(node, "DOWN", reason);
}

Status SlurmCli::retire(const std::string& node, const std::string& reason) {
  GF_RETURN_IF_ERROR(down(node, reason));
  return update_node(node, "FUTURE", "");
}

Result<int64_t> SlurmCli::submit(const BatchJob& job) {
  if (job.nodes < 1) return validation_error("nodes: expected at least 1");
  if (job.script.empty()) return validation_error("script: empty");
  std::vector<std::string> argv = {"sbatch", "--parsable", "-N", std::to_string(job.nodes)};
  if (!job.name.empty()) {
    GF_RETURN_IF_ERROR(check_slurm_name("name", job.name));
    argv.insert(argv.end(), {"-J", job.name});
  }
  if (!job.partition.empty()) {
    GF_RETURN_IF_ERROR(check_slurm_name("partition", job.partition));
    argv.insert(argv.end(), {"-p", job.partition});
  }
  if (!job.nodelist.empty()) {
    for (const std::string& n : expand_hostlist(job.nodelist))
      GF_RETURN_IF_ERROR(check_slurm_name("nodelist", n));
    argv.insert(argv.end(), {"-w", job.nodelist});
  }
  for (const auto& [name, value] : job.env) GF_RETURN_IF_ERROR(check_env_name(name));
  if (!job.work_dir.empty()) argv.insert(argv.end(), {"-D", job.work_dir});
  if (!job.output.empty()) argv.insert(argv.end(), {"-o", job.output});
  // The environment goes through sbatch's own (--export=ALL, its default), so values need no
  // quoting; the script through --wrap.
  argv.insert(argv.end(), {"--wrap", job.script});
  GF_ASSIGN_OR_RETURN(std::string out, tool(std::move(argv), job.env));
  // "<id>" or "<id>;<cluster>".
  int64_t id = 0;
  size_t i = 0;
  while (i < out.size() && std::isdigit(static_cast<unsigned char>(out[i]))) {
    if (id > (int64_t{1} << 40))
      return unavailable_error("sbatch answered no job id: " + said(out));
    id = id * 10 + (out[i++] - '0');
  }
  if (i == 0 || id <= 0 || (i < out.size() && out[i] != ';' && out[i] != '\n')) {
    return unavailable_error("sbatch answered no job id: " + said(out));
  }
  return id;
}

Status SlurmCli::cancel(int64_t job) {
  if (job <= 0) return validation_error("job: expected a positive job id");
  return tool({"scancel", std::to_string(job)}).status();
}

Status SlurmCli::requeue(int64_t job) {
  if (job <= 0) return validation_error("job: expected a positive job id");
  return tool({"scontrol", "requeue", std::to_string(job)}).status();
}

Status SlurmCli::reconfigure() { return tool({"scontrol", "reconfigure"}).status(); }

}  // namespace gf::slurm
