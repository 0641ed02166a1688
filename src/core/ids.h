// Every id the control plane mints, in one place. Ids derive from counters kept in the state
// (and the configured seed), never from the clock or an unseeded random source, so a replay or a
// simulation with the same inputs names everything the same way.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace gf {

struct ArnConfig {
  std::string region = "local";
  std::string account = "000000000000";
};

// "arn:gpufleet:<region>:<account>:<resource_type>/<id>"
std::string make_arn(const ArnConfig& cfg, std::string_view resource_type, std::string_view id);
// The name an ARN ends in ("arn:aws:batch:us-east-1:1:job-queue/q" -> "q"); a plain name is
// returned as is. AWS calls take either wherever they name an object.
std::string name_from_arn(std::string_view name_or_arn);
// The instance id of the counter-th launch request: "i-" and 17 hex digits, as EC2 writes them.
std::string instance_id(uint64_t seed, int64_t counter);
// The id of the counter-th cluster: 10 characters of [a-z0-9] (docs/provisioning.md).
std::string cluster_id(uint64_t seed, int64_t counter);
// The id of the counter-th job, shaped like a UUID (version 4, variant 1 bits) and derived from
// the counter and the job's name.
std::string job_id(int64_t counter, std::string_view name);
// "<prefix>-000012": zero-padded to six digits so ids sort in creation order ("rem", "alert").
std::string numbered_id(std::string_view prefix, int64_t n);
// Zero-padded so lexical order is numeric order: "ev-000000000042-0".
std::string event_id(int64_t seq, int index);

}  // namespace gf
