// The journal's history table as the API reads it (docs/operations.md "What is kept where").
#pragma once

#include <optional>
#include <string>

#include "api/api.h"
#include "model/job.h"

namespace gf {

// The job of that id (else the newest of that name) that left the hot state, if the journal's
// history holds one; none on a control plane without history.
Result<std::optional<Job>> find_history_job(Api& api, const std::string& id_or_name);

}  // namespace gf
