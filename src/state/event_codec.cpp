// The version check of the journal event codec (event_codec.h).
#include "state/event_codec.h"

namespace gf::event_codec {

Status check_version(std::string_view type, const Json& payload, int newest) {
  const auto v = payload.find("v");
  if (v == payload.end()) return ok_status();  // written before versions: version 1
  if (!v->is_number_integer())
    return internal_error(fmt::format("{}: field v: not an integer", type));
  const int64_t version = v->get<int64_t>();
  if (version < 1 || version > newest) {
    return internal_error(fmt::format(
        "{}: event version {} (this release reads up to {}; journal written by a newer gpufleet?)",
        type, version, newest));
  }
  return ok_status();
}

}  // namespace gf::event_codec
