// The contracts between the control loop and what it drives. Controllers decide; drivers act.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/json.h"
#include "core/time.h"
#include "state/events.h"
#include "state/fleet_state.h"

namespace gf {

// A side effect for a driver to carry out off the loop (launch an instance, call a webhook).
// Intents are not journaled: controllers are level-triggered and re-issue an intent whose result
// never came back (after a restart, say) because the state still shows the work undone.
struct Intent {
  std::string driver;  // which driver carries it out, e.g. "cloud"
  std::string kind;    // e.g. "launch"
  Json payload = Json::object();
};

struct ControllerDecision {
  std::vector<Event> events;
  std::vector<Intent> intents;
  std::optional<Time> wake_at;  // call decide() again no later than this
};

// Looks at state and the current time and decides. Never does I/O, never reads the wall clock,
// never sleeps: that keeps it deterministic and testable in microseconds.
class Controller {
 public:
  virtual ~Controller() = default;
  virtual std::string_view name() const = 0;
  virtual ControllerDecision decide(const FleetState& state, Time now) = 0;
};

// Carries out intents. execute() is called on the loop thread only after the batch that decided
// the intent is durable; it must not block: the work happens elsewhere and its outcome comes back
// as a request through ControlLoop::submit().
class Driver {
 public:
  virtual ~Driver() = default;
  virtual void execute(const Intent& intent) = 0;
};

// What a request handler decides: the facts to record, side effects, and the answer.
struct Decision {
  std::vector<Event> events;
  std::vector<Intent> intents;
  Json response = Json::object();
};

struct Request {
  std::string name;             // for logs and metrics, e.g. "CreateCluster"
  std::string idempotency_key;  // a repeat returns the original seq and changes nothing
  // Validates against the state as of the previous request in the same batch and decides.
  // An error changes nothing.
  std::function<Result<Decision>(const FleetState& state, Time now)> handle;
  // The answer to a repeat of an already-journaled idempotency key (optional).
  std::function<Json(const FleetState& state, Seq original)> on_duplicate;
};

struct Outcome {
  Status status;
  Json response = Json::object();
  Seq seq = 0;  // the last seq written for the request, or the original one for a repeat
  bool duplicate = false;
};

}  // namespace gf
