// The contracts between the control loop and what it drives. Controllers decide; drivers act.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
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

// Working memory derived from the journal that is not state (the scheduler cache, docs/
// architecture.md "Scheduler cache"). The loop shows it every event right after the state applied
// it, replay included, and in order; an error means memory and journal disagree, and the loop
// stops as it does when the state cannot apply an event. Lives on the loop thread only.
class EventObserver {
 public:
  virtual ~EventObserver() = default;
  // One applied event, with its parsed payload; `state` already reflects it.
  virtual Status observe(const FleetState& state, const EventRecord& record,
                         const Json& payload) = 0;
  // One applied job.submitted event that the loop applied from its job, without a payload
  // (Event::job): the job `job_id` is in `state`.
  virtual Status observe_submitted(const FleetState& state, const EventRecord& record,
                                   const std::string& job_id) = 0;
  // After a snapshot load: rebuild everything from `state` (the journal after it follows).
  virtual Status restore(const FleetState& state) = 0;
  // Adds what readers may see to the view the loop is about to publish.
  virtual void publish(const FleetState& state, FleetView& view) = 0;
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

// Shared by a request's submitter and the loop: whoever moves it from kQueued first decides
// whether the request runs (kTaken) or never will (kAbandoned, after its caller gave up).
enum class TicketState : int { kQueued = 0, kTaken = 1, kAbandoned = 2 };
using Ticket = std::shared_ptr<std::atomic<TicketState>>;

struct Request {
  std::string name;             // for logs and metrics, e.g. "CreateCluster"
  std::string idempotency_key;  // a repeat returns the original seq and changes nothing
  // What the key was first used with (a hash of the call). The same key with another
  // fingerprint is refused with a ConflictException instead of answering the first call's result.
  std::string fingerprint;
  // The audit record of the API call behind this request, without its outcome: the loop journals
  // it with the outcome (Code, Error) in the same batch as the request's events.
  std::optional<Json> audit;
  int success_code = 200;  // the HTTP status of success, for the audit record
  Ticket ticket;           // optional: lets the submitter abandon a request still queued
  // Validates against the state as of the previous request in the same batch and decides.
  // An error changes nothing.
  std::function<Result<Decision>(const FleetState& state, Time now)> handle;
  // The answer to a repeat of an already-journaled idempotency key (optional).
  std::function<Json(const FleetState& state, Seq original)> on_duplicate;
  // Validate and answer as the request would, but change nothing: no event is applied or
  // journaled and no intent reaches a driver (the API's ?dryRun=All, kubectl's
  // --dry-run=server).
  bool dry_run = false;
};

struct Outcome {
  Status status;
  Json response = Json::object();
  Seq seq = 0;  // the last seq written for the request, or the original one for a repeat
  bool duplicate = false;
};

}  // namespace gf
