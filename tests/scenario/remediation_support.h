// Helpers for the health and remediation scenario tests (issue 6, docs/remediation.md): clusters of
// GPU nodes, PyTorchJobs that occupy them, signals, and reads of alerts and remediations.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "support/fleet_harness.h"

namespace gf::testing {

// Real-format kernel-log lines (tests/unit/health/xid_corpus.txt has many more).
inline const std::string kXid119 =
    "NVRM: Xid (PCI:0000:18:00): 119, pid=1234, name=python, Timeout after 6s of waiting for RPC "
    "response from GPU0 GSP!";
inline const std::string kXid95 =
    "NVRM: Xid (PCI:0000:18:00): 95, pid=2217, name=python, Uncontained: FBHUB. RST: Yes, D-RST: "
    "No";
inline const std::string kXid79 =
    "NVRM: Xid (PCI:0000:18:00): 79, pid=1234, GPU has fallen off the bus.";

// A Continuous cluster with one instance group per entry of `groups` ({name, count}), InService.
inline void heal_cluster(Fleet& f, const std::string& name,
                         std::vector<std::pair<std::string, int>> groups,
                         const std::string& type = "ml.p5.48xlarge",
                         const std::string& node_recovery = "") {
  Json gs = Json::array();
  for (const auto& [g, n] : groups)
    gs.push_back({{"InstanceGroupName", g}, {"InstanceType", type}, {"InstanceCount", n}});
  Json c = {{"ClusterName", name}, {"NodeProvisioningMode", "Continuous"}, {"InstanceGroups", gs}};
  if (!node_recovery.empty()) c["NodeRecovery"] = node_recovery;
  HttpResponse r = f.call("POST", "/v1/clusters", c.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  f.run_for(hours(1));
  ASSERT_EQ(f.describe(name)["ClusterStatus"], "InService");
}

// Live nodes of a group in launch order.
inline std::vector<std::string> group_nodes(Fleet& f, const std::string& cluster,
                                            const std::string& group) {
  std::vector<const Node*> live;
  for (const auto& [id, n] : f.cluster(cluster)->nodes) {
    if (n.group == group && n.is_live()) live.push_back(&n);
  }
  std::sort(live.begin(), live.end(),
            [](const Node* a, const Node* b) { return a->launch_order < b->launch_order; });
  std::vector<std::string> out;
  for (const Node* n : live) out.push_back(n->instance_id);
  return out;
}

inline const Node& node_of(Fleet& f, const std::string& cluster, const std::string& id) {
  return f.cluster(cluster)->nodes.at(id);
}

inline HttpResponse send_signal(Fleet& f, const std::string& cluster, const std::string& node,
                                const Json& signal, Json extra = Json::object()) {
  extra["Signal"] = signal;
  return f.call("POST", "/v1/clusters/" + cluster + "/nodes/" + node + "/signals", extra.dump());
}

inline HttpResponse clear_signal(Fleet& f, const std::string& cluster, const std::string& node) {
  return f.call("POST", "/v1/clusters/" + cluster + "/nodes/" + node + "/signals/clear", "{}");
}

inline Json alerts(Fleet& f, const std::string& node = "") {
  std::map<std::string, std::string> q;
  if (!node.empty()) q["node"] = node;
  return Json::parse(f.call("GET", "/v1/alerts", "", q).body)["Alerts"];
}

inline Json remediations(Fleet& f, const std::string& node = "") {
  std::map<std::string, std::string> q;
  if (!node.empty()) q["node"] = node;
  return Json::parse(f.call("GET", "/v1/remediations", "", q).body)["Remediations"];
}

inline Json remediation(Fleet& f, const std::string& id) {
  return f.json("GET", "/v1/remediations/" + id);
}

// `p` with the rules of the seed's remediation before the defaults by fault class
// (docs/remediation.md): fatal faults wait for idle too, the detector's action first (the ladder
// climbs), no suspect hosts, one remediation per pool. The tests of those rules use it.
inline Json classic_policy(Json p = Json::object()) {
  Json wait = p.value("WaitForIdle", Json::object());
  if (!wait.contains("FatalFaults")) wait["FatalFaults"] = "Wait";
  p["WaitForIdle"] = wait;
  if (!p.contains("UsualFixFirst")) p["UsualFixFirst"] = false;
  if (!p.contains("Suspect")) p["Suspect"] = Json{{"Faults", 0}};
  if (!p.contains("DisruptionBudget")) p["DisruptionBudget"] = 1;
  return p;
}

inline void put_policy(Fleet& f, const std::string& cluster, const Json& policy) {
  HttpResponse r = f.call("PUT", "/v1/clusters/" + cluster + "/remediation-policy", policy.dump());
  ASSERT_EQ(r.status, 200) << r.body;
}

// A policy that sends every PyTorchJob labelled app=train straight to placement.
inline const std::string kTrainPolicy =
    "apiVersion: policy.one.alibabacloud.com/v1alpha1\nkind: PropagationPolicy\nmetadata: {name: "
    "train, namespace: default}\n"
    "spec:\n  placement:\n    replicaScheduling: {replicaSchedulingType: Divided, "
    "customSchedulingType: Gang}\n"
    "  resourceSelectors:\n  - apiVersion: kubeflow.org/v1\n    kind: PyTorchJob\n    "
    "labelSelector:\n"
    "      matchLabels: {app: train}\n";

// A PyTorchJob of a master and `workers` workers with 8 GPUs each (one p5 node per pod).
inline std::string train_job(const std::string& name, int workers, const std::string& duration) {
  auto replica = [](const std::string& type, int n) {
    return "    " + type + ":\n      replicas: " + std::to_string(n) +
           "\n      restartPolicy: OnFailure\n      template:\n        spec:\n          "
           "containers:\n"
           "          - name: pytorch\n            image: x\n            resources:\n              "
           "requests: {nvidia.com/gpu: 8}\n";
  };
  std::string y = "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata:\n  name: " + name +
                  "\n  namespace: default\n  labels: {app: train}\n";
  if (!duration.empty()) y += "  annotations: {gpufleet.io/duration: " + duration + "}\n";
  y += "spec:\n  pytorchReplicaSpecs:\n" + replica("Master", 1);
  if (workers > 0) y += replica("Worker", workers);
  return y;
}

inline void run_job(Fleet& f, const std::string& name, int workers, const std::string& duration) {
  HttpResponse r =
      f.call("POST", "/v1/apply", kTrainPolicy + "---\n" + train_job(name, workers, duration));
  ASSERT_EQ(r.status, 200) << r.body;
  f.run_for(seconds(1));
}

// Nodes the job's pods are on.
inline std::vector<std::string> job_nodes(Fleet& f, const std::string& job) {
  std::vector<std::string> out;
  const Json pods = f.json("GET", "/v1/objects/pods");
  for (const Json& p : pods["items"]) {
    if (p["metadata"]["labels"].value("job-name", "") != job) continue;
    if (p["status"].value("phase", "") != "Running") continue;
    const std::string n = p["spec"].value("nodeName", "");
    if (!n.empty()) out.push_back(n);
  }
  std::sort(out.begin(), out.end());
  return out;
}

inline std::string job_state(Fleet& f, const std::string& job) {
  return f.json("GET", "/v1/objects/pytorchjobs/default/" + job)["status"].value("state", "");
}

}  // namespace gf::testing
