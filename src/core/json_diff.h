// Writing a record as what differs from a base record, and reading it back (docs/architecture.md
// "Typed events": job.submitted carries only the members a new job does not already have).
#pragma once

#include "core/json.h"

namespace gf {

// The members of `value` that differ from `base`, recursing into objects both have: what
// json_overlay(base, ·) turns back into `value`. Arrays and scalars are kept whole when they
// differ; an object equal to its base member is dropped. Requires every member of an object of
// `base` to be in the matching object of `value` (true of two canonical encodings of one type):
// a member absent from `value` cannot be told from one equal to its base.
Json json_minus(const Json& base, const Json& value);

// `patch` laid over `base`: objects merge member by member, anything else (null included, unlike
// RFC 7386's merge patch) replaces the base's value.
Json json_overlay(Json base, const Json& patch);

}  // namespace gf
