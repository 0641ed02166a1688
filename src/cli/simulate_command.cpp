// `gpufleet simulate SCENARIO.yaml [--until D] [--out DIR] [--seed N] [--snapshot-every D]
//  [--reservation=BOOL] [--journal] [--trace FILE]... [--set KEY=VALUE]... [--report FILE]
//  [--compare VARIANT...]`
// (docs/scenarios.md): runs a scenario on a virtual clock and prints a one-screen summary, or runs
// variants of it on the same seed and prints their KPIs side by side. The format and the outputs
// are documented in docs/scenarios.md.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "cli/app.h"
#include "cli/output.h"
#include "sim/report.h"
#include "sim/seed_stats.h"
#include "sim/simulation.h"

namespace gf {

namespace {

struct SimulateArgs {
  std::string scenario;
  std::string until;
  std::string out = "sim-out";
  std::optional<uint64_t> seed;
  std::string snapshot_every;
  std::string job_retention;         // --job-retention: how long a finished job stays in the state
  std::optional<bool> reservation;   // overrides the scenario's config.reservation
  std::vector<std::string> traces;   // --trace FILE: more traces
  std::vector<std::string> sets;     // --set KEY=VALUE
  std::string report;                // --report FILE
  bool journal = false;              // --journal: keep DIR/journal.db
  std::vector<std::string> compare;  // --compare: scenario files, or KEY=VALUE[,KEY=VALUE] variants
  int seeds = 1;                     // --seeds N: each variant on N seeds
};

// The built-in variants of --compare: the remediation the failure model's fleet runs under.
bool builtin_variant(const std::string& c) {
  return c == "automatic" || c == "manual" || c == "none";
}

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
    // The same counts as the report's (fleet KPIs): every job, and those that never started.
    const int64_t all = metrics.value("fleet", Json::object()).value("jobs", int64_t{0});
    std::cout << fmt::format(
        "jobs {} ({} started, {} never started): queueing delay p50 {}, p95 {}, max {}\n",
        std::max<int64_t>(all, q.value("jobs", int64_t{0}) + q.value("neverStarted", int64_t{0})),
        q.value("jobs", 0), q.value("neverStarted", 0), delay(q.value("p50Seconds", Json())),
        delay(q.value("p95Seconds", Json())), delay(q.value("maxSeconds", Json())));
    const Json& u = metrics.value("utilization", Json::object());
    std::cout << fmt::format("GPU utilization {:.1f}% ({:.1f} of {:.1f} GPU-hours busy)\n",
                             u.value("busyFraction", 0.0) * 100, u.value("busyGpuHours", 0.0),
                             u.value("offeredGpuHours", 0.0));
  }
  const Json& fleet = metrics.value("fleet", Json::object());
  if (fleet.value("jobs", 0) > 0) {
    const Json& gh = fleet.value("gpuHours", Json::object());
    std::cout << fmt::format(
        "goodput {} ({:.1f} GPU-h of work kept of {:.1f} paid); lost {:.1f} GPU-h to failures, "
        "{:.1f} to preemption\n",
        format_kpi(fleet.value("goodput", Json()), "percent"), gh.value("kept", 0.0),
        gh.value("paid", 0.0), gh.value("lostToFailures", 0.0), gh.value("lostToPreemption", 0.0));
  }
  if (const Json& pl = fleet.value("placement", Json::object());
      pl.value("gangRunsOnLabelledNodes", 0) > 0) {
    const Json& one = pl["oneDomainShare"];
    std::string by_size;
    const Json& sizes = pl["queueingDelayBySize"];
    for (const char* cls : {"1-8 GPUs", "9-31 GPUs", "32-64 GPUs", "65+ GPUs"}) {
      if (!sizes.contains(cls)) continue;
      by_size += fmt::format("{}{} {}", by_size.empty() ? "" : ", ", cls,
                             delay(sizes[cls].value("p95Seconds", Json())));
    }
    std::cout << fmt::format(
        "placement: {} gang runs on labelled nodes, {} inside one layer-3 block, {} inside one "
        "layer-2 spine; queueing delay p95 by size: {}\n",
        pl.value("gangRunsOnLabelledNodes", 0), format_kpi(one.value("layer-3", Json()), "percent"),
        format_kpi(one.value("layer-2", Json()), "percent"), by_size);
  }
  if (const Json& f = fleet.value("failures", Json::object()); f.value("injected", 0) > 0) {
    const Json& inc = fleet["mttr"]["incidents"];
    std::cout << fmt::format(
        "faults {} ({:.1f} per 1,000 node-days); incident MTTR p50 {}, p95 {}; {} still open\n",
        f.value("injected", 0), f.value("per1000NodeDays", 0.0),
        delay(inc.value("p50Seconds", Json())), delay(inc.value("p95Seconds", Json())),
        fleet["mttr"].value("openAtEnd", 0));
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

// One variant of a comparison (or the single run): its label and scenario.
struct Variant {
  std::string label;
  Scenario scenario;
};

// The scenario of `file` with `sets` applied and `traces` added, traces read with `seed`.
Result<Scenario> build_scenario(const std::string& file, const std::vector<std::string>& sets,
                                const SimulateArgs& args) {
  GF_ASSIGN_OR_RETURN(Json doc, read_scenario_document(file));
  for (const auto& set : sets) {
    // `failures: true` is every default: a change of one of them makes it the map it stands for.
    if (set.starts_with("failures.") && doc.is_object() && doc.contains("failures") &&
        doc["failures"].is_boolean() && doc["failures"].get<bool>())
      doc["failures"] = Json::object();
    GF_RETURN_IF_ERROR(set_scenario_value(doc, set));
  }
  GF_ASSIGN_OR_RETURN(Scenario s, scenario_from_document(doc, file));
  for (const auto& t : args.traces) {
    GF_ASSIGN_OR_RETURN(TraceSpec spec, parse_trace_spec(Json(t), "--trace", "."));
    s.traces.push_back(std::move(spec));
  }
  if (args.reservation) s.config.reservation = *args.reservation;
  GF_RETURN_IF_ERROR(load_traces(s, args.seed.value_or(s.seed.value_or(1))));
  return s;
}

std::vector<std::string> split_sets(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = text.find(',', start);
    const std::string part =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!part.empty()) out.push_back(part);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

Status write_report(const std::string& file, const std::vector<ReportRun>& runs,
                    const std::vector<std::vector<std::string>>* seeds) {
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out << render_report(runs, seeds);
  out.close();
  if (!out) return unavailable_error("--report: cannot write " + file);
  return ok_status();
}

// A table of strings, its first row the header.
void print_rows(const std::vector<std::vector<std::string>>& rows) {
  if (rows.empty()) return;
  std::vector<Column> header;
  for (const std::string& h : rows.front()) header.push_back(text_column(h));
  Table table(std::move(header));
  for (size_t r = 1; r < rows.size(); ++r) table.add_row(rows[r]);
  table.print(std::cout);
}

// The side-by-side KPI table of a comparison, the first variant the baseline.
void print_comparison(const std::vector<std::pair<std::string, SimulationReport>>& runs) {
  std::vector<Column> header = {text_column("KPI")};
  for (const auto& [label, r] : runs) header.push_back(text_column(label));
  for (size_t i = 1; i < runs.size(); ++i)
    header.push_back(text_column("CHANGE " + std::to_string(i)));
  Table table(std::move(header));
  const std::vector<KpiRow> base = kpi_rows(runs.front().second.metrics);
  std::vector<std::vector<KpiRow>> all;
  for (const auto& [label, r] : runs) all.push_back(kpi_rows(r.metrics));
  for (size_t k = 0; k < base.size(); ++k) {
    std::vector<std::string> row = {base[k].label};
    for (const auto& rows : all) row.push_back(format_kpi(rows[k].value, rows[k].unit));
    for (size_t i = 1; i < all.size(); ++i) {
      row.push_back(format_kpi_delta(base[k].value, all[i][k].value, base[k].unit));
    }
    table.add_row(row);
  }
  table.print(std::cout);
}

int run_variants(const SimulateArgs& args, std::vector<Variant>& variants,
                 std::optional<Duration> until, std::optional<Duration> every);

int simulate(const SimulateArgs& args) {
  auto until = flag_duration("--until", args.until);
  auto every = flag_duration("--snapshot-every", args.snapshot_every);
  auto retention = flag_duration("--job-retention", args.job_retention);
  for (const auto* d : {&until, &every, &retention}) {
    if (!d->ok()) {
      std::cerr << "error: " << d->status().message() << "\n";
      return 2;
    }
  }
  // The variants: the scenario (with --set), then each --compare: a file, or settings of the
  // first scenario.
  std::vector<Variant> variants;
  std::vector<std::pair<std::string, std::vector<std::string>>> wanted;  // (file, sets)
  std::string base_file = args.scenario;
  if (base_file.empty()) {
    if (args.compare.empty()) {
      std::cerr << "error: a scenario file is required (or --compare A.yaml B.yaml)\n";
      return 2;
    }
    base_file = args.compare.front();
  }
  wanted.emplace_back(base_file, args.sets);
  for (size_t i = args.scenario.empty() ? 1 : 0; i < args.compare.size(); ++i) {
    const std::string& c = args.compare[i];
    std::error_code ec;
    if (builtin_variant(c) && !std::filesystem::exists(c, ec)) {
      std::vector<std::string> sets = args.sets;
      sets.push_back("failures.remediation=" + c);
      wanted.emplace_back(base_file, std::move(sets));
    } else if (c.find('=') != std::string::npos && !std::filesystem::exists(c, ec)) {
      std::vector<std::string> sets = args.sets;
      for (auto& s : split_sets(c)) sets.push_back(std::move(s));
      wanted.emplace_back(base_file, std::move(sets));
    } else {
      wanted.emplace_back(c, args.sets);
    }
  }
  for (size_t i = 0; i < wanted.size(); ++i) {
    const auto& [file, sets] = wanted[i];
    auto scenario = build_scenario(file, sets, args);
    if (!scenario.ok()) {
      std::cerr << "error: scenario " << file << ": " << scenario.status().message() << "\n";
      return 2;
    }
    std::string label = scenario->name;
    if (i > 0 && file == base_file) {
      label.clear();
      for (size_t k = args.sets.size(); k < sets.size(); ++k)
        label += (label.empty() ? "" : ",") + sets[k];
      if (label.starts_with("failures.remediation=") && label.find(',') == std::string::npos)
        label = label.substr(std::string_view("failures.remediation=").size());
    }
    variants.push_back(Variant{label, std::move(*scenario)});
  }
  return run_variants(args, variants, *until, *every);
}

// Runs every variant (on args.seeds seeds each), prints the summary, the comparison or the
// table of intervals, and writes the report.
int run_variants(const SimulateArgs& args, std::vector<Variant>& variants,
                 std::optional<Duration> until, std::optional<Duration> every) {
  const bool comparing = variants.size() > 1;
  const bool seeded = args.seeds > 1;
  // A comparison runs every variant on the first one's seed (then the next ones, with --seeds).
  const uint64_t seed = args.seed.value_or(variants.front().scenario.seed.value_or(1));
  std::vector<std::pair<std::string, SimulationReport>> runs;  // each variant's first seed
  std::vector<SeededVariant> seeded_runs;
  for (size_t i = 0; i < variants.size(); ++i) {
    seeded_runs.push_back(SeededVariant{variants[i].label, {}});
    for (int k = 0; k < args.seeds; ++k) {
      std::filesystem::path dir = args.out;
      if (comparing) dir /= fmt::format("variant-{}", i + 1);
      if (seeded) dir /= fmt::format("seed-{}", seed + static_cast<uint64_t>(k));
      SimulationOptions opts;
      opts.out_dir = dir.string();
      opts.seed = comparing || seeded ? std::optional<uint64_t>(seed + static_cast<uint64_t>(k))
                                      : args.seed;
      opts.until = until;
      opts.snapshot_every = every;
      opts.keep_journal = args.journal;
      opts.job_retention = flag_duration("--job-retention", args.job_retention).value();
      // The command exits after the last run: its fleet need not be freed (earlier ones are,
      // so memory does not pile up).
      opts.leave_at_exit = i + 1 == variants.size() && k + 1 == args.seeds;
      auto report = run_simulation(variants[i].scenario, opts);
      if (!report.ok()) {
        std::cerr << "error: " << report.status().message() << "\n";
        return 1;
      }
      if (!comparing && !seeded) print_summary(*report);
      seeded_runs.back().metrics.push_back(report->metrics);
      report->state = Json();  // only the metrics are compared
      if (k == 0) runs.emplace_back(variants[i].label, std::move(*report));
    }
  }
  std::vector<std::vector<std::string>> table;
  if (seeded) {
    std::cout << fmt::format("{} variant(s) on seeds {}..{}; outputs under {}{}\n\n", runs.size(),
                             seed, seed + static_cast<uint64_t>(args.seeds) - 1, args.out,
                             comparing ? "/variant-N/seed-S" : "/seed-S");
    table = seed_table(seeded_runs);
    print_rows(table);
  } else if (comparing) {
    std::cout << fmt::format("{} variants on seed {}; outputs under {}/variant-N\n\n", runs.size(),
                             seed, args.out);
    print_comparison(runs);
  }
  if (!args.report.empty()) {
    std::vector<ReportRun> pages;
    for (const auto& [label, r] : runs) pages.push_back(ReportRun{label, r.metrics});
    if (Status st = write_report(args.report, pages, seeded ? &table : nullptr); !st.ok()) {
      std::cerr << "error: " << st.message() << "\n";
      return 1;
    }
    std::cout << "report: " << args.report << "\n";
  }
  return 0;
}

}  // namespace

void register_simulate_command(CLI::App& app, CommandContext& ctx) {
  auto args = std::make_shared<SimulateArgs>();
  auto* cmd = app.add_subcommand(
      "simulate",
      "run a scenario against the simulated cloud on a virtual clock (docs/scenarios.md)");
  cmd->add_option("scenario", args->scenario,
                  "scenario file (YAML or JSON); optional with --compare A.yaml B.yaml");
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
  cmd->add_option("--job-retention", args->job_retention,
                  "how long a finished job stays in the run's state before its figures are kept "
                  "apart (default 7d; docs/operations.md \"What is kept where\")");
  cmd->add_flag("--journal", args->journal,
                "keep the run's journal as DIR/journal.db (SQLite): every fact recorded, for "
                "`sqlite3`; none is written without it");
  cmd->add_option("--trace", args->traces,
                  "replay a job trace (Microsoft ITP or Alibaba openb CSV) into the default "
                  "namespace; repeatable (docs/scenarios.md \"Traces\")");
  cmd->add_option("--set", args->sets,
                  "change the scenario: KEY=VALUE with a dotted KEY (config.reservation=false, "
                  "failures.operator=none); repeatable");
  cmd->add_option("--report", args->report,
                  "write a self-contained HTML page with the KPIs and charts to this file");
  cmd->add_option("--compare", args->compare,
                  "run variants on the same seed and print their KPIs side by side: scenario "
                  "files, KEY=VALUE[,KEY=VALUE] changes of the scenario, or automatic, manual, "
                  "none (the remediation the failure model's fleet runs under)")
      ->expected(1, 64);
  cmd->add_option("--seeds", args->seeds,
                  "run each variant on N seeds (the seed, then the next ones) and print each "
                  "KPI's mean with its 95% interval and the paired differences (docs/scenarios.md "
                  "\"What-if\")")
      ->check(CLI::Range(1, 100));
  cmd->callback([&ctx, args] { ctx.run = [args] { return simulate(*args); }; });
}

}  // namespace gf
