// The shape of a journal event (a fact) as controllers and request handlers return it, before the
// loop gives it a sequence number. The types are in the *_events.h headers beside this one, one
// struct per type (state/event_codec.h); replaying the same events in the same order always
// rebuilds the same state.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "core/json.h"
#include "state/user_event.h"

namespace gf {

struct Job;

// One fact decided by a request handler or a controller, before it has a sequence number.
// A job.submitted event carries its job decoded (`job`, from job_events::to_event) instead of a
// payload: the loop applies it as it is and builds the payload only for a journal that reads it
// (docs/architecture.md "The loop, one batch at a time"). payload_json() is the payload either way.
// The loop moves the job out when the event is its only owner: an event is staged once.
struct Event {
  std::string type;
  Json payload = Json::object();
  std::string idempotency_key;  // empty = none
  std::shared_ptr<Job> job = nullptr;

  Json payload_json() const;
};

}  // namespace gf
