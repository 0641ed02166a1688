// The node agent's detector half (docs/agent.md, docs/health.md): reads the node's real sources
// (kernel log, /proc/mounts, /sys/class/infiniband, NVML, statvfs, scontrol), runs the parsers and
// rules of src/health/ on them and reports what they recognise to the control plane (POST
// /v1/clusters/{cluster}/nodes/{id}/signals and …/signals/clear). Lines and readings no detector
// recognises never leave the node. Every source is a path or command (tests point them at
// fixtures); the GPU probe and the reporter are injectable. No clock: poll() takes the time. Flags
// and signals: docs/agent.md.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "client/client.h"
#include "core/json.h"
#include "core/result.h"
#include "core/time.h"
#include "health/gpu_probe.h"
#include "health/node_signals.h"
#include "health/xid.h"

namespace gf::agent {

// A source path "-", "none" or "" is disabled.
bool source_disabled(const std::string& path);

struct AgentOptions {
  std::string server;  // http://host:port
  std::string cluster;
  std::string node;
  std::string kernel_log = "/var/log/kern.log";
  bool from_start = false;  // read the kernel log from its beginning (default: from its end)
  std::string proc_mounts = "/proc/mounts";
  std::string infiniband_dir = "/sys/class/infiniband";
  std::string nvml = std::string(health::NvmlProbe::kDefaultLibrary);  // "none": no GPU probe
  std::string disk = "/";
  std::string scontrol;  // a shell command printing `scontrol show node NAME -o`; "" none
  Duration interval = seconds(10);
  size_t max_queue = 1000;  // unsent signals kept while the server is unreachable
};

// Sends one body to the server: {"Signal": …} to …/signals, or {"Detector": …} to
// …/signals/clear when `clear`. kUnavailable (and kThrottling) means "try again later"; any
// other error is the server refusing this body.
class Reporter {
 public:
  virtual ~Reporter() = default;
  virtual Status report(const Json& body, bool clear) = 0;
};

// The real reporter: the API's HTTP client (client/client.h), with a bearer token when given (a
// token with the agent role), else the header X-Gpufleet-User: agent:<node>.
class HttpReporter final : public Reporter {
 public:
  HttpReporter(std::string server, std::string cluster, std::string node, int timeout_seconds = 10,
               std::string token = "", std::string ca_cert = "");
  Status report(const Json& body, bool clear) override;
  // POST …/nodes/{id}/heartbeat: the server raises host-reachability after three missed ones.
  Status heartbeat();
  void set_server(std::string server) { client_.set_server(std::move(server)); }

 private:
  Status post(const std::string& suffix, const std::string& body, Json* answer);
  std::string cluster_, node_;
  Client client_;
};

// Filesystem usage of the --disk path: bytes used (total - available to users) and total.
struct DiskUsage {
  uint64_t used = 0;
  uint64_t total = 0;
};
using DiskStat = std::function<Result<DiskUsage>(const std::string& path)>;
Result<DiskUsage> statvfs_usage(const std::string& path);

// Runs a shell command and returns its standard output; an error when it cannot be started or
// exits non-zero.
using CommandRunner = std::function<Result<std::string>(const std::string& command)>;
Result<std::string> run_command_output(const std::string& command);

// `scontrol show node NAME -o` → State= and Reason= (reason without scontrol's trailing
// "[user@time]" stamp). nullopt when the text carries no State=.
struct SlurmNodeState {
  std::string state;   // verbatim, e.g. "IDLE+DRAIN"
  std::string reason;  // "" when none
};
std::optional<SlurmNodeState> parse_scontrol_node(const std::string& text);

class NodeAgent {
 public:
  // probe: the GPU probe to use; nullptr → an NvmlProbe on options.nvml (none when "none").
  NodeAgent(AgentOptions options, Reporter& reporter, health::GpuProbe* probe = nullptr);
  ~NodeAgent();
  NodeAgent(const NodeAgent&) = delete;
  NodeAgent& operator=(const NodeAgent&) = delete;

  void set_disk_stat(DiskStat stat) { disk_stat_ = std::move(stat); }
  void set_command_runner(CommandRunner run) { run_command_ = std::move(run); }

  // Reads every source once, queues what the detectors recognised and sends the queue. OK when
  // everything queued was delivered; otherwise the last error (unsent signals stay queued while
  // the server is unreachable; a body the server refuses is logged and dropped).
  Status poll(Time now);

  const AgentOptions& options() const { return options_; }
  size_t queued() const { return queue_.size(); }
  int64_t sent() const { return sent_; }
  int64_t dropped() const { return dropped_; }  // queue overflow
  int64_t refused() const { return refused_; }  // answered with an error by the server
  // What the agent logged at warning level (also sent to spdlog), oldest first, at most 200.
  const std::deque<std::string>& messages() const { return messages_; }

 private:
  struct Item {
    Json body;
    bool clear = false;
  };
  void enqueue(Json signal);
  void enqueue_clear(std::string_view detector);
  void warn(const std::string& message);
  void warn_once(const std::string& key, const std::string& message);
  void ok_again(const std::string& key);
  Status flush();

  void poll_kernel_log(Time now);
  void kernel_line(const std::string& line, Time now);
  void poll_mounts();
  void poll_infiniband(Time now);
  void poll_gpus(Time now);
  // Sends a dcgm reading once per (gpu, field) while it holds, again when its value changes.
  void report_gpu(const health::GpuReading& g, const std::string& field, int64_t value,
                  Json extra = Json::object());
  // The faults one reading shows on its own (ECC, row remapping); a cleared one may be sent again.
  void check_gpu_memory(const health::GpuReading& g);
  // The faults that need a rate (thermal throttling, PCIe replays): judged against the GPU's
  // baseline once it is a minute old, then the baseline moves on to this reading.
  void check_gpu_rates(const health::GpuReading& g, Time now);
  // The GPUs of the first good read that are no longer on the bus, each sent once while missing.
  void check_missing_gpus(const std::vector<health::GpuReading>& readings);
  void poll_disk();
  void poll_slurm();

  AgentOptions options_;
  Reporter& reporter_;
  std::unique_ptr<health::GpuProbe> own_probe_;
  health::GpuProbe* probe_ = nullptr;
  DiskStat disk_stat_;
  CommandRunner run_command_;

  std::deque<Item> queue_;
  int64_t sent_ = 0, dropped_ = 0, refused_ = 0;
  std::deque<std::string> messages_;
  std::set<std::string> warned_;  // keys of warn_once messages still standing

  // kernel log
  std::optional<uint64_t> log_offset_;
  std::optional<ino_t> log_inode_;
  health::XidDeduper xid_dedup_;
  health::FallenOffBusDetector fallen_off_bus_;
  std::deque<std::string> recent_lines_;      // non-Xid lines (the fallen-off-bus sentence)
  std::map<std::string, Time> pattern_seen_;  // kernel pattern → last accepted
  std::set<std::string> xid79_pci_;           // GPUs with an Xid 79 in the log

  // /proc/mounts
  std::set<std::string> ro_reported_;

  // infiniband
  struct IbPort {
    health::IbSymbolErrorRate rate;
    health::IbLinkVerdict reported = health::IbLinkVerdict::kHealthy;
  };
  std::map<std::pair<std::string, int>, IbPort> ib_ports_;

  // gpus
  struct GpuBaseline {
    health::GpuReading reading;
    Time at{};
  };
  bool nvml_warned_ = false;
  std::optional<std::vector<health::ExpectedGpu>> expected_gpus_;
  std::map<int32_t, GpuBaseline> gpu_baseline_;
  std::map<std::pair<int32_t, std::string>, int64_t> gpu_reported_;  // (gpu, field) → value sent

  // disk, slurm
  bool disk_reported_ = false;
  std::optional<std::pair<std::string, std::string>> slurm_reported_;  // (state, reason)
};

}  // namespace gf::agent
