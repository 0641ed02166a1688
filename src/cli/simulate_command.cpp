// `gpufleet simulate SCENARIO.yaml [--until D] [--out DIR] [--seed N] [--snapshot-every D]
//  [--reservation=BOOL]`
// (docs/scenarios.md): runs a scenario on a virtual clock and prints a one-screen summary. The
// format and the outputs are documented in docs/scenarios.md.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <iostream>

#include "cli/app.h"
#include "cli/output.h"
#include "sim/simulation.h"

namespace gf {

namespace {

struct SimulateArgs {
  std::string scenario;
  std::string until;
  std::string out = "sim-out";
  std::optional<uint64_t> seed;
  std::string snapshot_every;
  std::optional<bool> reservation;  // overrides the scenario's config.reservation
};

Result<std::optional<Duration>> flag_duration(const std::string& flag, const std::string& text) {
  if (text.empty()) return std::optional<Duration>();
  auto d = parse_duration(text);
  if (!d.ok()) return d.status().with_prefix(flag);
  if (*d <= Duration(0)) return validation_error(flag + ": must be greater than 0");
  return std::optional<Duration>(*d);
}

std::string money(const Json& billing) {
  if (!billing.is_object() || !billing.contains("Total")) return "0";
  const Json& total = billing["Total"];
  return total.is_string() ? total.get<std::string>() : total.dump();
}

// Seconds as the summary shows a delay: "0s", "42s", "3m5s" (a metric may be null: "-").
std::string delay(const Json& seconds) {
  if (!seconds.is_number()) return "-";
  return format_duration(gf::seconds(static_cast<int64_t>(seconds.get<double>() + 0.5)));
}

// What the scenario exercised, beyond provisioning: its jobs' queueing delay and the GPUs they
// kept busy, and what happened to its alerts. A part the scenario did not exercise is left out.
void print_kpis(const Json& metrics) {
  const Json& q = metrics.value("queueingDelay", Json::object());
  if (q.value("jobs", 0) > 0 || q.value("neverStarted", 0) > 0) {
    std::cout << fmt::format("jobs {}: queueing delay p50 {}, p95 {}, max {}; never started {}\n",
                             q.value("jobs", 0), delay(q.value("p50Seconds", Json())),
                             delay(q.value("p95Seconds", Json())),
                             delay(q.value("maxSeconds", Json())), q.value("neverStarted", 0));
    const Json& u = metrics.value("utilization", Json::object());
    std::cout << fmt::format("GPU utilization {:.1f}% ({:.1f} of {:.1f} GPU-hours busy)\n",
                             u.value("busyFraction", 0.0) * 100, u.value("busyGpuHours", 0.0),
                             u.value("offeredGpuHours", 0.0));
  }
  const Json& m = metrics.value("remediations", Json::object());
  if (m.value("alerts", 0) > 0) {
    std::cout << fmt::format(
        "alerts {} ({} fired); remediations {} proposed, {} auto-approved, {} succeeded, {} "
        "failed, {} escalated, {} cancelled; tickets {}\n",
        m.value("alerts", 0), m.value("fired", 0), m.value("proposed", 0),
        m.value("autoApproved", 0), m.value("succeeded", 0), m.value("failed", 0),
        m.value("escalated", 0), m.value("cancelled", 0), m.value("tickets", 0));
  }
}

void print_summary(const SimulationReport& r) {
  std::cout << "scenario " << r.scenario << " (seed " << r.seed << ") simulated to "
            << format_duration(r.until) << " (" << format_iso8601(kSimEpoch + r.until)
            << "): " << r.steps_run << " steps";
  if (r.steps_failed > 0) {
    std::cout << ", " << r.steps_failed << " answered with an error";
    if (r.steps_not_implemented > 0) {
      std::cout << " (" << r.steps_not_implemented << " not built yet: 501)";
    }
  }
  if (r.steps_skipped > 0) std::cout << ", " << r.steps_skipped << " after --until not run";
  std::cout << ", " << r.events << " events, " << r.snapshots << " snapshots\n\n";

  Table table({"CLUSTER", "STATUS", "GROUP", "STATUS", "CURRENT", "TARGET", "MIN", "DELIVERED"});
  const Json& delivered = r.metrics.value("capacityDelivered", Json::array());
  auto delivered_of = [&](const std::string& cluster, const std::string& group) -> std::string {
    for (const auto& c : delivered) {
      if (c.value("ClusterName", "") != cluster) continue;
      for (const auto& g : c["groups"]) {
        if (g.value("InstanceGroupName", "") == group && g["delivered"].is_number()) {
          return fmt::format("{}%", static_cast<int>(g["delivered"].get<double>() * 100 + 0.5));
        }
      }
    }
    return "-";
  };
  for (const auto& c : r.state.value("clusters", Json::array())) {
    const std::string name = c.value("ClusterName", "");
    bool first = true;
    for (const auto& g : c.value("InstanceGroups", Json::array())) {
      const std::string group = g.value("InstanceGroupName", "");
      table.add_row({first ? name : "", first ? c.value("ClusterStatus", "") : "", group,
                     g.value("Status", ""), std::to_string(g.value("CurrentCount", 0)),
                     std::to_string(g.value("TargetCount", 0)),
                     std::to_string(g.value("MinCount", 0)), delivered_of(name, group)});
      first = false;
    }
    if (first) table.add_row({name, c.value("ClusterStatus", ""), "", "", "", "", "", ""});
  }
  table.print(std::cout);

  const Json& p = r.metrics.value("provisioning", Json::object());
  std::cout << "\nlaunches " << p.value("launches", 0) << ", launch failures "
            << p.value("launchFailures", 0) << ", retries " << p.value("retries", 0)
            << ", rollbacks " << p.value("rollbacks", 0) << "\n";
  print_kpis(r.metrics);
  const Json& billing = r.metrics.value("billing", Json::object());
  std::cout << "total cost " << money(billing.value("byCluster", Json::object())) << " USD\n";
  std::cout << "outputs:";
  for (const auto& f : r.files) std::cout << " " << f;
  std::cout << "\n";
}

int simulate(const SimulateArgs& args) {
  auto until = flag_duration("--until", args.until);
  auto every = flag_duration("--snapshot-every", args.snapshot_every);
  for (const auto* d : {&until, &every}) {
    if (!d->ok()) {
      std::cerr << "error: " << d->status().message() << "\n";
      return 2;
    }
  }
  auto scenario = load_scenario(args.scenario);
  if (!scenario.ok()) {
    std::cerr << "error: scenario " << args.scenario << ": " << scenario.status().message() << "\n";
    return 2;
  }
  if (args.reservation) scenario->config.reservation = *args.reservation;
  SimulationOptions opts;
  opts.out_dir = args.out;
  opts.seed = args.seed;
  opts.until = *until;
  opts.snapshot_every = *every;
  auto report = run_simulation(*scenario, opts);
  if (!report.ok()) {
    std::cerr << "error: " << report.status().message() << "\n";
    return 1;
  }
  print_summary(*report);
  return 0;
}

}  // namespace

void register_simulate_command(CLI::App& app, CommandContext& ctx) {
  auto args = std::make_shared<SimulateArgs>();
  auto* cmd = app.add_subcommand(
      "simulate",
      "run a scenario against the simulated cloud on a virtual clock (docs/scenarios.md)");
  cmd->add_option("scenario", args->scenario, "scenario file (YAML or JSON)")->required();
  cmd->add_option("--until", args->until,
                  "virtual time to stop at (default: 6h after the scenario's last step or "
                  "capacity change)");
  cmd->add_option("--out", args->out, "directory for the outputs")->capture_default_str();
  cmd->add_option("--seed", args->seed, "seed (default: the scenario's, else 1)");
  cmd->add_option(
      "--reservation", args->reservation,
      "override the scenario's config.reservation (serve --reservation): false = dispatch by "
      "summed free capacity");
  cmd->add_option("--snapshot-every", args->snapshot_every,
                  "write snapshots.jsonl at every multiple of this virtual duration (e.g. 1h)");
  cmd->callback([&ctx, args] { ctx.run = [args] { return simulate(*args); }; });
}

}  // namespace gf
