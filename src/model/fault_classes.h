// Fault classes (docs/remediation.md "Defaults by fault class"): what a fault does to the
// synchronous job running on its node — it ends the gang's run (fatal), stalls it until a
// watchdog ends it (hang), slows the whole gang to the faulted member's speed (degraded), or
// nothing — and the repair that usually fixes it, with the published share behind it. Pure data:
// the remediation engine reads it to skip the wait for idle on a fatal fault and to go straight
// to the usual fix; the simulator's failure model reads the same effects.
#pragma once

#include <optional>
#include <string_view>

namespace gf::health {

enum class JobEffect : unsigned char { kNone, kFatal, kHang, kDegraded };
std::string_view to_string(JobEffect e);  // "none", "fatal", "hang", "degraded"
std::optional<JobEffect> parse_job_effect(std::string_view s);

struct FaultClass {
  JobEffect effect = JobEffect::kNone;
  // The action that usually repairs it ("reboot", "reprovision", "migrate"), when it is more than
  // the detector table's default action; empty: the detector's action is the usual fix.
  std::string_view usual_fix;
  double usual_fix_share = 0;  // the published share of faults that need it
  std::string_view source;     // where the effect and the share come from
  double slowdown = 1;         // degraded: how many times as long the gang's steps take
  // After a repair of it failed on the host: the next step ("migrate" for hardware that a reset
  // did not fix: a reimage will not either); empty: the escalation ladder's.
  std::string_view after_failure = {};
};

// The class of an alert's (detector, fault): a row naming the fault ("xid:79") before the
// detector's row; a detector no row names: no effect, no usual fix.
FaultClass fault_class(std::string_view detector, std::string_view fault);

// Whether the job on the node has already stopped (or will, without progress): fatal and hang.
inline bool stops_job(JobEffect e) { return e == JobEffect::kFatal || e == JobEffect::kHang; }

}  // namespace gf::health
