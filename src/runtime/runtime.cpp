#include "runtime/runtime.h"

#include <spdlog/spdlog.h>

#include <cstdlib>

namespace gf {

namespace {

ProvisionOptions with_seed(ProvisionOptions p, uint64_t seed) {
  p.id_seed = seed;
  return p;
}

std::unique_ptr<CloudDriver> make_cloud(const CloudDriverFactory& factory, const Clock& clock,
                                        CloudDriver::ReportFn report) {
  if (!factory) {
    spdlog::critical("runtime: RuntimeOptions::cloud names no cloud driver");
    std::abort();  // a wiring bug, found by the first test that builds a runtime
  }
  return factory(clock, std::move(report));
}

}  // namespace

std::optional<std::string> Runtime::slurm_not_idle_of(const FleetState& s,
                                                      const remediate::Remediation& r) const {
  // Only real compute nodes run a slurmd; simulated Slurm clusters have no slurmctld to ask.
  if (!options_.real_instances) return std::nullopt;
  const Cluster* c = s.view().find_cluster(r.cluster);
  if (!c || c->orchestrator != Orchestrator::kSlurm) return std::nullopt;
  auto it = c->nodes.find(r.node);
  if (it == c->nodes.end()) return std::nullopt;
  const InstanceGroup* g = c->find_group(it->second.group);
  if (!g || g->spec.node_type != NodeType::kCompute) return std::nullopt;
  return slurm_not_idle(it->second.slurm);
}

Runtime::Runtime(RuntimeOptions options, Clock& clock, Journal& journal)
    : options_(std::move(options)),
      clock_(clock),
      random_(options_.seed),
      loop_(options_.loop, clock, journal, metrics_),
      provisioner_(with_seed(options_.provision, options_.seed),
                   options_.catalog ? *options_.catalog : Catalog::builtin(), random_),
      // Real instances run their pods for real: their exits end jobs, not a simulated duration.
      scheduling_(scheduling_cache_, options_.scheduler, !options_.real_instances),
      workloads_(scheduling_cache_),
      remediation_(
          options_.healing, [this](const std::string& type) { return cloud_->spare(type); },
          [this](const FleetState& s, const std::string& cluster, const std::string& node) {
            return scheduling_cache_.scheduler(s).jobs_on_node(cluster, node).size();
          },
          [this](const FleetState& s, const remediate::Remediation& r) {
            return slurm_not_idle_of(s, r);
          }),
      cloud_(make_cloud(options_.cloud, clock,
                        [this](Time at, CloudReport report) {
                          Request r;
                          r.name = "CloudReport";
                          const bool healing = report.kind == CloudReport::Kind::kRemediated ||
                                               report.kind == CloudReport::Kind::kBurnIn;
                          r.handle = [this, report, healing](const FleetState& s, Time now) {
                            return healing ? remediation_.handle_report(s, now, report)
                                           : provisioner_.handle_report(s, now, report);
                          };
                          loop_.submit_at(at, std::move(r));
                        })),
      api_(options_.api, loop_, metrics_, clock,
           ClusterSettings{&provisioner_.catalog(), provisioner_.options().arn,
                           provisioner_.options().id_seed,
                           provisioner_.options().min_count_timeout}) {
  wire_loop(journal);
  wire_api_and_drivers();
}

// The loop's observer and controllers, and the history reads the journal allows.
void Runtime::wire_loop(Journal& journal) {
  loop_.add_observer(&scheduling_cache_);
  loop_.add_controller(&provisioner_);
  loop_.add_controller(&scheduling_);
  loop_.add_controller(&workloads_);
  loop_.add_controller(&remediation_);
  if (options_.retention) {
    retention_.emplace(*options_.retention);
    loop_.add_controller(&*retention_);
  }
  if (journal.keeps_history()) {
    if (auto reader = journal.open_history_reader(); reader.ok()) {
      api_.set_history(std::shared_ptr<HistoryReader>(std::move(reader).value()));
    } else {
      spdlog::warn("history reads unavailable: {}", reader.status().to_string());
    }
  }
}

// What the API asks of the controllers and the cloud, and the drivers the loop hands intents to.
void Runtime::wire_api_and_drivers() {
  api_.set_capacity_check([this](const std::string& type) { return cloud_->spare(type); });
  api_.set_heartbeat_handler(
      [this](const FleetState& s, Time now, const std::string& cluster, const std::string& node) {
        return remediation_.handle_heartbeat(s, now, cluster, node);
      });
  loop_.add_driver(kCloudDriver, cloud_.get());
  if (cloud_->real_instances()) {
    api_.set_cloud_report_handler([this](const FleetState& s, Time now, const CloudReport& report) {
      if (report.kind != CloudReport::Kind::kLaunched)
        return provisioner_.handle_report(s, now, report);
      CloudReport started = report;  // with the labels its cloud gives it
      if (auto labels = cloud_->instance_labels(report.instance_id); !labels.empty())
        started.detail["Labels"] = std::move(labels);
      return provisioner_.handle_report(s, now, started);
    });
    api_.set_log_source([this](const LogQuery& q) { return cloud_->read_log(q); });
    api_.set_instance_directory(
        [this](const std::string& id) { return cloud_->instance_directory(id); });
    api_.set_slurm_directory(
        [this](const std::string& cluster) { return cloud_->slurm_directory(cluster); });
  }
  if (!options_.healing.webhook_url.empty() || !options_.healing.support_webhook_url.empty()) {
    webhook_ =
        std::make_unique<WebhookDriver>([this](std::string alert, std::string target,
                                               std::string state, bool ok, std::string error) {
          Request r;
          r.name = "WebhookDelivery";
          r.handle = [this, alert, target, state, ok, error](const FleetState& s, Time now) {
            return remediation_.handle_delivery(s, now, alert, target, state, ok, error);
          };
          loop_.submit(std::move(r));
        });
    loop_.add_driver(remediate::kWebhookDriver, webhook_.get());
  }
}

void Runtime::stop_drivers() {
  if (webhook_) webhook_->stop();
}

Status Runtime::recover() {
  GF_RETURN_IF_ERROR(loop_.recover());
  cloud_->rebuild(loop_.state().view().clusters);
  return ok_status();
}

}  // namespace gf
