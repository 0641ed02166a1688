// Raw detector input → detections (remediate/signal.h), the body of POST
// /v1/clusters/{name}/nodes/{id}/signals and a scenario's `fault.signal`: a kernel-log text, or one
// structured reading (DCGM fields, mounts, Slurm state, InfiniBand, restarts, missing GPUs). The
// input is parsed as JSON/YAML; when that gives no single document the bytes themselves are
// the kernel-log text (what an agent streams).
//
// Invariants checked:
//  - detect never throws; a refusal names the field path it was given ("Signal…");
//  - each detection names a detector, a fault prefixed by a family the detector owns, a
//    summary and its evidence (the raw log line for kernel-log detections);
//  - the default policy maps every detection to an answer naming its rule;
//  - in a kernel-log text every line the Xid parser accepts is one Xid detection, and no other
//    line is.
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "health/xid.h"
#include "model/remediation_policy.h"
#include "remediate/signal.h"

namespace gf::remediate {
namespace {

std::string describe(const Detection& d) {
  return d.detector + " " + d.fault + " [" + d.subject + "] " + d.summary + " | " + d.evidence;
}

void check_detections(const Json& signal, const std::vector<Detection>& found) {
  static const Policy kDefaults;
  for (const Detection& d : found) {
    FUZZ_CHECK(!d.detector.empty() && !d.fault.empty() && !d.summary.empty() && !d.evidence.empty(),
               describe(d));
    // The fault code's family is the detector's, except the Xid detector's two families.
    const std::string family = d.fault.substr(0, d.fault.find(':'));
    FUZZ_CHECK(family == d.detector ||
                   (d.detector == "xid" && (family == "xid" || family == "sxid")) ||
                   (d.detector.starts_with("dcgm-") && family == "dcgm") ||
                   (d.detector == "slurm-node-state" && family == "slurm"),
               describe(d));
    if (signal.is_string()) {
      FUZZ_CHECK(signal.get_ref<const std::string&>().find(d.evidence) != std::string::npos,
                 describe(d));
    }
    const RuleMatch m = match(kDefaults, d.detector, d.fault, "pool", d.default_action);
    FUZZ_CHECK(!m.rule.empty(), describe(d));
  }
}

}  // namespace
}  // namespace gf::remediate

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using gf::Json;
  using gf::remediate::Detection;
  if (size > gf::fuzz::kMaxInputBytes) return -1;
  const std::string_view text = gf::fuzz::as_text(data, size);

  Json signal;
  const bool structured = gf::fuzz::parse_one(text, signal);
  if (!structured) signal = std::string(text);
  const gf::Result<std::vector<Detection>> found = gf::remediate::detect(signal);
  if (!found.ok()) {
    FUZZ_CHECK_ERROR(found.status());
    FUZZ_CHECK(found.status().message().starts_with("Signal"), found.status().to_string());
    return 0;
  }
  gf::remediate::check_detections(signal, *found);

  // Every Xid/SXid line of a kernel-log text is reported once, and nothing else is an Xid.
  if (signal.is_string()) {
    size_t xid_lines = 0;
    for (std::string_view rest = signal.get_ref<const std::string&>(); !rest.empty();) {
      auto [line, tail] = gf::fuzz::split_once(rest, "\n");
      rest = tail;
      if (line.ends_with('\r')) line.remove_suffix(1);
      if (!line.empty() && gf::health::parse_xid_line(line)) ++xid_lines;
    }
    size_t xid_found = 0;
    for (const Detection& d : *found) xid_found += d.detector == "xid";
    FUZZ_CHECK(xid_found == xid_lines, std::to_string(xid_found) + " Xid detections, " +
                                           std::to_string(xid_lines) + " Xid lines");
  }
  return 0;
}
