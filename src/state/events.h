// The shape of a journal event (a fact) as controllers and request handlers return it, before the
// loop gives it a sequence number. The types are in the *_events.h headers beside this one, one
// struct per type (state/event_codec.h); replaying the same events in the same order always
// rebuilds the same state.
#pragma once

#include <string>
#include <string_view>

#include "core/json.h"
#include "state/user_event.h"

namespace gf {

// One fact decided by a request handler or a controller, before it has a sequence number.
struct Event {
  std::string type;
  Json payload = Json::object();
  std::string idempotency_key;  // empty = none
};

}  // namespace gf
