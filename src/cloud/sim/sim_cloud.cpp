#include "cloud/sim/sim_cloud.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <algorithm>

namespace gf {

namespace {

Result<std::map<std::string, int64_t>> read_capacity(const Json& j, const std::string& path) {
  if (!j.is_object()) return validation_error(path + ": expected a map of instance type to count");
  std::map<std::string, int64_t> out;
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (!it.value().is_number_integer() || it.value().get<int64_t>() < 0) {
      return validation_error(path + "." + it.key() + ": expected a count >= 0, got " +
                              describe_json_value(it.value()));
    }
    out[it.key()] = it.value().get<int64_t>();
  }
  return out;
}

// Latencies and change times are added to the clock (now + launch latency, epoch + at); beyond
// this bound the sum could leave the int64 microsecond range.
constexpr Duration kMaxCloudDuration = days(36500);

Result<Duration> read_duration(const Json& v, const std::string& path) {
  Result<Duration> d = read_bounded_duration(v, kMaxCloudDuration);
  if (!d.ok()) return d.status().with_prefix(path);
  return d;
}

// The latencies and action durations, each optional.
Status read_durations(ObjectReader& r, SimCloudConfig& c) {
  struct DurField {
    const char* key;
    Duration* out;
  };
  for (DurField f : {DurField{"launchLatency", &c.launch_latency},
                     DurField{"lifecycleDuration", &c.lifecycle_duration},
                     DurField{"failureLatency", &c.failure_latency},
                     DurField{"terminateLatency", &c.terminate_latency},
                     DurField{"rebootDuration", &c.reboot_duration},
                     DurField{"reprovisionDuration", &c.reprovision_duration},
                     DurField{"migrateDuration", &c.migrate_duration},
                     DurField{"deleteDuration", &c.delete_duration},
                     DurField{"burnInDuration", &c.burn_in_duration},
                     DurField{"softwareUpdateDuration", &c.software_update_duration}}) {
    if (const Json* v = r.optional_value(f.key)) {
      auto d = read_duration(*v, r.field_path(f.key));
      if (!d.ok()) return d.status();
      *f.out = *d;
    }
  }
  return ok_status();
}

// changes: capacity maps taking effect `at` a time since the epoch, sorted by it (stable, so
// of two changes at the same time the later one listed wins).
Status read_changes(ObjectReader& r, SimCloudConfig& c) {
  if (const Json* changes = r.optional_array("changes")) {
    for (size_t i = 0; i < changes->size(); ++i) {
      const std::string p = path_index(r.field_path("changes"), i);
      ObjectReader cr((*changes)[i], p);
      const Json* at = cr.required_value("at");
      const Json* cap = cr.required_value("capacity");
      if (!cr.ok()) return cr.status();
      SimCloudConfig::Change ch;
      GF_ASSIGN_OR_RETURN(ch.at, read_duration(*at, p + ".at"));
      GF_ASSIGN_OR_RETURN(ch.capacity, read_capacity(*cap, p + ".capacity"));
      c.changes.push_back(std::move(ch));
    }
    std::stable_sort(c.changes.begin(), c.changes.end(),
                     [](const SimCloudConfig::Change& a, const SimCloudConfig::Change& b) {
                       return a.at < b.at;
                     });
  }
  return ok_status();
}

// One entry of launchFaults: a failing outcome for a group's launch attempt (from 1).
Result<SimCloudConfig::Fault> read_launch_fault(const Json& j, const std::string& p) {
  ObjectReader fr(j, p);
  SimCloudConfig::Fault f;
  f.group = fr.required_string("group");
  f.attempt = fr.required_int("attempt");
  std::string outcome = fr.required_string("outcome");
  if (!fr.ok()) return fr.status();
  auto o = parse_launch_outcome(outcome);
  if (!o || *o == LaunchOutcome::kOk) {
    return validation_error(p +
                            ".outcome: expected InsufficientCapacity, UnhealthyInstance or "
                            "LifecycleScriptFailure, got \"" +
                            outcome + "\"");
  }
  if (f.attempt < 1) return validation_error(p + ".attempt: must be >= 1 (attempts count from 1)");
  f.outcome = *o;
  return f;
}

// One entry of burnIn: the outcome of a burn-in and the check that decides it.
Result<SimCloudConfig::BurnIn> read_burn_in(const Json& j, const std::string& p) {
  ObjectReader br(j, p);
  SimCloudConfig::BurnIn b;
  b.outcome = br.required_string("outcome");
  b.check = br.optional_string("check").value_or("nccl");
  if (!br.ok()) return br.status();
  if (b.outcome != "pass" && b.outcome != "fail" && b.outcome != "interrupted") {
    return validation_error(p + ".outcome: expected pass, fail or interrupted, got \"" + b.outcome +
                            "\"");
  }
  if (b.check != "gpu" && b.check != "nccl" && b.check != "infiniband" && b.check != "storage") {
    return validation_error(p + ".check: expected gpu, nccl, infiniband or storage, got \"" +
                            b.check + "\"");
  }
  return b;
}

}  // namespace

Result<SimCloudConfig> SimCloudConfig::from_json(const Json& j, const std::string& path) {
  SimCloudConfig c;
  if (j.is_null()) return c;
  ObjectReader r(j, path);
  GF_RETURN_IF_ERROR(read_durations(r, c));
  if (const Json* cap = r.optional_value("capacity")) {
    GF_ASSIGN_OR_RETURN(c.capacity, read_capacity(*cap, r.field_path("capacity")));
  }
  GF_RETURN_IF_ERROR(read_changes(r, c));
  if (const Json* faults = r.optional_array("launchFaults")) {
    for (size_t i = 0; i < faults->size(); ++i) {
      GF_ASSIGN_OR_RETURN(
          Fault f, read_launch_fault((*faults)[i], path_index(r.field_path("launchFaults"), i)));
      c.faults.push_back(std::move(f));
    }
  }
  if (const Json* topo = r.optional_value("topology")) {
    GF_ASSIGN_OR_RETURN(c.topology, TopologyLayout::from_json(*topo, r.field_path("topology")));
  }
  if (const Json* burn = r.optional_array("burnIn")) {
    for (size_t i = 0; i < burn->size(); ++i) {
      GF_ASSIGN_OR_RETURN(BurnIn b,
                          read_burn_in((*burn)[i], path_index(r.field_path("burnIn"), i)));
      c.burn_ins.push_back(std::move(b));
    }
  }
  if (!r.ok()) return r.status();
  return c;
}

SimCloud::SimCloud(SimCloudConfig config, const Clock& clock, ReportFn report)
    : config_(std::move(config)),
      clock_(clock),
      report_(std::move(report)),
      slots_(config_.topology) {}

int64_t SimCloud::capacity_at(const std::string& type, Time t) const {
  int64_t cap = -1;
  if (auto it = config_.capacity.find(type); it != config_.capacity.end()) cap = it->second;
  for (const auto& ch : config_.changes) {
    if (config_.epoch + ch.at > t) break;
    if (auto it = ch.capacity.find(type); it != ch.capacity.end()) cap = it->second;
  }
  return cap;
}

int64_t SimCloud::in_use(const std::string& type) const {
  // Releases due by now count as released even before settle() runs.
  int64_t releasing = 0;
  for (auto it = pending_release_.begin();
       it != pending_release_.end() && it->first <= clock_.now(); ++it) {
    releasing += it->second == type;
  }
  auto it = in_use_.find(type);
  return (it == in_use_.end() ? 0 : it->second) - releasing;
}

std::optional<LaunchOutcome> SimCloud::injected(const LaunchOp& op) const {
  for (const auto& f : config_.faults) {
    if (f.group == op.group && f.attempt == op.attempt) return f.outcome;
  }
  return std::nullopt;
}

void SimCloud::execute(const Intent& intent) {
  if (intent.kind == kLaunchIntent) {
    auto op = LaunchOp::from_json(intent.payload);
    if (op.ok())
      launch(*op);
    else
      spdlog::error("sim cloud: bad launch intent: {}", op.status().to_string());
  } else if (intent.kind == kTerminateIntent) {
    auto op = TerminateOp::from_json(intent.payload);
    if (op.ok())
      terminate(*op);
    else
      spdlog::error("sim cloud: bad terminate intent: {}", op.status().to_string());
  } else if (intent.kind == "remediate") {
    remediate(intent);
  } else if (intent.kind == "burnin") {
    burn_in(intent);
  } else if (intent.kind == kUpdateSoftwareIntent) {
    auto op = UpdateSoftwareOp::from_json(intent.payload);
    if (op.ok())
      update_software(*op);
    else
      spdlog::error("sim cloud: bad update-software intent: {}", op.status().to_string());
  }
}

std::optional<std::string> SimCloud::spare(const std::string& type) const {
  const int64_t cap = capacity_at(type, clock_.now());
  if (cap < 0 || in_use(type) < cap) return std::nullopt;
  return fmt::format("no spare {} in the simulated cloud ({} of {} in use)", type, in_use(type),
                     cap);
}

void SimCloud::remediate(const Intent& intent) {
  const Json& p = intent.payload;
  const std::string action = p.value("Action", "");
  const std::string type = p.value("InstanceType", "");
  Duration took = config_.reboot_duration;
  std::string message;
  if (action == "reboot") {
    message = "instance rebooted (local scratch and temporary data kept)";
  } else if (action == "reprovision") {
    took = config_.reprovision_duration;
    message = "instance reprovisioned from a clean image (local data lost)";
  } else if (action == "migrate") {
    took = config_.migrate_duration;
    message = "instance rebuilt on other hardware; old host " + p.value("Host", "") +
              " sent to inspection";
  } else if (action == "delete") {
    took = config_.delete_duration;
    message = "host " + p.value("Host", "") + " sent to repair";
  } else {
    spdlog::error("sim cloud: unknown remediation action '{}'", action);
    return;
  }
  CloudReport r{CloudReport::Kind::kRemediated, p.value("Cluster", ""), p.value("InstanceId", ""),
                LaunchOutcome::kOk, message};
  r.detail = {{"RemediationId", p.value("RemediationId", "")}, {"Ok", true}};
  if (action == "migrate" || action == "reprovision") {
    if (std::optional<std::string> why = spare(type)) {
      r.detail["Ok"] = false;
      r.message = *why;
      took = config_.failure_latency;
    }
  }
  report_(clock_.now() + took, std::move(r));
}

void SimCloud::update_software(const UpdateSoftwareOp& op) {
  report_(clock_.now() + config_.software_update_duration,
          CloudReport{CloudReport::Kind::kSoftwareUpdated, op.cluster, op.instance_id,
                      LaunchOutcome::kOk, op.image});
}

void SimCloud::burn_in(const Intent& intent) {
  SimCloudConfig::BurnIn b;
  if (burn_ins_done_ < config_.burn_ins.size()) b = config_.burn_ins[burn_ins_done_];
  ++burn_ins_done_;
  const std::string host = intent.payload.value("HostId", "");
  Json checks = Json::array();
  bool stopped = false;
  for (const char* check : {"gpu", "nccl", "infiniband", "storage"}) {
    std::string result = "pass", log;
    if (stopped) {
      result = "not-run";
    } else if (b.outcome != "pass" && b.check == check) {
      result = b.outcome == "fail" ? "fail" : "interrupted";
      stopped = true;
    }
    if (result == "pass") log = std::string(check) + ": all tests passed on " + host;
    if (result == "fail") {
      log = std::string(check) == "nccl"
                ? "nccl-tests all_reduce_perf: busbw 12.4 GB/s below the 350 GB/s floor on " + host
            : std::string(check) == "gpu"
                ? "dcgmi diag -r 3: Memory test FAILED on GPU 5 of " + host
            : std::string(check) == "infiniband"
                ? "ib_write_bw: mlx5_3 port 1 link down on " + host
                : "fio randread: 0 IOPS, I/O errors on /dev/nvme1n1 of " + host;
    }
    if (result == "interrupted")
      log = std::string(check) + ": check interrupted (host lost power) on " + host;
    checks.push_back({{"Name", check}, {"Result", result}, {"Log", log}});
  }
  std::string message = b.outcome == "pass"   ? "GPU, NCCL, InfiniBand and storage checks passed"
                        : b.outcome == "fail" ? b.check + " check failed"
                                              : b.check + " check interrupted";
  CloudReport r{CloudReport::Kind::kBurnIn, "", "", LaunchOutcome::kOk, std::move(message)};
  r.detail = {{"HostId", host}, {"Outcome", b.outcome}, {"Checks", std::move(checks)}};
  report_(clock_.now() + config_.burn_in_duration, std::move(r));
}

void SimCloud::launch(const LaunchOp& op) {
  const Time now = clock_.now();
  settle(now);
  auto report = [&](Time at, CloudReport::Kind kind, LaunchOutcome reason, std::string message) {
    report_(at, CloudReport{kind, op.cluster, op.instance_id, reason, std::move(message)});
  };
  std::optional<LaunchOutcome> fault = injected(op);
  if (!op.resume_lifecycle) {
    const int64_t cap = capacity_at(op.instance_type, now);
    const bool no_room =
        cap >= 0 && in_use(op.instance_type) >= cap && !holding_.count(op.instance_id);
    if (fault == LaunchOutcome::kInsufficientCapacity || no_room) {
      report(now + config_.failure_latency, CloudReport::Kind::kLaunchFailed,
             LaunchOutcome::kInsufficientCapacity,
             "We currently do not have sufficient capacity to launch new " + op.instance_type +
                 " instances. Please try again.");
      return;
    }
    if (!holding_.count(op.instance_id)) {
      holding_[op.instance_id] = op.instance_type;
      ++in_use_[op.instance_type];
    }
    CloudReport up{CloudReport::Kind::kLaunched, op.cluster, op.instance_id, LaunchOutcome::kOk,
                   ""};
    if (reports_topology(op.instance_type)) {
      std::map<std::string, std::string> labels =
          slots_.assign(op.cluster, op.instance_type, op.instance_id);
      if (!labels.empty()) up.detail["Labels"] = std::move(labels);
    }
    report_(now + config_.launch_latency, std::move(up));
  }
  const Time done = now + (op.resume_lifecycle ? Duration(0) : config_.launch_latency) +
                    config_.lifecycle_duration;
  if (fault == LaunchOutcome::kLifecycleScriptFailure) {
    report(done, CloudReport::Kind::kLifecycleFailed, LaunchOutcome::kLifecycleScriptFailure,
           "lifecycle script exited with status 1");
  } else if (fault == LaunchOutcome::kUnhealthyInstance) {
    report(done, CloudReport::Kind::kUnhealthy, LaunchOutcome::kUnhealthyInstance,
           "instance failed its health checks after launch");
  } else {
    report(done, CloudReport::Kind::kRunning, LaunchOutcome::kOk, "");
  }
}

void SimCloud::terminate(const TerminateOp& op) {
  const Time at = clock_.now() + config_.terminate_latency;
  report_(at, CloudReport{CloudReport::Kind::kTerminated, op.cluster, op.instance_id,
                          LaunchOutcome::kOk, ""});
  slots_.release(op.instance_id);
  auto it = holding_.find(op.instance_id);
  if (it == holding_.end()) return;
  // The instance holds its capacity until it is gone.
  pending_release_.emplace(at, it->second);
  holding_.erase(it);
}

void SimCloud::settle(Time now) {
  while (!pending_release_.empty() && pending_release_.begin()->first <= now) {
    --in_use_[pending_release_.begin()->second];
    pending_release_.erase(pending_release_.begin());
  }
}

void SimCloud::rebuild(
    const std::map<std::string, std::shared_ptr<const Cluster>, std::less<>>& clusters) {
  in_use_.clear();
  holding_.clear();
  pending_release_.clear();
  slots_ = TopologySlots(config_.topology);
  for (const auto& [name, c] : clusters) {
    for (const auto& [id, n] : c->nodes) {
      if (!n.launched()) continue;  // a launch still in flight is asked for again
      holding_[id] = n.instance_type;
      ++in_use_[n.instance_type];
      if (n.is_live()) slots_.restore(name, n.instance_type, id, n.labels);
    }
  }
}

CloudDriverFactory sim_cloud(SimCloudConfig config) {
  return [config = std::move(config)](const Clock& clock, CloudDriver::ReportFn report) {
    return std::make_unique<SimCloud>(config, clock, std::move(report));
  };
}

}  // namespace gf
