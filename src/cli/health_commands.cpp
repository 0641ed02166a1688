// Health, alerts and remediation (docs/remediation.md) from the command line:
//   gpufleet alert list|get
//   gpufleet remediation list|describe|request|approve|reject|cancel
//   gpufleet policy get|set
//   gpufleet circuit-breaker get|reset
//   gpufleet host list, gpufleet ticket list
//   gpufleet node signal|clear|label (added to the `node` group)
// Each wraps one route of src/api/health_api.cpp; tables by default, the server's answer unchanged
// with -o json|yaml, and the server's message (exit 1) when it says no.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>

#include "cli/app.h"
#include "cli/command_support.h"

namespace gf {

namespace {

// ---- alerts ----

struct AlertArgs {
  std::string cluster, node, state, severity, id;
};

int list_alerts(CommandEnv& env, const AlertArgs& a) {
  auto answer = env.client.get("/v1/alerts" + QueryString()
                                                  .add("cluster", a.cluster)
                                                  .add("node", a.node)
                                                  .add("state", a.state)
                                                  .add("severity", a.severity)
                                                  .str());
  if (!answer.ok()) return print_error(answer.status());
  if (print_if_structured(env, *answer)) return 0;
  Table table({"ALERT", "CLUSTER", "NODE", "DETECTOR", "FAULT", "SEVERITY", "STATE", "FIRST SEEN",
               text_column("SUMMARY")});
  for (const Json& al : array_field(*answer, "Alerts")) {
    table.add_row({text_field(al, "AlertId"), text_field(al, "ClusterName"),
                   text_field(al, "NodeId"), text_field(al, "Detector"), text_field(al, "Fault"),
                   text_field(al, "Severity"), text_field(al, "State"), text_field(al, "FirstSeen"),
                   text_field(al, "Summary")});
  }
  table.print(std::cout);
  return 0;
}

int get_alert(CommandEnv& env, const AlertArgs& a) {
  auto answer = env.client.get("/v1/alerts/" + url_encode(a.id));
  if (!answer.ok()) return print_error(answer.status());
  if (print_if_structured(env, *answer)) return 0;
  const Json& al = *answer;
  print_fields(std::cout, {{"AlertId", text_field(al, "AlertId")},
                           {"Cluster", text_field(al, "ClusterName")},
                           {"Group", text_field(al, "InstanceGroupName")},
                           {"Node", text_field(al, "NodeId")},
                           {"Host", text_field(al, "HostId")},
                           {"Detector", text_field(al, "Detector")},
                           {"Subject", text_field(al, "Subject")},
                           {"Fault", text_field(al, "Fault")},
                           {"Severity", text_field(al, "Severity")},
                           {"State", text_field(al, "State")},
                           {"Summary", text_field(al, "Summary")},
                           {"Action", text_field(al, "Action")},
                           {"Support", text_field(al, "Support")},
                           {"Persistence", text_field(al, "Persistence")},
                           {"FirstSeen", text_field(al, "FirstSeen")},
                           {"LastSeen", text_field(al, "LastSeen")},
                           {"FiredAt", text_field(al, "FiredAt")},
                           {"ResolvedAt", text_field(al, "ResolvedAt")},
                           {"ResolvedBy", text_field(al, "ResolvedBy")},
                           {"Observations", text_field(al, "Observations")}});
  const Json& evidence = array_field(al, "Evidence");
  if (!evidence.empty()) {
    std::cout << "\nEvidence:\n";
    Table table({"AT", "PRESENT", "TEXT"});
    for (const Json& e : evidence) {
      table.add_row({text_field(e, "At"), text_field(e, "Present"), text_field(e, "Text")});
    }
    table.print(std::cout);
  }
  return 0;
}

// ---- remediations ----

struct RemediationArgs {
  std::string cluster, node, status, id, reason, action, detector, request_id;
};

int list_remediations(CommandEnv& env, const RemediationArgs& a) {
  auto answer = env.client.get(
      "/v1/remediations" +
      QueryString().add("cluster", a.cluster).add("node", a.node).add("status", a.status).str());
  if (!answer.ok()) return print_error(answer.status());
  if (print_if_structured(env, *answer)) return 0;
  // What waits for a person comes first (an on-call's first question), then the rest as listed.
  std::vector<const Json*> waiting, others;
  for (const Json& r : array_field(*answer, "Remediations")) {
    (text_field(r, "Status") == "Proposed" ? waiting : others).push_back(&r);
  }
  Table table({"ID", "CLUSTER", "NODE", "ACTION", "EFFECTIVE", "STATUS", "REQUESTER", "APPROVER",
               text_column("REASON")});
  for (const auto* list : {&waiting, &others}) {
    for (const Json* r : *list) {
      table.add_row(
          {text_field(*r, "RemediationId"), text_field(*r, "ClusterName"), text_field(*r, "NodeId"),
           text_field(*r, "Action"), text_field(*r, "EffectiveAction"), text_field(*r, "Status"),
           text_field(*r, "Requester"), text_field(*r, "Approver"), text_field(*r, "Reason")});
    }
  }
  table.print(std::cout);
  if (!waiting.empty()) {
    std::cerr << waiting.size()
              << (waiting.size() == 1 ? " remediation waits" : " remediations wait")
              << " for a person: gpufleet remediation approve ID (or reject ID --reason ...)\n";
  }
  return 0;
}

std::string joined(const Json& list) {
  if (!list.is_array()) return text_of(list);
  std::string out;
  for (const Json& v : list) out += (out.empty() ? "" : ", ") + text_of(v);
  return out;
}

void print_remediation(const Json& r) {
  print_fields(std::cout, {{"RemediationId", text_field(r, "RemediationId")},
                           {"Cluster", text_field(r, "ClusterName")},
                           {"Group", text_field(r, "InstanceGroupName")},
                           {"Node", text_field(r, "NodeId")},
                           {"Host", text_field(r, "HostId")},
                           {"Fault", text_field(r, "Fault")},
                           {"Detector", text_field(r, "Detector")},
                           {"RequestId", text_field(r, "RequestId")},
                           {"Action", text_field(r, "Action")},
                           {"EffectiveAction", text_field(r, "EffectiveAction")},
                           {"EffectiveActionReason", text_field(r, "EffectiveActionReason")},
                           {"Status", text_field(r, "Status")},
                           {"Requester", text_field(r, "Requester")},
                           {"Approver", text_field(r, "Approver")},
                           {"Rule", text_field(r, "Rule")},
                           {"Evidence", joined(field(r, "Evidence"))},
                           {"AutoApproved", text_field(r, "AutoApproved")},
                           {"Reason", text_field(r, "Reason")},
                           {"CreatedAt", text_field(r, "CreatedAt")},
                           {"ApprovedAt", text_field(r, "ApprovedAt")},
                           {"IdleDeadline", text_field(r, "IdleDeadline")},
                           {"StartedAt", text_field(r, "StartedAt")},
                           {"ActedAt", text_field(r, "ActedAt")},
                           {"CompletedAt", text_field(r, "CompletedAt")}});
}

int describe_remediation(CommandEnv& env, const RemediationArgs& a) {
  auto answer = env.client.get("/v1/remediations/" + url_encode(a.id));
  if (!answer.ok()) return print_error(answer.status());
  if (print_if_structured(env, *answer)) return 0;
  print_remediation(*answer);
  const Json& timeline = array_field(*answer, "Timeline");
  std::cout << "\nTimeline:\n";
  if (timeline.empty()) {
    std::cout << "<none>\n";
    return 0;
  }
  Table table({"TIME", text_column("DESCRIPTION")});
  for (const Json& e : timeline)
    table.add_row({text_field(e, "EventTime"), text_field(e, "Description")});
  table.print(std::cout);
  return 0;
}

int request_remediation(CommandEnv& env, const RemediationArgs& a) {
  Json body = {{"ClusterName", a.cluster}, {"NodeId", a.node}, {"Action", a.action}};
  if (!a.detector.empty()) body["Detector"] = a.detector;
  if (!a.request_id.empty()) body["RequestId"] = a.request_id;
  if (!a.reason.empty()) body["Reason"] = a.reason;
  auto answer = env.client.post("/v1/remediations", body.dump());
  if (!answer.ok()) return print_error(answer.status());
  if (print_if_structured(env, *answer)) return 0;
  std::cout << "remediation " << text_field(*answer, "RemediationId") << " "
            << text_field(*answer, "Status") << ": " << text_field(*answer, "EffectiveAction")
            << " node " << text_field(*answer, "NodeId") << "\n";
  return 0;
}

// approve / reject / cancel.
int decide_remediation(CommandEnv& env, const RemediationArgs& a, const std::string& verb) {
  Json body = Json::object();
  if (!a.reason.empty()) body["Reason"] = a.reason;
  auto answer = env.client.post("/v1/remediations/" + url_encode(a.id) + "/" + verb, body.dump());
  if (!answer.ok()) return print_error(answer.status());
  if (print_if_structured(env, *answer)) return 0;
  std::cout << "remediation " << text_field(*answer, "RemediationId") << " "
            << text_field(*answer, "Status") << "\n";
  return 0;
}

// ---- policy, circuit breaker ----

struct ClusterArgs {
  std::string cluster, file;
};

std::string policy_path(const std::string& cluster) {
  return cluster_path(cluster) + "/remediation-policy";
}

void print_policy(const Json& p) {
  Fields fields;
  for (auto it = p.begin(); p.is_object() && it != p.end(); ++it) {
    if (it.key() == "Rules" || it.key() == "DefaultRules") continue;
    fields.emplace_back(it.key(), text_of(it.value()));
  }
  print_fields(std::cout, fields);
  const Json& rules = array_field(p, "Rules");
  std::cout << "\nRules:\n";
  if (rules.empty()) {
    std::cout << "<none: the default rules below apply>\n";
  } else {
    Table table({"FAULT", "NODE POOL", "ACTION", "APPROVAL"});
    for (const Json& r : rules) {
      table.add_row({text_field(r, "Fault"), text_field(r, "NodePool"), text_field(r, "Action"),
                     text_field(r, "Approval")});
    }
    table.print(std::cout);
  }
  const Json& defaults = array_field(p, "DefaultRules");
  if (defaults.empty()) return;
  std::cout << "\nDefault rules (where no rule above matches):\n";
  Table table({"DETECTOR", "FAULTS", "ACTION", "APPROVAL"});
  for (const Json& r : defaults) {
    table.add_row({text_field(r, "Detector"), text_field(r, "Faults"), text_field(r, "Action"),
                   text_field(r, "Approval")});
  }
  table.print(std::cout);
}

int get_policy(CommandEnv& env, const ClusterArgs& a) {
  auto answer = env.client.get(policy_path(a.cluster));
  if (!answer.ok()) return print_error(answer.status());
  if (!print_if_structured(env, *answer)) print_policy(*answer);
  return 0;
}

int set_policy(CommandEnv& env, const ClusterArgs& a) {
  auto text = read_input_file(a.file);
  if (!text.ok()) return usage_error(text.status().message());
  // YAML or JSON on this side; the server is sent one JSON document.
  auto docs = parse_documents(*text);
  if (!docs.ok()) return usage_error("-f " + a.file + ": " + docs.status().message());
  if (docs->size() != 1) {
    return usage_error(
        fmt::format("-f {}: expected one policy document, got {}", a.file, docs->size()));
  }
  auto answer = env.client.put(policy_path(a.cluster), docs->front().dump());
  if (!answer.ok()) return print_error(answer.status());
  if (print_if_structured(env, *answer)) return 0;
  std::cout << "remediation policy of " << a.cluster << " set\n";
  return 0;
}

int get_breaker(CommandEnv& env, const ClusterArgs& a) {
  auto answer = env.client.get(cluster_path(a.cluster) + "/circuit-breaker");
  if (!answer.ok()) return print_error(answer.status());
  if (print_if_structured(env, *answer)) return 0;
  const Json& b = *answer;
  print_fields(std::cout, {{"Cluster", text_field(b, "ClusterName")},
                           {"State", text_field(b, "State")},
                           {"Reason", text_field(b, "Reason")},
                           {"TrippedAt", text_field(b, "TrippedAt")},
                           {"ResetAt", text_field(b, "ResetAt")},
                           {"ResetBy", text_field(b, "ResetBy")},
                           {"MaxAuto", text_field(b, "MaxAuto")},
                           {"Window", text_field(b, "Window")},
                           {"AutoApprovalsInWindow", text_field(b, "AutoApprovalsInWindow")}});
  return 0;
}

int reset_breaker(CommandEnv& env, const ClusterArgs& a) {
  auto answer = env.client.post(cluster_path(a.cluster) + "/circuit-breaker/reset", "{}");
  if (!answer.ok()) return print_error(answer.status());
  if (print_if_structured(env, *answer)) return 0;
  const std::string message = text_field(*answer, "Message");
  if (!message.empty()) {
    std::cout << a.cluster << ": " << message << "\n";
  } else {
    std::cout << "circuit breaker of " << a.cluster << " reset by "
              << text_field(*answer, "ResetBy") << "\n";
  }
  return 0;
}

// ---- hosts, tickets ----

int list_hosts(CommandEnv& env) {
  auto answer = env.client.get("/v1/hosts");
  if (!answer.ok()) return print_error(answer.status());
  if (print_if_structured(env, *answer)) return 0;
  Table table({"HOST", "STATUS", "CLUSTER", "NODE", "TYPE", "SINCE", "LAST CRITICAL",
               text_column("REASON")});
  for (const Json& h : array_field(*answer, "Hosts")) {
    table.add_row({text_field(h, "HostId"), text_field(h, "Status"), text_field(h, "ClusterName"),
                   text_field(h, "NodeId"), text_field(h, "InstanceType"), text_field(h, "Since"),
                   text_field(h, "LastCriticalAlert"), text_field(h, "Reason")});
  }
  table.print(std::cout);
  return 0;
}

int list_tickets(CommandEnv& env) {
  auto answer = env.client.get("/v1/tickets");
  if (!answer.ok()) return print_error(answer.status());
  if (print_if_structured(env, *answer)) return 0;
  Table table({"TICKET", "HOST", "CLUSTER", "NODE", "TYPE", "OPENED", text_column("SUMMARY")});
  for (const Json& t : array_field(*answer, "Tickets")) {
    table.add_row({text_field(t, "TicketId"), text_field(t, "HostId"), text_field(t, "ClusterName"),
                   text_field(t, "NodeId"), text_field(t, "InstanceType"),
                   text_field(t, "OpenedAt"), text_field(t, "Summary")});
  }
  table.print(std::cout);
  return 0;
}

// ---- node signal|clear|label ----

struct NodeSignalArgs {
  std::string cluster, node, line, json, detector;
  std::vector<std::string> cleared_by;
  std::optional<int64_t> recurs;
  std::vector<std::string> labels;
};

std::string node_path(const NodeSignalArgs& a) {
  return cluster_path(a.cluster) + "/nodes/" + url_encode(a.node);
}

int signal_node(CommandEnv& env, const NodeSignalArgs& a) {
  Json body = Json::object();
  if (!a.json.empty()) {
    auto signal = parse_json(a.json);
    if (!signal.ok()) return usage_error("--json: " + signal.status().message());
    body["Signal"] = *signal;
  } else {
    body["Signal"] = a.line;
  }
  if (!a.cleared_by.empty()) body["ClearedBy"] = a.cleared_by;
  if (a.recurs) body["Recurs"] = *a.recurs;
  auto answer = env.client.post(node_path(a) + "/signals", body.dump());
  if (!answer.ok()) return print_error(answer.status());
  if (print_if_structured(env, *answer)) return 0;
  const Json& found = array_field(*answer, "Detections");
  if (found.empty()) {
    std::cout << text_field(*answer, "Message") << "\n";
    return 0;
  }
  Table table({"DETECTOR", "FAULT", "SEVERITY", "ACTION"});
  for (const Json& d : found) {
    table.add_row({text_field(d, "Detector"), text_field(d, "Fault"), text_field(d, "Severity"),
                   text_field(d, "Action")});
  }
  table.print(std::cout);
  return 0;
}

int clear_node(CommandEnv& env, const NodeSignalArgs& a) {
  Json body = Json::object();
  if (!a.detector.empty()) body["Detector"] = a.detector;
  auto answer = env.client.post(node_path(a) + "/signals/clear", body.dump());
  if (!answer.ok()) return print_error(answer.status());
  if (print_if_structured(env, *answer)) return 0;
  std::cout << "cleared " << text_field(*answer, "Cleared") << " signal(s) on node " << a.node
            << "\n";
  return 0;
}

int label_node(CommandEnv& env, const NodeSignalArgs& a) {
  // kubectl's habit: KEY=VALUE adds or changes one label, KEY- removes one, the rest stay. The
  // server replaces the whole set, so start from the node's labels as they are.
  auto node = env.client.get(node_path(a));
  if (!node.ok()) return print_error(node.status());
  Json labels = field(field(*node, "NodeDetails"), "Labels");
  if (!labels.is_object()) labels = Json::object();
  labels.erase("gpufleet.io/remediate");  // a request, not a state: sent only when given
  for (const std::string& kv : a.labels) {
    const size_t eq = kv.find('=');
    if (eq == std::string::npos && kv.size() > 1 && kv.back() == '-') {
      labels.erase(kv.substr(0, kv.size() - 1));
      continue;
    }
    if (eq == std::string::npos || eq == 0)
      return usage_error("expected KEY=VALUE or KEY-, got \"" + kv + "\"");
    labels[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  auto answer = env.client.put(node_path(a) + "/labels", Json{{"Labels", labels}}.dump());
  if (!answer.ok()) return print_error(answer.status());
  if (print_if_structured(env, *answer)) return 0;
  std::cout << "labelled node " << a.node;
  const std::string rem = text_field(*answer, "RemediationId");
  if (!rem.empty()) std::cout << "; requested remediation " << rem;
  std::cout << "\n";
  return 0;
}

CLI::App* group(CLI::App& app, const char* name, const char* help) {
  auto* g = app.add_subcommand(name, help);
  g->require_subcommand(1);
  g->fallthrough();
  return g;
}

void add_cluster_positional(CLI::App* cmd, std::string& cluster) {
  cmd->add_option("CLUSTER", cluster, "cluster name")->required();
}

void register_alert_group(CLI::App& app, CommandContext& ctx) {
  auto* alert = group(app, "alert", "list and inspect health alerts");
  auto list = std::make_shared<AlertArgs>();
  auto* cmd = alert->add_subcommand("list", "alerts, first seen first");
  cmd->add_option("--cluster", list->cluster, "only this cluster");
  cmd->add_option("--node", list->node, "only this node");
  cmd->add_option("--state", list->state, "pending, firing, resolved or discarded");
  cmd->add_option("--severity", list->severity, "critical, warning or info");
  run_with_client(cmd, ctx, [list](CommandEnv& env) { return list_alerts(env, *list); });

  auto get = std::make_shared<AlertArgs>();
  cmd = alert->add_subcommand("get", "one alert with its evidence");
  cmd->alias("describe");
  cmd->add_option("ID", get->id, "alert id")->required();
  run_with_client(cmd, ctx, [get](CommandEnv& env) { return get_alert(env, *get); });
}

void register_remediation_group(CLI::App& app, CommandContext& ctx) {
  auto* rem = group(app, "remediation", "list, request and decide node remediations");
  auto list = std::make_shared<RemediationArgs>();
  auto* cmd = rem->add_subcommand("list", "remediations, oldest first");
  cmd->add_option("--cluster", list->cluster, "only this cluster");
  cmd->add_option("--node", list->node, "only this node");
  cmd->add_option("--status", list->status,
                  "only this status (Proposed, Approved, …, Succeeded, Failed)");
  run_with_client(cmd, ctx, [list](CommandEnv& env) { return list_remediations(env, *list); });

  auto describe = std::make_shared<RemediationArgs>();
  cmd = rem->add_subcommand("describe", "one remediation and its timeline");
  cmd->alias("get");
  cmd->add_option("ID", describe->id, "remediation id")->required();
  run_with_client(cmd, ctx,
                  [describe](CommandEnv& env) { return describe_remediation(env, *describe); });

  auto request = std::make_shared<RemediationArgs>();
  cmd = rem->add_subcommand("request", "ask for a remediation of a node with a firing alert");
  cmd->add_option("--cluster", request->cluster, "cluster name")->required();
  cmd->add_option("--node", request->node, "node (instance id)")->required();
  cmd->add_option("--action", request->action, "reboot, reprovision, migrate or delete")
      ->required();
  cmd->add_option("--detector", request->detector,
                  "who asks (with --request-id: at most one remediation)");
  cmd->add_option("--request-id", request->request_id, "the asker's id for this request");
  cmd->add_option("--reason", request->reason, "why");
  run_with_client(cmd, ctx,
                  [request](CommandEnv& env) { return request_remediation(env, *request); });

  for (const char* verb : {"approve", "reject", "cancel"}) {
    auto args = std::make_shared<RemediationArgs>();
    const std::string help = std::string(verb) + " a remediation (as --user)";
    cmd = rem->add_subcommand(verb, help);
    cmd->add_option("ID", args->id, "remediation id")->required();
    cmd->add_option("--reason", args->reason, "why");
    const std::string v = verb;
    run_with_client(cmd, ctx,
                    [args, v](CommandEnv& env) { return decide_remediation(env, *args, v); });
  }
}

void register_policy_groups(CLI::App& app, CommandContext& ctx) {
  auto* policy = group(app, "policy", "a cluster's remediation policy");
  auto get = std::make_shared<ClusterArgs>();
  auto* cmd = policy->add_subcommand("get", "the policy in force");
  add_cluster_positional(cmd, get->cluster);
  run_with_client(cmd, ctx, [get](CommandEnv& env) { return get_policy(env, *get); });

  auto set = std::make_shared<ClusterArgs>();
  cmd = policy->add_subcommand("set", "replace the policy with a JSON or YAML file");
  add_cluster_positional(cmd, set->cluster);
  cmd->add_option("-f,--file", set->file, "policy file (JSON or YAML; - reads stdin)")->required();
  run_with_client(cmd, ctx, [set](CommandEnv& env) { return set_policy(env, *set); });

  auto* breaker = group(app, "circuit-breaker", "a cluster's remediation circuit breaker");
  auto bget = std::make_shared<ClusterArgs>();
  cmd = breaker->add_subcommand("get", "state, trips and auto-approvals in the window");
  add_cluster_positional(cmd, bget->cluster);
  run_with_client(cmd, ctx, [bget](CommandEnv& env) { return get_breaker(env, *bget); });
  auto reset = std::make_shared<ClusterArgs>();
  cmd = breaker->add_subcommand("reset", "close an open circuit breaker");
  add_cluster_positional(cmd, reset->cluster);
  run_with_client(cmd, ctx, [reset](CommandEnv& env) { return reset_breaker(env, *reset); });

  auto* host = group(app, "host", "physical hosts behind nodes");
  cmd = host->add_subcommand("list", "hosts and their status");
  run_with_client(cmd, ctx, [](CommandEnv& env) { return list_hosts(env); });
  auto* ticket = group(app, "ticket", "tickets opened for hosts");
  cmd = ticket->add_subcommand("list", "open tickets");
  run_with_client(cmd, ctx, [](CommandEnv& env) { return list_tickets(env); });
}

void register_node_health(CLI::App& app, CommandContext& ctx) {
  CLI::App* node = nullptr;
  try {
    node = app.get_subcommand("node");
  } catch (const CLI::OptionNotFound&) {
    node = group(app, "node", "a cluster's nodes");
  }
  node->description(node->get_description() + "; report signals and set labels");

  auto signal = std::make_shared<NodeSignalArgs>();
  auto* cmd = node->add_subcommand(
      "signal", "report a detector signal (a kernel log line or JSON) for a node");
  add_cluster_positional(cmd, signal->cluster);
  cmd->add_option("NODE", signal->node, "node (instance id)")->required();
  auto* line = cmd->add_option("--line", signal->line, "a kernel log line, e.g. an NVRM Xid line");
  auto* json = cmd->add_option("--json", signal->json,
                               "a structured signal, e.g. '{\"diskPressure\": true}'");
  line->excludes(json);
  json->excludes(line);
  cmd->add_option("--cleared-by", signal->cleared_by,
                  "actions that clear the fault (reboot, reprovision, ...)")
      ->delimiter(',');
  cmd->add_option("--recurs", signal->recurs, "times the fault comes back after being cleared");
  run_with_client(cmd, ctx, [signal](CommandEnv& env) {
    if (signal->line.empty() && signal->json.empty())
      return usage_error("one of --line or --json is required");
    return signal_node(env, *signal);
  });

  auto clear = std::make_shared<NodeSignalArgs>();
  cmd = node->add_subcommand("clear", "clear a node's signals (all, or one detector's)");
  add_cluster_positional(cmd, clear->cluster);
  cmd->add_option("NODE", clear->node, "node (instance id)")->required();
  cmd->add_option("--detector", clear->detector, "only this detector's signals");
  run_with_client(cmd, ctx, [clear](CommandEnv& env) { return clear_node(env, *clear); });

  auto label = std::make_shared<NodeSignalArgs>();
  cmd = node->add_subcommand("label",
                             "add or change a node's labels (KEY=VALUE), or remove one (KEY-); "
                             "gpufleet.io/remediate=ACTION requests a remediation");
  add_cluster_positional(cmd, label->cluster);
  cmd->add_option("NODE", label->node, "node (instance id)")->required();
  cmd->add_option("LABELS", label->labels, "KEY=VALUE to set, KEY- to remove")->required();
  run_with_client(cmd, ctx, [label](CommandEnv& env) { return label_node(env, *label); });
}

}  // namespace

void register_health_commands(CLI::App& app, CommandContext& ctx) {
  register_alert_group(app, ctx);
  register_remediation_group(app, ctx);
  register_policy_groups(app, ctx);
  register_node_health(app, ctx);
}

}  // namespace gf
