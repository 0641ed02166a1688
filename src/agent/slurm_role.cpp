#include "agent/slurm_role.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "agent/files.h"
#include "agent/local_node.h"
#include "model/slurm_node.h"
#include "orchestrator/slurm/slurm_conf.h"
#include "os/process.h"

namespace gf::agent {

namespace fs = std::filesystem;

namespace {

// A port on 127.0.0.1 free now, with the 16 K above it left for the slurmd of the nodes: the
// first of a few candidates in 10000-30000 (spread by `seed`) that binds.
int pick_base_port(const std::string& seed) {
  const size_t h = std::hash<std::string>{}(seed);
  for (size_t tries = 0; tries < 64; ++tries) {
    const int port = 10000 + static_cast<int>((h + tries * 7919) % 20000);
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(static_cast<uint16_t>(port));
    const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    ::close(fd);
    if (ok) return port;
  }
  return 0;
}

// The port slurm.conf gives slurmctld ("SlurmctldPort=<n>" on a line of its own), or 0.
int base_port(const std::string& conf) {
  std::istringstream in(conf);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("SlurmctldPort=", 0) != 0) continue;
    try {
      return std::stoi(line.substr(14));
    } catch (const std::exception&) {
      return 0;
    }
  }
  return 0;
}

}  // namespace

Result<std::optional<SlurmSettings>> SlurmSettings::from_json(const Json& slurm) {
  if (slurm.is_null()) return std::optional<SlurmSettings>();
  ObjectReader r(slurm, "instance.json.Slurm");
  SlurmSettings s;
  s.role = r.required_string("Role");
  s.node_name = r.optional_string("NodeName").value_or("");
  s.dir = r.required_string("Dir");
  GF_RETURN_IF_ERROR(r.status());
  if (s.role != "Controller" && s.role != "Compute" && s.role != "Login")
    return validation_error("instance.json.Slurm.Role: expected Controller, Compute or Login");
  if (s.dir.empty() || s.dir.front() != '/')
    return validation_error("instance.json.Slurm.Dir: expected an absolute path");
  if (s.role == "Compute") GF_RETURN_IF_ERROR(slurm::check_slurm_name("NodeName", s.node_name));
  return std::optional<SlurmSettings>(std::move(s));
}

SlurmRole::SlurmRole(SlurmSettings settings, NodeApi& api)
    : settings_(std::move(settings)), api_(api), cli_(conf(), std::chrono::seconds(10)) {
  std::error_code ec;
  for (const char* sub : {"state", "log", "munge"})
    fs::create_directories(fs::path(settings_.dir) / sub, ec);
  fs::permissions(settings_.dir,
                  fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                      fs::perms::others_read | fs::perms::others_exec,
                  ec);
}

SlurmRole::~SlurmRole() {
  for (Daemon* d : {&slurmd_, &slurmctld_, &munged_}) {
    if (d->pid <= 0) continue;
    os::signal(d->pid, SIGKILL);
    (void)os::wait(d->pid);
  }
}

std::string SlurmRole::scontrol_command() const {
  return "SLURM_CONF=" + shell_quote(conf()) + " scontrol show node " + settings_.node_name + " -o";
}

void SlurmRole::step(Time now, const std::optional<std::optional<std::string>>& drain) {
  if (settings_.role == "Controller") {
    controller(now);
  } else if (settings_.role == "Compute") {
    compute(now, drain);
  }
}

bool SlurmRole::running(Daemon& d, Time now) {
  if (d.pid <= 0) return false;
  if (auto exit = os::reap(d.pid)) {
    spdlog::warn("{} ended ({}{}); starting it again in {}", d.name,
                 exit->signaled ? "signal " : "exit ",
                 exit->signaled ? exit->code - 128 : exit->code, format_duration(d.backoff));
    d.pid = 0;
    d.next_start = now + d.backoff;
    d.backoff = std::min<Duration>(d.backoff * 2, seconds(30));
    d.stopping_since.reset();
    return false;
  }
  return true;
}

std::string SlurmRole::runtime_dir() const {
  std::string path = read_file(fs::path(settings_.dir) / kSlurmRuntimeFile);
  while (!path.empty() && (path.back() == '\n' || path.back() == ' ')) path.pop_back();
  return path;
}

std::string SlurmRole::munge_socket() const {
  std::istringstream in(read_file(conf()));
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("AuthInfo=socket=", 0) == 0) return line.substr(16);
  }
  const std::string rt = runtime_dir();
  return rt.empty() ? std::string() : rt + "/munge.sock";
}

Status SlurmRole::make_runtime_dir() {
  std::string rt = runtime_dir();
  if (rt.empty()) {
    if (settings_.role != "Controller") return unavailable_error("no runtime directory yet");
    std::string tmpl(kSlurmRuntimeTemplate);
    if (::mkdtemp(tmpl.data()) == nullptr)
      return unavailable_error("cannot create " + tmpl + ": " + std::strerror(errno));
    GF_RETURN_IF_ERROR(
        write_file_atomically(fs::path(settings_.dir) / kSlurmRuntimeFile, tmpl + "\n"));
    rt = tmpl;
  }
  if (::mkdir(rt.c_str(), 0700) != 0 && errno != EEXIST)
    return unavailable_error("cannot create " + rt + ": " + std::strerror(errno));
  struct stat st {};
  if (::lstat(rt.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::getuid())
    return unavailable_error(rt + " is not a directory of this user");
  if ((st.st_mode & 077) != 0 && ::chmod(rt.c_str(), 0700) != 0)
    return unavailable_error("cannot make " + rt + " private");
  return ok_status();
}

void SlurmRole::supervise(Daemon& d, Time now, const std::vector<std::string>& argv, bool isolate) {
  if (running(d, now) || now < d.next_start) return;
  if (Status st = make_runtime_dir(); !st.ok()) {
    spdlog::error("slurm: {}", st.message());
    d.next_start = now + d.backoff;
    d.backoff = std::min<Duration>(d.backoff * 2, seconds(30));
    return;
  }
  os::SpawnOptions o;
  o.isolate = isolate && os::namespaces_allowed();
  o.argv = argv;
  // The mark every process of the cluster carries (slurmstepd inherits it from slurmd; job steps
  // descend from slurmstepd): the local cloud ends whatever carries it when the cluster is gone.
  o.env = {{"SLURM_CONF", conf()}, {std::string(kSlurmDirEnv), settings_.dir}};
  o.cwd = settings_.dir;
  o.output = settings_.dir + "/log/" + d.name +
             (settings_.node_name.empty() ? std::string() : "-" + settings_.node_name) + ".out";
  o.new_session = true;
  o.die_with_parent = true;  // the node's daemons end with its agent, as with its machine
  auto pid = os::spawn(o);
  if (!pid.ok()) {
    spdlog::error("cannot start {}: {}", d.name, pid.status().message());
    d.next_start = now + d.backoff;
    d.backoff = std::min<Duration>(d.backoff * 2, seconds(30));
    return;
  }
  spdlog::info("started {} (pid {})", d.name, *pid);
  d.pid = *pid;
}

bool SlurmRole::stop(Time now) {
  bool any = false;
  for (Daemon* d : {&slurmd_, &slurmctld_, &munged_}) {
    if (!running(*d, now)) continue;
    if (!d->stopping_since) {
      os::signal(d->pid, SIGTERM);
      d->stopping_since = now;
    } else if (now - *d->stopping_since > seconds(10)) {
      os::signal(d->pid, SIGKILL);
    }
    any = true;
  }
  return !any;
}

// ---- controller ---------------------------------------------------------------------------

Status SlurmRole::make_munge_key() {
  const std::string key = settings_.dir + "/munge/munge.key";
  if (fs::exists(key)) return ok_status();
  std::string bytes(1024, '\0');
  {
    std::ifstream rnd("/dev/urandom", std::ios::binary);
    rnd.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!rnd) return internal_error("cannot read /dev/urandom for the munge key");
  }
  const int fd = ::open(key.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0400);
  if (fd < 0) return internal_error("cannot create " + key);
  const bool ok = ::write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size());
  ::close(fd);
  if (!ok) return internal_error("cannot write " + key);
  return ok_status();
}

Status SlurmRole::write_base_conf() {
  if (fs::exists(conf())) return ok_status();
  const int port = pick_base_port(settings_.dir);
  if (port == 0) return unavailable_error("no free port for slurmctld on 127.0.0.1");
  const std::string& d = settings_.dir;
  std::ostringstream c;
  c << "# slurm.conf of this cluster, written by its controller node's gpufleet agent.\n"
    << "# Lines outside the two gpufleet blocks are yours and are kept as they are; the blocks\n"
    << "# are rewritten as nodes come and go (docs/slurm.md).\n"
    << "ClusterName=gpufleet\n"
    << "SlurmctldHost=localhost\n"
    << "SlurmUser=root\nSlurmdUser=root\n"
    << "AuthType=auth/munge\nCredType=cred/munge\n"
    << "AuthInfo=socket=" << munge_socket() << "\n"
    << "SlurmctldPort=" << port << "\n"
    << "SlurmdPort=" << port + 1 << "\n"
    << "StateSaveLocation=" << d << "/state\n"
    << "SlurmdSpoolDir=" << runtime_dir() << "/%n\n"
    << "SlurmctldPidFile=" << d << "/slurmctld.pid\n"
    << "SlurmdPidFile=" << d << "/slurmd-%n.pid\n"
    << "SlurmctldLogFile=" << d << "/log/slurmctld.log\n"
    << "SlurmdLogFile=" << d << "/log/slurmd-%n.log\n"
    << "ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n"
    << "JobAcctGatherType=jobacct_gather/none\nAccountingStorageType=accounting_storage/none\n"
    << "JobCompType=jobcomp/none\n"
    << "SchedulerType=sched/backfill\nSelectType=select/cons_tres\nSelectTypeParameters=CR_CPU\n"
    << "SchedulerParameters=batch_sched_delay=0,sched_min_interval=0,default_queue_depth=1000\n"
    << "# A local instance has this machine's CPUs and no GPUs: the node lines say what the\n"
    << "# instance type has, and slurmd takes them as they are.\n"
    << "SlurmdParameters=config_overrides\n"
    << "MpiDefault=none\nMailProg=/bin/true\nReturnToService=2\n"
    << "TreeWidth=65533\nDebugFlags=NO_CONF_HASH\nMinJobAge=300\nKillWait=2\n"
    << "SlurmctldTimeout=30\nSlurmdTimeout=10\nInactiveLimit=0\nWaittime=0\n";
  return write_file_atomically(conf(), c.str());
}

void SlurmRole::controller(Time now) {
  if (Status st = make_munge_key(); !st.ok()) {
    spdlog::error("slurm: {}", st.message());
    return;
  }
  // Before slurm.conf, which names it.
  if (Status st = make_runtime_dir(); !st.ok()) {
    spdlog::error("slurm: {}", st.message());
    return;
  }
  if (Status st = write_base_conf(); !st.ok()) {
    spdlog::error("slurm: {}", st.message());
    return;
  }
  supervise(munged_, now,
            {"munged", "-F", "--force", "--socket=" + munge_socket(),
             "--pid-file=" + settings_.dir + "/munge/munged.pid",
             "--seed-file=" + settings_.dir + "/munge/seed",
             "--log-file=" + settings_.dir + "/munge/munged.log",
             "--key-file=" + settings_.dir + "/munge/munge.key"});
  if (!fs::exists(munge_socket())) return;
  if (!next_sync_ || now >= *next_sync_) {
    sync_conf(now);
    next_sync_ = now + interval_;
  }
  if (declared_.empty()) return;  // no layout yet: slurmctld would start without nodes
  const bool was_running = slurmctld_.pid > 0;
  supervise(slurmctld_, now, {"slurmctld", "-D", "-i"});
  if (!was_running && slurmctld_.pid > 0) started_with_ = declared_;
}

void SlurmRole::sync_conf(Time now) {
  auto answer = api_.slurm_layout();
  if (!answer.ok()) {
    spdlog::warn("slurm: no layout from the server: {}", answer.status().message());
    return;
  }
  auto layout = slurm_layout_from_json(*answer);
  if (!layout.ok()) {
    spdlog::error("slurm: the server's layout: {}", layout.status().message());
    return;
  }
  const std::string existing = read_file(conf());
  const int base = base_port(existing);
  std::set<std::string> names, future;
  std::erase_if(layout->nodes, [&](const SlurmNodeLine& n) {
    if (base + 1 + n.port <= 65535) return false;
    spdlog::warn("slurm: node {} would listen past port 65535 (too many compute groups); left out",
                 n.name);
    return true;
  });
  for (SlurmNodeLine& n : layout->nodes) {
    if (n.port > 0 && base > 0) n.port = base + 1 + n.port;
    n.hostname = "localhost";
    n.address = "127.0.0.1";
    names.insert(n.name);
    if (n.state == "FUTURE") future.insert(n.name);
  }
  SlurmMergeResult merged = merge_slurm_conf(existing, *layout);
  for (const std::string& w : merged.warnings) spdlog::warn("slurm.conf: {}", w);
  const bool changed = merged.text != existing;
  if (changed) {
    if (Status st = write_file_atomically(conf(), merged.text); !st.ok()) {
      spdlog::error("slurm: {}", st.message());
      return;
    }
  }
  declared_ = names;
  if (!running(slurmctld_, now)) return;
  if (names != started_with_) {
    // A node name slurmctld does not know: Slurm 22.05 adds nodes only at a restart (its state
    // is kept; running jobs go on). Rare: names are declared 64 launches ahead.
    spdlog::info("slurm: the declared nodes changed ({} -> {}); restarting slurmctld",
                 started_with_.size(), names.size());
    os::signal(slurmctld_.pid, SIGTERM);
    slurmctld_.backoff = seconds(1);
    return;
  }
  if (changed) {
    if (Status st = cli_.reconfigure(); !st.ok())
      spdlog::warn("slurm: scontrol reconfigure: {}", st.message());
  }
  retire_nodes(future);
}

void SlurmRole::retire_nodes(const std::set<std::string>& future) {
  auto nodes = cli_.nodes();
  if (!nodes.ok()) return;
  for (const slurm::NodeState& n : *nodes) {
    // Only a node whose slurmd stopped answering: one that registers while the server's
    // layout still lags behind its start is left alone.
    if (!future.contains(n.name) || (!n.down() && !n.has_flag("NOT_RESPONDING"))) continue;
    if (Status st = cli_.retire(n.name, "gpufleet: the instance left the cluster"); !st.ok()) {
      spdlog::warn("slurm: cannot retire {}: {}", n.name, st.message());
    } else {
      spdlog::info("slurm: node {} left the cluster (FUTURE again)", n.name);
    }
  }
}

// ---- compute ------------------------------------------------------------------------------

void SlurmRole::compute(Time now, const std::optional<std::optional<std::string>>& drain) {
  const std::string& me = settings_.node_name;
  if (slurmd_.pid <= 0) {
    // slurmd needs its line in slurm.conf and the cluster's munge socket.
    if (!fs::exists(munge_socket())) return;
    if (read_file(conf()).find("NodeName=" + me + " ") == std::string::npos) return;
    if (Status st = make_runtime_dir(); !st.ok()) return;  // supervise says why
    std::error_code ec;
    fs::create_directories(fs::path(runtime_dir()) / me, ec);
  }
  // slurmd's step daemons leave its session: in a PID namespace of its own, they and the job
  // steps under them end with it, as they would with the machine (docs/slurm.md "Nothing
  // outlives its cluster").
  supervise(slurmd_, now, {"slurmd", "-D", "-N", me}, /*isolate=*/true);
  if (next_sync_ && now < *next_sync_) return;
  next_sync_ = now + interval_;
  auto nodes = cli_.nodes();
  if (!nodes.ok()) return;
  auto it = std::find_if(nodes->begin(), nodes->end(),
                         [&](const slurm::NodeState& n) { return n.name == me; });
  if (it == nodes->end()) return;  // FUTURE still, or not registered yet
  const slurm::NodeState node = *it;
  const bool ours = node.reason.rfind(kSlurmReasonPrefix, 0) == 0;
  if (!drain) {
    // What the server wants is not known yet (a restarted agent before its first pods answer):
    // neither drain nor resume.
  } else if (*drain) {
    // Never over someone else's DOWN or DRAIN: their reason stays (it is an alert).
    const bool foreign = (node.drained() || node.down()) && !ours && !node.reason.empty();
    if (!foreign && (!node.drained() || node.reason != **drain)) {
      if (Status st = cli_.drain(me, **drain); !st.ok())
        spdlog::warn("slurm: cannot drain {}: {}", me, st.message());
    }
  } else if (node.drained() && ours) {
    if (Status st = cli_.resume(me); !st.ok())
      spdlog::warn("slurm: cannot resume {}: {}", me, st.message());
  }
  std::vector<std::string> jobs;
  if (node.allocated() || node.has_flag("COMPLETING") || node.state == "COMPLETING") {
    auto all = cli_.jobs();
    if (!all.ok()) return;  // an empty list would say "idle": no report rather than a wrong one
    for (const slurm::JobState& j : *all) {
      if (j.finished() || j.state == "PENDING") continue;
      if (std::find(j.nodes.begin(), j.nodes.end(), me) != j.nodes.end())
        jobs.push_back(std::to_string(j.id));
    }
  }
  std::string state = node.state;
  for (const std::string& f : node.flags) state += "+" + f;
  // Someone else's reason may be long or hold control characters: the report stays acceptable.
  Json body{{"State", state}, {"Reason", printable(node.reason, 400)}, {"Jobs", jobs}};
  if (reported_ && *reported_ == body && now - reported_at_ < seconds(60)) return;
  if (Status st = api_.slurm_report(body); !st.ok()) {
    spdlog::warn("slurm: report: {}", st.message());
    return;
  }
  reported_ = std::move(body);
  reported_at_ = now;
}

}  // namespace gf::agent
