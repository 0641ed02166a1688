// Scenario files of `gpufleet simulate` (sim/scenario.h, docs/scenarios.md): name, seed, config,
// the simulated cloud (SimCloudConfig::from_json) and the timeline of steps, with `{ $file: PATH }`
// values resolved against a scratch directory that holds one JSON body (body.json) and one
// two-document YAML manifest (manifests.yaml). The input is the scenario text.
//
// Invariants checked:
//  - parse_scenario never throws, and a refusal says why;
//  - steps are ordered by `at` (file order among equals), each remembers its place in the file
//    and no `at` is negative;
//  - a call step has a known method, a path starting with '/', and a label that starts with
//    both; an apply step carries one manifest object or a list of them (a $file of several
//    documents), every other step an object;
//  - last_scheduled() is at or after every step and capacity change, and step times and cloud
//    latencies can be added to the simulated clock without overflow;
//  - the config keeps retryBase <= retryMax and its durations positive, and applies cleanly to
//    the provisioner's and scheduler's options.
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "fuzz_support.h"
#include "sim/scenario.h"

namespace gf {
namespace {

// The $file targets, written once per process into a fresh directory under $TMPDIR. The path
// lives on the heap, never freed: the exit handler that removes the directory runs after
// static destructors would already have destroyed a static string.
const std::string& base_dir() {
  static const std::string* dir = [] {
    std::string tmpl =
        (std::filesystem::temp_directory_path() / "gpufleet-scenario-fuzz-XXXXXX").string();
    FUZZ_CHECK(::mkdtemp(tmpl.data()) != nullptr, tmpl);
    std::ofstream(tmpl + "/body.json") << R"({"ClusterName": "c", "InstanceGroups": []})";
    std::ofstream(tmpl + "/manifests.yaml")
        << "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: {name: a}\n"
           "---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: Cohort\nmetadata: {name: b}\n";
    std::atexit([] { std::filesystem::remove_all(base_dir()); });
    return new std::string(std::move(tmpl));
  }();
  return *dir;
}

void check_scenario(const Scenario& s) {
  static const std::set<std::string> kMethods = {"GET", "POST", "PUT", "PATCH", "DELETE"};
  std::set<size_t> indices;
  for (size_t i = 0; i < s.steps.size(); ++i) {
    const ScenarioStep& step = s.steps[i];
    FUZZ_CHECK(step.at >= Duration::zero(), std::to_string(step.index));
    FUZZ_CHECK(indices.insert(step.index).second && step.index < s.steps.size(),
               std::to_string(step.index));
    if (i > 0) {
      const ScenarioStep& prev = s.steps[i - 1];
      FUZZ_CHECK(prev.at < step.at || (prev.at == step.at && prev.index < step.index),
                 std::to_string(prev.index) + " before " + std::to_string(step.index));
    }
    FUZZ_CHECK(s.last_scheduled() >= step.at, std::to_string(step.index));
    // The runner schedules each step at epoch + at (UBSan reports an overflow).
    FUZZ_CHECK(s.cloud.epoch + step.at >= s.cloud.epoch, format_duration(step.at));
    FUZZ_CHECK(!step.as.empty(), std::to_string(step.index));
    if (step.kind == StepKind::kCall) {
      FUZZ_CHECK(kMethods.contains(step.method), step.method);
      FUZZ_CHECK(step.path.starts_with('/'), step.path);
      FUZZ_CHECK(step.label().starts_with(step.method + " " + step.path), step.label());
    } else {
      FUZZ_CHECK(step.label() == step_kind_name(step.kind), step.label());
      const bool manifests =
          step.value.is_object() || (step.value.is_array() && !step.value.empty() &&
                                     std::all_of(step.value.begin(), step.value.end(),
                                                 [](const Json& d) { return d.is_object(); }));
      FUZZ_CHECK(step.kind != StepKind::kApply || manifests, fuzz::dump(step.value));
      FUZZ_CHECK(step.kind == StepKind::kApply || step.value.is_object(), fuzz::dump(step.value));
    }
  }
  for (const auto& change : s.cloud.changes) {
    FUZZ_CHECK(s.last_scheduled() >= change.at, format_duration(change.at));
  }

  // Cloud latencies are added to the clock of a run that may last as long as its last step.
  const Time late = s.cloud.epoch + s.last_scheduled();
  for (Duration d :
       {s.cloud.launch_latency, s.cloud.lifecycle_duration, s.cloud.failure_latency,
        s.cloud.terminate_latency, s.cloud.reboot_duration, s.cloud.reprovision_duration,
        s.cloud.migrate_duration, s.cloud.delete_duration, s.cloud.burn_in_duration}) {
    FUZZ_CHECK(d >= Duration::zero() && late + d >= late, format_duration(d));
  }

  const ScenarioConfig& c = s.config;
  for (const auto& d : {c.min_count_timeout, c.retry_base, c.retry_max}) {
    FUZZ_CHECK(!d || *d > Duration::zero(), format_duration(*d));
  }
  ProvisionOptions provision;
  c.apply_to(provision);
  FUZZ_CHECK(provision.retry_base <= provision.retry_max,
             format_duration(provision.retry_base) + " > " + format_duration(provision.retry_max));
  sched::SchedulerOptions scheduler;
  c.apply_to(scheduler);
}

}  // namespace
}  // namespace gf

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > gf::fuzz::kMaxInputBytes) return -1;
  const gf::Result<gf::Scenario> s =
      gf::parse_scenario(gf::fuzz::as_text(data, size), gf::base_dir());
  if (!s.ok()) {
    FUZZ_CHECK_ERROR(s.status());
    return 0;
  }
  gf::check_scenario(*s);
  return 0;
}
