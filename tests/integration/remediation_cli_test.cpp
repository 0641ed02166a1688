// Health alerts and remediation through the real CLI against a real `serve` (docs/remediation.md):
// alerts reach the webhook unchanged (retried after a failed delivery), unmapped ones also reach
// the support webhook, disk pressure is only recorded; a remediation request sent twice, and again
// to a second `serve` on the same journal, makes one remediation; migrate needs a second person.
//
// Waits are bounded: the webhook receiver is waited on with a condition variable and a deadline,
// server state with blocking HTTP reads (no sleeping), as provision_restart_test.cpp does.
#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <condition_variable>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "core/json.h"
#include "support/gpufleet_server.h"
#include "support/temp_dir.h"

namespace gf {
namespace {

using testing::CommandResult;
using testing::GpufleetServer;
using testing::TempDir;

const std::string kXid79 = "NVRM: Xid (PCI:0000:18:00): 79, pid=1234, GPU has fallen off the bus.";
const std::string kXid200 =
    "NVRM: Xid (PCI:0000:3b:00): 200, pid=4321, an Xid code the table of docs/health.md does not "
    "name.";

// An HTTP receiver on 127.0.0.1 that records every POST body per path. With fail_first, the very
// first POST it gets is answered 500 (and recorded as refused).
class Receiver {
 public:
  struct Delivery {
    std::string body, alert_header, state_header;
    Json json;
  };

  explicit Receiver(bool fail_first) : fail_first_(fail_first) {
    for (const char* path : {"/hook", "/support"}) {
      server_.Post(path, [this](const httplib::Request& req, httplib::Response& res) {
        std::lock_guard<std::mutex> lock(mu_);
        if (fail_first_ && refused_ == 0 && accepted_total_ == 0) {
          ++refused_;
          refused_bodies_.push_back(req.body);
          res.status = 500;
          res.set_content("{\"error\":\"try again\"}", "application/json");
          cv_.notify_all();
          return;
        }
        ++accepted_total_;
        Delivery d{req.body, req.get_header_value("X-Gpufleet-Alert"),
                   req.get_header_value("X-Gpufleet-Alert-State"),
                   Json::parse(req.body, nullptr, false)};
        got_[req.path].push_back(std::move(d));
        res.status = 200;
        cv_.notify_all();
      });
    }
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~Receiver() {
    server_.stop();
    if (thread_.joinable()) thread_.join();
  }

  std::string url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }

  // The first delivery to `path` whose JSON satisfies `pred`, waiting up to `timeout`.
  template <typename Pred>
  std::optional<Delivery> wait_for(const std::string& path, Pred pred,
                                   std::chrono::seconds timeout = std::chrono::seconds(60)) {
    std::unique_lock<std::mutex> lock(mu_);
    std::optional<Delivery> found;
    cv_.wait_for(lock, timeout, [&] {
      for (const Delivery& d : got_[path]) {
        if (pred(d.json)) {
          found = d;
          return true;
        }
      }
      return false;
    });
    return found;
  }
  std::vector<Delivery> deliveries(const std::string& path) {
    std::lock_guard<std::mutex> lock(mu_);
    return got_[path];
  }
  std::vector<std::string> refused() {
    std::lock_guard<std::mutex> lock(mu_);
    return refused_bodies_;
  }

 private:
  httplib::Server server_;
  int port_ = -1;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool fail_first_;
  int refused_ = 0, accepted_total_ = 0;
  std::vector<std::string> refused_bodies_;
  std::map<std::string, std::vector<Delivery>> got_;
};

using testing::parse_out;

class RemediationCli : public ::testing::Test {
 protected:
  void start(std::vector<std::string> extra = {}) {
    const std::string cloud_file = dir_.file("cloud.json");
    std::ofstream(cloud_file) << R"({"launchLatency":"1m","lifecycleDuration":"1m"})";
    args_ = {"--sim-speed", "600", "--sim-cloud", cloud_file};
    args_.insert(args_.end(), extra.begin(), extra.end());
    server_ = std::make_unique<GpufleetServer>(dir_.file("data"), args_);
    ASSERT_FALSE(server_->url().empty()) << server_->process().output();
  }
  // SIGKILL, then a second serve on the same data dir.
  void kill_and_restart() {
    server_->process().signal(SIGKILL);
    EXPECT_EQ(server_->process().wait(), 128 + SIGKILL);
    server_.reset();
    server_ = std::make_unique<GpufleetServer>(dir_.file("data"), args_);
    ASSERT_FALSE(server_->url().empty()) << server_->process().output();
  }
  void create_cluster(int nodes) {
    std::ofstream(dir_.file("cluster.json"))
        << R"({"ClusterName":"hc","NodeProvisioningMode":"Continuous","InstanceGroups":[)"
        << R"({"InstanceGroupName":"workers","InstanceType":"ml.p5.48xlarge","InstanceCount":)"
        << nodes << "}]}";
    CommandResult r = cli({"cluster", "create", "-f", dir_.file("cluster.json")});
    ASSERT_EQ(r.exit_code, 0) << r.out;
    r = cli({"cluster", "wait", "hc", "--full", "--timeout", "2m"});
    ASSERT_EQ(r.exit_code, 0) << r.out;
    r = cli({"-o", "json", "node", "list", "hc"});
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const Json nodes_json = parse_out(r);
    for (const Json& n : nodes_json["ClusterNodeSummaries"])
      nodes_.push_back(n["InstanceId"].get<std::string>());
    ASSERT_EQ(nodes_.size(), static_cast<size_t>(nodes)) << r.out;
  }
  void set_policy(const std::string& yaml) {
    std::ofstream(dir_.file("policy.yaml")) << yaml;
    CommandResult r = cli({"policy", "set", "hc", "-f", dir_.file("policy.yaml")});
    ASSERT_EQ(r.exit_code, 0) << r.out;
  }
  CommandResult cli(std::vector<std::string> args) const { return server_->cli(std::move(args)); }

  Json get(const std::string& path) const { return server_->get(path); }
  template <typename Pred>
  Json poll(const std::string& path, Pred pred) const {
    return server_->poll(path, pred);
  }
  // The node's firing alert from `detector` (its JSON as `alert list -o json` shows it).
  Json firing_alert(const std::string& node, const std::string& detector) const {
    const Json list = poll("/v1/alerts?node=" + node + "&state=firing", [&](const Json& j) {
      for (const Json& a : j.value("Alerts", Json::array())) {
        if (a["Detector"] == detector) return true;
      }
      return false;
    });
    for (const Json& a : list.value("Alerts", Json::array())) {
      if (a["Detector"] == detector) return a;
    }
    return Json::object();
  }

  TempDir dir_;
  std::vector<std::string> args_;
  std::unique_ptr<GpufleetServer> server_;
  std::vector<std::string> nodes_;
};

TEST_F(RemediationCli,
       Remediation_AlertsReachTheWebhookUnchanged_UnmappedGoToSupport_DiskPressureOnlyRecorded) {
  Receiver receiver(/*fail_first=*/true);
  ASSERT_NO_FATAL_FAILURE(
      start({"--webhook", receiver.url("/hook"), "--support-webhook", receiver.url("/support")}));
  ASSERT_NO_FATAL_FAILURE(create_cluster(3));
  // Alerts fire at once; Xid 79 waits for a person, so the node stays as it is.
  ASSERT_NO_FATAL_FAILURE(
      set_policy("AlertPersistence: 0s\nRules:\n  - Fault: \"xid:79\"\n    Action: reboot\n    "
                 "Approval: manual\n"));
  CommandResult r = cli({"-o", "json", "policy", "get", "hc"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(parse_out(r)["Rules"][0]["Approval"], "manual") << r.out;
  // The effective table: the user's rule, then the defaults that act where it does not match
  // (a regression: an empty policy printed "Rules: <none>" while the defaults acted).
  EXPECT_FALSE(parse_out(r)["DefaultRules"].empty()) << r.out;
  r = cli({"policy", "get", "hc"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("Default rules (where no rule above matches):"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("dcgm:row-remap-failure"), std::string::npos) << r.out;
  // What get answers can be sent back as it is.
  r = cli({"-o", "yaml", "policy", "get", "hc"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  ASSERT_NO_FATAL_FAILURE(set_policy(r.out));

  // Xid 79: fires, reaches /hook unchanged; the first POST was answered 500 and retried.
  r = cli({"node", "signal", "hc", nodes_[0], "--line", kXid79});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("xid:79"), std::string::npos) << r.out;
  const Json alert = firing_alert(nodes_[0], "xid");
  const std::string id = alert.value("AlertId", "");
  ASSERT_FALSE(id.empty()) << alert.dump();
  auto delivered =
      receiver.wait_for("/hook", [&](const Json& j) { return j.value("AlertId", "") == id; });
  ASSERT_TRUE(delivered) << "alert " << id << " never reached the webhook";
  ASSERT_EQ(receiver.refused().size(), 1u);
  EXPECT_EQ(Json::parse(receiver.refused().front())["AlertId"], id)
      << "the refused POST was this alert's firing";
  EXPECT_EQ(delivered->alert_header, id);
  EXPECT_EQ(delivered->state_header, "firing");

  r = cli({"-o", "json", "alert", "get", id});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const Json shown = parse_out(r);
  const Json& got = delivered->json;
  for (const char* key : {"AlertId", "ClusterName", "InstanceGroupName", "NodeId", "HostId",
                          "Detector", "Subject", "Fault", "Severity", "Summary", "FirstSeen",
                          "FiredAt", "Action", "Support", "Persistence"}) {
    EXPECT_EQ(got[key], shown[key])
        << key << "\nwebhook: " << got.dump() << "\ncli: " << shown.dump();
  }
  EXPECT_EQ(got["State"], "firing");
  EXPECT_EQ(got["Fault"], "xid:79");
  EXPECT_EQ(got["Severity"], "critical");
  ASSERT_FALSE(got["Evidence"].empty()) << got.dump();
  EXPECT_EQ(got["Evidence"][0]["Text"], kXid79);  // the raw line, byte for byte
  EXPECT_EQ(got["Evidence"][0], shown["Evidence"][0]);
  // The body is the alert's JSON exactly as the API wrote it: re-serialising changes nothing.
  EXPECT_EQ(delivered->body, got.dump());

  // The table.
  r = cli({"alert", "list", "--node", nodes_[0]});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out.rfind("ALERT ", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("FIRST SEEN"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(id + " "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("GPU has fallen off the bus"), std::string::npos) << r.out;

  // Xid 200 (no remediation mapped): /support and /hook both get it.
  r = cli({"node", "signal", "hc", nodes_[1], "--line", kXid200});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const Json unmapped = firing_alert(nodes_[1], "xid");
  const std::string unmapped_id = unmapped.value("AlertId", "");
  ASSERT_FALSE(unmapped_id.empty());
  EXPECT_EQ(unmapped["Fault"], "xid:200");
  EXPECT_EQ(unmapped["Support"], true) << unmapped.dump();
  auto support = receiver.wait_for(
      "/support", [&](const Json& j) { return j.value("AlertId", "") == unmapped_id; });
  ASSERT_TRUE(support) << "alert " << unmapped_id << " never reached the support webhook";
  EXPECT_EQ(support->json["Evidence"][0]["Text"], kXid200);
  EXPECT_EQ(support->json["Support"], true);
  EXPECT_TRUE(receiver.wait_for(
      "/hook", [&](const Json& j) { return j.value("AlertId", "") == unmapped_id; }));

  // Disk pressure: an alert, recorded only.
  r = cli({"node", "signal", "hc", nodes_[2], "--json", R"({"diskPressure": true})"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("disk-pressure"), std::string::npos) << r.out;
  const Json disk = firing_alert(nodes_[2], "disk-pressure");
  const std::string disk_id = disk.value("AlertId", "");
  ASSERT_FALSE(disk_id.empty());
  EXPECT_EQ(disk["Action"], "none") << disk.dump();
  r = cli({"alert", "list", "--node", nodes_[2], "--state", "firing"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find(disk_id), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("disk-pressure"), std::string::npos) << r.out;
  // Every alert's firing reaches the webhook, disk pressure's too; once it has, nothing has been
  // proposed for it (proposals are decided before deliveries in the same pass).
  ASSERT_TRUE(
      receiver.wait_for("/hook", [&](const Json& j) { return j.value("AlertId", "") == disk_id; }));
  r = cli({"-o", "json", "remediation", "list", "--node", nodes_[2]});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(parse_out(r)["Remediations"].empty()) << r.out;
  r = cli({"remediation", "list", "--node", nodes_[2]});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out, "No resources found.\n");  // disk pressure is only recorded
  for (const auto& d : receiver.deliveries("/support"))
    EXPECT_EQ(d.json["Support"], true) << d.body;

  // Bad filters are the server's message, exit 1.
  r = cli({"alert", "list", "--state", "burning"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("state: unknown value 'burning'"), std::string::npos) << r.out;
  r = cli({"alert", "get", "alert-nope"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("not found"), std::string::npos) << r.out;
}

TEST_F(RemediationCli,
       Remediation_SameRequestTwiceAndTwoServeProcessesOnOneJournal_CreateOneRemediation) {
  ASSERT_NO_FATAL_FAILURE(start());
  ASSERT_NO_FATAL_FAILURE(create_cluster(2));
  ASSERT_NO_FATAL_FAILURE(
      set_policy("AlertPersistence: 0s\nRules:\n  - Fault: \"xid:*\"\n    Action: reboot\n    "
                 "Approval: manual\n"));
  const std::string node = nodes_[0];
  CommandResult r = cli({"node", "signal", "hc", node, "--line", kXid79});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  ASSERT_FALSE(firing_alert(node, "xid").empty());

  // The detector's own proposal, waiting for a person.
  const Json proposed = poll("/v1/remediations?node=" + node, [](const Json& j) {
    return !j.value("Remediations", Json::array()).empty();
  });
  ASSERT_EQ(proposed["Remediations"].size(), 1u) << proposed.dump();
  const Json& detector_rem = proposed["Remediations"][0];
  const std::string rem_id = detector_rem["RemediationId"];
  EXPECT_EQ(detector_rem["Status"], "Proposed");
  EXPECT_EQ(detector_rem["Requester"], "detector:xid");
  EXPECT_EQ(detector_rem["Action"], "reboot");

  // The same request twice, then again to a second serve on the same journal: each is refused
  // naming the one open remediation, and none is created.
  const std::vector<std::string> request = {"remediation", "request", "--cluster",    "hc",
                                            "--node",      node,      "--action",     "reboot",
                                            "--detector",  "ops",     "--request-id", "r-1"};
  const std::string refusal = "node " + node + " already has remediation " + rem_id + " (Proposed)";
  for (int i = 0; i < 2; ++i) {
    r = cli(request);
    EXPECT_EQ(r.exit_code, 1) << r.out;
    EXPECT_NE(r.out.find("error: NodeId: " + refusal), std::string::npos) << r.out;
  }
  ASSERT_NO_FATAL_FAILURE(kill_and_restart());
  r = cli(request);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find(refusal), std::string::npos) << r.out;
  r = cli({"-o", "json", "remediation", "list", "--node", node});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  Json list = parse_out(r);
  ASSERT_EQ(list["Remediations"].size(), 1u) << r.out;
  EXPECT_EQ(list["Remediations"][0]["RemediationId"], rem_id);

  r = cli({"remediation", "describe", rem_id});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("RemediationId:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Timeline:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Remediation " + rem_id + " proposed"), std::string::npos) << r.out;

  // A person cancels it and asks for a migrate instead; the same request twice is one remediation.
  r = cli({"--user", "alice", "remediation", "cancel", rem_id, "--reason", "will migrate"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out, "remediation " + rem_id + " Cancelled\n");
  const std::vector<std::string> migrate = {
      "--user",     "alice", "-o",           "json", "remediation", "request",
      "--cluster",  "hc",    "--node",       node,   "--action",    "migrate",
      "--detector", "ops",   "--request-id", "m-1",  "--reason",    "GPU fell off the bus"};
  r = cli(migrate);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const Json mig = parse_out(r);
  const std::string mig_id = mig.value("RemediationId", "");
  ASSERT_FALSE(mig_id.empty()) << r.out;
  EXPECT_NE(mig_id, rem_id);
  EXPECT_EQ(mig["Status"], "Proposed") << r.out;
  EXPECT_EQ(mig["EffectiveAction"], "migrate") << r.out;
  EXPECT_EQ(mig["Requester"], "alice") << r.out;
  r = cli(migrate);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(parse_out(r)["RemediationId"], mig_id) << r.out;
  // What waits for a person comes first, and a line says so and how to act on it.
  r = cli({"remediation", "list", "--node", node});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_LT(r.out.find(mig_id + " "), r.out.find(rem_id + " ")) << r.out;
  EXPECT_NE(r.out.find("1 remediation waits for a person: gpufleet remediation approve ID"),
            std::string::npos)
      << r.out;

  // The requester of a migrate cannot approve it; another person can.
  r = cli({"--user", "alice", "remediation", "approve", mig_id});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("a second person must"), std::string::npos) << r.out;
  r = cli({"--user", "bob", "remediation", "approve", mig_id, "--reason", "agreed"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out, "remediation " + mig_id + " Approved\n");
  r = cli({"-o", "json", "remediation", "describe", mig_id});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(parse_out(r)["Approver"], "bob") << r.out;
  // The node's row names its open remediation. At --sim-speed 600 a slow machine (ASan) can let
  // the approved migrate run to its end between two CLI calls: then no row names it, and the
  // remediation, read after the list, is over.
  r = cli({"node", "list", "hc"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const bool row_names_it = r.out.find(mig_id + " (") != std::string::npos;
  auto after = cli({"-o", "json", "remediation", "describe", mig_id});
  ASSERT_EQ(after.exit_code, 0) << after.out;
  const std::string status_after = parse_out(after).value("Status", "");
  EXPECT_TRUE(row_names_it || status_after == "Succeeded" || status_after == "Failed")
      << "node list:\n"
      << r.out << "remediation status after it: " << status_after;

  // A third serve on the same journal: the request is still that one remediation.
  ASSERT_NO_FATAL_FAILURE(kill_and_restart());
  r = cli(migrate);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(parse_out(r)["RemediationId"], mig_id) << r.out;
  r = cli({"-o", "json", "remediation", "list", "--node", node});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  list = parse_out(r);
  ASSERT_EQ(list["Remediations"].size(), 2u) << r.out;  // the cancelled proposal and the migrate
  EXPECT_EQ(list["Remediations"][0]["RemediationId"], rem_id);
  EXPECT_EQ(list["Remediations"][0]["Status"], "Cancelled");
  EXPECT_EQ(list["Remediations"][1]["RemediationId"], mig_id);
  r = cli({"remediation", "list", "--node", node});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out.rfind("ID ", 0), 0u) << r.out;
  EXPECT_NE(r.out.find(mig_id + " "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" bob "), std::string::npos) << r.out;

  // The circuit breaker: closed, and a reset says so.
  r = cli({"-o", "json", "circuit-breaker", "get", "hc"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(parse_out(r)["State"], "Closed");
  r = cli({"circuit-breaker", "reset", "hc"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("the circuit breaker was not open"), std::string::npos) << r.out;
  r = cli({"circuit-breaker", "get", "nope"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("cluster 'nope' does not exist"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace gf
