#include "agent/local_node.h"

#include <fmt/format.h>
#include <signal.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "agent/agent.h"
#include "agent/files.h"
#include "agent/slurm_pod.h"
#include "agent/slurm_role.h"
#include "core/clock.h"
#include "core/url.h"
#include "os/process.h"

namespace gf::agent {

namespace fs = std::filesystem;

namespace {

constexpr Duration kRestartBackoffMax = seconds(30);
constexpr int64_t kDefaultGraceSeconds = 30;
constexpr const char* kPodPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

void append_file(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::app | std::ios::binary);
  out << text;
}

// The last non-empty line of a file (at most 200 bytes), for a failure message.
std::string last_line(const fs::path& p) {
  std::istringstream in(read_file(p));
  std::string line, last;
  while (std::getline(in, line)) {
    if (!line.empty()) last = line;
  }
  return last.size() > 200 ? last.substr(last.size() - 200) : last;
}

bool is_gone(const Status& s) { return s.code() == ErrorCode::kNotFound; }

// kubelet's CrashLoopBackOff, shorter: 1 s, doubling, at most 30 s.
Duration restart_backoff(int restarts) {
  Duration d = seconds(1);
  for (int i = 1; i < restarts && d < kRestartBackoffMax; ++i) d *= 2;
  return std::min(d, kRestartBackoffMax);
}

std::vector<std::string> string_list(const Json& j) {
  std::vector<std::string> out;
  if (j.is_array()) {
    for (const Json& v : j) {
      if (v.is_string()) out.push_back(v.get<std::string>());
    }
  }
  return out;
}

std::atomic<bool> g_stop{false};
void on_signal(int) { g_stop = true; }

}  // namespace

// ---- instance.json ------------------------------------------------------------------------

Result<LocalInstance> LocalInstance::load(const std::string& dir) {
  const fs::path file = fs::path(dir) / "instance.json";
  auto j = parse_json(read_file(file));
  if (!j.ok()) return validation_error(file.string() + ": " + j.status().message());
  ObjectReader r(*j, file.string());
  LocalInstance i;
  i.dir = dir;
  i.cluster = r.required_string("Cluster");
  i.group = r.required_string("Group");
  i.instance_id = r.required_string("InstanceId");
  i.instance_type = r.required_string("InstanceType");
  i.server = r.required_string("Server");
  i.attempt = r.optional_int("Attempt").value_or(0);
  i.token = r.optional_string("Token").value_or("");
  i.ca_cert = r.optional_string("CaCert").value_or("");
  i.lifecycle_script = r.optional_string("LifecycleScript");
  i.lifecycle_error = r.optional_string("LifecycleError").value_or("");
  if (const Json* lc = r.optional_value("LifecycleConfig")) i.lifecycle_config = *lc;
  if (const Json* sl = r.optional_value("Slurm")) i.slurm = *sl;
  if (auto us = r.optional_int("LifecycleTimeoutUs")) i.lifecycle_timeout = Duration(*us);
  if (auto us = r.optional_int("HeartbeatUs")) i.heartbeat = Duration(*us);
  if (auto us = r.optional_int("PollUs")) i.poll = Duration(*us);
  if (!r.ok()) return r.status();
  return i;
}

// ---- the server --------------------------------------------------------------------------

HttpNodeApi::HttpNodeApi(const LocalInstance& inst)
    : cluster_(inst.cluster),
      node_(inst.instance_id),
      client_(
          ClientOptions{inst.server, "agent:" + inst.instance_id, 10, inst.token, inst.ca_cert}) {}

std::string HttpNodeApi::node_path() const {
  return "/v1/clusters/" + url_encode(cluster_) + "/nodes/" + url_encode(node_);
}

Status HttpNodeApi::status(const std::string& phase, Time at, const std::string& message) {
  Json body{{"Phase", phase}, {"AtUs", to_micros(at)}, {"Address", "127.0.0.1"}};
  if (!message.empty()) body["Message"] = message;
  return client_.post(node_path() + "/agent/status", body.dump()).status();
}

Result<Json> HttpNodeApi::pods() { return client_.get(node_path() + "/pods"); }

Result<Json> HttpNodeApi::pod_status(const std::string& pod, const Json& body) {
  return client_.post(node_path() + "/pods/" + url_encode(pod) + "/status", body.dump());
}

Result<Json> HttpNodeApi::cluster() { return client_.get("/v1/clusters/" + url_encode(cluster_)); }

Result<Json> HttpNodeApi::nodes() {
  return client_.get("/v1/clusters/" + url_encode(cluster_) + "/nodes");
}

Result<Json> HttpNodeApi::slurm_layout() {
  return client_.get("/v1/clusters/" + url_encode(cluster_) + "/slurm/layout");
}

Status HttpNodeApi::slurm_report(const Json& body) {
  return client_.post(node_path() + "/slurm", body.dump()).status();
}

// ---- the node -----------------------------------------------------------------------------

LocalNode::LocalNode(LocalInstance instance, NodeApi& api) : inst_(std::move(instance)), api_(api) {
  std::error_code ec;
  const fs::path d = inst_.dir;
  for (const char* sub : {"scratch", "pods", "infiniband"}) fs::create_directories(d / sub, ec);
  for (const char* file : {"kern.log", "proc-mounts"}) {
    if (!fs::exists(d / file, ec)) std::ofstream(d / file).flush();
  }
  isolate_pods_ = os::namespaces_allowed();
  spdlog::info(isolate_pods_
                   ? "pods run in their own PID, mount and UTS namespaces (docs/local-cloud.md)"
                   : "pods run without namespaces: this agent may not create them (it needs "
                     "root or CAP_SYS_ADMIN; docs/local-cloud.md)");
}

LocalNode::~LocalNode() {
  for (auto& [name, pod] : pods_) {
    for (Container& c : pod.containers) {
      if (c.pid > 0) os::signal(c.pid, SIGKILL);
    }
  }
  if (lifecycle_pid_ > 0) os::signal(lifecycle_pid_, SIGKILL);
}

std::string LocalNode::pod_dir(const std::string& pod) const {
  return (fs::path(inst_.dir) / "pods" / pod).string();
}

void LocalNode::write_state() {
  const fs::path d = inst_.dir;
  Json s{{"LifecycleDone", fs::exists(d / "lifecycle.done")},
         {"LifecycleFailed", phase_ == Phase::kLifecycleFailed}};
  if (registered_) s["RegisteredUs"] = to_micros(*registered_);
  std::ofstream(d / "agent.state.tmp", std::ios::trunc) << s.dump();
  std::error_code ec;
  fs::rename(d / "agent.state.tmp", d / "agent.state", ec);
}

void LocalNode::server_failed(const Status& st, Time now) {
  if (st.code() != ErrorCode::kUnavailable && st.code() != ErrorCode::kInternal &&
      st.code() != ErrorCode::kThrottling)
    return;
  backoff_ = backoff_ == Duration::zero() ? milliseconds(200) : std::min(backoff_ * 2, seconds(5));
  retry_at_ = now + backoff_;
}

void LocalNode::step(Time now) {
  if (retry_at_ && now < *retry_at_) {  // the server is away: only the pods are looked after
    for (auto& [name, pod] : pods_) supervise(pod, now);
    return;
  }
  retry_at_.reset();
  switch (phase_) {
    case Phase::kRegistering:
      register_instance(now);
      break;
    case Phase::kLifecycle:
    case Phase::kLifecycleFailed:
      lifecycle(now);
      break;
    case Phase::kReady:
      if (lifecycle_result_) lifecycle(now);
      if (!next_pods_poll_ || now >= *next_pods_poll_) {
        reconcile(now);
        next_pods_poll_ = now + inst_.poll;
      } else {
        for (auto& [name, pod] : pods_) supervise(pod, now);
      }
      break;
    case Phase::kGone:
      break;
  }
}

void LocalNode::register_instance(Time now) {
  const Status st = api_.status("Started", registered_.value_or(now), "");
  if (is_gone(st)) {
    spdlog::warn("the server does not know instance {}: stopping", inst_.instance_id);
    phase_ = Phase::kGone;
    return;
  }
  if (!st.ok()) {
    if (!registered_) registered_ = now;  // the start time stays the first attempt's
    spdlog::warn("not registered yet: {}", st.message());
    server_failed(st, now);
    return;
  }
  server_answered();
  registered_ = registered_.value_or(now);
  const bool done = fs::exists(fs::path(inst_.dir) / "lifecycle.done");
  phase_ = done ? Phase::kReady : Phase::kLifecycle;
  if (done) lifecycle_result_ = std::make_pair(true, std::string("lifecycle script already ran"));
  lifecycle_ended_ = now;
  write_state();
  spdlog::info("instance {} registered with {}", inst_.instance_id, inst_.server);
}

void LocalNode::write_resource_config() {
  // HyperPod gives lifecycle scripts the cluster's layout in resource_config.json; this one has
  // the same shape (ClusterConfig, InstanceGroups[].Instances[]) with what the server knows.
  auto cluster = api_.cluster();
  auto nodes = api_.nodes();
  if (!cluster.ok() || !nodes.ok()) return;
  Json groups = Json::array();
  for (const Json& g : cluster->value("InstanceGroups", Json::array())) {
    Json instances = Json::array();
    for (const Json& n : nodes->value("ClusterNodeSummaries", Json::array())) {
      if (n.value("InstanceGroupName", "") != g.value("InstanceGroupName", "")) continue;
      const std::string ip = n.value("PrivatePrimaryIp", "");
      instances.push_back({{"InstanceName", n.value("InstanceId", "")},
                           {"InstanceId", n.value("InstanceId", "")},
                           {"AgentIpAddress", ip},
                           {"CustomerIpAddress", ip}});
    }
    groups.push_back({{"Name", g.value("InstanceGroupName", "")},
                      {"InstanceType", g.value("InstanceType", "")},
                      {"NodeType", g.value("SlurmConfig", Json::object()).value("NodeType", "")},
                      {"Instances", std::move(instances)}});
  }
  Json config{{"ClusterConfig",
               {{"ClusterArn", cluster->value("ClusterArn", "")},
                {"ClusterName", cluster->value("ClusterName", "")}}},
              {"InstanceGroups", std::move(groups)}};
  std::ofstream(fs::path(inst_.dir) / "resource_config.json") << config.dump(2) << "\n";
}

namespace {

// The controller's address from resource_config.json ("" when it has none yet).
std::string controller_address(const fs::path& dir) {
  auto j = parse_json(read_file(dir / "resource_config.json"));
  if (!j.ok()) return "";
  for (const Json& g : j->value("InstanceGroups", Json::array())) {
    if (g.value("NodeType", "") != "Controller") continue;
    for (const Json& i : g.value("Instances", Json::array())) {
      const std::string ip = i.value("AgentIpAddress", "");
      if (!ip.empty()) return ip;
    }
  }
  return "";
}

}  // namespace

void LocalNode::start_lifecycle(Time now) {
  lifecycle_started_ = now;
  if (!inst_.lifecycle_error.empty()) return finish_lifecycle(now, false, inst_.lifecycle_error);
  if (!inst_.lifecycle_script) {
    return finish_lifecycle(now, true, "no LifeCycleConfig: nothing to run");
  }
  const fs::path script = *inst_.lifecycle_script;
  std::error_code ec;
  if (!fs::is_regular_file(script, ec)) {
    return finish_lifecycle(
        now, false,
        fmt::format("lifecycle script {} not found (LifeCycleConfig.SourceS3Uri {}, OnCreate {})",
                    script.string(), inst_.lifecycle_config.value("SourceS3Uri", ""),
                    inst_.lifecycle_config.value("OnCreate", "")));
  }
  write_resource_config();
  const fs::path d = inst_.dir;
  append_file(d / "lifecycle.log",
              fmt::format("== {} instance {} (launch attempt {}): bash {}\n", format_iso8601(now),
                          inst_.instance_id, inst_.attempt, script.string()));
  os::SpawnOptions o;
  o.argv = {"bash", script.string()};
  o.cwd = script.parent_path().string();
  o.output = (d / "lifecycle.log").string();
  o.die_with_parent = true;
  o.env = {{"GPUFLEET_CLUSTER_NAME", inst_.cluster},
           {"GPUFLEET_INSTANCE_GROUP", inst_.group},
           {"GPUFLEET_NODE_ID", inst_.instance_id},
           {"GPUFLEET_INSTANCE_TYPE", inst_.instance_type},
           {"GPUFLEET_LAUNCH_ATTEMPT", std::to_string(inst_.attempt)},
           {"GPUFLEET_NODE_DIR", d.string()},
           {"GPUFLEET_SCRATCH", (d / "scratch").string()},
           {"GPUFLEET_RESOURCE_CONFIG", (d / "resource_config.json").string()},
           {"GPUFLEET_CONTROLLER_ADDRESS", controller_address(d)}};
  auto pid = os::spawn(o);
  if (!pid.ok()) return finish_lifecycle(now, false, pid.status().message());
  lifecycle_pid_ = *pid;
}

void LocalNode::finish_lifecycle(Time now, bool ok, const std::string& message) {
  lifecycle_pid_ = 0;
  lifecycle_ended_ = now;
  lifecycle_result_ = std::make_pair(ok, message);
  const fs::path d = inst_.dir;
  append_file(d / "lifecycle.log", fmt::format("== {} {}: {}\n", format_iso8601(now),
                                               ok ? "succeeded" : "failed", message));
  if (ok) std::ofstream(d / "lifecycle.done") << format_iso8601(now) << "\n";
  phase_ = ok ? Phase::kReady : Phase::kLifecycleFailed;
  write_state();
}

void LocalNode::lifecycle(Time now) {
  if (lifecycle_pid_ == 0 && !lifecycle_result_ && phase_ == Phase::kLifecycle)
    start_lifecycle(now);
  if (lifecycle_pid_ > 0) {
    if (auto exit = os::reap(lifecycle_pid_)) {
      if (exit->code == 0) {
        finish_lifecycle(now, true, "exited 0");
      } else {
        const std::string last = last_line(fs::path(inst_.dir) / "lifecycle.log");
        finish_lifecycle(now, false,
                         fmt::format("lifecycle script {} exited with code {}{}",
                                     inst_.lifecycle_script.value_or(""), exit->code,
                                     last.empty() ? "" : ": " + last));
      }
    } else if (now - lifecycle_started_ > inst_.lifecycle_timeout) {
      os::signal(lifecycle_pid_, SIGKILL);
      os::wait(lifecycle_pid_);  // SIGKILL cannot be refused: this returns at once
      finish_lifecycle(
          now, false,
          fmt::format("lifecycle script {} timed out after {}", inst_.lifecycle_script.value_or(""),
                      format_duration(inst_.lifecycle_timeout)));
    }
  }
  if (lifecycle_result_) {
    const auto& [ok, message] = *lifecycle_result_;
    const Status st =
        api_.status(ok ? "LifecycleSucceeded" : "LifecycleFailed", lifecycle_ended_, message);
    if (st.ok()) {
      lifecycle_result_.reset();
      server_answered();
    } else if (is_gone(st)) {
      phase_ = Phase::kGone;
    } else {
      server_failed(st, now);
    }
  }
}

// ---- pods ---------------------------------------------------------------------------------

void LocalNode::reconcile(Time now) {
  auto answer = api_.pods();
  if (!answer.ok()) {
    // The server is away: the pods go on as they are (they are the job's, not the server's).
    if (is_gone(answer.status())) phase_ = Phase::kGone;
    server_failed(answer.status(), now);
    for (auto& [name, pod] : pods_) supervise(pod, now);
    return;
  }
  server_answered();
  slurm_drain_ = std::optional<std::string>();
  if (auto d = answer->find("SlurmDrain"); d != answer->end() && d->is_string())
    slurm_drain_ = std::optional<std::string>(d->get<std::string>());
  const Json listed = answer->value("Pods", Json::array());  // `desired` points into it
  std::map<std::string, const Json*> desired;
  for (const Json& p : listed) {
    if (p.is_object() && p.contains("Name") && p["Name"].is_string())
      desired[p["Name"].get<std::string>()] = &p;
  }
  for (auto& [name, pod] : pods_) {
    auto it = desired.find(name);
    const bool same = it != desired.end() && it->second->value("JobId", "") == pod.job_id &&
                      it->second->value("Placement", int64_t{0}) == pod.placement;
    if (!same && !pod.stopping_since) stop_pod(pod, now);
  }
  for (const auto& [name, spec] : desired) {
    if (!pods_.contains(name)) start_pod(*spec, now);
  }
  for (auto it = pods_.begin(); it != pods_.end();) {
    supervise(it->second, now);
    const bool all_gone = std::all_of(it->second.containers.begin(), it->second.containers.end(),
                                      [](const Container& c) { return c.pid == 0; });
    if (it->second.stopping_since && all_gone) {
      it = pods_.erase(it);
    } else {
      ++it;
    }
  }
}

void LocalNode::start_pod(const Json& spec, Time now) {
  Pod pod;
  pod.spec = spec;
  pod.name = spec.value("Name", "");
  pod.job_id = spec.value("JobId", "");
  pod.placement = spec.value("Placement", int64_t{0});
  std::error_code ec;
  fs::create_directories(fs::path(pod_dir(pod.name)) / "work", ec);
  for (const Json& c : spec.value("Containers", Json::array())) pod.containers.push_back({c});
  auto slurm = SlurmPodSpec::from_pod(spec);
  const std::string slurm_dir =
      inst_.slurm.is_object() ? inst_.slurm.value("Dir", std::string()) : std::string();
  if (!slurm.ok() || (*slurm && slurm_dir.empty())) {
    // A pod meant for Slurm never runs outside it: it fails, saying why.
    const std::string why = slurm.ok() ? "this node runs no slurmd" : slurm.status().message();
    spdlog::error("pod {}: {}", pod.name, why);
    for (Container& c : pod.containers) {
      c.exit_code = 127;
      c.done = true;
    }
    if (!pod.containers.empty()) {
      append_file(
          fs::path(pod_dir(pod.name)) / (pod.containers[0].spec.value("Name", "main") + ".log"),
          "gpufleet: " + why + "\n");
    }
    auto [it, fresh] = pods_.emplace(pod.name, std::move(pod));
    report(it->second, now);
    return;
  } else if (*slurm) {
    const std::string container =
        pod.containers.empty() ? "main" : pod.containers[0].spec.value("Name", "main");
    pod.slurm = std::make_unique<SlurmPod>(
        **slurm, slurm_dir, spec, (fs::path(pod_dir(pod.name)) / (container + ".log")).string());
  }
  for (const Json& w : spec.value("Warnings", Json::array())) {
    if (w.is_string()) spdlog::warn("pod {}: {}", pod.name, w.get<std::string>());
  }
  auto [it, fresh] = pods_.emplace(pod.name, std::move(pod));
  if (it->second.slurm) {
    supervise(it->second, now);
    spdlog::info("pod {} of job {}: part of Slurm allocation", it->second.name, it->second.job_id);
    return;
  }
  for (Container& c : it->second.containers) start_container(it->second, c, now);
  spdlog::info("pod {} of job {} started ({} containers)", it->second.name, it->second.job_id,
               it->second.containers.size());
  report(it->second, now);
}

void LocalNode::start_container(Pod& pod, Container& c, Time now) {
  (void)now;
  const std::string name = c.spec.value("Name", "main");
  const fs::path log = fs::path(pod_dir(pod.name)) / (name + ".log");
  std::error_code ec;
  if (c.restarts > 0 && fs::exists(log, ec)) {
    fs::rename(log, fs::path(pod_dir(pod.name)) / (name + ".previous.log"), ec);
  }
  std::vector<std::string> argv = string_list(c.spec.value("Command", Json::array()));
  for (std::string& a : string_list(c.spec.value("Args", Json::array()))) argv.push_back(a);
  c.restart_at.reset();
  if (argv.empty()) {
    append_file(log, "gpufleet: container " + name +
                         " has no command: images are not pulled on "
                         "the local cloud, so a container runs its command and args on the host\n");
    c.exit_code = 127;
    c.done = true;
    return;
  }
  os::SpawnOptions o;
  o.argv = std::move(argv);
  const std::string wd = c.spec.value("WorkingDir", "");
  // Its own directory beside its logs (what it writes does not mix with them).
  const std::string work = (fs::path(pod_dir(pod.name)) / "work").string();
  o.cwd = !wd.empty() && fs::is_directory(wd, ec) ? wd : work;
  o.output = log.string();
  o.inherit_env = false;  // a pod gets its own environment, not the agent's
  o.die_with_parent = true;
  o.isolate = isolate_pods_;
  o.hostname = pod.name;
  o.env = {{"PATH", kPodPath}, {"HOME", work}, {"HOSTNAME", pod.name}};
  for (const Json& e : c.spec.value("Env", Json::array())) {
    if (e.is_object()) o.env.emplace_back(e.value("Name", ""), e.value("Value", ""));
  }
  auto pid = os::spawn(o);
  if (!pid.ok()) {
    // As a shell reports a command it cannot run; the restart policy decides what follows.
    append_file(log, "gpufleet: " + pid.status().message() + "\n");
    c.pid = 0;
    container_ended(pod, c, 127, now);
    return;
  }
  c.pid = *pid;
}

void LocalNode::container_ended(Pod& pod, Container& c, int exit_code, Time now) {
  c.exit_code = exit_code;
  if (pod.stopping_since) return;
  const std::string policy = pod.spec.value("RestartPolicy", "Never");
  const bool restart = policy == "Always" || (policy == "OnFailure" && exit_code != 0) ||
                       (policy == "ExitCode" && exit_code >= 128);
  if (restart) {
    c.restarts += 1;
    c.restart_at = now + restart_backoff(c.restarts);
  } else {
    c.done = true;
  }
}

void LocalNode::supervise(Pod& pod, Time now) {
  if (pod.slurm) {
    if (pod.stopping_since) return;
    pod.slurm->step(now);
    report(pod, now);
    return;
  }
  for (Container& c : pod.containers) {
    if (c.pid > 0) {
      if (auto exit = os::reap(c.pid)) {
        c.pid = 0;
        container_ended(pod, c, exit->code, now);
      }
    } else if (c.restart_at && !pod.stopping_since && now >= *c.restart_at) {
      start_container(pod, c, now);
    }
  }
  if (pod.stopping_since) {
    const int64_t grace =
        std::clamp<int64_t>(pod.spec.value("GracePeriodSeconds", kDefaultGraceSeconds), 0, 86400);
    if (now - *pod.stopping_since > seconds(grace)) {
      for (Container& c : pod.containers) {
        if (c.pid > 0) os::signal(c.pid, SIGKILL);
      }
    }
    return;
  }
  report(pod, now);
}

Json LocalNode::pod_status(const Pod& pod) const {
  if (pod.slurm) {
    return Json{{"JobId", pod.job_id},
                {"Placement", pod.placement},
                {"Phase", pod.slurm->phase()},
                {"ExitCode", pod.slurm->exit_code()},
                {"Restarts", 0},
                {"Message", pod.slurm->message()}};
  }
  int restarts = 0, exit_code = 0;
  bool running = false, failed = false, all_done = true;
  std::string message;
  for (const Container& c : pod.containers) {
    restarts += c.restarts;
    if (c.exit_code) exit_code = *c.exit_code;
    if (c.pid > 0 || c.restart_at) running = true;
    if (!c.done) all_done = false;
    if (c.done && c.exit_code.value_or(0) != 0) {
      failed = true;
      exit_code = *c.exit_code;
      message = "container " + c.spec.value("Name", "main") + " exited with code " +
                std::to_string(exit_code);
    }
  }
  const std::string phase = failed     ? "Failed"
                            : all_done ? "Succeeded"
                            : running  ? "Running"
                                       : "Pending";
  return Json{{"JobId", pod.job_id},   {"Placement", pod.placement}, {"Phase", phase},
              {"ExitCode", exit_code}, {"Restarts", restarts},       {"Message", message}};
}

void LocalNode::report(Pod& pod, Time now) {
  const Json status = pod_status(pod);
  if (status == pod.reported) return;
  auto answer = api_.pod_status(pod.name, status);
  if (!answer.ok()) {
    if (is_gone(answer.status())) stop_pod(pod, now);
    return;  // sent again on the next step
  }
  pod.reported = status;
  if (answer->value("Stale", false)) stop_pod(pod, now);
}

void LocalNode::stop_pod(Pod& pod, Time now) {
  if (pod.stopping_since) return;
  pod.stopping_since = now;
  if (pod.slurm) pod.slurm->cancel();
  for (Container& c : pod.containers) {
    c.restart_at.reset();
    if (c.pid > 0) os::signal(c.pid, SIGTERM);
  }
  spdlog::info("pod {} stopping", pod.name);
}

bool LocalNode::stop(Time now) {
  if (lifecycle_pid_ > 0) {
    os::signal(lifecycle_pid_, SIGKILL);
    if (os::reap(lifecycle_pid_) || !os::alive(lifecycle_pid_)) lifecycle_pid_ = 0;
  }
  for (auto it = pods_.begin(); it != pods_.end();) {
    stop_pod(it->second, now);
    supervise(it->second, now);
    const bool all_gone = std::all_of(it->second.containers.begin(), it->second.containers.end(),
                                      [](const Container& c) { return c.pid == 0; });
    it = all_gone ? pods_.erase(it) : std::next(it);
  }
  return pods_.empty() && lifecycle_pid_ == 0;
}

std::vector<std::string> LocalNode::running_pods() const {
  std::vector<std::string> out;
  for (const auto& [name, pod] : pods_) {
    if (!pod.stopping_since) out.push_back(name);
  }
  return out;
}

// ---- the process --------------------------------------------------------------------------

int run_local_instance(const std::string& dir) {
  auto inst = LocalInstance::load(dir);
  if (!inst.ok()) {
    spdlog::error("{}", inst.status().message());
    return 2;
  }
  ::signal(SIGTERM, on_signal);
  ::signal(SIGINT, on_signal);
  ::signal(SIGPIPE, SIG_IGN);
  HttpNodeApi api(*inst);
  LocalNode node(*inst, api);
  std::unique_ptr<SlurmRole> slurm;
  {
    auto settings = SlurmSettings::from_json(inst->slurm);
    if (!settings.ok()) {
      spdlog::error("{}", settings.status().message());
      return 2;
    }
    if (*settings) slurm = std::make_unique<SlurmRole>(**settings, api);
  }
  AgentOptions o;
  o.server = inst->server;
  o.cluster = inst->cluster;
  o.node = inst->instance_id;
  o.kernel_log = (fs::path(dir) / "kern.log").string();
  o.proc_mounts = (fs::path(dir) / "proc-mounts").string();
  o.infiniband_dir = (fs::path(dir) / "infiniband").string();
  o.nvml = "none";
  o.disk = dir;
  o.interval = std::min<Duration>(inst->heartbeat, seconds(2));
  // A Slurm compute node's state, read from slurmctld: DOWN or DRAIN by someone else is an alert.
  if (slurm && slurm->role() == "Compute") o.scontrol = slurm->scontrol_command();
  HttpReporter reporter(inst->server, inst->cluster, inst->instance_id, 10, inst->token,
                        inst->ca_cert);
  NodeAgent detectors(o, reporter);
  RealClock clock;
  spdlog::info("agent of instance {} ({}, cluster {}) reporting to {}", inst->instance_id,
               inst->instance_type, inst->cluster, inst->server);
  Time next_beat{}, next_detect{};
  std::string server = inst->server;
  while (!g_stop && node.phase() != LocalNode::Phase::kGone) {
    const Time now = clock.now();
    try {
      node.step(now);
    } catch (const std::exception& e) {  // an answer of an unexpected shape: logged, tried again
      spdlog::error("agent step: {}", e.what());
    }
    if (node.phase() == LocalNode::Phase::kReady) {
      if (now >= next_beat) {
        if (Status hb = reporter.heartbeat(); !hb.ok()) {
          spdlog::warn("heartbeat: {}", hb.message());
          // A restarted server may listen elsewhere: the cloud rewrites instance.json for it.
          auto again = LocalInstance::load(dir);
          if (again.ok() && again->server != server) {
            spdlog::info("server moved: {} -> {}", server, again->server);
            server = again->server;
            api.set_server(server);
            reporter.set_server(server);
          }
        }
        next_beat = now + inst->heartbeat;
      }
      if (slurm) {
        try {
          slurm->step(now, node.slurm_drain());
        } catch (const std::exception& e) {
          spdlog::error("slurm step: {}", e.what());
        }
      }
      if (now >= next_detect) {
        // Undelivered signals stay queued; the next poll sends them.
        if (Status s = detectors.poll(now); !s.ok()) spdlog::debug("detectors: {}", s.message());
        next_detect = now + o.interval;
      }
    }
    wall_sleep(std::min<Duration>(inst->poll, milliseconds(200)));
  }
  spdlog::info("agent of instance {} stopping", inst->instance_id);
  const Time deadline = clock.now() + seconds(60);
  while (!node.stop(clock.now()) && clock.now() < deadline) wall_sleep(milliseconds(100));
  while (slurm && !slurm->stop(clock.now()) && clock.now() < deadline)
    wall_sleep(milliseconds(100));
  return 0;
}

}  // namespace gf::agent
