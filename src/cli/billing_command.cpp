// `gpufleet billing` (docs/provisioning.md): instance-level metering summed by instance, group or
// cluster.
#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <tuple>
#include <vector>

#include "cli/app.h"
#include "cli/command_support.h"

namespace gf {

namespace {

struct BillingArgs {
  std::string cluster;
  std::string from;
  std::string to;
  std::string group_by = "cluster";
};

struct KeyColumn {
  const char* header;
  const char* key;
};

// Key columns appear when some line carries them (the grouping decides which do).
constexpr KeyColumn kKeyColumns[] = {
    {"JOB-QUEUE", "JobQueue"},  {"SHARE", "QuotaShareName"},    {"JOBS", "Jobs"},
    {"CLUSTER", "ClusterName"}, {"GROUP", "InstanceGroupName"}, {"INSTANCE", "InstanceId"},
    {"TYPE", "InstanceType"},   {"PRICE/H", "PricePerHour"},    {"INSTANCES", "Instances"}};

std::string cell(const Json& item, const std::string& key) {
  if (key == "PricePerHour") return format_dollars(parse_micros(text_field(item, key)));
  return text_field(item, key);
}

// Billed instance time as hours with two decimals ("77.45"): what a price per hour multiplies,
// and a sum a person can read (a duration such as 3d5h26m59s is not).
std::string instance_hours(int64_t billed_seconds) {
  const int64_t hundredths = (billed_seconds * 100 + 1800) / 3600;  // rounded to the nearest
  return fmt::format("{}.{:02}", hundredths / 100, hundredths % 100);
}

void print_billing(const Json& answer) {
  const Json& items = array_field(answer, "Items");
  std::vector<std::string> keys;
  std::vector<Column> headers;
  for (const KeyColumn& c : kKeyColumns) {
    bool present = c.key == std::string("ClusterName") && text_field(answer, "GroupBy") != "share";
    for (const auto& item : items) present = present || item.contains(c.key);
    if (!present) continue;
    keys.push_back(c.key);
    headers.push_back(c.header);
  }
  headers.insert(headers.end(), {"INSTANCE-HOURS", "COST"});
  Table table(headers);
  int64_t billed_seconds = 0;
  for (const auto& item : items) {
    std::vector<std::string> row;
    for (const auto& k : keys) row.push_back(cell(item, k));
    billed_seconds += int_field(item, "BilledSeconds");
    row.push_back(instance_hours(int_field(item, "BilledSeconds")));
    row.push_back(format_dollars(int_field(item, "CostMicros")));
    table.add_row(std::move(row));
  }
  std::vector<std::string> total(keys.size(), "");
  if (!total.empty()) total.front() = "TOTAL";
  total.push_back(instance_hours(billed_seconds));
  total.push_back(format_dollars(int_field(answer, "TotalMicros")));
  table.add_row(std::move(total));
  const std::string from = text_field(answer, "From");
  std::cout << "Billed " << (from.empty() ? "" : "from " + from + " ") << "to "
            << text_field(answer, "To") << " (" << text_field(answer, "Currency") << ")\n";
  table.print(std::cout);
}

int show_billing(CommandEnv& env, const BillingArgs& args) {
  QueryString query;
  query.add("cluster", args.cluster).add("groupBy", args.group_by);
  for (auto [flag, text, key] :
       {std::tuple{"--from", &args.from, "from"}, std::tuple{"--to", &args.to, "to"}}) {
    if (text->empty()) continue;
    if (Status st = check_time_flag(flag, *text); !st.ok()) return usage_error(st.message());
    query.add(key, *text);  // "1h" is resolved on the server's clock
  }
  auto answer = env.client.get("/v1/billing" + query.str());
  if (!answer.ok()) return print_error(answer.status());
  if (!print_if_structured(env, *answer)) print_billing(*answer);
  return 0;
}

}  // namespace

void register_billing_command(CLI::App& app, CommandContext& ctx) {
  auto args = std::make_shared<BillingArgs>();
  auto* cmd = app.add_subcommand("billing",
                                 "instance-level cost: billed time and cost per cluster, group, "
                                 "instance or quota share");
  cmd->add_option("--cluster", args->cluster, "only this cluster");
  cmd->add_option("--from", args->from,
                  "start of the window: a duration ago (24h) or a time (ISO 8601)");
  cmd->add_option("--to", args->to, "end of the window (default now): a duration ago or a time");
  cmd->add_option("--group-by", args->group_by,
                  "instance, group, cluster or share (what each quota share's jobs ran on)")
      ->capture_default_str();
  run_with_client(cmd, ctx, [args](CommandEnv& env) { return show_billing(env, *args); });
}

}  // namespace gf
