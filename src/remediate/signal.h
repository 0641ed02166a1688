// Raw detector input for one node → detections, through the real parsers of src/health/. The
// same input an agent reports (POST /v1/clusters/{name}/nodes/{id}/signals) and a scenario's
// `fault.signal` carries (docs/scenarios.md): a kernel-log text (one or more lines), or one
// structured probe reading:
//   {dcgm: {field: DCGM_FI_DEV_ECC_DBE_VOL_TOTAL, value: 1, gpu: 0}}   (also ROW_REMAP_PENDING,
//        ROW_REMAP_FAILURE, PCIE_REPLAY_COUNTER as replays in the last minute,
//        CLOCKS_EVENT_REASONS as a bit mask held for a minute)
//   {mount: {path: /, readOnly: true, fstype: ext4}}     {slurm: {state: DRAIN, reason: "…"}}
//   {ib: {port: 1, state: Down}} or {ib: {port: 1, symbolErrorsPerHour: 500}}
//   {unreachable: true}   {diskPressure: true}   {gpuMissing: {index: 3, pci: "0000:b3:00.0"}}
//   {restarts: {unit: kubelet, count: 6}}   (restarts within the last 20 minutes)
// Pure: time is a parameter.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/json.h"
#include "core/result.h"
#include "core/time.h"
#include "model/alerts.h"
#include "model/remediation_policy.h"

namespace gf::remediate {

struct Detection {
  std::string detector;  // docs/health.md name
  std::string subject;   // the GPU's PCI address, mount point, port… ("" for node-wide)
  std::string fault;     // "xid:79", "dcgm:dbe", …
  std::string summary;   // one plain sentence
  std::string evidence;  // verbatim: the raw log line, or the reading as key=value pairs
  std::optional<Action> default_action;  // Xid 154: what the driver's message names
};

// Errors name the field ("Signal.dcgm.field: unknown DCGM field 'X'"). A text no detector
// recognises gives no detection and no error (agents stream every kernel line).
Result<std::vector<Detection>> detect(const Json& signal, const std::string& path = "Signal");

// A DCGM field name as read here: an old name from before the DCGM 3.x renames (for example
// DCGM_FI_DEV_CLOCK_THROTTLE_REASONS) becomes today's (DCGM_FI_DEV_CLOCKS_EVENT_REASONS); any other
// name is returned as it is.
std::string canonical_dcgm_field(std::string_view field);

}  // namespace gf::remediate
