#include "agent/agent.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/url.h"

namespace gf::agent {

namespace {

namespace fs = std::filesystem;

constexpr size_t kMaxMessages = 200;
constexpr size_t kMaxRecentLines = 16;
constexpr size_t kMaxPatternEntries = 1024;
constexpr uint64_t kMaxLogBytesPerPoll = 16u << 20;  // the rest is read on the next poll
constexpr Duration kDedupWindow = minutes(3);        // docs/health.md

// The whole (small) file, or an error naming it.
Result<std::string> read_small_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return not_found_error(path + ": cannot open (" + std::strerror(errno) + ")");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string file_or_empty(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return "";
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::optional<int> parse_port_number(const std::string& name) {
  if (name.empty() || name.size() > 4) return std::nullopt;
  int n = 0;
  for (char c : name) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + (c - '0');
  }
  return n;
}

std::optional<uint64_t> parse_counter(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
    text.remove_suffix(1);
  if (text.empty() || text.size() > 20) return std::nullopt;
  uint64_t n = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + static_cast<uint64_t>(c - '0');
  }
  return n;
}

bool is_retryable(const Status& s) {
  return s.code() == ErrorCode::kUnavailable || s.code() == ErrorCode::kThrottling;
}

}  // namespace

bool source_disabled(const std::string& path) {
  return path.empty() || path == "-" || path == "none";
}

// ---- reporter ----------------------------------------------------------------------------------

HttpReporter::HttpReporter(std::string server, std::string cluster, std::string node,
                           int timeout_seconds, std::string token, std::string ca_cert)
    : cluster_(std::move(cluster)),
      node_(std::move(node)),
      client_(ClientOptions{std::move(server), "agent:" + node_, timeout_seconds, std::move(token),
                            std::move(ca_cert)}) {}

Status HttpReporter::post(const std::string& suffix, const std::string& body, Json* answer) {
  const std::string path =
      "/v1/clusters/" + url_encode(cluster_) + "/nodes/" + url_encode(node_) + suffix;
  Result<Json> r = client_.post(path, body);
  if (!r.ok()) return r.status();
  if (answer != nullptr) *answer = std::move(r).value();
  return ok_status();
}

Status HttpReporter::report(const Json& body, bool clear) {
  Json answer;
  GF_RETURN_IF_ERROR(post(clear ? "/signals/clear" : "/signals", body.dump(), &answer));
  if (answer.is_object()) {
    for (const Json& d : answer.value("Detections", Json::array())) {
      spdlog::info("reported {} {} ({})", d.value("Detector", ""), d.value("Fault", ""),
                   d.value("Severity", ""));
    }
  }
  return ok_status();
}

Status HttpReporter::heartbeat() { return post("/heartbeat", "{}", nullptr); }

// ---- disk, commands, scontrol ------------------------------------------------------------------

Result<DiskUsage> statvfs_usage(const std::string& path) {
  struct statvfs st {};
  if (::statvfs(path.c_str(), &st) != 0)
    return not_found_error(path + ": statvfs failed (" + std::strerror(errno) + ")");
  const uint64_t unit = st.f_frsize ? st.f_frsize : st.f_bsize;
  DiskUsage u;
  u.total = static_cast<uint64_t>(st.f_blocks) * unit;
  const uint64_t avail = static_cast<uint64_t>(st.f_bavail) * unit;
  u.used = u.total > avail ? u.total - avail : 0;
  return u;
}

Result<std::string> run_command_output(const std::string& command) {
  FILE* p = ::popen(command.c_str(), "r");
  if (!p) return internal_error("cannot run `" + command + "`: " + std::strerror(errno));
  std::string out;
  char buf[4096];
  size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) {
    if (out.size() < (1u << 20)) out.append(buf, n);
  }
  const int rc = ::pclose(p);
  if (rc == -1) return internal_error("`" + command + "`: pclose failed");
  if (!WIFEXITED(rc) || WEXITSTATUS(rc) != 0) {
    return internal_error(fmt::format("`{}` exited with status {}", command,
                                      WIFEXITED(rc) ? WEXITSTATUS(rc) : 128 + WTERMSIG(rc)));
  }
  return out;
}

std::optional<SlurmNodeState> parse_scontrol_node(const std::string& text) {
  // Keys are a word followed by '=' at the start or after a blank. A value runs to the next key.
  auto key_at = [&](size_t i) -> size_t {  // length of "Key=" at i, 0 when none
    size_t j = i;
    while (j < text.size() && (std::isalnum(static_cast<unsigned char>(text[j])) || text[j] == '_'))
      ++j;
    if (j == i || j >= text.size() || text[j] != '=') return 0;
    return j - i + 1;
  };
  auto value_of = [&](std::string_view key, bool to_next_key) -> std::optional<std::string> {
    for (size_t i = 0; i < text.size(); ++i) {
      if ((i == 0 || std::isspace(static_cast<unsigned char>(text[i - 1]))) &&
          text.compare(i, key.size(), key) == 0 && key_at(i) == key.size()) {
        size_t start = i + key.size(), end = start;
        if (!to_next_key) {
          while (end < text.size() && !std::isspace(static_cast<unsigned char>(text[end]))) ++end;
        } else {
          end = text.size();
          for (size_t k = start; k < text.size(); ++k) {
            if (std::isspace(static_cast<unsigned char>(text[k])) && k + 1 < text.size() &&
                key_at(k + 1) > 0) {
              end = k;
              break;
            }
          }
        }
        std::string v = text.substr(start, end - start);
        while (!v.empty() && std::isspace(static_cast<unsigned char>(v.back()))) v.pop_back();
        return v;
      }
    }
    return std::nullopt;
  };
  std::optional<std::string> state = value_of("State=", false);
  if (!state || state->empty()) return std::nullopt;
  SlurmNodeState s;
  s.state = *state;
  s.reason = value_of("Reason=", true).value_or("");
  if (s.reason == "(null)" || s.reason == "none" || s.reason == "None") s.reason.clear();
  // scontrol appends "[user@2026-01-01T00:00:00]" to a reason.
  if (!s.reason.empty() && s.reason.back() == ']') {
    if (size_t open = s.reason.rfind(" [");
        open != std::string::npos && s.reason.find('@', open) != std::string::npos) {
      s.reason.erase(open);
    }
  }
  return s;
}

// ---- agent -------------------------------------------------------------------------------------

NodeAgent::NodeAgent(AgentOptions options, Reporter& reporter, health::GpuProbe* probe)
    : options_(std::move(options)), reporter_(reporter), probe_(probe), xid_dedup_(kDedupWindow) {
  if (!probe_ && !source_disabled(options_.nvml)) {
    own_probe_ = std::make_unique<health::NvmlProbe>(options_.nvml);
    probe_ = own_probe_.get();
  }
  disk_stat_ = statvfs_usage;
  run_command_ = run_command_output;
}

NodeAgent::~NodeAgent() = default;

void NodeAgent::warn(const std::string& message) {
  spdlog::warn("{}", message);
  messages_.push_back(message);
  while (messages_.size() > kMaxMessages) messages_.pop_front();
}

void NodeAgent::warn_once(const std::string& key, const std::string& message) {
  if (warned_.insert(key).second) warn(message);
}

void NodeAgent::ok_again(const std::string& key) { warned_.erase(key); }

void NodeAgent::enqueue(Json signal) {
  queue_.push_back(Item{Json{{"Signal", std::move(signal)}}, false});
  while (queue_.size() > std::max<size_t>(1, options_.max_queue)) {
    ++dropped_;
    warn(fmt::format("signal queue full ({}): dropped the oldest unsent signal {}",
                     options_.max_queue, queue_.front().body.dump()));
    queue_.pop_front();
  }
}

void NodeAgent::enqueue_clear(std::string_view detector) {
  queue_.push_back(Item{Json{{"Detector", std::string(detector)}}, true});
  while (queue_.size() > std::max<size_t>(1, options_.max_queue)) {
    ++dropped_;
    warn("signal queue full: dropped the oldest unsent signal " + queue_.front().body.dump());
    queue_.pop_front();
  }
}

Status NodeAgent::flush() {
  Status last;
  while (!queue_.empty()) {
    const Item& item = queue_.front();
    Status s = reporter_.report(item.body, item.clear);
    if (s.ok()) {
      ++sent_;
      queue_.pop_front();
      ok_again("server");
      continue;
    }
    if (is_retryable(s)) {
      warn_once("server", fmt::format("{}; {} signal(s) kept for the next interval", s.message(),
                                      queue_.size()));
      return s;
    }
    ++refused_;
    warn("server refused " + std::string(item.clear ? "clear " : "signal ") + item.body.dump() +
         ": " + s.message());
    last = s;
    queue_.pop_front();
  }
  return last;
}

Status NodeAgent::poll(Time now) {
  if (!source_disabled(options_.kernel_log)) poll_kernel_log(now);
  if (!source_disabled(options_.proc_mounts)) poll_mounts();
  if (!source_disabled(options_.infiniband_dir)) poll_infiniband(now);
  if (probe_) poll_gpus(now);
  if (!source_disabled(options_.disk)) poll_disk();
  if (!source_disabled(options_.scontrol)) poll_slurm();
  return flush();
}

// ---- kernel log ----

void NodeAgent::poll_kernel_log(Time now) {
  const std::string& path = options_.kernel_log;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    warn_once("kernel-log",
              "kernel log " + path + ": " + std::strerror(errno) + " (retrying every interval)");
    return;
  }
  ok_again("kernel-log");
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (!log_offset_) {
    log_offset_ = options_.from_start ? 0 : size;  // start at the end unless --from-start
    log_inode_ = st.st_ino;
  }
  if ((log_inode_ && *log_inode_ != st.st_ino) || size < *log_offset_) {
    log_offset_ = 0;  // rotated or truncated: the new file is read from its start
    log_inode_ = st.st_ino;
  }
  if (size == *log_offset_) return;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    warn_once("kernel-log", "kernel log " + path + ": cannot open (" + std::strerror(errno) + ")");
    return;
  }
  in.seekg(static_cast<std::streamoff>(*log_offset_));
  const uint64_t want = std::min<uint64_t>(size - *log_offset_, kMaxLogBytesPerPoll);
  std::string buf(want, '\0');
  in.read(buf.data(), static_cast<std::streamsize>(want));
  buf.resize(static_cast<size_t>(in.gcount()));
  // Only whole lines; a line still being written is read next time (unless it alone fills the
  // read limit, then it is taken as it is).
  size_t last_nl = buf.rfind('\n');
  if (last_nl == std::string::npos) {
    if (buf.size() < kMaxLogBytesPerPoll) return;
    last_nl = buf.size() - 1;
  }
  *log_offset_ += last_nl + 1;
  size_t start = 0;
  while (start <= last_nl) {
    size_t end = buf.find('\n', start);
    if (end == std::string::npos || end > last_nl) end = last_nl + 1;
    std::string line = buf.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!line.empty()) kernel_line(line, now);
    start = end + 1;
  }
}

void NodeAgent::kernel_line(const std::string& line, Time now) {
  // The server's order (src/remediate/signal.cpp): Xid first, then the fallen-off-bus sentence,
  // then the node-problem-detector patterns.
  if (std::optional<health::XidEvent> x = health::parse_xid_line(line)) {
    if (x->source == health::XidSource::kGpu && x->code == 79) xid79_pci_.insert(x->pci);
    if (xid_dedup_.accept(*x, now)) enqueue(line);
    return;
  }
  recent_lines_.push_back(line);
  while (recent_lines_.size() > kMaxRecentLines) recent_lines_.pop_front();
  if (std::optional<std::string> pci = fallen_off_bus_.feed(line)) {
    // The server parses one POST with a fresh detector: send the shortest tail of recent lines
    // that completes the sentence, without lines that are reported on their own.
    std::vector<std::string> tail;
    for (size_t k = 1; k <= recent_lines_.size(); ++k) {
      health::FallenOffBusDetector probe;
      std::optional<std::string> got;
      for (size_t i = recent_lines_.size() - k; i < recent_lines_.size(); ++i)
        got = probe.feed(recent_lines_[i]);
      if (got) {
        tail.assign(recent_lines_.end() - static_cast<std::ptrdiff_t>(k), recent_lines_.end());
        break;
      }
    }
    if (tail.empty()) tail.push_back(line);
    std::vector<std::string> own;
    for (const std::string& l : tail) {
      if (!health::match_kernel_pattern(l)) own.push_back(l);
    }
    health::FallenOffBusDetector check;
    std::optional<std::string> still;
    for (const std::string& l : own) still = check.feed(l);
    const std::vector<std::string>& send = still ? own : tail;
    std::string text;
    for (const std::string& l : send) text += (text.empty() ? "" : "\n") + l;
    recent_lines_.clear();
    enqueue(text);
    return;
  }
  if (std::optional<health::KernelPattern> k = health::match_kernel_pattern(line)) {
    // Identical pattern lines within 3 minutes count as one (docs/health.md).
    const std::string key =
        std::string(k->detector) + "|" + std::string(k->reason) + "|" + k->task + "|" + k->message;
    for (auto it = pattern_seen_.begin(); it != pattern_seen_.end();) {
      it = now - it->second >= kDedupWindow ? pattern_seen_.erase(it) : std::next(it);
    }
    if (pattern_seen_.contains(key)) return;
    if (pattern_seen_.size() >= kMaxPatternEntries) {
      auto oldest =
          std::min_element(pattern_seen_.begin(), pattern_seen_.end(),
                           [](const auto& a, const auto& b) { return a.second < b.second; });
      pattern_seen_.erase(oldest);
    }
    pattern_seen_[key] = now;
    enqueue(line);
  }
  // Anything else stays on the node.
}

// ---- /proc/mounts ----

void NodeAgent::poll_mounts() {
  Result<std::string> text = read_small_file(options_.proc_mounts);
  if (!text.ok()) {
    warn_once("mounts", "mounts: " + text.status().message());
    return;
  }
  ok_again("mounts");
  std::set<std::string> now_ro;
  for (const health::ReadOnlyMount& m : health::readonly_mounts(*text)) {
    now_ro.insert(m.mount_point);
    if (ro_reported_.contains(m.mount_point)) continue;
    enqueue(Json{{"mount",
                  {{"path", m.mount_point},
                   {"readOnly", true},
                   {"fstype", m.fstype},
                   {"device", m.device}}}});
  }
  // The server clears per detector (every npd-readonly-fs alert of the node): clear only when no
  // mount is read-only any more.
  if (!ro_reported_.empty() && now_ro.empty()) enqueue_clear(health::kDetectorReadonlyFs);
  ro_reported_ = std::move(now_ro);
}

// ---- infiniband ----

void NodeAgent::poll_infiniband(Time now) {
  const fs::path root(options_.infiniband_dir);
  std::error_code ec;
  std::set<std::pair<std::string, int>> seen;
  if (fs::is_directory(root, ec)) {
    ok_again("ib");
    std::vector<fs::path> devices;
    for (const auto& e : fs::directory_iterator(root, ec)) devices.push_back(e.path());
    std::sort(devices.begin(), devices.end());
    for (const fs::path& dev : devices) {
      std::error_code ec2;
      if (!fs::is_directory(dev / "ports", ec2)) continue;
      for (const auto& p : fs::directory_iterator(dev / "ports", ec2)) {
        if (std::optional<int> n = parse_port_number(p.path().filename().string()))
          seen.insert({dev.filename().string(), *n});
      }
    }
  } else if (ib_ports_.empty()) {
    warn_once("ib", "infiniband: " + options_.infiniband_dir +
                        " is not a directory; no InfiniBand ports to watch");
    return;
  }
  for (const auto& key : seen) ib_ports_.try_emplace(key);
  bool any_bad = false, any_reported = false;
  for (auto& [key, port] : ib_ports_) {
    // A port seen before whose files are gone reads as empty files: down.
    const fs::path dir = root / key.first / "ports" / std::to_string(key.second);
    const health::IbPortReading reading =
        health::parse_ib_port(file_or_empty(dir / "state"), file_or_empty(dir / "phys_state"));
    std::optional<double> rate;
    if (std::optional<uint64_t> c = parse_counter(file_or_empty(dir / "counters" / "symbol_error")))
      rate = port.rate.observe(*c, now);
    const health::IbLinkVerdict v = health::ib_link_verdict(reading, rate);
    if (v == health::IbLinkVerdict::kHealthy) {
      if (port.reported != health::IbLinkVerdict::kHealthy) any_reported = true;
      continue;
    }
    any_bad = true;
    if (v == health::IbLinkVerdict::kSymbolErrors && !rate) continue;
    if (v == port.reported) continue;
    if (v == health::IbLinkVerdict::kPortDown) {
      enqueue(Json{{"ib", {{"port", key.second}, {"state", "Down"}}}});
    } else {
      enqueue(Json{{"ib",
                    {{"port", key.second},
                     {"symbolErrorsPerHour", static_cast<int64_t>(std::ceil(*rate))}}}});
    }
    port.reported = v;
  }
  // The server clears per detector: clear ib-link once every port is healthy again.
  if (!any_bad && any_reported) {
    enqueue_clear(health::kDetectorIbLink);
    for (auto& [key, port] : ib_ports_) port.reported = health::IbLinkVerdict::kHealthy;
  }
}

// ---- gpus ----

void NodeAgent::report_gpu(const health::GpuReading& g, const std::string& field, int64_t value,
                           Json extra) {
  const auto key = std::make_pair(g.index, field);
  if (auto it = gpu_reported_.find(key); it != gpu_reported_.end() && it->second == value) return;
  gpu_reported_[key] = value;
  Json dcgm = {{"field", field}, {"value", value}, {"gpu", g.index}};
  if (!g.pci.empty()) dcgm["pci"] = g.pci;
  for (auto& [k, v] : extra.items()) dcgm[k] = v;
  enqueue(Json{{"dcgm", std::move(dcgm)}});
}

void NodeAgent::check_gpu_memory(const health::GpuReading& g) {
  if (health::check_ecc(g)) {
    report_gpu(g, "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", static_cast<int64_t>(g.ecc_dbe_volatile));
  } else {
    gpu_reported_.erase({g.index, "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL"});
  }
  if (std::optional<health::GpuSignal> s = health::check_row_remap(g)) {
    const bool failure = s->fault == "dcgm:row-remap-failure";
    report_gpu(g, failure ? "DCGM_FI_DEV_ROW_REMAP_FAILURE" : "DCGM_FI_DEV_ROW_REMAP_PENDING", 1);
  } else {
    gpu_reported_.erase({g.index, "DCGM_FI_DEV_ROW_REMAP_FAILURE"});
    gpu_reported_.erase({g.index, "DCGM_FI_DEV_ROW_REMAP_PENDING"});
  }
}

void NodeAgent::check_gpu_rates(const health::GpuReading& g, Time now) {
  // Rates and "sustained" need two readings at least a minute apart: compare with a baseline
  // that moves on once a minute has passed.
  auto base = gpu_baseline_.find(g.index);
  if (base == gpu_baseline_.end() || base->second.reading.pci != g.pci ||
      base->second.reading.uuid != g.uuid) {
    gpu_baseline_[g.index] = GpuBaseline{g, now};
    return;
  }
  const GpuBaseline& b = base->second;
  if (now - b.at < health::kMinRateWindow) return;
  if (health::check_thermal(b.reading, b.at, g, now)) {
    const uint64_t bits =
        b.reading.clocks_event_reasons & g.clocks_event_reasons & health::kThermalThrottleMask;
    report_gpu(g, "DCGM_FI_DEV_CLOCKS_EVENT_REASONS", static_cast<int64_t>(bits));
  } else {
    gpu_reported_.erase({g.index, "DCGM_FI_DEV_CLOCKS_EVENT_REASONS"});
  }
  if (health::check_pcie_replay(b.reading, b.at, g, now)) {
    const double per_min =
        static_cast<double>(g.pcie_replay_counter - b.reading.pcie_replay_counter) /
        (std::chrono::duration<double>(now - b.at).count() / 60.0);
    Json extra = Json::object();
    if (g.pcie_link_gen > 0) extra["linkGen"] = g.pcie_link_gen;
    gpu_reported_.erase({g.index, "DCGM_FI_DEV_PCIE_REPLAY_COUNTER"});  // a new rate each window
    report_gpu(g, "DCGM_FI_DEV_PCIE_REPLAY_COUNTER", static_cast<int64_t>(std::ceil(per_min)),
               extra);
  }
  gpu_baseline_[g.index] = GpuBaseline{g, now};
}

void NodeAgent::check_missing_gpus(const std::vector<health::GpuReading>& readings) {
  for (const health::ExpectedGpu& e : *expected_gpus_) {
    const std::string key = "gpuMissing";
    const std::optional<std::string> pci = health::normalize_pci(e.pci);
    const bool xid = pci && xid79_pci_.contains(*pci);
    if (std::optional<health::GpuSignal> s = health::check_pcie_bus(e, readings, xid)) {
      if (gpu_reported_.contains({e.index, key})) continue;
      gpu_reported_[{e.index, key}] = 1;
      Json missing = {{"index", e.index}};
      if (!e.pci.empty()) missing["pci"] = s->pci.empty() ? e.pci : s->pci;
      enqueue(Json{{"gpuMissing", std::move(missing)}});
    } else {
      gpu_reported_.erase({e.index, key});
    }
  }
}

void NodeAgent::poll_gpus(Time now) {
  Result<std::vector<health::GpuReading>> readings = probe_->read();
  if (!readings.ok()) {
    if (!nvml_warned_) {
      const std::string& m = readings.status().message();
      warn(m.rfind("NVML not available", 0) == 0 ? m : "NVML not available: " + m);
      nvml_warned_ = true;
    }
    return;  // an error is never "all GPUs missing"
  }
  nvml_warned_ = false;
  if (!expected_gpus_) {
    std::vector<health::ExpectedGpu> expected;
    for (const health::GpuReading& r : *readings) {
      if (r.present) expected.push_back(health::ExpectedGpu{r.index, r.pci, r.uuid});
    }
    expected_gpus_ = std::move(expected);
  }
  for (const health::GpuReading& g : *readings) {
    if (!g.present) continue;
    check_gpu_memory(g);
    check_gpu_rates(g, now);
  }
  check_missing_gpus(*readings);
}

// ---- disk ----

void NodeAgent::poll_disk() {
  Result<DiskUsage> u = disk_stat_(options_.disk);
  if (!u.ok()) {
    warn_once("disk", "disk: " + u.status().message());
    return;
  }
  ok_again("disk");
  const bool pressure = health::disk_pressure(u->used, u->total);
  if (pressure && !disk_reported_) enqueue(Json{{"diskPressure", true}});
  if (!pressure && disk_reported_) enqueue_clear(health::kDetectorDiskPressure);
  disk_reported_ = pressure;
}

// ---- slurm ----

void NodeAgent::poll_slurm() {
  Result<std::string> out = run_command_(options_.scontrol);
  if (!out.ok()) {
    warn_once("scontrol", "scontrol: " + out.status().message());
    return;
  }
  std::optional<SlurmNodeState> st = parse_scontrol_node(*out);
  if (!st) {
    warn_once("scontrol", "scontrol: `" + options_.scontrol + "` printed no State=");
    return;
  }
  ok_again("scontrol");
  std::string upper = st->state;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  std::optional<std::string> bad;
  if (upper.find("DOWN") != std::string::npos)
    bad = "DOWN";
  else if (upper.find("DRAIN") != std::string::npos)
    bad = "DRAIN";
  // Our own drain (reason "gpufleet:…") is not a fault.
  if (bad && st->reason.rfind("gpufleet:", 0) == 0) bad.reset();
  if (bad) {
    const auto now_state = std::make_pair(*bad, st->reason);
    if (slurm_reported_ != now_state) {
      Json slurm = {{"state", *bad}};
      if (!st->reason.empty()) slurm["reason"] = st->reason;
      enqueue(Json{{"slurm", std::move(slurm)}});
      slurm_reported_ = now_state;
    }
  } else if (slurm_reported_) {
    enqueue_clear("slurm-node-state");
    slurm_reported_.reset();
  }
}

}  // namespace gf::agent
