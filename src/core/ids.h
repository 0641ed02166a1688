// Identifiers and ARNs. Random parts come from the loop's seeded generator so a simulation with
// the same seed names everything the same way.
#pragma once

#include <string>
#include <string_view>

#include "core/random.h"

namespace gf {

struct ArnConfig {
  std::string region = "local";
  std::string account = "000000000000";
};

// n characters from [a-z0-9].
std::string random_lower_alnum(Random& rng, int n);
// "arn:gpufleet:<region>:<account>:<resource_type>/<id>"
std::string make_arn(const ArnConfig& cfg, std::string_view resource_type, std::string_view id);
// Cluster ids are 10 lowercase alphanumerics (SPEC §2.1).
std::string new_cluster_id(Random& rng);
// Zero-padded so lexical order is numeric order: "ev-000000000042-0".
std::string event_id(int64_t seq, int index);

}  // namespace gf
