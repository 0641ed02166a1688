#include "agent/slurm_pod.h"

#include <spdlog/spdlog.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "agent/files.h"
#include "orchestrator/slurm/slurm_conf.h"

namespace gf::agent {

namespace fs = std::filesystem;

namespace {

bool env_name_ok(const std::string& n) {
  if (n.empty() || std::isdigit(static_cast<unsigned char>(n[0]))) return false;
  for (char c : n) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

constexpr fs::perms kScript = fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                              fs::perms::others_read | fs::perms::others_exec;

// The container's lines of the pod's script: its environment and command in a subshell of its
// own, output to its own log (the pod's directory holds one log per container).
Result<std::string> container_lines(const Json& c, const fs::path& log) {
  std::vector<std::string> argv;
  for (const char* key : {"Command", "Args"}) {
    for (const Json& a : c.value(key, Json::array()))
      if (a.is_string()) argv.push_back(a.get<std::string>());
  }
  if (argv.empty())
    return validation_error("container " + c.value("Name", "main") + ": no command");
  std::ostringstream s;
  s << "(\n";
  for (const Json& e : c.value("Env", Json::array())) {
    const std::string name = e.value("Name", "");
    if (env_name_ok(name))
      s << "  export " << name << "=" << shell_quote(e.value("Value", "")) << "\n";
  }
  s << "  exec";
  for (const std::string& a : argv) s << " " << shell_quote(a);
  s << " >> " << shell_quote(log.string()) << " 2>&1\n) &\npids+=($!)\n";
  return s.str();
}

}  // namespace

Result<std::optional<SlurmPodSpec>> SlurmPodSpec::from_pod(const Json& pod) {
  auto it = pod.find("Slurm");
  if (it == pod.end() || it->is_null()) return std::optional<SlurmPodSpec>();
  ObjectReader r(*it, "pod.Slurm");
  SlurmPodSpec s;
  s.allocation = r.required_string("Allocation");
  s.nodes = r.required_string("Nodes");
  s.node_count = r.required_int("NodeCount");
  s.partition = r.optional_string("Partition").value_or("");
  s.node_name = r.required_string("NodeName");
  s.pods_on_node = r.optional_int("PodsOnNode").value_or(1);
  s.submitter = r.optional_bool("Submitter").value_or(false);
  GF_RETURN_IF_ERROR(r.status());
  GF_RETURN_IF_ERROR(slurm::check_slurm_name("pod.Slurm.Allocation", s.allocation));
  GF_RETURN_IF_ERROR(slurm::check_slurm_name("pod.Slurm.NodeName", s.node_name));
  if (!s.partition.empty())
    GF_RETURN_IF_ERROR(slurm::check_slurm_name("pod.Slurm.Partition", s.partition));
  for (const std::string& n : expand_hostlist(s.nodes))
    GF_RETURN_IF_ERROR(slurm::check_slurm_name("pod.Slurm.Nodes", n));
  if (s.node_count < 1 || s.node_count > 65536)
    return validation_error("pod.Slurm.NodeCount: expected 1 to 65536");
  if (s.pods_on_node < 1 || s.pods_on_node > 1024)
    return validation_error("pod.Slurm.PodsOnNode: expected 1 to 1024");
  return std::optional<SlurmPodSpec>(std::move(s));
}

SlurmPod::SlurmPod(SlurmPodSpec spec, std::string slurm_dir, const Json& pod, std::string log)
    : spec_(std::move(spec)),
      dir_(slurm_dir + "/jobs/" + spec_.allocation),
      conf_(slurm_dir + "/slurm.conf"),
      pod_(pod),
      log_(std::move(log)),
      cli_(conf_, std::chrono::seconds(10)) {}

Status SlurmPod::write_script() {
  const fs::path node_dir = fs::path(dir_) / spec_.node_name;
  std::error_code ec;
  fs::create_directories(node_dir, ec);
  if (ec) return internal_error("cannot create " + node_dir.string() + ": " + ec.message());
  const Json containers = pod_.value("Containers", Json::array());
  if (containers.empty()) return validation_error("the pod has no container");
  const fs::path pod_dir = fs::path(log_).parent_path();
  std::ostringstream s;
  s << "#!/bin/bash\n# pod " << pod_.value("Name", "") << " of Slurm job " << spec_.allocation
    << ", written by its node's gpufleet agent: every container runs in the job's step\n";
  const fs::path work = pod_dir / "work";
  fs::create_directories(work, ec);
  s << "cd " << shell_quote(work.string()) << " || exit 127\n";
  // The step started here: what makes the pod Running (docs/slurm.md "States"), for this run of
  // the allocation (Slurm counts its requeues).
  s << "echo \"${SLURM_RESTART_COUNT:-0}\" > " << shell_quote(started_marker()) << "\n";
  s << "pids=()\n";
  for (const Json& c : containers) {
    GF_ASSIGN_OR_RETURN(std::string lines,
                        container_lines(c, pod_dir / (c.value("Name", "main") + ".log")));
    s << lines;
  }
  s << "rc=0\nfor p in \"${pids[@]}\"; do wait \"$p\" || rc=$?; done\nexit $rc\n";
  GF_RETURN_IF_ERROR(
      write_file_atomically(node_dir / (pod_.value("Name", "pod") + ".sh"), s.str(), kScript));
  return write_file_atomically(node_dir / "expected", std::to_string(spec_.pods_on_node) + "\n",
                               fs::perms::owner_read | fs::perms::owner_write |
                                   fs::perms::group_read | fs::perms::others_read);
}

std::string SlurmPod::started_marker() const {
  return (fs::path(dir_) / spec_.node_name / (pod_.value("Name", "pod") + ".started")).string();
}

Status SlurmPod::submit() {
  if (fs::exists(fs::path(dir_) / "jobid")) return ok_status();  // submitted before a restart
  // An sbatch that timed out may still have been accepted: adopt the job of that name.
  GF_ASSIGN_OR_RETURN(std::vector<slurm::JobState> jobs, cli_.jobs());
  for (const slurm::JobState& j : jobs) {
    if (j.name == spec_.allocation && !j.finished()) {
      return write_file_atomically(fs::path(dir_) / "jobid", std::to_string(j.id) + "\n",
                                   fs::perms::owner_read | fs::perms::owner_write |
                                       fs::perms::group_read | fs::perms::others_read);
    }
  }
  // Each node runs its pods' scripts once they are all written (their agents write them).
  const std::string gang =
      "#!/bin/bash\nd=" + shell_quote(dir_) +
      "/\"$SLURMD_NODENAME\"\n"
      "for i in $(seq 600); do\n"
      "  if [ -f \"$d/expected\" ] && [ \"$(ls \"$d\"/*.sh 2>/dev/null | wc "
      "-l)\" -ge \"$(cat \"$d/expected\")\" ]; then break; fi\n"
      "  sleep 0.1\n"
      "done\n"
      "if [ \"$(ls \"$d\"/*.sh 2>/dev/null | wc -l)\" -lt \"$(cat \"$d/expected\" "
      "2>/dev/null || echo 1)\" ]; then\n"
      "  echo \"gpufleet: the pods of $SLURMD_NODENAME were not all written\" >&2\n"
      "  exit 1\n"
      "fi\n"
      "pids=()\n"
      "for f in \"$d\"/*.sh; do bash \"$f\" & pids+=($!); done\n"
      "rc=0\n"
      "for p in \"${pids[@]}\"; do wait \"$p\" || rc=$?; done\n"
      "exit $rc\n";
  GF_RETURN_IF_ERROR(write_file_atomically(fs::path(dir_) / "gang.sh", gang, kScript));
  slurm::BatchJob job;
  job.name = spec_.allocation;
  job.nodes = static_cast<int32_t>(spec_.node_count);
  job.partition = spec_.partition;
  job.nodelist = spec_.nodes;
  job.work_dir = dir_;
  job.output = dir_ + "/slurm-%j.out";
  job.script = "srun -N " + std::to_string(spec_.node_count) + " --ntasks-per-node=1 bash " +
               shell_quote(dir_ + "/gang.sh");
  GF_ASSIGN_OR_RETURN(int64_t id, cli_.submit(job));
  spdlog::info("Slurm job {} ({}): {} node(s) {}", id, spec_.allocation, spec_.node_count,
               spec_.nodes);
  return write_file_atomically(fs::path(dir_) / "jobid", std::to_string(id) + "\n",
                               fs::perms::owner_read | fs::perms::owner_write |
                                   fs::perms::group_read | fs::perms::others_read);
}

std::optional<int64_t> SlurmPod::job_id() const {
  std::ifstream in(fs::path(dir_) / "jobid");
  int64_t id = 0;
  if (in >> id && id > 0) return id;
  return std::nullopt;
}

void SlurmPod::step(Time now) {
  if (!written_) {
    if (Status st = write_script(); !st.ok()) {
      phase_ = "Failed";
      exit_code_ = 127;
      message_ = st.message();
      return;
    }
    written_ = true;
  }
  if (spec_.submitter && !job_id()) {
    if (Status st = submit(); !st.ok()) {
      spdlog::warn("pod {}: sbatch: {}", pod_.value("Name", ""), st.message());
      message_ = "sbatch: " + st.message();
      return;  // tried again at the next step
    }
  }
  if (phase_ == "Succeeded" || phase_ == "Failed") return;  // a pod's end is final
  if (next_poll_ && now < *next_poll_) return;
  next_poll_ = now + seconds(2);
  slurm::AllocationView a;
  const std::optional<int64_t> id = job_id();
  a.submitted = id.has_value();
  if (a.submitted) {
    auto jobs = cli_.jobs();
    a.answered = jobs.ok();
    if (!jobs.ok()) a.error = jobs.status().message();
    for (const slurm::JobState& j : jobs.ok() ? *jobs : std::vector<slurm::JobState>{}) {
      if (j.id == *id) a.job = j;
    }
    // Started in this run of the allocation: the marker holds the run's restart count.
    std::ifstream marker(started_marker());
    int64_t run = -1;
    a.step_started = marker >> run && a.job && run == a.job->restarts;
    a.launch_failed = read_file((fs::path(dir_) / "launch-failed").string());
  }
  const slurm::PodPhase p = slurm::slurm_pod_phase(a);
  // A pod that ran keeps its end: Slurm forgets finished jobs after MinJobAge.
  if ((phase_ == "Succeeded" || phase_ == "Failed") && p.phase == "Unknown") return;
  phase_ = p.phase;
  exit_code_ = p.exit_code;
  message_ = p.message;
  if (p.cancel && id) {
    spdlog::warn("Slurm job {} ({}) will not run: {}; cancelling it", *id, spec_.allocation,
                 p.message);
    // Every pod of the gang reads the failure, not the CANCELLED that follows.
    if (Status st = write_file_atomically(fs::path(dir_) / "launch-failed", p.message); !st.ok())
      spdlog::warn("pod {}: {}", pod_.value("Name", ""), st.message());
    if (Status st = cli_.cancel(*id); !st.ok()) spdlog::warn("scancel {}: {}", *id, st.message());
  }
}

void SlurmPod::cancel() {
  // Every pod's agent cancels: the submitter's node may be the one that is gone.
  if (auto id = job_id()) {
    if (Status st = cli_.cancel(*id); !st.ok()) spdlog::warn("scancel {}: {}", *id, st.message());
  }
}

}  // namespace gf::agent
