// `gpufleet node list|describe|add|delete` (docs/api.md, docs/provisioning.md): ListClusterNodes,
// DescribeClusterNode, BatchAddClusterNodes and BatchDeleteClusterNodes.
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>

#include "cli/app.h"
#include "cli/command_support.h"
#include "core/label_selector.h"

namespace gf {

namespace {

struct NodeArgs {
  std::string cluster;
  std::string group;
  int64_t count = 1;
  std::vector<std::string> ids;
  ListFlags list;
  std::string selector;  // -l over the nodes' labels
};

std::string nodes_path(const std::string& cluster) { return cluster_path(cluster) + "/nodes"; }

// ListClusterNodes filters by group name *containing* a string; --group means exactly that group,
// so the answer is narrowed here (json/yaml print the same envelope with the narrowed list).
Json only_group(Json answer, const std::string& group) {
  if (group.empty()) return answer;
  Json kept = Json::array();
  for (const auto& n : array_field(answer, "ClusterNodeSummaries")) {
    if (text_field(n, "InstanceGroupName") == group) kept.push_back(n);
  }
  answer["ClusterNodeSummaries"] = std::move(kept);
  return answer;
}

int list_nodes(CommandEnv& env, const NodeArgs& args) {
  if (Status st = args.list.check(); !st.ok()) return usage_error(st.message());
  auto selector = LabelSelector::parse(args.selector);
  if (!selector.ok()) return usage_error(selector.status().message());
  QueryString query;
  query.add("InstanceGroupNameContains", args.group);
  args.list.add_to(query);
  auto answer = env.client.get(nodes_path(args.cluster) + query.str());
  if (!answer.ok()) return print_error(answer.status());
  Json nodes = only_group(std::move(*answer), args.group);
  if (!selector->empty()) {
    Json kept = Json::array();
    for (const auto& n : array_field(nodes, "ClusterNodeSummaries")) {
      if (selector->matches(field(n, "Labels"))) kept.push_back(n);
    }
    nodes["ClusterNodeSummaries"] = std::move(kept);
  }
  if (print_if_structured(env, nodes)) return 0;
  // A Slurm cluster's nodes also go by the name slurm.conf and sinfo give them.
  bool slurm = false;
  for (const auto& n : array_field(nodes, "ClusterNodeSummaries"))
    slurm |= !text_field(n, "SlurmNodeName").empty();
  std::vector<Column> columns = {"INSTANCE-ID", "GROUP",       "TYPE",     "STATUS",
                                 "PODS",        "REMEDIATION", "LAUNCHED", text_column("MESSAGE")};
  if (slurm) columns.insert(columns.begin() + 1, Column("NODE-NAME"));
  Table table(std::move(columns));
  for (const auto& n : array_field(nodes, "ClusterNodeSummaries")) {
    const Json& status = field(n, "InstanceStatus");
    // kubectl's "Ready,SchedulingDisabled": a cordoned node takes no new pods.
    const bool cordoned = field(n, "Cordoned").is_boolean() && field(n, "Cordoned").get<bool>();
    const std::string rem = text_field(n, "RemediationId");
    std::vector<std::string> row = {
        text_field(n, "InstanceId"),
        text_field(n, "InstanceGroupName"),
        text_field(n, "InstanceType"),
        text_field(status, "Status") + (cordoned ? ",Cordoned" : ""),
        text_field(n, "PodCount"),
        rem.empty() ? "-" : rem + " (" + text_field(n, "RemediationStatus") + ")",
        text_field(n, "LaunchTime"),
        text_field(status, "Message")};
    if (slurm) row.insert(row.begin() + 1, text_field(n, "SlurmNodeName"));
    table.add_row(std::move(row));
  }
  table.print(std::cout);
  return 0;
}

// "$98.32" from the wire's decimal money; "" when absent.
std::string dollars(const Json& money) {
  return money.is_string() ? format_dollars(parse_micros(money.get<std::string>())) : "";
}

void print_node(const Json& n) {
  const Json& status = field(n, "InstanceStatus");
  const Json& billing = field(n, "Billing");
  const Json& health = field(n, "Health");
  const Json& pods = array_field(field(n, "Workload"), "Pods");
  std::string labels;
  for (auto it = field(n, "Labels").begin();
       field(n, "Labels").is_object() && it != field(n, "Labels").end(); ++it) {
    labels += (labels.empty() ? "" : ",") + it.key() + "=" + text_of(it.value());
  }
  const std::string rem = text_field(n, "RemediationId");
  print_fields(
      std::cout,
      {{"InstanceId", text_field(n, "InstanceId")},
       {"Group", text_field(n, "InstanceGroupName")},
       {"Type", text_field(n, "InstanceType")},
       {"Address", text_field(n, "PrivatePrimaryIp")},  // real instances (docs/local-cloud.md)
       {"Directory", text_field(n, "LocalDirectory")},  // the local cloud's, where kern.log is
       {"Status", text_field(status, "Status")},
       {"Message", text_field(status, "Message")},
       {"Cordoned", text_field(n, "Cordoned")},
       {"Remediation", rem.empty() ? "" : rem + " (" + text_field(n, "RemediationStatus") + ")"},
       {"Labels", labels.empty() ? "<none>" : labels},
       {"Launched", text_field(n, "LaunchTime")},
       {"LaunchAttempt", text_field(n, "LaunchAttempt")},
       {"Healthy", text_field(health, "Healthy")},
       {"Pods", std::to_string(pods.size())},
       {"PricePerHour", dollars(field(billing, "PricePerHour"))},
       {"BillingStart", text_field(billing, "BillingStart")},
       {"BillingEnd", text_field(billing, "BillingEnd")},
       {"Cost", dollars(field(billing, "Cost"))}});
  if (pods.empty()) return;
  Table t({"POD", "JOB"});
  for (const Json& p : pods) t.add_row({text_field(p, "Name"), text_field(p, "Job")});
  std::cout << "\n";
  t.print(std::cout);
}

int describe_node(CommandEnv& env, const NodeArgs& args) {
  auto answer = env.client.get(nodes_path(args.cluster) + "/" + url_encode(args.ids.front()));
  if (!answer.ok()) return print_error(answer.status());
  if (!print_if_structured(env, *answer)) print_node(field(*answer, "NodeDetails"));
  return 0;
}

// Prints a batch answer ({Successful, Failed}); exit 1 when anything failed.
int print_batch(const CommandEnv& env, const Json& answer, std::string (*ok_line)(const Json&),
                std::string (*failed_line)(const Json&)) {
  if (!print_if_structured(env, answer)) {
    for (const auto& s : array_field(answer, "Successful")) std::cout << ok_line(s) << "\n";
    for (const auto& f : array_field(answer, "Failed"))
      std::cerr << "error: " << failed_line(f) << "\n";
  }
  return array_field(answer, "Failed").empty() ? 0 : 1;
}

int add_nodes(CommandEnv& env, const NodeArgs& args) {
  const Json body = {{"NodesToAdd", Json::array({{{"InstanceGroupName", args.group},
                                                  {"IncrementTargetCountBy", args.count}}})}};
  auto answer = env.client.post(nodes_path(args.cluster) + "/batch-add", body.dump());
  if (!answer.ok()) return print_error(answer.status());
  return print_batch(
      env, *answer,
      [](const Json& s) {
        return text_field(s, "InstanceGroupName") + ": +" +
               text_field(s, "IncrementTargetCountBy") + ", TargetCount " +
               text_field(s, "TargetCount") + " (" + text_field(s, "Status") + ")";
      },
      [](const Json& f) {
        return "instance group " + text_field(f, "InstanceGroupName") + ": " +
               text_field(f, "ErrorCode") + ": " + text_field(f, "Message");
      });
}

int delete_nodes(CommandEnv& env, const NodeArgs& args) {
  const Json body = {{"NodeIds", args.ids}};
  auto answer = env.client.post(nodes_path(args.cluster) + "/batch-delete", body.dump());
  if (!answer.ok()) return print_error(answer.status());
  return print_batch(
      env, *answer, [](const Json& id) { return "deleting " + text_of(id); },
      [](const Json& f) {
        return "node " + text_field(f, "NodeId") + ": " + text_field(f, "Code") + ": " +
               text_field(f, "Message");
      });
}

CLI::App* add_node_command(CLI::App* parent, const char* verb, const char* help, NodeArgs& args) {
  auto* cmd = parent->add_subcommand(verb, help);
  cmd->add_option("CLUSTER", args.cluster, "cluster name")->required();
  return cmd;
}

}  // namespace

void register_node_commands(CLI::App& app, CommandContext& ctx) {
  auto* node = app.add_subcommand("node", "list, inspect, add and delete a cluster's nodes");
  node->require_subcommand(1);
  node->fallthrough();

  auto list = std::make_shared<NodeArgs>();
  auto* cmd = add_node_command(node, "list", "a cluster's nodes, oldest launch first", *list);
  cmd->add_option("--group", list->group, "only this instance group");
  add_list_flags(cmd, list->list);
  cmd->add_option("-l,--selector", list->selector,
                  "only nodes whose labels match, e.g. gpufleet.io/remediate=reboot");
  run_with_client(cmd, ctx, [list](CommandEnv& env) { return list_nodes(env, *list); });

  auto describe = std::make_shared<NodeArgs>();
  cmd =
      add_node_command(node, "describe", "one node: status, health, workload, billing", *describe);
  cmd->add_option("ID", describe->ids, "instance id")->required()->expected(1);
  run_with_client(cmd, ctx, [describe](CommandEnv& env) { return describe_node(env, *describe); });

  auto add = std::make_shared<NodeArgs>();
  cmd = add_node_command(node, "add", "raise an instance group's TargetCount", *add);
  cmd->add_option("--group", add->group, "instance group")->required();
  cmd->add_option("--count", add->count, "nodes to add")->capture_default_str();
  run_with_client(cmd, ctx, [add](CommandEnv& env) { return add_nodes(env, *add); });

  auto del = std::make_shared<NodeArgs>();
  cmd =
      add_node_command(node, "delete", "terminate nodes and lower their groups' TargetCount", *del);
  cmd->add_option("ID", del->ids, "instance ids")->required();
  run_with_client(cmd, ctx, [del](CommandEnv& env) { return delete_nodes(env, *del); });
  register_node_logs_command(node, ctx);
}

}  // namespace gf
