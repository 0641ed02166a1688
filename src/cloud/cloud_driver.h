// The contract between the control plane and a cloud (docs/architecture.md "Cloud drivers"). A
// driver carries out the cloud intents controllers decide — launch and terminate from the
// provisioner (model/cloud_ops.h), remediate and burn-in from the remediation controller — off
// the loop, and reports every outcome back as a CloudReport through the function it was made
// with; the runtime turns each report into a loop request at the time it says. The simulated
// cloud (cloud/sim/) is one driver; a driver that runs real processes is another.
//
// All methods are called on the loop thread.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "core/clock.h"
#include "loop/controller.h"
#include "model/cloud_ops.h"
#include "model/node_logs.h"
#include "state/fleet_state.h"

namespace gf {

class CloudDriver : public Driver {
 public:
  // Delivers one outcome; `at` is when it happened (a virtual time in simulations).
  using ReportFn = std::function<void(Time at, CloudReport report)>;

  // After recovery, before the first intent: the clusters the journal shows, so that instances
  // it says are up count as held (controllers re-issue whatever is still undone).
  virtual void rebuild(const std::map<std::string, ClusterPtr, std::less<>>& clusters) = 0;
  // Whether one more instance of `type` can be had now: nullopt = yes, else why not (the
  // remediation gate for migrate and reprovision, docs/remediation.md).
  virtual std::optional<std::string> spare(const std::string& type) const = 0;
  // The control plane began serving at `now` (serve): a driver whose behaviour follows a
  // timeline (the simulated cloud's capacity changes) counts it from here.
  virtual void started(Time now) = 0;

  // Real instances (the local cloud, docs/local-cloud.md): whether they report for themselves
  // through the API (their agent says it started, how its lifecycle script ended) and run their
  // pods for real; and their logs. May be called from any thread.
  virtual bool real_instances() const { return false; }
  virtual Result<LogChunk> read_log(const LogQuery& query) const {
    (void)query;
    return not_found_error("this cloud keeps no logs");
  }
  // Where a Slurm cluster's slurm.conf, munge key and daemon logs live on this machine (its
  // shared Slurm directory; "" when its Slurm is simulated).
  virtual std::string slurm_directory(const std::string& cluster) const {
    (void)cluster;
    return "";
  }
  // Labels a real instance gets from its cloud when it reports that it started: its network
  // topology (docs/scheduling.md "Topology"); empty when the cloud gives none.
  virtual std::map<std::string, std::string> instance_labels(const std::string& instance_id) const {
    (void)instance_id;
    return {};
  }
  // The instance's directory on this machine ("" when it has none).
  virtual std::string instance_directory(const std::string& instance_id) const {
    (void)instance_id;
    return "";
  }
};

// Makes the runtime's cloud driver (its clock and the report function are the runtime's).
using CloudDriverFactory =
    std::function<std::unique_ptr<CloudDriver>(const Clock& clock, CloudDriver::ReportFn report)>;

}  // namespace gf
