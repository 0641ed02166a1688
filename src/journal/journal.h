// The journal: the one ordered, durable record of every state change (docs/architecture.md).
// Implementations: sqlite/ (embedded default) and postgres/ (replicated control plane). Both pass
// the same contract suite (tests/unit/journal/journal_contract.h).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "core/time.h"

namespace gf {

using Seq = int64_t;  // 1, 2, 3, … gapless; 0 = "before the first event"

struct NewEvent {
  std::string type;             // e.g. "cluster.created"
  std::string payload;          // canonical JSON text
  std::string idempotency_key;  // empty = none
  Time time{};                  // the loop's clock when the event was decided
};

struct EventRecord {
  Seq seq = 0;
  std::string type;
  std::string payload;
  std::string idempotency_key;
  Time time{};
};

struct AppendResult {
  // One entry per event appended, in order: its sequence number, or for an event whose
  // idempotency key was already journaled (earlier, or earlier in the same batch), the original
  // event's sequence number.
  std::vector<Seq> seqs;
  std::vector<bool> duplicate;
};

struct Snapshot {
  Seq seq = 0;       // state after applying every event up to and including seq
  std::string data;  // serialized state
};

class Journal {
 public:
  virtual ~Journal() = default;

  // Appends the batch atomically and durably (one transaction, one fsync): when it returns OK
  // every new event is on disk; on error none is.
  virtual Result<AppendResult> append(std::span<const NewEvent> batch) = 0;

  // Calls fn for every event with seq > after, in order. Stops at the first error fn returns.
  virtual Status replay(Seq after, const std::function<Status(const EventRecord&)>& fn) = 0;

  // The highest sequence number journaled (0 when empty).
  virtual Result<Seq> last_seq() = 0;

  // The sequence number of the event carrying this idempotency key, if any.
  virtual Result<std::optional<Seq>> find_key(const std::string& key) = 0;

  // Stores a snapshot; older ones may be pruned (the latest two are always kept).
  virtual Status save_snapshot(const Snapshot& snapshot) = 0;
  virtual Result<std::optional<Snapshot>> latest_snapshot() = 0;

  // Whether this process may still act as the journal's writer: a replicated journal fails it
  // once another replica has taken over (docs/replication.md); a single-writer journal always
  // passes. The loop asks before handing drivers the intents of a batch that appended nothing.
  virtual Status check_fence() { return ok_status(); }

  // Whether append reads the payload text of events of `type`. Every journal that keeps its
  // records does; one that keeps none may say no for the types its observer ignores, and the loop
  // then writes no text for them (ObservedJournal; docs/architecture.md "The loop, one batch at a
  // time").
  virtual bool needs_payload(std::string_view type) const {
    (void)type;
    return true;
  }
};

}  // namespace gf
