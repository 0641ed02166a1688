#include "remediate/signal.h"

#include <fmt/format.h>

#include <sstream>

#include "health/gpu_probe.h"
#include "health/node_signals.h"
#include "health/xid.h"

namespace gf::remediate {

namespace {

constexpr Time kT0{};  // structured readings are taken as "now" with a baseline a minute earlier

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!line.empty()) lines.push_back(std::move(line));
  }
  return lines;
}

std::vector<Detection> from_kernel_log(const std::string& text) {
  std::vector<Detection> out;
  health::FallenOffBusDetector fob;
  for (const std::string& line : split_lines(text)) {
    if (std::optional<health::XidEvent> x = health::parse_xid_line(line)) {
      Detection d;
      d.detector = "xid";
      d.subject = x->pci;
      const bool sxid = x->source == health::XidSource::kNvSwitch;
      d.fault = fmt::format("{}{}", sxid ? "sxid:" : "xid:", x->code);
      const health::XidInfo info = health::xid_info(x->code);
      d.summary =
          fmt::format("{}{}{} on PCI {}{}", sxid ? "NVSwitch SXid " : "GPU Xid ", x->code,
                      info.mnemonic.empty() || sxid ? "" : fmt::format(" ({})", info.mnemonic),
                      x->pci, x->message.empty() ? "" : ": " + x->message);
      d.evidence = line;
      if (!sxid && x->code == 154) {
        if (std::optional<std::string_view> a = health::xid154_recovery_action(x->message))
          d.default_action = parse_action(*a);
      }
      out.push_back(std::move(d));
      continue;
    }
    if (std::optional<std::string> pci = fob.feed(line)) {
      out.push_back(
          Detection{"pcie-bus", *pci, "pcie-bus:missing",
                    "GPU " + *pci + " has fallen off the bus and is not responding (no Xid)", line,
                    std::nullopt});
      continue;
    }
    if (std::optional<health::KernelPattern> k = health::match_kernel_pattern(line)) {
      Detection d;
      d.detector = std::string(k->detector);
      d.fault = d.detector + ":" + std::string(k->reason);
      d.subject = k->task;
      d.summary = std::string(k->reason) + ": " + k->message;
      d.evidence = line;
      out.push_back(std::move(d));
    }
  }
  return out;
}

Result<int64_t> int_value(ObjectReader& r, std::string_view key) {
  const Json* v = r.required_value(key);
  if (!v) return r.status();
  if (v->is_boolean()) return v->get<bool>() ? 1 : 0;
  if (v->is_number_integer()) return v->get<int64_t>();
  if (v->is_string()) {
    const std::string s = v->get<std::string>();
    try {
      size_t used = 0;
      const int64_t n = std::stoll(s, &used, 0);
      if (used == s.size()) return n;
    } catch (const std::exception&) {
    }
  }
  return validation_error(r.field_path(key) + ": must be an integer (or 0x… bit mask)");
}

// DCGM field names that releases before the 3.x renames used, as dcgm-exporters still in service
// send them (docs/health.md "DCGM fields"): old name -> the name read here.
constexpr std::pair<std::string_view, std::string_view> kDcgmFieldAliases[] = {
    {"DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", "DCGM_FI_DEV_CLOCKS_EVENT_REASONS"},
};

}  // namespace

std::string canonical_dcgm_field(std::string_view field) {
  for (const auto& [old_name, name] : kDcgmFieldAliases) {
    if (field == old_name) return std::string(name);
  }
  return std::string(field);
}

namespace {

Result<std::vector<Detection>> from_dcgm(const Json& j, const std::string& path) {
  ObjectReader r(j, path);
  const std::string field = canonical_dcgm_field(r.required_string("field"));
  const int64_t gpu = r.optional_int("gpu").value_or(0);
  const std::string pci =
      r.optional_string("pci").value_or("0000:" + std::string(0x18 + gpu < 16 ? "0" : "") + [&] {
        std::ostringstream s;
        s << std::hex << (0x18 + gpu);
        return s.str();
      }() + ":00.0");
  if (!r.ok()) return r.status();
  GF_ASSIGN_OR_RETURN(int64_t value, int_value(r, "value"));
  health::GpuReading cur;
  cur.index = static_cast<int32_t>(gpu);
  cur.pci = pci;
  health::GpuReading prev = cur;
  std::optional<health::GpuSignal> s;
  if (field == "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL") {
    cur.ecc_dbe_volatile = static_cast<uint64_t>(std::max<int64_t>(0, value));
    s = health::check_ecc(cur);
  } else if (field == "DCGM_FI_DEV_ROW_REMAP_PENDING") {
    cur.row_remap_pending = value != 0;
    s = health::check_row_remap(cur);
  } else if (field == "DCGM_FI_DEV_ROW_REMAP_FAILURE") {
    cur.row_remap_failure = value != 0;
    s = health::check_row_remap(cur);
  } else if (field == "DCGM_FI_DEV_PCIE_REPLAY_COUNTER") {
    cur.pcie_replay_counter = static_cast<uint64_t>(std::max<int64_t>(0, value));
    cur.pcie_link_gen = prev.pcie_link_gen =
        static_cast<int32_t>(r.optional_int("linkGen").value_or(4));
    cur.pcie_link_width = prev.pcie_link_width = 16;
    s = health::check_pcie_replay(prev, kT0, cur, kT0 + health::kMinRateWindow);
  } else if (field == "DCGM_FI_DEV_CLOCKS_EVENT_REASONS") {
    cur.clocks_event_reasons = prev.clocks_event_reasons = static_cast<uint64_t>(value);
    s = health::check_thermal(prev, kT0, cur, kT0 + health::kMinRateWindow);
  } else {
    return validation_error(
        path + ".field: unknown DCGM field '" + field +
        "' (DCGM_FI_DEV_ECC_DBE_VOL_TOTAL, DCGM_FI_DEV_ROW_REMAP_PENDING, "
        "DCGM_FI_DEV_ROW_REMAP_FAILURE, DCGM_FI_DEV_PCIE_REPLAY_COUNTER, "
        "DCGM_FI_DEV_CLOCKS_EVENT_REASONS, or its old name DCGM_FI_DEV_CLOCK_THROTTLE_REASONS)");
  }
  std::vector<Detection> out;
  if (s)
    out.push_back(Detection{s->detector, s->pci, s->fault, s->reason, s->evidence, std::nullopt});
  return out;
}

// unreachable / diskPressure: true raises the fault, false is no signal at all.
Result<std::vector<Detection>> from_flag(const std::string& kind, const Json& v,
                                         const std::string& p) {
  std::vector<Detection> out;
  if (!v.is_boolean()) return validation_error(p + ": must be true or false");
  if (!v.get<bool>()) return out;
  if (kind == "unreachable") {
    out.push_back(Detection{
        "host-reachability", "", "host-reachability:unreachable",
        fmt::format("host missed {} heartbeats in a row", health::HeartbeatTracker::kMissedBeats),
        "unreachable=true", std::nullopt});
  } else {
    out.push_back(Detection{"disk-pressure", "", "disk-pressure:nodefs",
                            "less than 10% of the node filesystem is available",
                            "diskPressure=true", std::nullopt});
  }
  return out;
}

// mount: the /proc/mounts line the fields make goes through the agent's read-only check.
Result<std::vector<Detection>> from_mount(ObjectReader& r) {
  std::vector<Detection> out;
  const std::string mp = r.required_string("path");
  const bool ro = r.optional_bool("readOnly").value_or(true);
  const std::string fstype = r.optional_string("fstype").value_or("ext4");
  const std::string device = r.optional_string("device").value_or("/dev/nvme0n1p1");
  if (!r.ok()) return r.status();
  const std::string line =
      device + " " + mp + " " + fstype + " " + (ro ? "ro" : "rw") + ",relatime 0 0";
  for (const health::ReadOnlyMount& m : health::readonly_mounts(line)) {
    out.push_back(
        Detection{"npd-readonly-fs", m.mount_point, "npd-readonly-fs:ReadonlyFilesystem",
                  "filesystem " + m.mount_point + " (" + m.fstype + ") is mounted read-only", line,
                  std::nullopt});
  }
  return out;
}

// slurm: a DOWN or DRAIN node state, unless gpufleet itself drained the node.
Result<std::vector<Detection>> from_slurm(ObjectReader& r, const std::string& p) {
  std::vector<Detection> out;
  const std::string state = r.required_string("state");
  const std::string reason = r.optional_string("reason").value_or("");
  if (!r.ok()) return r.status();
  if (state != "DOWN" && state != "DRAIN" && state != "DRAINED" && state != "DRAINING") {
    return validation_error(p + ".state: must be DOWN, DRAIN, DRAINING or DRAINED; got '" + state +
                            "'");
  }
  if (reason.starts_with("gpufleet:")) return out;  // our own drain (cordon) is not a fault
  std::string lower = state == "DOWN" ? "down" : "drain";
  out.push_back(Detection{"slurm-node-state", "", "slurm:" + lower,
                          "Slurm set the node " + state + " for a reason that is not gpufleet's" +
                              (reason.empty() ? "" : ": " + reason),
                          "State=" + state + (reason.empty() ? "" : " Reason=" + reason),
                          std::nullopt});
  return out;
}

// ib: a port's state (Active or Down) and symbol-error rate, judged as the agent judges sysfs.
Result<std::vector<Detection>> from_ib(ObjectReader& r, const std::string& p) {
  std::vector<Detection> out;
  const int64_t port = r.optional_int("port").value_or(1);
  const std::string state = r.optional_string("state").value_or("Active");
  std::optional<double> rate;
  if (std::optional<int64_t> n = r.optional_int("symbolErrorsPerHour"))
    rate = static_cast<double>(*n);
  if (!r.ok()) return r.status();
  const bool down = state == "Down" || state == "DOWN";
  if (!down && state != "Active" && state != "ACTIVE")
    return validation_error(p + ".state: must be Active or Down; got '" + state + "'");
  const health::IbPortReading reading =
      health::parse_ib_port(down ? "1: DOWN" : "4: ACTIVE", down ? "3: Disabled" : "5: LinkUp");
  const health::IbLinkVerdict verdict = health::ib_link_verdict(reading, rate);
  const std::string subject = fmt::format("port {}", port);
  const std::string ev = fmt::format(
      "port={} state={} phys_state={}{}", port, reading.state_name, reading.phys_state_name,
      rate ? fmt::format(" symbol_errors_per_hour={}", static_cast<int64_t>(*rate)) : "");
  if (verdict == health::IbLinkVerdict::kPortDown) {
    out.push_back(Detection{"ib-link", subject, "ib-link:port-down",
                            "InfiniBand " + subject + " is down", ev, std::nullopt});
  } else if (verdict == health::IbLinkVerdict::kSymbolErrors) {
    out.push_back(Detection{"ib-link", subject, "ib-link:symbol-errors",
                            "InfiniBand " + subject + " has more than 120 symbol errors per hour",
                            ev, std::nullopt});
  }
  return out;
}

// gpuMissing: the expected GPU is absent from an empty reading.
Result<std::vector<Detection>> from_gpu_missing(ObjectReader& r) {
  std::vector<Detection> out;
  health::ExpectedGpu g;
  g.index = static_cast<int32_t>(r.optional_int("index").value_or(0));
  g.pci = r.optional_string("pci").value_or("0000:18:00.0");
  if (!r.ok()) return r.status();
  if (auto s = health::check_pcie_bus(g, {}, false)) {
    out.push_back(Detection{s->detector, s->pci, s->fault, s->reason, s->evidence, std::nullopt});
  }
  return out;
}

// restarts: `count` restarts of the unit spread over 19 minutes, fed to the loop counter.
Result<std::vector<Detection>> from_restarts(ObjectReader& r, const std::string& p) {
  std::vector<Detection> out;
  const std::string unit = r.required_string("unit");
  const int64_t count = r.required_int("count");
  if (!r.ok()) return r.status();
  if (count < 0 || count > 10000) return validation_error(p + ".count: must be 0 to 10000");
  health::RestartLoopCounter counter;
  bool loop = false;
  for (int64_t i = 0; i < count; ++i)
    loop = counter.record(unit, kT0 + minutes(1) * i * 19 / std::max<int64_t>(1, count));
  if (loop) {
    out.push_back(Detection{"npd-restart-loop", unit, "npd-restart-loop:" + unit,
                            fmt::format("{} restarted {} times within 20 minutes", unit, count),
                            fmt::format("unit={} restarts={}", unit, count), std::nullopt});
  }
  return out;
}

}  // namespace

Result<std::vector<Detection>> detect(const Json& signal, const std::string& path) {
  if (signal.is_string()) return from_kernel_log(signal.get<std::string>());
  if (!signal.is_object() || signal.size() != 1) {
    return validation_error(
        path +
        ": must be a kernel-log line or an object with exactly one of dcgm, mount, "
        "slurm, ib, unreachable, diskPressure, gpuMissing, restarts");
  }
  const std::string kind = signal.begin().key();
  const Json& v = signal.begin().value();
  const std::string p = path + "." + kind;
  if (kind == "dcgm") return from_dcgm(v, p);
  if (kind == "unreachable" || kind == "diskPressure") return from_flag(kind, v, p);
  // Every other kind is an object of fields: a non-object is reported as that, known kind or not.
  ObjectReader r(v, p);
  if (!r.ok()) return r.status();
  if (kind == "mount") return from_mount(r);
  if (kind == "slurm") return from_slurm(r, p);
  if (kind == "ib") return from_ib(r, p);
  if (kind == "gpuMissing") return from_gpu_missing(r);
  if (kind == "restarts") return from_restarts(r, p);
  return validation_error(
      p + ": unknown signal kind '" + kind +
      "' (dcgm, mount, slurm, ib, unreachable, diskPressure, gpuMissing, restarts)");
}

}  // namespace gf::remediate
