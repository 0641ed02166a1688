#include "runtime/runtime.h"

namespace gf {

namespace {

ProvisionOptions with_seed(ProvisionOptions p, uint64_t seed) {
  p.id_seed = seed;
  return p;
}

}  // namespace

Runtime::Runtime(RuntimeOptions options, Clock& clock, Journal& journal)
    : options_(std::move(options)),
      clock_(clock),
      random_(options_.seed),
      loop_(options_.loop, clock, journal, metrics_),
      provisioner_(with_seed(options_.provision, options_.seed),
                   options_.catalog ? *options_.catalog : Catalog::builtin(), random_),
      scheduling_(options_.scheduler),
      cloud_(options_.cloud, clock,
             [this](Time at, CloudReport report) {
               Request r;
               r.name = "CloudReport";
               r.handle = [this, report](const FleetState& s, Time now) {
                 return provisioner_.handle_report(s, now, report);
               };
               loop_.submit_at(at, std::move(r));
             }),
      api_(options_.api, loop_, metrics_, clock, &provisioner_) {
  loop_.add_controller(&provisioner_);
  loop_.add_controller(&scheduling_);
  loop_.add_controller(&workloads_);
  loop_.add_driver(kCloudDriver, &cloud_);
}

Status Runtime::recover() {
  GF_RETURN_IF_ERROR(loop_.recover());
  cloud_.rebuild(loop_.state().view().clusters);
  return ok_status();
}

}  // namespace gf
