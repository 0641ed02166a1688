// Rules of the typed health events beyond their fields (health_events.h).
#include "state/health_events.h"

namespace gf::health_events {

Status AlertSignal::check() const {
  auto missing = [](const char* field) {
    return internal_error(fmt::format("missing field {}", field));
  };
  if (present) {
    if (!severity) return missing("Severity");
    if (!persistence) return missing("PersistenceUs");
    if (!action) return missing("Action");
  } else {
    if (!resolved_by) return missing("ResolvedBy");
    if (!fixed) return missing("Fixed");
  }
  return ok_status();
}

}  // namespace gf::health_events
