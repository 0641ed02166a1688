#include "cloud/local/local_cloud.h"

#include <fcntl.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "orchestrator/slurm/slurm_conf.h"
#include "os/process.h"

namespace gf {

namespace fs = std::filesystem;

namespace {

constexpr int64_t kLogTailBytes = 64 * 1024;
constexpr int64_t kLogReadBytes = 1024 * 1024;
constexpr size_t kBurnInLogBytes = 4096;
constexpr size_t kKeptTerminated = 200;
constexpr auto kMonitorPeriod = std::chrono::milliseconds(100);
const char* const kBurnInChecks[] = {"gpu", "nccl", "infiniband", "storage"};

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

Status write_file(const fs::path& p, const std::string& text, bool secret = false) {
  const fs::path tmp = p.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc | std::ios::binary);
    out << text;
    if (!out) return internal_error("cannot write " + tmp.string());
  }
  if (secret) ::chmod(tmp.c_str(), 0600);
  std::error_code ec;
  fs::rename(tmp, p, ec);
  if (ec) return internal_error("cannot write " + p.string() + ": " + ec.message());
  return ok_status();
}

// A path component a caller named (a container): no separators, no "." or "..".
bool safe_component(const std::string& s) {
  return !s.empty() && s != "." && s != ".." && s.find('/') == std::string::npos &&
         s.find('\0') == std::string::npos;
}

// The agent's own account of itself (<dir>/agent.state): when it last registered and whether
// its lifecycle script is done.
struct AgentState {
  std::optional<Time> registered;
  bool lifecycle_done = false;
};
AgentState agent_state(const fs::path& dir) {
  AgentState s;
  auto j = parse_json(read_file(dir / "agent.state"));
  if (!j.ok() || !j->is_object()) return s;
  if (j->contains("RegisteredUs") && (*j)["RegisteredUs"].is_number_integer())
    s.registered = from_micros((*j)["RegisteredUs"].get<int64_t>());
  s.lifecycle_done = j->value("LifecycleDone", false);
  return s;
}

}  // namespace

void LocalCloud::prune_terminated() const {
  // The directories of terminated instances are kept for their logs, the newest kKeptTerminated.
  std::vector<std::pair<fs::file_time_type, fs::path>> kept;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(fs::path(config_.root) / "terminated", ec))
    kept.emplace_back(e.last_write_time(ec), e.path());
  if (kept.size() <= kKeptTerminated) return;
  std::sort(kept.begin(), kept.end());
  for (size_t i = 0; i + kKeptTerminated < kept.size(); ++i) fs::remove_all(kept[i].second, ec);
}

LocalCloud::LocalCloud(LocalCloudConfig config, const Clock& clock, ReportFn report)
    : config_(std::move(config)),
      clock_(clock),
      report_(std::move(report)),
      slots_(config_.topology) {
  if (config_.agent_binary.empty()) {
    std::error_code ec;
    config_.agent_binary = fs::read_symlink("/proc/self/exe", ec).string();
  }
  // Agents and scripts run in other directories: every path they are given is absolute.
  config_.root = fs::absolute(config_.root).lexically_normal().string();
  for (auto& [uri, local] : config_.lifecycle_roots)
    local = fs::absolute(local).lexically_normal().string();
  std::error_code ec;
  fs::create_directories(config_.root, ec);
  fs::create_directories(fs::path(config_.root) / "terminated", ec);
  monitor_ = std::thread([this] { monitor(); });
}

LocalCloud::~LocalCloud() {
  stop_ = true;
  wake_.notify_all();
  if (monitor_.joinable()) monitor_.join();
}

std::string LocalCloud::dir(const std::string& id) const {
  return (fs::path(config_.root) / id).string();
}

void LocalCloud::point_at_server(Instance& inst) {
  if (!inst.launch.is_object() || inst.launch.value("Server", "") == server_url_) return;
  inst.launch["Server"] = server_url_;
  if (Status st = write_file(fs::path(dir(inst.id)) / "instance.json", inst.launch.dump(2), true);
      !st.ok())
    spdlog::warn("local cloud: {}", st.message());
}

void LocalCloud::set_server_url(const std::string& url) {
  std::vector<LaunchOp> waiting;
  {
    std::lock_guard lock(mu_);
    server_url_ = url;
    waiting.swap(waiting_);
    // Agents of an earlier serve that listened elsewhere find the new address here when their
    // calls fail (docs/local-cloud.md "Restarts").
    for (auto& [id, inst] : instances_) point_at_server(inst);
  }
  for (const LaunchOp& op : waiting) launch(op);
}

int64_t LocalCloud::capacity_of(const std::string& type) const {
  std::map<std::string, int64_t> cap = config_.capacity;
  const fs::path file = fs::path(config_.root) / "capacity.json";
  std::error_code ec;
  if (fs::exists(file, ec)) {
    auto j = parse_json(read_file(file));
    if (j.ok() && j->is_object()) {
      for (auto it = j->begin(); it != j->end(); ++it) {
        if (it.value().is_number_integer() && it.value().get<int64_t>() >= 0)
          cap[it.key()] = it.value().get<int64_t>();
      }
    } else {
      spdlog::warn("local cloud: {} is not a JSON map of instance type to count; ignored",
                   file.string());
    }
  }
  auto it = cap.find(type);
  return it == cap.end() ? -1 : it->second;
}

int64_t LocalCloud::held(const std::string& type) const {
  std::lock_guard lock(mu_);
  int64_t n = 0;
  for (const auto& [id, inst] : instances_) n += inst.type == type;
  return n;
}

std::optional<std::string> LocalCloud::spare(const std::string& type) const {
  const int64_t cap = capacity_of(type);
  const int64_t used = held(type);
  if (cap < 0 || used < cap) return std::nullopt;
  return fmt::format(
      "no spare {} in the local cloud ({} of {} in use; raise it in {}/capacity.json)", type, used,
      cap, config_.root);
}

void LocalCloud::execute(const Intent& intent) {
  if (intent.kind == kLaunchIntent) {
    auto op = LaunchOp::from_json(intent.payload);
    if (op.ok()) {
      launch(*op);
    } else {
      spdlog::error("local cloud: bad launch intent: {}", op.status().to_string());
    }
  } else if (intent.kind == kTerminateIntent) {
    auto op = TerminateOp::from_json(intent.payload);
    if (op.ok()) {
      terminate(*op);
    } else {
      spdlog::error("local cloud: bad terminate intent: {}", op.status().to_string());
    }
  } else if (intent.kind == "remediate" || intent.kind == kUpdateSoftwareIntent) {
    remediate(intent);
  } else if (intent.kind == "burnin") {
    burn_in(intent);
  }
}

Status LocalCloud::start_agent(Instance& inst) {
  os::SpawnOptions o;
  o.argv = {config_.agent_binary, "agent", "--local-instance", dir(inst.id)};
  o.output = (fs::path(dir(inst.id)) / "agent.log").string();
  o.new_session = true;  // agents outlive serve (and its terminal's Ctrl-C)
  GF_ASSIGN_OR_RETURN(inst.pid, os::spawn(o));
  inst.child = true;
  return os::write_pid_file((fs::path(dir(inst.id)) / "agent.pid").string(), inst.pid);
}

// What a new instance's agent is told (its instance.json). Locked: reads server_url_.
void LocalCloud::hold(Instance inst) {
  if (reports_topology(inst.type)) slots_.assign(inst.cluster, inst.type, inst.id);
  const std::string id = inst.id;
  instances_.emplace(id, std::move(inst));
}

Json LocalCloud::launch_document(const LaunchOp& op) const {
  Json instance{{"Cluster", op.cluster},
                {"Group", op.group},
                {"InstanceId", op.instance_id},
                {"InstanceType", op.instance_type},
                {"Attempt", op.attempt},
                {"Server", server_url_},
                {"LifecycleTimeoutUs", config_.lifecycle_timeout.count()},
                {"HeartbeatUs", config_.heartbeat_interval.count()},
                {"PollUs", config_.poll_interval.count()}};
  auto script = resolve_lifecycle_script(op.lifecycle_config, config_.lifecycle_roots);
  if (!script.ok()) {
    instance["LifecycleError"] = script.status().message();
  } else if (*script) {
    instance["LifecycleScript"] = **script;
    instance["LifecycleConfig"] = op.lifecycle_config;
  }
  if (!op.slurm_role.empty()) {
    // The cluster's Slurm files live beside the instances, as a shared /opt/slurm would
    // (docs/slurm.md): slurm.conf, the munge key, slurmctld's state.
    instance["Slurm"] = Json{
        {"Role", op.slurm_role}, {"NodeName", op.slurm_name}, {"Dir", slurm_directory(op.cluster)}};
  }
  if (!config_.agent_token.empty()) instance["Token"] = config_.agent_token;
  if (!config_.ca_cert.empty()) instance["CaCert"] = config_.ca_cert;
  return instance;
}

void LocalCloud::launch(const LaunchOp& op) {
  const Time now = clock_.now();
  std::optional<CloudReport> failed;
  {
    std::lock_guard lock(mu_);
    if (server_url_.empty()) {
      waiting_.push_back(op);
      return;
    }
    if (auto it = instances_.find(op.instance_id); it != instances_.end()) {
      // A repeat (after a restart of serve): the agent is still there, or is started again.
      Instance& inst = it->second;
      if (inst.pid > 0 && os::alive(inst.pid, inst.id)) return;
      if (Status st = start_agent(inst); !st.ok())
        spdlog::error("local cloud: cannot restart agent {}: {}", inst.id, st.message());
      return;
    }
    const fs::path d = dir(op.instance_id);
    if (auto pid = os::read_pid_file((d / "agent.pid").string());
        pid && os::alive(*pid, op.instance_id)) {
      Instance inst{op.cluster, op.group, op.instance_id, op.instance_type, *pid, false};
      if (auto j = parse_json(read_file(d / "instance.json")); j.ok()) inst.launch = *j;
      point_at_server(inst);
      instances_.emplace(op.instance_id, std::move(inst));  // launched before serve restarted
      return;
    }
    int64_t of_type = 0;
    for (const auto& [id, inst] : instances_) of_type += inst.type == op.instance_type;
    const int64_t cap = capacity_of(op.instance_type);
    const bool full = (cap >= 0 && of_type >= cap) ||
                      static_cast<int64_t>(instances_.size()) >= config_.max_instances;
    if (full) {
      failed = CloudReport{CloudReport::Kind::kLaunchFailed, op.cluster, op.instance_id,
                           LaunchOutcome::kInsufficientCapacity,
                           fmt::format("We currently do not have sufficient capacity to launch new "
                                       "{} instances. Please try again. (local cloud: {} of {} "
                                       "in use; raise it in {}/capacity.json)",
                                       op.instance_type, of_type,
                                       cap >= 0 ? cap : config_.max_instances, config_.root)};
    } else {
      std::error_code ec;
      fs::create_directories(d, ec);
      Instance inst{op.cluster, op.group, op.instance_id, op.instance_type};
      inst.launch = launch_document(op);
      Status st = write_file(d / "instance.json", inst.launch.dump(2), /*secret=*/true);
      if (st.ok()) st = start_agent(inst);
      if (!st.ok()) {
        spdlog::error("local cloud: cannot start agent {}: {}", op.instance_id, st.message());
        failed =
            CloudReport{CloudReport::Kind::kUnhealthy, op.cluster, op.instance_id,
                        LaunchOutcome::kUnhealthyInstance,
                        "the local cloud could not start the instance's agent: " + st.message()};
      } else {
        hold(std::move(inst));
      }
    }
  }
  if (failed) report_(now + seconds(1), std::move(*failed));
  wake_.notify_all();
}

void LocalCloud::terminate(const TerminateOp& op) {
  const Time now = clock_.now();
  bool gone = false;
  {
    std::lock_guard lock(mu_);
    auto it = instances_.find(op.instance_id);
    if (it == instances_.end()) {
      // Unknown here: after a restart of serve, its pid file may still name a live agent.
      const fs::path d = dir(op.instance_id);
      auto pid = os::read_pid_file((d / "agent.pid").string());
      if (pid && os::alive(*pid, op.instance_id)) {
        Instance inst{op.cluster, "", op.instance_id, op.instance_type, *pid, false};
        it = instances_.emplace(op.instance_id, std::move(inst)).first;
      } else {
        gone = true;
      }
    }
    if (!gone && it->second.action != Action::kTerminate) {
      it->second.action = Action::kTerminate;
      it->second.restarting = false;
      it->second.stop_sent = now;
      os::signal(it->second.pid, SIGTERM);
    }
  }
  if (gone) {
    report_(now, CloudReport{CloudReport::Kind::kTerminated, op.cluster, op.instance_id,
                             LaunchOutcome::kOk, ""});
  }
  wake_.notify_all();
}

void LocalCloud::remediate(const Intent& intent) {
  const Json& p = intent.payload;
  const Time now = clock_.now();
  const bool update = intent.kind == kUpdateSoftwareIntent;
  const std::string action = update ? "update" : p.value("Action", "");
  const std::string id = p.value("InstanceId", "");
  CloudReport r{CloudReport::Kind::kRemediated, p.value("Cluster", ""), id, LaunchOutcome::kOk, ""};
  r.detail = {{"RemediationId", p.value("RemediationId", "")}, {"Ok", true}};
  if (action == "delete") {
    r.message = "host " + p.value("Host", "") + " sent to repair";
    report_(now, std::move(r));
    return;
  }
  if ((action == "migrate" || action == "reprovision") && spare(p.value("InstanceType", ""))) {
    r.detail["Ok"] = false;
    r.message = *spare(p.value("InstanceType", ""));
    report_(now, std::move(r));
    return;
  }
  std::optional<CloudReport> fail;
  {
    std::lock_guard lock(mu_);
    auto it = instances_.find(id);
    if (it == instances_.end()) {
      r.detail["Ok"] = false;
      r.message = "the local cloud has no agent for instance " + id;
      fail = std::move(r);
    } else {
      Instance& inst = it->second;
      inst.action = action == "reboot"        ? Action::kReboot
                    : action == "reprovision" ? Action::kReprovision
                    : action == "migrate"     ? Action::kMigrate
                    : update                  ? Action::kReboot
                                              : Action::kNone;
      if (inst.action == Action::kNone) {
        r.detail["Ok"] = false;
        r.message = "the local cloud cannot " + action;
        fail = std::move(r);
      } else {
        inst.remediation = update ? "update:" + p.value("Image", "") : p.value("RemediationId", "");
        inst.restarting = false;
        inst.stop_sent = now;
        os::signal(inst.pid, SIGTERM);
      }
    }
  }
  if (fail) report_(now, std::move(*fail));
  wake_.notify_all();
}

void LocalCloud::burn_in(const Intent& intent) {
  BurnIn b;
  b.host = intent.payload.value("HostId", "");
  for (const char* c : kBurnInChecks) b.checks.emplace_back(c);
  std::lock_guard lock(mu_);
  next_check(b, clock_.now());
  burn_ins_.push_back(std::move(b));
  wake_.notify_all();
}

void LocalCloud::next_check(BurnIn& b, Time now) {
  while (!b.checks.empty()) {
    b.check = b.checks.front();
    b.checks.erase(b.checks.begin());
    if (b.failed || b.interrupted) {
      b.results.push_back({{"Name", b.check}, {"Result", "not-run"}, {"Log", ""}});
      continue;
    }
    auto cmd = config_.burn_in_checks.find(b.check);
    if (cmd == config_.burn_in_checks.end()) {
      b.results.push_back({{"Name", b.check},
                           {"Result", "pass"},
                           {"Log", "no burn-in command for " + b.check +
                                       " (serve --burn-in-check " + b.check + "=CMD); passed"}});
      continue;
    }
    const fs::path logs = fs::path(config_.root) / "burn-in" / b.host;
    std::error_code ec;
    fs::create_directories(logs, ec);
    b.log = (logs / (b.check + ".log")).string();
    fs::remove(b.log, ec);
    os::SpawnOptions o;
    o.argv = {"bash", "-c", cmd->second};
    o.env = {{"GPUFLEET_HOST_ID", b.host}, {"GPUFLEET_CHECK", b.check}};
    o.output = b.log;
    auto pid = os::spawn(o);
    if (!pid.ok()) {
      b.failed = true;
      b.results.push_back({{"Name", b.check}, {"Result", "fail"}, {"Log", pid.status().message()}});
      continue;
    }
    b.pid = *pid;
    b.started = now;
    return;  // running
  }
  b.pid = 0;
}

void LocalCloud::step_burn_ins(Time now, std::vector<std::pair<Time, CloudReport>>& out) {
  for (auto it = burn_ins_.begin(); it != burn_ins_.end();) {
    BurnIn& b = *it;
    if (b.pid > 0) {
      std::optional<os::Exit> exit = os::reap(b.pid);
      if (!exit && now - b.started > config_.burn_in_timeout) {
        os::signal(b.pid, SIGKILL);
        b.interrupted = true;
        exit = os::Exit{137, true};
        os::wait(b.pid);  // SIGKILL cannot be refused: this returns at once
      }
      if (!exit) {
        ++it;
        continue;
      }
      std::string log = read_file(b.log);
      if (log.size() > kBurnInLogBytes) log = log.substr(log.size() - kBurnInLogBytes);
      const std::string result = b.interrupted ? "interrupted" : exit->code == 0 ? "pass" : "fail";
      if (result == "fail") b.failed = true;
      b.results.push_back({{"Name", b.check}, {"Result", result}, {"Log", log}});
      next_check(b, now);
      if (b.pid > 0) {
        ++it;
        continue;
      }
    }
    if (b.pid == 0) {
      const std::string outcome = b.interrupted ? "interrupted" : b.failed ? "fail" : "pass";
      std::string failed_check;
      for (const Json& r : b.results) {
        if (r.value("Result", "") != "pass" && r.value("Result", "") != "not-run" &&
            failed_check.empty())
          failed_check = r.value("Name", "");
      }
      CloudReport r{CloudReport::Kind::kBurnIn, "", "", LaunchOutcome::kOk,
                    outcome == "pass"
                        ? "GPU, NCCL, InfiniBand and storage checks passed"
                        : failed_check + " check " + (b.interrupted ? "interrupted" : "failed")};
      r.detail = {{"HostId", b.host}, {"Outcome", outcome}, {"Checks", b.results}};
      out.emplace_back(now, std::move(r));
      it = burn_ins_.erase(it);
      continue;
    }
    ++it;
  }
}

void LocalCloud::step_instances(Time now, std::vector<std::pair<Time, CloudReport>>& out) {
  for (auto it = instances_.begin(); it != instances_.end();) {
    Instance& inst = it->second;
    bool exited = inst.pid <= 0;
    if (!exited) {
      if (inst.child) {
        exited = os::reap(inst.pid).has_value();
      } else {
        exited = !os::alive(inst.pid, inst.id);
      }
    }
    if (exited && inst.pid > 0 && inst.action == Action::kNone) {
      spdlog::warn("local cloud: the agent of instance {} (pid {}) exited", inst.id, inst.pid);
      inst.pid = 0;  // a crashed host: its heartbeats stop; the health controller sees to it
    }
    if (inst.action == Action::kNone) {
      ++it;
      continue;
    }
    if (!inst.restarting) {
      if (!exited) {
        if (now - inst.stop_sent > config_.stop_grace) os::signal(inst.pid, SIGKILL);
        ++it;
        continue;
      }
      inst.pid = 0;
      const fs::path d = dir(inst.id);
      if (inst.action == Action::kTerminate) {
        it = finish_terminate(it, now, out);
        continue;
      }
      if (inst.action == Action::kReprovision || inst.action == Action::kMigrate) {
        // A clean image: everything but the instance's description goes.
        std::error_code ec;
        for (const auto& entry : fs::directory_iterator(d, ec)) {
          if (entry.path().filename() != "instance.json") fs::remove_all(entry.path(), ec);
        }
      } else {
        // A reboot keeps the directory (scratch, data, the lifecycle marker); "up again" is the
        // new agent's to say.
        std::error_code ec;
        fs::remove(d / "agent.state", ec);
      }
      inst.restarting = true;
      inst.restarted = now;
      if (Status st = start_agent(inst); !st.ok()) {
        spdlog::error("local cloud: cannot restart agent {}: {}", inst.id, st.message());
      }
      ++it;
      continue;
    }
    // Restarting: done once the new agent registered (and, after a clean image, ran its script).
    const AgentState s = agent_state(dir(inst.id));
    const bool clean = inst.action == Action::kReprovision || inst.action == Action::kMigrate;
    const bool up = s.registered && *s.registered >= inst.restarted && (!clean || s.lifecycle_done);
    const bool dead = inst.pid <= 0 || exited;
    if (up || dead || now - inst.restarted > config_.lifecycle_timeout + minutes(1)) {
      CloudReport r;
      r.cluster = inst.cluster;
      r.instance_id = inst.id;
      if (inst.remediation.rfind("update:", 0) == 0) {
        r.kind = CloudReport::Kind::kSoftwareUpdated;
        r.message = inst.remediation.substr(7);
      } else {
        r.kind = CloudReport::Kind::kRemediated;
        r.detail = {{"RemediationId", inst.remediation}, {"Ok", up}};
        r.message = !up ? "the instance's agent did not come back"
                    : inst.action == Action::kReboot
                        ? "agent restarted (its directory, local scratch and data kept)"
                    : inst.action == Action::kReprovision
                        ? "instance reprovisioned: its directory wiped, lifecycle script run again"
                        : "instance rebuilt on other hardware: directory wiped, lifecycle script "
                          "run again";
      }
      if (dead && !up) inst.pid = 0;
      inst.action = Action::kNone;
      inst.restarting = false;
      inst.remediation.clear();
      out.emplace_back(now, std::move(r));
    }
    ++it;
  }
}

void LocalCloud::monitor() {
  while (!stop_) {
    std::vector<std::pair<Time, CloudReport>> out;
    {
      std::unique_lock lock(mu_);
      wake_.wait_for(lock, kMonitorPeriod, [this] { return stop_.load(); });
      if (stop_) break;
      const Time now = clock_.now();
      step_instances(now, out);
      step_burn_ins(now, out);
    }
    for (auto& [at, r] : out) report_(at, std::move(r));
  }
}

void LocalCloud::rebuild(const std::map<std::string, ClusterPtr, std::less<>>& clusters) {
  std::lock_guard lock(mu_);
  for (const auto& [name, c] : clusters) {
    for (const auto& [id, n] : c->nodes) {
      if (!n.launched() && n.status == NodeStatus::kPending) continue;  // launch intent comes again
      const fs::path d = dir(id);
      std::error_code ec;
      if (!fs::exists(d, ec)) continue;
      Instance inst{name, n.group, id, n.instance_type};
      if (auto j = parse_json(read_file(d / "instance.json")); j.ok()) inst.launch = *j;
      if (auto pid = os::read_pid_file((d / "agent.pid").string()); pid && os::alive(*pid, id)) {
        inst.pid = *pid;  // still running since the last serve: adopted, not launched again
      }
      instances_.emplace(id, std::move(inst));
      if (n.is_live()) slots_.restore(name, n.instance_type, id, n.labels);
    }
  }
}

std::map<std::string, std::string> LocalCloud::instance_labels(
    const std::string& instance_id) const {
  std::lock_guard lock(mu_);
  return slots_.labels_of(instance_id);
}

// A terminated instance's agent has exited: its directory is kept aside, the termination
// reported, and when it was its cluster's last instance the cluster's leftovers end. Locked.
std::map<std::string, LocalCloud::Instance>::iterator LocalCloud::finish_terminate(
    std::map<std::string, Instance>::iterator it, Time now,
    std::vector<std::pair<Time, CloudReport>>& out) {
  const Instance& inst = it->second;
  slots_.release(inst.id);
  std::error_code ec;
  const fs::path kept = fs::path(config_.root) / "terminated" / inst.id;
  fs::remove_all(kept, ec);
  fs::rename(dir(inst.id), kept, ec);
  prune_terminated();
  out.emplace_back(now, CloudReport{CloudReport::Kind::kTerminated, inst.cluster, inst.id,
                                    LaunchOutcome::kOk, ""});
  const std::string cluster = inst.cluster;
  it = instances_.erase(it);
  if (std::none_of(instances_.begin(), instances_.end(),
                   [&](const auto& i) { return i.second.cluster == cluster; }))
    end_cluster(cluster);
  return it;
}

// The cluster's last instance is gone: whatever its Slurm daemons started and left running ends
// too (docs/slurm.md "Nothing outlives its cluster") — a slurmstepd whose slurmd could not run in
// a PID namespace of its own, a job step's orphans — and its runtime directory goes. Its Slurm
// directory (slurm.conf, state, logs) stays, as the instances' directories do.
void LocalCloud::end_cluster(const std::string& cluster) {
  const std::string dir = slurm_directory(cluster);
  std::error_code ec;
  if (!fs::exists(dir, ec)) return;  // not a real Slurm cluster
  const size_t ended = os::kill_processes_with_environment(std::string(kSlurmDirEnv) + "=" + dir);
  if (ended > 0)
    spdlog::warn("local cloud: cluster {} is gone; ended {} process(es) it left", cluster, ended);
  // Its runtime directory, when it is what the controller made: a directory of this user made
  // from the template (never a link, nor someone else's).
  std::string rt = read_file(fs::path(dir) / kSlurmRuntimeFile);
  while (!rt.empty() && (rt.back() == '\n' || rt.back() == ' ')) rt.pop_back();
  struct stat st {};
  if (rt.size() == kSlurmRuntimeTemplate.size() &&
      rt.rfind(kSlurmRuntimeTemplate.substr(0, kSlurmRuntimeTemplate.size() - 6), 0) == 0 &&
      ::lstat(rt.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == ::getuid())
    fs::remove_all(rt, ec);
}

Status check_slurm_runtime_base() {
  struct stat st {};
  if (::stat("/tmp", &st) != 0 || !S_ISDIR(st.st_mode))
    return unavailable_error(
        "/tmp is not a directory; real Slurm clusters keep their sockets in /tmp/gfs-<hash> "
        "(docs/slurm.md)");
  if (::access("/tmp", W_OK | X_OK) != 0)
    return unavailable_error(
        "/tmp is not writable by this user; real Slurm clusters keep their sockets in "
        "/tmp/gfs-<hash> (docs/slurm.md)");
  return ok_status();
}

std::string LocalCloud::slurm_directory(const std::string& cluster) const {
  return (fs::path(config_.root) / "slurm" / cluster).string();
}

std::string LocalCloud::instance_directory(const std::string& instance_id) const {
  std::error_code ec;
  if (!safe_component(instance_id) || !fs::is_directory(dir(instance_id), ec)) return "";
  return dir(instance_id);
}

Result<LogChunk> LocalCloud::read_log(const LogQuery& q) const {
  fs::path d = dir(q.node);
  std::error_code ec;
  if (!fs::exists(d, ec)) d = fs::path(config_.root) / "terminated" / q.node;
  if (!safe_component(q.node) || !fs::exists(d, ec))
    return not_found_error("no directory for instance " + q.node + " in " + config_.root);
  fs::path file;
  if (q.source == "lifecycle") {
    file = d / "lifecycle.log";
  } else if (q.source == "agent") {
    file = d / "agent.log";
  } else {
    if (!safe_component(q.pod)) return validation_error("pod: not a pod name");
    const fs::path pod = d / "pods" / q.pod;
    std::string container = q.container;
    if (container.empty()) {
      std::vector<std::string> names;
      for (const auto& e : fs::directory_iterator(pod, ec)) {
        const std::string f = e.path().filename().string();
        if (f.size() > 4 && f.ends_with(".log") && !f.ends_with(".previous.log"))
          names.push_back(f.substr(0, f.size() - 4));
      }
      if (names.empty())
        return not_found_error("pod " + q.pod + " has no logs on " + q.node + " yet");
      if (names.size() > 1) {
        std::string all;
        for (const auto& n : names) all += (all.empty() ? "" : ", ") + n;
        return validation_error("container: pod " + q.pod + " has several (" + all + "); name one");
      }
      container = names.front();
    }
    if (!safe_component(container)) return validation_error("container: not a container name");
    file = pod / (container + (q.previous ? ".previous.log" : ".log"));
  }
  if (!fs::exists(file, ec)) {
    return not_found_error(q.previous ? "no previous run of that container (it has not restarted)"
                                      : "no log at " + file.string() + " yet");
  }
  // Pods write beside their logs: no link followed, nothing but a regular file read (a FIFO
  // would block the reader).
  const int fd = ::open(file.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return not_found_error("cannot read " + file.string() + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return validation_error("container: " + file.filename().string() + " is not a log file");
  }
  const int64_t size = static_cast<int64_t>(st.st_size);
  int64_t from =
      q.offset < 0 ? std::max<int64_t>(0, size - kLogTailBytes) : std::min(q.offset, size);
  std::string text(static_cast<size_t>(std::min<int64_t>(kLogReadBytes, size - from)), '\0');
  const ssize_t got = ::pread(fd, text.data(), text.size(), from);
  ::close(fd);
  text.resize(got > 0 ? static_cast<size_t>(got) : 0);
  const int64_t n = static_cast<int64_t>(text.size());
  if (q.offset < 0 && from > 0) {  // a tail starts at a whole line
    const size_t nl = text.find('\n');
    if (nl != std::string::npos) text.erase(0, nl + 1);
  }
  return LogChunk{std::move(text), from + n};
}

CloudDriverFactory local_cloud(LocalCloudConfig config, LocalCloud** out) {
  return [config = std::move(config), out](const Clock& clock, CloudDriver::ReportFn report) {
    auto driver = std::make_unique<LocalCloud>(config, clock, std::move(report));
    if (out) *out = driver.get();
    return driver;
  };
}

}  // namespace gf
